package openaichat

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/adapterstest"
)

// The call ids of the refund captures, so the encoded history matches
// what the decoder read from the same provider.
var (
	chatIDs = adapterstest.IDs{Call: func(turn, i int) string {
		return [][]string{{chatTurn1[0].id}, {chatTurn2[0].id, chatTurn2[1].id}}[turn-1][i]
	}}
	dsIDs = adapterstest.IDs{Call: func(turn, i int) string {
		return [][]string{{dsTurn1[0].id}, {dsTurn2[0].id, dsTurn2[1].id}}[turn-1][i]
	}}
	dsReasoning = []string{dsReasoning1, "商品行已给出类别、签收时间和原因；账务与适用政策互不依赖，分别查询。"}
)

// dsRefundRequest is the refund request as DeepSeek runs it in thinking
// mode: each earlier turn carries its reasoning, which must go back.
func dsRefundRequest(turn int, stream bool) *adapters.Request {
	req := adapterstest.RefundRequest(turn, dsIDs, stream)
	req.Limits.Reasoning = "high"
	for i := range req.Turns {
		req.Turns[i].Items = append([]adapters.OutputItem{{Kind: adapters.KindReasoning, ID: itemReasoning, Text: dsReasoning[i]}}, req.Turns[i].Items...)
	}
	return req
}

func encode(t *testing.T, p adapters.Protocol, req *adapters.Request, provider string) (*adapters.HTTPRequest, map[string]any) {
	t.Helper()
	hr, err := p.Encode(req, provider)
	if err != nil {
		t.Fatal(err)
	}
	var body map[string]any
	if err := json.Unmarshal(hr.Body, &body); err != nil {
		t.Fatalf("body is not JSON: %v", err)
	}
	return hr, body
}

// TestEncodeGoldens: the refund request of each turn, per dialect.
func TestEncodeGoldens(t *testing.T) {
	for turn := 1; turn <= 3; turn++ {
		hr, _ := encode(t, New(), adapterstest.RefundRequest(turn, chatIDs, true), adapters.ProviderOpenAI)
		adapterstest.Golden(t, fmt.Sprintf("encode_chat_refund_turn%d", turn), hr)
		hr, _ = encode(t, NewDeepSeek(), dsRefundRequest(turn, true), adapters.ProviderDeepSeek)
		adapterstest.Golden(t, fmt.Sprintf("encode_deepseek_refund_turn%d", turn), hr)
	}
}

// at walks a decoded JSON body by a map path such as
// messages[3].content[0].text or response_format.json_schema.schema.
func at(body any, path string) (any, error) {
	cur := body
	for _, seg := range strings.Split(path, ".") {
		m := regexp.MustCompile(`^([A-Za-z_]+)((?:\[\d+\])*)$`).FindStringSubmatch(seg)
		if m == nil {
			return nil, fmt.Errorf("bad path segment %q", seg)
		}
		obj, ok := cur.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: not an object", seg)
		}
		if cur, ok = obj[m[1]]; !ok {
			return nil, fmt.Errorf("%s: no field %s", path, m[1])
		}
		for _, ix := range regexp.MustCompile(`\d+`).FindAllString(m[2], -1) {
			n, _ := strconv.Atoi(ix)
			arr, ok := cur.([]any)
			if !ok || n >= len(arr) {
				return nil, fmt.Errorf("%s: index %d out of range", path, n)
			}
			cur = arr[n]
		}
	}
	return cur, nil
}

