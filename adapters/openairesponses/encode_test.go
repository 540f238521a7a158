package openairesponses

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/adapterstest"
)

func encode(t *testing.T, req *adapters.Request, provider string) (*adapters.HTTPRequest, map[string]any) {
	t.Helper()
	hr, err := New().Encode(req, provider)
	if err != nil {
		t.Fatal(err)
	}
	var body map[string]any
	dec := json.NewDecoder(bytes.NewReader(hr.Body))
	dec.UseNumber()
	if err := dec.Decode(&body); err != nil {
		t.Fatalf("body is not JSON: %v", err)
	}
	if !strings.HasPrefix(string(hr.Body), `{"model":`) {
		t.Errorf("model is not the first field: %.40s", hr.Body)
	}
	checkMap(t, req, hr, body)
	return hr, body
}

var pathStep = regexp.MustCompile(`^([A-Za-z_]+)((?:\[\d+\])*)$`)

// walk follows a field path such as `input[1].content[0].text` into body.
func walk(body any, path string) (any, error) {
	cur := body
	for _, seg := range strings.Split(path, ".") {
		m := pathStep.FindStringSubmatch(seg)
		if m == nil {
			return nil, fmt.Errorf("bad path segment %q", seg)
		}
		obj, ok := cur.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: not an object", seg)
		}
		if cur, ok = obj[m[1]]; !ok {
			return nil, fmt.Errorf("%s: no member %q", path, m[1])
		}
		for _, idx := range regexp.MustCompile(`\d+`).FindAllString(m[2], -1) {
			i, _ := strconv.Atoi(idx)
			arr, ok := cur.([]any)
			if !ok || i >= len(arr) {
				return nil, fmt.Errorf("%s: index %d out of range", path, i)
			}
			cur = arr[i]
		}
	}
	return cur, nil
}

// checkMap asserts that every map entry points at what it names: a source's
// text, a tool, the output schema.
func checkMap(t *testing.T, req *adapters.Request, hr *adapters.HTTPRequest, body map[string]any) {
	t.Helper()
	sources := map[string]adapters.Source{}
	for _, s := range req.Sources {
		sources[s.ID] = s
	}
	seen := map[string]bool{}
	for _, m := range hr.Map {
		seen[m.Source] = true
		v, err := walk(body, m.Field)
		if err != nil {
			t.Errorf("map %s → %s: %v", m.Source, m.Field, err)
			continue
		}
		switch {
		case strings.HasPrefix(m.Source, "tool:"):
			if name, _ := v.(map[string]any)["name"].(string); "tool:"+name != m.Source || m.Trust != adapters.TrustTrusted {
				t.Errorf("map %s → %s finds tool %q", m.Source, m.Field, name)
			}
		case m.Source == "output_schema":
			if name, _ := v.(map[string]any)["name"].(string); name != req.Output.Name {
				t.Errorf("map output_schema → %s finds %v", m.Field, v)
			}
		case m.Field == "previous_response_id":
			if v != req.Turns[len(req.Turns)-1].ResponseID || m.Note == "" {
				t.Errorf("map %s → previous_response_id: %v, note %q", m.Source, v, m.Note)
			}
		default:
			s, ok := sources[m.Source]
			text, _ := v.(string)
			if !ok || !strings.Contains(text, adapters.SourceText(s)) || m.Trust != s.Trust {
				t.Errorf("map %s → %s does not find the source's text (trust %s)", m.Source, m.Field, m.Trust)
			}
		}
	}
	for _, s := range req.Sources {
		if !seen[s.ID] {
			t.Errorf("source %s is not in the map", s.ID)
		}
	}
}

func refundRequest(turn int, stream bool) *adapters.Request {
	return adapterstest.RefundRequest(turn, refundRequestIDs(), stream)
}

func TestEncodeRefundGoldens(t *testing.T) {
	for turn := 1; turn <= 3; turn++ {
		hr, _ := encode(t, refundRequest(turn, true), adapters.ProviderOpenAI)
		adapterstest.Golden(t, fmt.Sprintf("request_turn%d", turn), hr)
		req := refundRequest(turn, true)
		req.History = adapters.HistoryPreviousResponse
		hr, _ = encode(t, req, adapters.ProviderOpenAI)
		adapterstest.Golden(t, fmt.Sprintf("request_turn%d_previous_response_id", turn), hr)
	}
}

