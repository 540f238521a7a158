package sim_test

// The official Go SDK (github.com/openai/openai-go/v3) drives the whole
// refund loop against a real sim.Server over the Responses API, in both
// history modes, streaming and not, for every refund variant; its
// accumulated result must equal the scenario's script. The server's
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

// systemAndTask are the scenario's first system rules and its task, which
// an SDK user writes into the first request.
func systemAndTask(sc *session.Scenario) (system, task string) {
	for _, s := range sc.Sources {
		switch {
		case s.Role == adapters.RoleSystem && system == "":
			system = s.Text
		case s.Role == adapters.RoleUser && task == "":
			task = s.Text
		}
	}
	return system, task
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
	if sc.Output.Mode == adapters.OutputJSONSchema {
		var schema map[string]any
		if err := json.Unmarshal(sc.Output.Schema, &schema); err != nil {
			t.Fatal(err)
		}
		p.Text = responses.ResponseTextConfigParam{Format: responses.ResponseFormatTextConfigUnionParam{
			OfJSONSchema: &responses.ResponseFormatTextJSONSchemaConfigParam{Name: sc.Output.Name, Schema: schema, Strict: openai.Bool(true)},
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

// checkTurn: what the SDK accumulated equals the scripted turn.
func checkTurn(t *testing.T, n int, want adapters.ModelTurn, got sdkTurn, stream bool) {
	t.Helper()
	var text, reasoning, refusal string
	var calls []adapters.OutputItem
	for _, it := range want.Items {
		switch it.Kind {
		case adapters.KindMessage:
			text += it.Text
		case adapters.KindReasoning:
			reasoning += it.Text
		case adapters.KindRefusal:
			refusal += it.Text
		case adapters.KindToolCall:
			calls = append(calls, it)
		}
	}
	resp := got.resp
	var gotReasoning, gotRefusal strings.Builder
	var gotCalls []responses.ResponseFunctionToolCall
	for _, item := range resp.Output {
		switch item.Type {
		case "reasoning":
			r := item.AsReasoning()
			for _, s := range r.Summary {
				gotReasoning.WriteString(s.Text)
			}
			if !strings.HasPrefix(r.EncryptedContent, "gAAAAAB") || !strings.HasPrefix(r.ID, "rs_") {
				t.Errorf("turn %d: reasoning item %s without encrypted_content", n, r.ID)
			}
		case "function_call":
			gotCalls = append(gotCalls, item.AsFunctionCall())
		case "message":
			for _, c := range item.AsMessage().Content {
				if c.Type == "refusal" {
					gotRefusal.WriteString(c.Refusal)
				}
			}
		}
	}
	if resp.OutputText() != text || gotReasoning.String() != reasoning || gotRefusal.String() != refusal {
		t.Errorf("turn %d: text %q reasoning %q refusal %q; want %q %q %q", n, resp.OutputText(), gotReasoning.String(), gotRefusal.String(), text, reasoning, refusal)
	}
	if stream && (got.text != text || got.reasoning != reasoning || got.refusal != refusal) {
		t.Errorf("turn %d: streamed text %q reasoning %q refusal %q", n, got.text, got.reasoning, got.refusal)
	}
	if len(gotCalls) != len(calls) {
		t.Fatalf("turn %d: %d calls, want %d", n, len(gotCalls), len(calls))
	}
	for i, c := range gotCalls {
		if c.Name != calls[i].Name || c.Arguments != adapters.ArgumentText(calls[i].Arguments) || !strings.HasPrefix(c.CallID, "call_") || !strings.HasPrefix(c.ID, "fc_") {
			t.Errorf("turn %d call %d: %s %s %s %s", n, i, c.ID, c.CallID, c.Name, c.Arguments)
		}
	}
	if resp.Status != responses.ResponseStatusCompleted || !strings.HasPrefix(resp.ID, "resp_") {
		t.Errorf("turn %d: status %s id %s", n, resp.Status, resp.ID)
	}
	u := resp.Usage
	if u.InputTokens != deref(want.Usage.InputTokens) || u.OutputTokens != deref(want.Usage.OutputTokens) ||
		u.InputTokensDetails.CachedTokens != deref(want.Usage.CacheReadTokens) || u.OutputTokensDetails.ReasoningTokens != deref(want.Usage.ReasoningTokens) {
		t.Errorf("turn %d: usage %+v, want %+v", n, u, want.Usage)
	}
}

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
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
	if len(out) < 8 {
		t.Fatalf("%d refund scenarios", len(out))
	}
	return out
}

// The whole refund loop, as SDK users write it: with the full history
// (store:false, the output items echoed back with their encrypted reasoning,
// then one function_call_output per call) and chained by
// previous_response_id (only the new outputs), streaming and not.
func TestResponsesSDKRefundLoop(t *testing.T) {
	for _, sc := range refundScenarios(t) {
		for _, chained := range []bool{false, true} {
			for _, stream := range []bool{true, false} {
				name := fmt.Sprintf("%s/chained=%v/stream=%v", sc.Name, chained, stream)
				if sc.Variant != "" {
					name = fmt.Sprintf("%s/%s/chained=%v/stream=%v", sc.Name, sc.Variant, chained, stream)
				}
				t.Run(name, func(t *testing.T) {
					c := startResponses(t, sc, nil)
					p := refundParams(t, sc)
					if !chained {
						p.Store = openai.Bool(false)
						p.Include = []responses.ResponseIncludable{responses.ResponseIncludableReasoningEncryptedContent}
					}
					seen := map[string]bool{}
					for n, want := range sc.Script {
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
								o := responses.ResponseInputItemParamOfFunctionCallOutput(`{"evidence_id":"EV-` + fc.Name + `"}`)
								o.OfFunctionCallOutput.CallID = openai.String(fc.CallID)
								outputs = append(outputs, o)
							}
						}
						if len(outputs) == 0 {
							if n != len(sc.Script)-1 {
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
	fc := unstored.Output[len(unstored.Output)-1].AsFunctionCall()
	out := responses.ResponseInputItemParamOfFunctionCallOutput(`{}`)
	out.OfFunctionCallOutput.CallID = openai.String(fc.CallID)
	next := refundParams(t, sc)
	next.PreviousResponseID = openai.String(unstored.ID)
	next.Input.OfInputItemList = responses.ResponseInputParam{out}
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
	out.OfFunctionCallOutput.CallID = openai.String(stored.Output[len(stored.Output)-1].AsFunctionCall().CallID)
	turn2, err := c.Responses.New(ctx, next)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(turn2.Output); n != 3 || turn2.Output[1].AsFunctionCall().Name != "get_refund_ledger" {
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
	checkTurn(t, 1, sc.Script[0], got, true)
}