func get(t *testing.T, body any, path string) any {
	t.Helper()
	v, err := at(body, path)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func eq(t *testing.T, body any, path string, want any) {
	t.Helper()
	got := get(t, body, path)
	gj, _ := json.Marshal(got)
	wj, _ := json.Marshal(want)
	if !bytes.Equal(gj, wj) {
		t.Errorf("%s = %s, want %s", path, gj, wj)
	}
}

func absent(t *testing.T, body any, path string) {
	t.Helper()
	if v, err := at(body, path); err == nil {
		t.Errorf("%s = %v, want absent", path, v)
	}
}

// TestMapPathsResolve: every map entry points into the body at the text
// of its source (or the tool, or the schema).
func TestMapPathsResolve(t *testing.T) {
	sources := map[string]adapters.Source{}
	for _, s := range adapterstest.RefundSources() {
		sources[s.ID] = s
	}
	for _, tc := range []struct {
		p   adapters.Protocol
		req *adapters.Request
	}{{New(), adapterstest.RefundRequest(3, chatIDs, true)}, {NewDeepSeek(), dsRefundRequest(3, true)}} {
		hr, body := encode(t, tc.p, tc.req, "")
		seen := map[string]bool{}
		for _, m := range hr.Map {
			seen[m.Source] = true
			v := get(t, body, m.Field)
			switch {
			case strings.HasPrefix(m.Source, "tool:"):
				if get(t, v, "function.name") != strings.TrimPrefix(m.Source, "tool:") || m.Trust != adapters.TrustTrusted {
					t.Errorf("%s: %s is not that tool", tc.p.Name(), m.Field)
				}
			case m.Source == "output_schema":
				var text string
				if s, ok := v.(string); ok {
					text = s
				} else {
					b, _ := json.Marshal(v)
					text = string(b)
				}
				// As text (DeepSeek) the schema is printed as the case
				// holds it; compare it compact.
				if i := strings.Index(text, "{"); i > 0 {
					var c bytes.Buffer
					if json.Compact(&c, []byte(text[i:])) == nil {
						text = text[:i] + c.String()
					}
				}
				if !strings.Contains(text, `"requested_refund_cents":{"type":"integer"}`) || !strings.Contains(text, `"max_refund_cents":{"type":["integer","null"]}`) {
					t.Errorf("%s: %s does not hold the schema: %s", tc.p.Name(), m.Field, text)
				}
			case strings.HasPrefix(m.Source, "history:turn"):
				// A carried call (a tool_calls entry) or its result (a
				// tool message), by its id.
				it, _ := v.(map[string]any)
				id, _ := it["id"].(string)
				kind := "tool_calls"
				if it["role"] == "tool" {
					id, _ = it["tool_call_id"].(string)
					kind = "tool message"
				}
				if id == "" || !strings.HasSuffix(m.Source, " "+id) || m.Trust != adapters.TrustVerified || !strings.HasPrefix(m.Note, kind+" ") {
					t.Errorf("%s: %s → %s holds %v (note %q)", tc.p.Name(), m.Source, m.Field, v, m.Note)
				}
			default:
				s, ok := sources[m.Source]
				text, _ := v.(string)
				if !ok || !strings.Contains(text, s.Text) || m.Trust != s.Trust {
					t.Errorf("%s: %s (%s) does not hold source %s", tc.p.Name(), m.Field, text, m.Source)
				}
			}
		}
		for id := range sources {
			if !seen[id] {
				t.Errorf("%s: source %s is not in the map", tc.p.Name(), id)
			}
		}
		if !seen["output_schema"] || !seen["tool:get_refund_policy"] {
			t.Errorf("%s: map lacks the schema or a tool: %+v", tc.p.Name(), hr.Map)
		}
	}
}

// TestEncodeChatShapes checks, field by field, where each part of the
// refund request lands in an OpenAI Chat Completions request.
func TestEncodeChatShapes(t *testing.T) {
	src := adapterstest.RefundSources()
	hr, body := encode(t, New(), adapterstest.RefundRequest(3, chatIDs, true), adapters.ProviderOpenAI)
	if hr.Method != "POST" || hr.Path != "/v1/chat/completions" || hr.Headers["Content-Type"] != "application/json" || len(hr.Headers) != 1 {
		t.Errorf("%s %s %v", hr.Method, hr.Path, hr.Headers)
	}
	if len(hr.Degradations) != 0 {
		t.Errorf("degradations on OpenAI: %v", hr.Degradations)
	}
	if !strings.HasPrefix(string(hr.Body), `{"model":"refund-model","messages":[`) {
		t.Errorf("body does not start with model, messages: %.60s", hr.Body)
	}
	eq(t, body, "messages[0]", map[string]any{"role": "system", "content": src[0].Text})
	eq(t, body, "messages[1]", map[string]any{"role": "developer", "content": src[1].Text})
	eq(t, body, "messages[2].role", "user")
	for j, s := range src[2:] {
		eq(t, body, fmt.Sprintf("messages[2].content[%d]", j), map[string]any{"type": "text", "text": adapters.SourceText(s)})
	}
	if n := len(get(t, body, "messages[2].content").([]any)); n != 6 {
		t.Errorf("user message has %d parts, want 6 (the task and five context parts)", n)
	}
	// turn 1: the assistant's call, then its result
	eq(t, body, "messages[3]", map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{
		"id": chatTurn1[0].id, "type": "function", "function": map[string]any{"name": "get_order_line", "arguments": adapterstest.RefundTurn1[0].Arguments}}}})
	eq(t, body, "messages[4]", map[string]any{"role": "tool", "tool_call_id": chatTurn1[0].id, "content": adapterstest.RefundTurn1[0].Result})
	// turn 2: two calls in one assistant message, results in call order
	eq(t, body, "messages[5].tool_calls[1].id", chatTurn2[1].id)
	eq(t, body, "messages[5].tool_calls[1].function.arguments", adapterstest.RefundTurn2[1].Arguments)
	eq(t, body, "messages[6].tool_call_id", chatTurn2[0].id)
	eq(t, body, "messages[7].tool_call_id", chatTurn2[1].id)
	eq(t, body, "messages[7].content", adapterstest.RefundTurn2[1].Result)
	if n := len(get(t, body, "messages").([]any)); n != 8 {
		t.Errorf("%d messages, want 8", n)
	}

	eq(t, body, "tools[0].type", "function")
	eq(t, body, "tools[0].function.name", "get_order_line")
	eq(t, body, "tools[0].function.strict", true)
	eq(t, body, "tools[2].function.parameters.required", []string{"category", "received_at", "reason"})
	eq(t, body, "tool_choice", "auto")
	eq(t, body, "parallel_tool_calls", true)
	eq(t, body, "response_format.type", "json_schema")
	eq(t, body, "response_format.json_schema.name", "refund_assessment")
	eq(t, body, "response_format.json_schema.strict", true)
	eq(t, body, "response_format.json_schema.schema.additionalProperties", false)
	eq(t, body, "max_completion_tokens", 1800)
	absent(t, body, "max_tokens")
	absent(t, body, "thinking")
	absent(t, body, "reasoning_effort")
	eq(t, body, "stream", true)
	eq(t, body, "stream_options", map[string]any{"include_usage": true})
}

