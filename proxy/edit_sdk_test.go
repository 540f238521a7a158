package proxy

// The official openai-go SDK, unmodified, streams a Chat Completions call
// through the proxy while a rule edits the streamed tool call's
// arguments: the SDK's accumulator assembles the edited call, the next
// request carries it back in its history, and the session stores the
// original, the edit, who made it, the bytes the client got, and that the
// history carried the edit.

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/modelwire/modelwire/session"
	"github.com/modelwire/modelwire/store"
)

func mustRules(t testing.TB, doc string) *RuleSet {
	t.Helper()
	rs, err := ParseRules("rules.json", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return NewRuleSet(rs)
}

func TestRuleEditsStreamedCallForOpenAISDK(t *testing.T) {
	rc := refund(t)
	rules := mustRules(t, `{"rules": [
	  {"name": "second line", "match": {"direction": "response", "tool": "get_order_line"},
	   "edit": {"arguments": {"get_order_line": {"line_id": "L2"}}}}
	]}`)
	r := newRig(t, "", Options{Rules: rules})
	c := openai.NewClient(option.WithBaseURL(r.url+"/v1/"), option.WithAPIKey(sdkKey), option.WithMaxRetries(0))
	params := openai.ChatCompletionNewParams{
		Model:         "refund-model",
		Messages:      []openai.ChatCompletionMessageParamUnion{openai.SystemMessage(rc.system), openai.UserMessage(rc.task)},
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}
	for _, tl := range rc.sc.Tools {
		params.Tools = append(params.Tools, openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name: tl.Name, Description: openai.String(tl.Description), Parameters: schemaMap(t, tl.Parameters)}))
	}
	ctx := context.Background()
	for turn := 1; turn <= 2; turn++ {
		s := c.Chat.Completions.NewStreaming(ctx, params)
		var acc openai.ChatCompletionAccumulator
		for s.Next() {
			if !acc.AddChunk(s.Current()) {
				t.Fatal("the accumulator refused a chunk")
			}
		}
		if err := s.Err(); err != nil {
			t.Fatalf("turn %d: %v", turn, err)
		}
		msg := acc.Choices[0].Message
		if turn == 1 {
			if len(msg.ToolCalls) == 0 || msg.ToolCalls[0].Function.Name != "get_order_line" {
				t.Fatalf("turn 1: %+v", msg)
			}
			var args map[string]any
			if err := json.Unmarshal([]byte(msg.ToolCalls[0].Function.Arguments), &args); err != nil || args["line_id"] != "L2" {
				t.Fatalf("the SDK assembled %q, not the edited call", msg.ToolCalls[0].Function.Arguments)
			}
			if acc.ID == "" || !strings.HasPrefix(msg.ToolCalls[0].ID, "call_") {
				t.Errorf("ids: response %q call %q", acc.ID, msg.ToolCalls[0].ID)
			}
		}
		if acc.Choices[0].FinishReason != "tool_calls" {
			break
		}
		params.Messages = append(params.Messages, msg.ToParam())
		for _, tc := range msg.ToolCalls {
			params.Messages = append(params.Messages, openai.ToolMessage(rc.result(tc.Function.Name, []byte(tc.Function.Arguments)), tc.ID))
		}
	}
	// The upstream answered the second request (its history carries the
	// edited call: the carried note below says so).
	ups := r.sim.responses()
	if len(ups) < 2 {
		t.Fatalf("%d requests reached the upstream", len(ups))
	}
	sessions := r.stop()
	if len(sessions) != 1 {
		t.Fatalf("%d sessions", len(sessions))
	}
	var edit, client, carried *store.Call
	for i, call := range sessions[0].Calls {
		switch {
		case call.Name == "get_order_line" && call.Turn == 1:
			edit = &sessions[0].Calls[i]
		case call.Name == ClientBytes:
			client = &sessions[0].Calls[i]
		case strings.HasPrefix(call.Reason, CarriedNote):
			carried = &sessions[0].Calls[i]
		}
	}
	if edit == nil || edit.Decision != session.Edited || !strings.Contains(string(edit.Arguments), `"line_id":"L1"`) ||
		!strings.Contains(string(edit.Edited), `"line_id":"L2"`) || !strings.Contains(edit.Reason, `rule 0 "second line" (rules.json)`) {
		t.Errorf("the edit as stored: %+v", edit)
	}
	if client == nil || !strings.Contains(string(client.Edited), `L2`) || !strings.Contains(string(client.Edited), "data: [DONE]") {
		t.Errorf("the bytes the client got, as stored: %+v", client)
	}
	if carried == nil || carried.Turn != 2 || !strings.Contains(carried.Reason, "edited (the model sees") {
		t.Errorf("the carried note: %+v (calls %+v)", carried, sessions[0].Calls)
	}
}

