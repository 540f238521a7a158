package sim_test

// The official Go SDK (github.com/openai/openai-go/v3) drives the whole
// refund loop against a real sim.Server over the Responses API, in both
// history modes, streaming and not, for every refund variant; what it
// accumulates must be each turn the variant's model gives. The server's
// Responses-specific behaviour is checked too: store:false responses cannot
// be continued, unknown previous_response_ids and call_ids get the API's
// errors, and the in-stream error fault ends the SDK's stream with an error.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/responses"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/adapterstest"
	"github.com/modelwire/modelwire/jsonschema"
	"github.com/modelwire/modelwire/samples"
	"github.com/modelwire/modelwire/session"
	"github.com/modelwire/modelwire/sim"
)

// startResponses serves sc on a free loopback port for the test's life.
func startResponses(t *testing.T, sc *session.Scenario, faults *sim.Faults) openai.Client {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	base, err := sim.New(sim.Options{Scenario: sc, Faults: faults}).Start(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return openai.NewClient(option.WithBaseURL(base+"/v1/"), option.WithAPIKey("sk-any"), option.WithMaxRetries(0))
}

// gated runs a tool as an application with a gate does: arguments that
// fail the tool's schema are refused with the violations, never run.
func gated(sc *session.Scenario, name string, args json.RawMessage) string {
	if vs := sc.ToolSchema(name).Validate(args); vs != nil {
		return "call rejected by the application: arguments fail the tool's schema: " + jsonschema.Joined(vs)
	}
	out, _ := sc.RunTool(context.Background(), name, args)
	return out
}

// systemAndTask are the scenario's prompt as an SDK user writes it.
func systemAndTask(sc *session.Scenario) (system, task string) {
	return adapterstest.SDKPrompt(sc.Sources)
}

// refundParams is the refund case's first request as an SDK user writes it.
func refundParams(t *testing.T, sc *session.Scenario) responses.ResponseNewParams {
	t.Helper()
	system, task := systemAndTask(sc)
	p := responses.ResponseNewParams{
		Model:        responses.ResponsesModel(sc.Model),
		Instructions: openai.String(system),
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{
			responses.ResponseInputItemParamOfMessage(task, responses.EasyInputMessageRoleUser),
		}},
		MaxOutputTokens: openai.Int(2048),
	}
	for _, tool := range sc.Tools {
		var params map[string]any
		if err := json.Unmarshal(tool.Parameters, &params); err != nil {
			t.Fatal(err)
		}
		p.Tools = append(p.Tools, responses.ToolUnionParam{OfFunction: &responses.FunctionToolParam{
			Name: tool.Name, Description: openai.String(tool.Description), Parameters: params, Strict: openai.Bool(tool.Strict),
		}})
	}
	if o := sc.Output.Sent(); o.Mode == adapters.OutputJSONSchema {
		var schema map[string]any
		if err := json.Unmarshal(o.Schema, &schema); err != nil {
			t.Fatal(err)
		}
		p.Text = responses.ResponseTextConfigParam{Format: responses.ResponseFormatTextConfigUnionParam{
			OfJSONSchema: &responses.ResponseFormatTextJSONSchemaConfigParam{Name: o.Name, Schema: schema, Strict: openai.Bool(o.Strict)},
		}}
	}
	return p
}

// sdkTurn is what the SDK user has after one request.
type sdkTurn struct {
	resp                     *responses.Response
	text, reasoning, refusal string // accumulated from the stream's deltas
}

func callResponses(ctx context.Context, c openai.Client, p responses.ResponseNewParams, stream bool) (sdkTurn, error) {
	if !stream {
		resp, err := c.Responses.New(ctx, p)
		return sdkTurn{resp: resp}, err
	}
	s := c.Responses.NewStreaming(ctx, p)
	var out sdkTurn
	var text, reasoning, refusal strings.Builder
	for s.Next() {
		switch ev := s.Current().AsAny().(type) {
		case responses.ResponseTextDeltaEvent:
			text.WriteString(ev.Delta)
		case responses.ResponseReasoningSummaryTextDeltaEvent:
			reasoning.WriteString(ev.Delta)
		case responses.ResponseRefusalDeltaEvent:
			refusal.WriteString(ev.Delta)
		case responses.ResponseCompletedEvent:
			out.resp = &ev.Response
		case responses.ResponseIncompleteEvent:
			out.resp = &ev.Response
		}
	}
	out.text, out.reasoning, out.refusal = text.String(), reasoning.String(), refusal.String()
	if err := s.Err(); err != nil {
		return out, err
	}
	if out.resp == nil {
		return out, errors.New("the stream ended without a terminal event")
	}
	return out, nil
}

// sdkWant is one turn as the SDK user must see it: the calls (name and
// exact arguments), or the final text (or a part of it), or a refusal.
type sdkWant struct {
	calls   []string
	text    string // the whole final text; "" when contains is used
	contain string
	refusal string
}