// TestEncodeDeepSeekShapes: the same request for DeepSeek, with each
// degradation carried out and recorded.
func TestEncodeDeepSeekShapes(t *testing.T) {
	src := adapterstest.RefundSources()
	hr, body := encode(t, NewDeepSeek(), dsRefundRequest(3, true), adapters.ProviderDeepSeek)
	if hr.Path != "/chat/completions" {
		t.Errorf("path %s", hr.Path)
	}
	eq(t, body, "messages[0]", map[string]any{"role": "system", "content": src[0].Text})
	// the skill: a second system message, not a developer (read as user) one
	eq(t, body, "messages[1]", map[string]any{"role": "system", "content": src[1].Text})
	// the schema as text, in a third system message, with JSON mode
	eq(t, body, "messages[2].role", "system")
	eq(t, body, "messages[2].content", adapters.SchemaInstruction(adapterstest.RefundRequest(1, dsIDs, true).Output))
	eq(t, body, "response_format", map[string]any{"type": "json_object"})
	eq(t, body, "messages[3].role", "user")
	eq(t, body, "messages[3].content[5].text", adapters.SourceText(src[7]))
	// reasoning passback on both tool-call turns
	eq(t, body, "messages[4]", map[string]any{"role": "assistant", "content": nil, "reasoning_content": dsReasoning[0], "tool_calls": []any{map[string]any{
		"id": dsTurn1[0].id, "type": "function", "function": map[string]any{"name": "get_order_line", "arguments": adapterstest.RefundTurn1[0].Arguments}}}})
	eq(t, body, "messages[5].tool_call_id", dsTurn1[0].id)
	eq(t, body, "messages[6].reasoning_content", dsReasoning[1])
	eq(t, body, "messages[7].tool_call_id", dsTurn2[0].id)
	eq(t, body, "messages[8].tool_call_id", dsTurn2[1].id)

	absent(t, body, "tools[0].function.strict")
	absent(t, body, "parallel_tool_calls")
	eq(t, body, "tool_choice", "auto")
	eq(t, body, "thinking", map[string]any{"type": "enabled"})
	eq(t, body, "reasoning_effort", "high")
	eq(t, body, "max_tokens", 1800)
	absent(t, body, "max_completion_tokens")
	eq(t, body, "stream_options.include_usage", true)

	// every degradation Check finds is recorded as it words it: the
	// developer role, strict, the schema as text, parallel_tool_calls
	caps, _ := adapters.CapabilitiesFor(adapters.ProviderDeepSeek, adapters.DeepSeekChat)
	want, _ := caps.Check(dsRefundRequest(3, true))
	if !slices.Equal(hr.Degradations, want) || len(want) != 4 {
		t.Errorf("degradations:\n%q\nwant\n%q", hr.Degradations, want)
	}
	for i, word := range []string{"developer", "strict", "JSON mode", "parallel"} {
		if i < len(hr.Degradations) && !strings.Contains(hr.Degradations[i], word) {
			t.Errorf("degradation %d = %q, want one about %s", i, hr.Degradations[i], word)
		}
	}
	for _, m := range hr.Map {
		if (m.Source == "skill:refund_assessment@1.2" || m.Source == "output_schema") && m.Note == "" {
			t.Errorf("map entry %s has no note on its degradation", m.Source)
		}
	}
}