func get(t *testing.T, body map[string]any, path string) any {
	t.Helper()
	v, err := walk(body, path)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func wantField(t *testing.T, body map[string]any, path string, want any) {
	t.Helper()
	got := get(t, body, path)
	if n, ok := got.(json.Number); ok {
		got = n.String()
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s = %v, want %v", path, got, want)
	}
}

func TestEncodeRefundTurn1Shape(t *testing.T) {
	req := refundRequest(1, true)
	hr, body := encode(t, req, adapters.ProviderOpenAI)
	if hr.Method != "POST" || hr.Path != "/v1/responses" || hr.Headers["content-type"] != "application/json" {
		t.Errorf("request line %s %s headers %v", hr.Method, hr.Path, hr.Headers)
	}
	if _, ok := hr.Headers["authorization"]; ok {
		t.Error("the encoder must not set the auth header")
	}
	src := adapterstest.RefundSources()
	wantField(t, body, "model", "refund-model")
	wantField(t, body, "instructions", src[0].Text)
	// The skill is a developer message.
	wantField(t, body, "input[0].type", "message")
	wantField(t, body, "input[0].role", "developer")
	wantField(t, body, "input[0].content[0].type", "input_text")
	wantField(t, body, "input[0].content[0].text", src[1].Text)
	// The task and the four context sources: one user message, one part each.
	wantField(t, body, "input[1].role", "user")
	parts := get(t, body, "input[1].content").([]any)
	if len(parts) != 5 {
		t.Fatalf("user message has %d parts, want 5", len(parts))
	}
	wantField(t, body, "input[1].content[0].text", src[2].Text)
	wantField(t, body, "input[1].content[3].text", adapters.SourceText(src[5]))
	if !strings.Contains(get(t, body, "input[1].content[3].text").(string), `trust="unverified"`) {
		t.Error("context material is not labelled with its trust")
	}
	if n := len(get(t, body, "input").([]any)); n != 2 {
		t.Errorf("turn 1 input has %d items, want 2", n)
	}
	// Tools: flat function shape.
	tool := get(t, body, "tools[0]").(map[string]any)
	if _, nested := tool["function"]; nested {
		t.Error("tools are nested under function (Chat shape)")
	}
	wantField(t, body, "tools[0].type", "function")
	wantField(t, body, "tools[0].name", "get_order_line")
	wantField(t, body, "tools[0].strict", true)
	wantField(t, body, "tools[2].name", "get_refund_policy")
	wantField(t, body, "tools[0].parameters.required[0]", "order_id")
	wantField(t, body, "tool_choice", "auto")
	wantField(t, body, "parallel_tool_calls", true)
	// Output contract.
	wantField(t, body, "text.format.type", "json_schema")
	wantField(t, body, "text.format.name", "refund_assessment")
	wantField(t, body, "text.format.strict", true)
	wantField(t, body, "text.format.schema.additionalProperties", false)
	wantField(t, body, "max_output_tokens", 2048)
	wantField(t, body, "stream", true)
	for _, absent := range []string{"store", "previous_response_id", "max_tokens", "response_format", "messages"} {
		if _, ok := body[absent]; ok {
			t.Errorf("unexpected field %s", absent)
		}
	}
	if len(hr.Degradations) != 0 {
		t.Errorf("degradations %v", hr.Degradations)
	}
	// Non-streaming leaves stream out.
	_, body = encode(t, refundRequest(1, false), adapters.ProviderOpenAI)
	if _, ok := body["stream"]; ok {
		t.Error("stream sent for a non-streaming request")
	}
}

func TestEncodeRefundHistoryFull(t *testing.T) {
	_, body := encode(t, refundRequest(3, true), adapters.ProviderOpenAI)
	input := get(t, body, "input").([]any)
	var got []string
	for _, it := range input {
		m := it.(map[string]any)
		got = append(got, fmt.Sprint(m["type"], " ", m["role"], m["call_id"]))
	}
	want := []string{
		"message developer<nil>", "message user<nil>",
		"function_call <nil>" + refundIDs.call[0], "function_call_output <nil>" + refundIDs.call[0],
		"function_call <nil>" + refundIDs.call[1], "function_call <nil>" + refundIDs.call[2],
		"function_call_output <nil>" + refundIDs.call[1], "function_call_output <nil>" + refundIDs.call[2],
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("input items:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	wantField(t, body, "input[2].id", refundIDs.fc[0])
	wantField(t, body, "input[2].name", "get_order_line")
	wantField(t, body, "input[2].arguments", adapterstest.RefundTurn1[0].Arguments)
	wantField(t, body, "input[2].status", "completed")
	wantField(t, body, "input[3].output", adapterstest.RefundTurn1[0].Result)
	wantField(t, body, "input[5].id", refundIDs.fc[2])
	wantField(t, body, "input[7].output", adapterstest.RefundTurn2[1].Result)
	// arguments travel as a JSON string, not an object.
	if _, ok := get(t, body, "input[4].arguments").(string); !ok {
		t.Error("function_call.arguments is not a string")
	}
}

func TestEncodePreviousResponseID(t *testing.T) {
	req := refundRequest(3, true)
	req.History = adapters.HistoryPreviousResponse
	hr, body := encode(t, req, adapters.ProviderOpenAI)
	wantField(t, body, "previous_response_id", refundIDs.resp[2])
	// Instructions and tools are not carried over: re-sent.
	wantField(t, body, "instructions", adapterstest.RefundSources()[0].Text)
	if n := len(get(t, body, "tools").([]any)); n != 3 {
		t.Errorf("%d tools re-sent, want 3", n)
	}
	input := get(t, body, "input").([]any)
	if len(input) != 2 {
		t.Fatalf("input has %d items, want only turn 2's two results", len(input))
	}
	wantField(t, body, "input[0].type", "function_call_output")
	wantField(t, body, "input[0].call_id", refundIDs.call[1])
	wantField(t, body, "input[1].call_id", refundIDs.call[2])
	for _, m := range hr.Map {
		if m.Source == "task" && m.Field != "previous_response_id" {
			t.Errorf("task mapped to %s in a chained request", m.Field)
		}
	}
	// Turn 1 is a whole request even in this mode.
	req = refundRequest(1, true)
	req.History = adapters.HistoryPreviousResponse
	_, body = encode(t, req, adapters.ProviderOpenAI)
	if _, ok := body["previous_response_id"]; ok {
		t.Error("turn 1 chains on nothing")
	}
	// A turn without a response id cannot be chained on.
	req = refundRequest(2, true)
	req.History = adapters.HistoryPreviousResponse
	req.Turns[0].ResponseID = ""
	if _, err := New().Encode(req, adapters.ProviderOpenAI); err == nil {
		t.Error("chaining on a turn without a response id did not fail")
	}
}

func TestEncodeDeepSeek(t *testing.T) {
	yes := true
	req := refundRequest(2, true)
	req.Store = &yes
	hr, body := encode(t, req, adapters.ProviderDeepSeek)
	if hr.Path != "/responses" {
		t.Errorf("path %s", hr.Path)
	}
	wantField(t, body, "store", false)
	if _, ok := body["parallel_tool_calls"]; ok {
		t.Error("parallel_tool_calls sent to a provider that ignores it")
	}
	joined := strings.Join(hr.Degradations, "\n")
	for _, want := range []string{"treats developer messages as user", "ignores the parallel tool calls switch", "store sent as false"} {
		if !strings.Contains(joined, want) {
			t.Errorf("degradations lack %q: %s", want, joined)
		}
	}
	for _, m := range hr.Map {
		if m.Source == "skill:refund_assessment@1.2" && !strings.Contains(m.Note, "user") {
			t.Errorf("skill mapping has no note: %+v", m)
		}
	}
	req.History = adapters.HistoryPreviousResponse
	if _, err := New().Encode(req, adapters.ProviderDeepSeek); err == nil {
		t.Error("previous_response_id on stateless DeepSeek did not fail")
	}
}

func TestEncodeOptions(t *testing.T) {
	req := refundRequest(1, false)
	req.Sources = append([]adapters.Source{req.Sources[0], {ID: "rules-2", Role: adapters.RoleSystem, Trust: adapters.TrustTrusted, Text: "第二条规则。"}}, req.Sources[1:]...)
	req.Choice = adapters.ToolChoice{Mode: adapters.ToolChoiceNamed, Name: "get_refund_policy"}
	no := false
	req.Store = &no
	req.Limits.Reasoning = "low"
	_, body := encode(t, req, adapters.ProviderOpenAI)
	wantField(t, body, "input[0].role", "system")
	wantField(t, body, "input[0].content[0].text", "第二条规则。")
	wantField(t, body, "input[1].role", "developer")
	wantField(t, body, "tool_choice.type", "function")
	wantField(t, body, "tool_choice.name", "get_refund_policy")
	wantField(t, body, "store", false)
	wantField(t, body, "include[0]", "reasoning.encrypted_content")
	wantField(t, body, "reasoning.effort", "low")

	req.Choice = adapters.ToolChoice{Mode: adapters.ToolChoiceRequired}
	req.Output = adapters.OutputContract{Mode: adapters.OutputJSON}
	_, body = encode(t, req, adapters.ProviderOpenAI)
	wantField(t, body, "tool_choice", "required")
	wantField(t, body, "text.format.type", "json_object")

	req.Output = adapters.OutputContract{Mode: adapters.OutputText}
	_, body = encode(t, req, adapters.ProviderOpenAI)
	if _, ok := body["text"]; ok {
		t.Error("text.format sent for a plain text contract")
	}
	if _, err := New().Encode(req, "nobody"); err == nil {
		t.Error("an unknown provider did not fail")
	}
}

// A decoded turn replays as it came: reasoning with its encrypted content,
// the call with its fc_ id, and a message with its refusal merged back.
func TestEncodeReplaysDecodedTurns(t *testing.T) {
	st := adapters.NewStream(New())
	_ = adapters.ReadStream(New(), st, bytes.NewReader(adapterstest.ReadCapture(t, "refund_turn1.sse")), func(adapters.Step) error { return nil })
	turn := st.Reducer().Turn()
	turn.Results = []adapters.ToolResult{{CallID: refundIDs.call[0], Name: "get_order_line", Content: adapterstest.RefundTurn1[0].Result}}
	req := refundRequest(1, true)
	req.Turns = []adapters.Turn{turn}
	no := false
	req.Store = &no
	_, body := encode(t, req, adapters.ProviderOpenAI)
	wantField(t, body, "input[2].type", "reasoning")
	wantField(t, body, "input[2].id", refundIDs.rs)
	wantField(t, body, "input[2].encrypted_content", refundIDs.encrypted)
	wantField(t, body, "input[2].summary[0].type", "summary_text")
	wantField(t, body, "input[2].summary[0].text", refundIDs.reasoningText)
	wantField(t, body, "input[3].type", "function_call")
	wantField(t, body, "input[3].id", refundIDs.fc[0])
	wantField(t, body, "input[3].call_id", refundIDs.call[0])
	wantField(t, body, "input[4].type", "function_call_output")
	wantField(t, body, "include[0]", "reasoning.encrypted_content")

	st = adapters.NewStream(New())
	_ = adapters.ReadStream(New(), st, bytes.NewReader([]byte(
		"data: "+`{"type":"response.output_item.done","sequence_number":0,"output_index":0,"item":{"id":"msg_1","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Partly: ","annotations":[]},{"type":"refusal","refusal":"no refunds."}]}}`+"\n\n")), func(adapters.Step) error { return nil })
	req = refundRequest(1, true)
	req.Turns = []adapters.Turn{st.Reducer().Turn()}
	_, body = encode(t, req, adapters.ProviderOpenAI)
	wantField(t, body, "input[2].id", "msg_1")
	wantField(t, body, "input[2].role", "assistant")
	wantField(t, body, "input[2].content[0].text", "Partly: ")
	wantField(t, body, "input[2].content[1].type", "refusal")
	wantField(t, body, "input[2].content[1].refusal", "no refunds.")
	if n := len(get(t, body, "input").([]any)); n != 3 {
		t.Errorf("%d input items, want the refusal merged into its message", n)
	}
}

// The request says what its store setting means: unset relies on the
// default true; false rules out previous_response_id and, with reasoning,
// needs the encrypted reasoning back.
func TestStoreWarnings(t *testing.T) {
	yes, no := true, false
	for _, c := range []struct {
		store     *bool
		reasoning string
		want      string
	}{
		{nil, "", "defaults to true"},
		{&yes, "", "previous_response_id can chain"},
		{&no, "high", `include: ["reasoning.encrypted_content"]`},
		{&no, "", "cannot chain"},
	} {
		req := refundRequest(1, true)
		req.Store, req.Limits.Reasoning = c.store, c.reasoning
		hr, _ := encode(t, req, adapters.ProviderOpenAI)
		if got := strings.Join(hr.Warnings, "\n"); !strings.Contains(got, c.want) {
			t.Errorf("store %v reasoning %q: warnings %q, want %q", c.store, c.reasoning, got, c.want)
		}
	}
}