const (
	wantOrder  = `get_order_line {"order_id":"O-2048","line_id":"L1"}`
	wantLedger = `get_refund_ledger {"order_id":"O-2048","line_id":"L1"}`
	wantPolicy = `get_refund_policy {"category":"headphones","received_at":"2026-10-15T12:00:00+08:00","reason":"quality_issue"}`
)

// sdkTurns are the refund loop of each variant as the model answers it
// when the application runs the scenario's tools (literal, from the
// chapter and each variant's behaviour).
var sdkTurns = map[string][]sdkWant{
	"":                {{calls: []string{wantOrder}}, {calls: []string{wantLedger, wantPolicy}}, {text: adapterstest.RefundModelText}},
	"wrong-cap":       {{calls: []string{wantOrder}}, {calls: []string{wantLedger, wantPolicy}}, {contain: `"max_refund_cents":15000`}},
	"fenced":          {{calls: []string{wantOrder}}, {calls: []string{wantLedger, wantPolicy}}, {contain: "```json\n{"}},
	"missing-field":   {{calls: []string{wantOrder}}, {calls: []string{wantLedger, wantPolicy}}, {contain: `"issues":["requested_amount_exceeds_cap","quality_evidence_missing","unverified_history_amount_conflict"],"reply_draft"`}},
	"claims-refunded": {{calls: []string{wantOrder}}, {calls: []string{wantLedger, wantPolicy}}, {contain: "已为您办理退款"}},
	"bad-args":        {{calls: []string{`get_order_line {"order_id":"O-2048"}`}}, {calls: []string{wantOrder}}, {calls: []string{wantLedger, wantPolicy}}, {text: adapterstest.RefundModelText}},
	"sequential":      {{calls: []string{wantOrder}}, {calls: []string{wantLedger}}, {calls: []string{wantPolicy}}, {text: adapterstest.RefundModelText}},
	"refusal":         {{refusal: "抱歉，我无法协助处理这个请求。"}},
}

// checkTurn: what the SDK accumulated is the turn expected.
func checkTurn(t *testing.T, n int, want sdkWant, got sdkTurn, stream bool) {
	t.Helper()
	resp := got.resp
	var gotRefusal strings.Builder
	var gotCalls []string
	for _, item := range resp.Output {
		switch item.Type {
		case "reasoning":
			t.Errorf("turn %d: a reasoning item though the request asked for none", n)
		case "function_call":
			fc := item.AsFunctionCall()
			gotCalls = append(gotCalls, fc.Name+" "+fc.Arguments)
			if !strings.HasPrefix(fc.CallID, "call_") || !strings.HasPrefix(fc.ID, "fc_") {
				t.Errorf("turn %d: call ids %s %s", n, fc.ID, fc.CallID)
			}
		case "message":
			for _, c := range item.AsMessage().Content {
				if c.Type == "refusal" {
					gotRefusal.WriteString(c.Refusal)
				}
			}
		}
	}
	if strings.Join(gotCalls, "|") != strings.Join(want.calls, "|") {
		t.Fatalf("turn %d: calls %q, want %q", n, gotCalls, want.calls)
	}
	text := resp.OutputText()
	switch {
	case want.text != "" && text != want.text, want.contain != "" && !strings.Contains(text, want.contain):
		t.Errorf("turn %d: text %q, want %q", n, text, want.text+want.contain)
	case want.text == "" && want.contain == "" && text != "":
		t.Errorf("turn %d: text %q, want none", n, text)
	case gotRefusal.String() != want.refusal:
		t.Errorf("turn %d: refusal %q, want %q", n, gotRefusal.String(), want.refusal)
	}
	if stream && (got.text != text || got.refusal != want.refusal || got.reasoning != "") {
		t.Errorf("turn %d: streamed text %q reasoning %q refusal %q", n, got.text, got.reasoning, got.refusal)
	}
	if resp.Status != responses.ResponseStatusCompleted || !strings.HasPrefix(resp.ID, "resp_") {
		t.Errorf("turn %d: status %s id %s", n, resp.Status, resp.ID)
	}
	// Usage is counted from this request and this answer.
	if u := resp.Usage; u.InputTokens < 100 || u.OutputTokens < 1 || u.TotalTokens != u.InputTokens+u.OutputTokens {
		t.Errorf("turn %d: usage %+v", n, u)
	}
}

func refundScenarios(t *testing.T) []*session.Scenario {
	t.Helper()
	var out []*session.Scenario
	for _, name := range samples.Names() {
		if name != "refund" && !strings.HasPrefix(name, "refund/") {
			continue
		}
		sc, err := samples.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, sc)
	}
	if len(out) != len(sdkTurns) {
		t.Fatalf("%d refund scenarios, %d expected in sdkTurns", len(out), len(sdkTurns))
	}
	return out
}