// The same through the Responses API, streamed: the SDK's argument deltas
// and its completed response both carry the edit; the next request (the
// call in its input) carries it back.
func TestRuleEditsStreamedResponsesCall(t *testing.T) {
	rc := refund(t)
	r := newRig(t, "", Options{Rules: mustRules(t, `{"rules": [{"match": {"direction": "response", "protocol": "openai-responses", "turn": 1},
	  "edit": {"arguments": {"get_*": {"line_id": "L2"}}}}]}`)})
	c := openai.NewClient(option.WithBaseURL(r.url+"/v1/"), option.WithAPIKey(sdkKey), option.WithMaxRetries(0))
	p := responses.ResponseNewParams{
		Model:        responses.ResponsesModel(rc.sc.Model),
		Instructions: openai.String(rc.system),
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{
			responses.ResponseInputItemParamOfMessage(rc.task, responses.EasyInputMessageRoleUser),
		}},
		Store: openai.Bool(false),
	}
	for _, tl := range rc.sc.Tools {
		p.Tools = append(p.Tools, responses.ToolUnionParam{OfFunction: &responses.FunctionToolParam{
			Name: tl.Name, Description: openai.String(tl.Description), Parameters: schemaMap(t, tl.Parameters), Strict: openai.Bool(tl.Strict)}})
	}
	ctx := context.Background()
	for turn := 1; turn <= 2; turn++ {
		s := c.Responses.NewStreaming(ctx, p)
		var resp *responses.Response
		deltas := ""
		for s.Next() {
			ev := s.Current()
			switch ev.Type {
			case "response.function_call_arguments.delta":
				deltas += ev.Delta
			case "response.completed", "response.incomplete":
				rr := ev.Response
				resp = &rr
			}
		}
		if err := s.Err(); err != nil || resp == nil {
			t.Fatalf("turn %d: %v", turn, err)
		}
		var outputs responses.ResponseInputParam
		for _, item := range resp.Output {
			if item.Type != "function_call" {
				continue
			}
			fc := item.AsFunctionCall()
			if turn == 1 && (!strings.Contains(fc.Arguments, `"line_id":"L2"`) || !strings.Contains(deltas, `"line_id":"L2"`)) {
				t.Fatalf("the SDK got %q (deltas %q), not the edited call", fc.Arguments, deltas)
			}
			param := fc.ToParam()
			p.Input.OfInputItemList = append(p.Input.OfInputItemList, responses.ResponseInputItemUnionParam{OfFunctionCall: &param})
			o := responses.ResponseInputItemParamOfFunctionCallOutput(rc.result(fc.Name, []byte(fc.Arguments)))
			o.OfFunctionCallOutput.CallID = openai.String(fc.CallID)
			outputs = append(outputs, o)
		}
		if len(outputs) == 0 {
			break
		}
		p.Input.OfInputItemList = append(p.Input.OfInputItemList, outputs...)
	}
	s := r.stop()[0]
	var carried bool
	for _, call := range s.Calls {
		carried = carried || strings.HasPrefix(call.Reason, CarriedNote) && strings.Contains(call.Reason, "edited (the model sees")
	}
	if !carried {
		t.Errorf("no carried note: %+v", s.Calls)
	}
}