// TestDeepSeekReasoningPassbackFromDecodedTurn runs the loop the session
// runs: decode DeepSeek's turn-1 stream, take the turn as history, answer
// its call, and encode turn 2. The reasoning read from the stream goes back
// with the call.
func TestDeepSeekReasoningPassbackFromDecodedTurn(t *testing.T) {
	st := adapters.NewStream(NewDeepSeek())
	if err := adapters.ReadStream(NewDeepSeek(), st, bytes.NewReader(adapterstest.ReadCapture(t, "deepseek_refund_turn1.sse")), func(adapters.Step) error { return nil }); err != nil {
		t.Fatal(err)
	}
	turn := st.Reducer().Turn()
	turn.Results = []adapters.ToolResult{{CallID: dsTurn1[0].id, Name: "get_order_line", Content: adapterstest.RefundTurn1[0].Result}}
	req := adapterstest.RefundRequest(1, dsIDs, true)
	req.Limits.Reasoning = "high"
	req.Turns = []adapters.Turn{turn}
	_, body := encode(t, NewDeepSeek(), req, adapters.ProviderDeepSeek)
	eq(t, body, "messages[4].reasoning_content", dsReasoning1)
	eq(t, body, "messages[4].tool_calls[0].id", dsTurn1[0].id)
	eq(t, body, "messages[4].tool_calls[0].function.arguments", adapterstest.RefundTurn1[0].Arguments)
	eq(t, body, "messages[5].tool_call_id", dsTurn1[0].id)
}