// The whole refund loop, as SDK users write it: with the full history
// (store:false, the output items echoed back, then one
// function_call_output per call, the tool run by the application) and
// chained by previous_response_id (only the new outputs), streaming and
// not.
func TestResponsesSDKRefundLoop(t *testing.T) {
	for _, sc := range refundScenarios(t) {
		for _, chained := range []bool{false, true} {
			for _, stream := range []bool{true, false} {
				name := fmt.Sprintf("%s/chained=%v/stream=%v", sc.FullName(), chained, stream)
				t.Run(name, func(t *testing.T) {
					c := startResponses(t, sc, nil)
					p := refundParams(t, sc)
					if !chained {
						p.Store = openai.Bool(false)
						p.Include = []responses.ResponseIncludable{responses.ResponseIncludableReasoningEncryptedContent}
					}
					seen := map[string]bool{}
					turns := sdkTurns[sc.Variant]
					for n, want := range turns {
						got, err := callResponses(context.Background(), c, p, stream)
						if err != nil {
							t.Fatalf("turn %d: %v", n+1, err)
						}
						checkTurn(t, n+1, want, got, stream)
						if seen[got.resp.ID] {
							t.Errorf("turn %d: response id %s repeats", n+1, got.resp.ID)
						}
						seen[got.resp.ID] = true

						var outputs responses.ResponseInputParam
						for _, item := range got.resp.Output {
							if item.Type == "function_call" {
								fc := item.AsFunctionCall()
								result := gated(sc, fc.Name, json.RawMessage(fc.Arguments))
								o := responses.ResponseInputItemParamOfFunctionCallOutput(result)
								o.OfFunctionCallOutput.CallID = openai.String(fc.CallID)
								outputs = append(outputs, o)
							}
						}
						if len(outputs) == 0 {
							if n != len(turns)-1 {
								t.Fatalf("turn %d ended the loop early", n+1)
							}
							break
						}
						if chained {
							p.PreviousResponseID = openai.String(got.resp.ID)
							p.Input.OfInputItemList = outputs
							continue
						}
						for _, item := range got.resp.Output {
							switch item.Type {
							case "reasoning":
								r := item.AsReasoning().ToParam()
								p.Input.OfInputItemList = append(p.Input.OfInputItemList, responses.ResponseInputItemUnionParam{OfReasoning: &r})
							case "function_call":
								fc := item.AsFunctionCall().ToParam()
								p.Input.OfInputItemList = append(p.Input.OfInputItemList, responses.ResponseInputItemUnionParam{OfFunctionCall: &fc})
							case "message":
								m := item.AsMessage().ToParam()
								p.Input.OfInputItemList = append(p.Input.OfInputItemList, responses.ResponseInputItemUnionParam{OfOutputMessage: &m})
							}
						}
						p.Input.OfInputItemList = append(p.Input.OfInputItemList, outputs...)
					}
				})
			}
		}
	}
}

func apiError(t *testing.T, err error, status int, param, code, message string) {
	t.Helper()
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) {
		t.Fatalf("want an API error, got %v", err)
	}
	if apiErr.StatusCode != status || apiErr.Type != "invalid_request_error" || apiErr.Param != param || apiErr.Code != code || !strings.Contains(apiErr.Message, message) {
		t.Errorf("got %d %s param=%q code=%q %q", apiErr.StatusCode, apiErr.Type, apiErr.Param, apiErr.Code, apiErr.Message)
	}
	if apiErr.Response.Header.Get("x-request-id") == "" {
		t.Error("no x-request-id")
	}
}

// continuation is the request that continues r by its id: the result of
// the call r ended with, the refund case's tool run on its arguments.
func continuation(t *testing.T, sc *session.Scenario, r *responses.Response) (responses.ResponseNewParams, responses.ResponseInputItemUnionParam) {
	t.Helper()
	fc := r.Output[len(r.Output)-1].AsFunctionCall()
	order, _ := sc.RunTool(context.Background(), fc.Name, json.RawMessage(fc.Arguments))
	out := responses.ResponseInputItemParamOfFunctionCallOutput(order)
	out.OfFunctionCallOutput.CallID = openai.String(fc.CallID)
	next := refundParams(t, sc)
	next.PreviousResponseID = openai.String(r.ID)
	next.Input.OfInputItemList = responses.ResponseInputParam{out}
	return next, out
}

// store:false responses cannot be continued; ids the server never issued
// are not found; stored ones chain.
func TestResponsesSDKPreviousResponseID(t *testing.T) {
	sc, err := samples.Lookup("refund")
	if err != nil {
		t.Fatal(err)
	}
	c := startResponses(t, sc, nil)
	ctx := context.Background()
	p := refundParams(t, sc)
	p.Store = openai.Bool(false)
	unstored, err := c.Responses.New(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	next, out := continuation(t, sc, unstored)
	_, err = c.Responses.New(ctx, next)
	apiError(t, err, 400, "previous_response_id", "previous_response_not_found", "Previous response with id '"+unstored.ID+"' not found.")

	next.PreviousResponseID = openai.String("resp_0123456789abcdef")
	_, err = c.Responses.New(ctx, next)
	apiError(t, err, 400, "previous_response_id", "previous_response_not_found", "Previous response with id 'resp_0123456789abcdef' not found.")

	p.Store = openai.Bool(true)
	stored, err := c.Responses.New(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	next.PreviousResponseID = openai.String(stored.ID)
	// A result answering no call of the chain is refused, as the API does.
	out.OfFunctionCallOutput.CallID = openai.String("call_Ghost")
	_, err = c.Responses.New(ctx, next)
	apiError(t, err, 400, "input", "", "No tool call found for function call output with call_id call_Ghost.")

	out.OfFunctionCallOutput.CallID = openai.String(stored.Output[len(stored.Output)-1].AsFunctionCall().CallID)
	turn2, err := c.Responses.New(ctx, next)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(turn2.Output); n != 2 || turn2.Output[0].AsFunctionCall().Name != "get_refund_ledger" {
		t.Errorf("the chained request did not get turn 2: %+v", turn2.Output)
	}
}

// The request checks reach the SDK as the API's errors.
func TestResponsesSDKRequestErrors(t *testing.T) {
	sc, err := samples.Lookup("refund")
	if err != nil {
		t.Fatal(err)
	}
	c := startResponses(t, sc, nil)
	ctx := context.Background()

	p := refundParams(t, sc)
	ghost := responses.ResponseInputItemParamOfFunctionCallOutput(`{}`)
	ghost.OfFunctionCallOutput.CallID = openai.String("call_Ghost")
	p.Input.OfInputItemList = append(p.Input.OfInputItemList, ghost)
	_, err = c.Responses.New(ctx, p)
	apiError(t, err, 400, "input", "", "No tool call found for function call output with call_id call_Ghost.")

	p = refundParams(t, sc)
	p.Temperature = openai.Float(2.5)
	_, err = c.Responses.New(ctx, p)
	apiError(t, err, 400, "temperature", "decimal_above_max_value", "Expected a value <= 2, but got 2.5 instead.")

	p = refundParams(t, sc)
	p.MaxOutputTokens = openai.Int(8)
	_, err = c.Responses.New(ctx, p)
	apiError(t, err, 400, "max_output_tokens", "integer_below_min_value", "Expected a value >= 16, but got 8 instead.")
}

// The error-after-200 fault: the nested error event ends the SDK's stream
// with an error carrying the event; the retry (the fault fired once) gets
// the whole turn.
func TestResponsesSDKInStreamError(t *testing.T) {
	sc, err := samples.Lookup("refund")
	if err != nil {
		t.Fatal(err)
	}
	faults, err := sim.ParseFaults("error-after-200")
	if err != nil {
		t.Fatal(err)
	}
	c := startResponses(t, sc, faults)
	p := refundParams(t, sc)
	_, err = callResponses(context.Background(), c, p, true)
	var se *ssestream.StreamError
	if !errors.As(err, &se) || !strings.Contains(se.Message, "service_unavailable_error") || !strings.Contains(string(se.Event.Data), `"type":"error","error":{"type":"service_unavailable_error","code":null,"message":"Overloaded","param":null},"sequence_number":`) {
		t.Fatalf("sdk: %v", err)
	}
	got, err := callResponses(context.Background(), c, p, true)
	if err != nil {
		t.Fatal(err)
	}
	checkTurn(t, 1, sdkTurns[""][0], got, true)
}

// A server keeps its latest KeepResponses responses: an older one cannot
// be continued any more (the API's "not found", as for an expired one),
// the latest still can.
func TestResponsesKeptAreBounded(t *testing.T) {
	sc, err := samples.Lookup("refund")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	base, err := sim.New(sim.Options{Scenario: sc, KeepResponses: 2}).Start(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := openai.NewClient(option.WithBaseURL(base+"/v1/"), option.WithAPIKey("sk-any"), option.WithMaxRetries(0))
	var rs []*responses.Response
	for range 4 {
		r, err := c.Responses.New(ctx, refundParams(t, sc))
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	continueFrom := func(r *responses.Response) error {
		next, _ := continuation(t, sc, r)
		_, err := c.Responses.New(ctx, next)
		return err
	}
	if err := continueFrom(rs[3]); err != nil {
		t.Fatalf("the latest response cannot be continued: %v", err)
	}
	apiError(t, continueFrom(rs[0]), 400, "previous_response_id", "previous_response_not_found", "Previous response with id '"+rs[0].ID+"' not found.")
}