func TestEncodeOptions(t *testing.T) {
	// results are matched by call_id, whatever order they come in
	req := adapterstest.RefundRequest(3, chatIDs, false)
	slices.Reverse(req.Turns[1].Results)
	_, body := encode(t, New(), req, "")
	eq(t, body, "messages[6].tool_call_id", chatTurn2[0].id)
	eq(t, body, "messages[6].content", adapterstest.RefundTurn2[0].Result)
	absent(t, body, "stream")
	absent(t, body, "stream_options")

	// a named tool choice, and reasoning effort on OpenAI
	req = adapterstest.RefundRequest(1, chatIDs, true)
	req.Choice = adapters.ToolChoice{Mode: adapters.ToolChoiceNamed, Name: "get_order_line"}
	req.Limits.Reasoning = "low"
	_, body = encode(t, New(), req, adapters.ProviderOpenAI)
	eq(t, body, "tool_choice", map[string]any{"type": "function", "function": map[string]any{"name": "get_order_line"}})
	eq(t, body, "reasoning_effort", "low")

	// DeepSeek without a reasoning level: thinking stated as disabled
	req = adapterstest.RefundRequest(1, dsIDs, true)
	_, body = encode(t, NewDeepSeek(), req, adapters.ProviderDeepSeek)
	eq(t, body, "thinking", map[string]any{"type": "disabled"})
	absent(t, body, "reasoning_effort")
	req.Limits.Reasoning = "medium"
	_, body = encode(t, NewDeepSeek(), req, adapters.ProviderDeepSeek)
	eq(t, body, "reasoning_effort", "high")

	// no tools: no tool_choice, no parallel_tool_calls
	req = adapterstest.RefundRequest(1, chatIDs, true)
	req.Tools = nil
	_, body = encode(t, New(), req, "")
	absent(t, body, "tools")
	absent(t, body, "tool_choice")
	absent(t, body, "parallel_tool_calls")

	// an error result is sent, and its lost flag recorded
	req = adapterstest.RefundRequest(2, chatIDs, true)
	req.Turns[0].Results[0].IsError = true
	hr, _ := encode(t, New(), req, "")
	if len(hr.Degradations) != 1 || !strings.Contains(hr.Degradations[0], "no error flag") {
		t.Errorf("degradations %v", hr.Degradations)
	}
}

func TestEncodeRefuses(t *testing.T) {
	cases := map[string]func() (adapters.Protocol, *adapters.Request, string){
		"deepseek speaks deepseek-chat, not openai-chat": func() (adapters.Protocol, *adapters.Request, string) {
			return New(), adapterstest.RefundRequest(1, chatIDs, true), adapters.ProviderDeepSeek
		},
		"a call without a result": func() (adapters.Protocol, *adapters.Request, string) {
			req := adapterstest.RefundRequest(3, chatIDs, true)
			req.Turns[1].Results = req.Turns[1].Results[:1]
			return New(), req, ""
		},
		"a result for no call": func() (adapters.Protocol, *adapters.Request, string) {
			req := adapterstest.RefundRequest(2, chatIDs, true)
			req.Turns[0].Results = append(req.Turns[0].Results, adapters.ToolResult{CallID: "call_nobody", Content: "{}"})
			return New(), req, ""
		},
		"previous-response-id history": func() (adapters.Protocol, *adapters.Request, string) {
			req := adapterstest.RefundRequest(2, chatIDs, true)
			req.History = adapters.HistoryPreviousResponse
			return NewDeepSeek(), req, ""
		},
		"no user source": func() (adapters.Protocol, *adapters.Request, string) {
			req := adapterstest.RefundRequest(1, chatIDs, true)
			req.Sources = req.Sources[:2]
			return New(), req, ""
		},
	}
	for name, c := range cases {
		p, req, provider := c()
		if _, err := p.Encode(req, provider); err == nil {
			t.Errorf("%s: encoded without an error", name)
		}
	}
}

// DeepSeek's rules: thinking with a forced tool_choice is refused before
// sending, and reasoning_content goes back only on a turn that called
// tools (a final answer's reasoning stays out of the next input).
func TestDeepSeekThinkingRules(t *testing.T) {
	req := dsRefundRequest(1, true)
	req.Choice = adapters.ToolChoice{Mode: adapters.ToolChoiceRequired}
	if _, err := NewDeepSeek().Encode(req, adapters.ProviderDeepSeek); err == nil || !strings.Contains(err.Error(), "forced tool_choice") {
		t.Fatalf("thinking with a forced tool_choice: %v", err)
	}
	req = dsRefundRequest(1, true)
	req.Turns = []adapters.Turn{{Items: []adapters.OutputItem{
		{Kind: adapters.KindReasoning, ID: itemReasoning, Text: "thinking about the answer"},
		{Kind: adapters.KindMessage, Text: `{"decision":"needs_review"}`},
	}, FollowUp: "fix it"}}
	hr, body := encode(t, NewDeepSeek(), req, adapters.ProviderDeepSeek)
	absent(t, body, "messages[4].reasoning_content")
	eq(t, body, "messages[5].content[0].text", "fix it")
	if !strings.Contains(strings.Join(hr.Degradations, "\n"), "reasoning_content not sent back") {
		t.Fatalf("degradations %v", hr.Degradations)
	}
}
