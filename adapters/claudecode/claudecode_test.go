package claudecode

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/adapterstest"
)

var captures = []string{
	"partial_tool_call.ndjson", "whole_messages.ndjson", "error_max_turns.ndjson",
	"api_error.ndjson", "cut_mid_args.ndjson", "oddities.ndjson", "result_only.json", "structured_output.json",
}

func decode(t *testing.T, name string) ([]adapters.Event, adapters.Summary) {
	t.Helper()
	return adapterstest.Decode(t, New(), adapterstest.ReadCapture(t, name))
}

func hasDiag(s adapters.Summary, kind string) bool {
	for _, d := range s.Diagnostics {
		if d.Kind == kind {
			return true
		}
	}
	return false
}

func kinds(s adapters.Summary) []string {
	var k []string
	for _, d := range s.Diagnostics {
		k = append(k, d.Kind)
	}
	return k
}

func eventsOf(events []adapters.Event, typ adapters.EventType) []adapters.Event {
	var out []adapters.Event
	for _, e := range events {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

const session = "fdf2d90a-fd9e-4736-ae35-806edd13643f"
const answer = "订单 O-2048 第 L1 行实付 180 元（18000 分），适用售后政策 aftersale-v3。"

func TestGoldens(t *testing.T) {
	for _, name := range captures {
		t.Run(name, func(t *testing.T) {
			_, s := decode(t, name)
			adapterstest.Golden(t, strings.ReplaceAll(name, ".", "_"), s)
		})
	}
}

func TestProtocol(t *testing.T) {
	p := New()
	if p.Name() != "claude-code" || p.Framing() != adapters.FramingNDJSON {
		t.Errorf("%s %v", p.Name(), p.Framing())
	}
	if _, err := p.Encode(&adapters.Request{}, adapters.ProviderAnthropic); err == nil || !strings.Contains(err.Error(), "decode-only") {
		t.Errorf("Encode: %v", err)
	}
}

// stream_event lines: two API responses (a tool call, then the answer)
// make one canonical response that ends at the result line.
func TestPartialMessages(t *testing.T) {
	events, s := decode(t, "partial_tool_call.ndjson")
	if s.ResponseID != session || s.Model != "claude-sonnet-4-5-20250929" {
		t.Errorf("started: %s %s", s.ResponseID, s.Model)
	}
	if s.Text != "我先查询订单行。"+answer {
		t.Errorf("text = %q", s.Text)
	}
	if len(s.ToolCalls) != 1 || s.ToolCalls[0].CallID != "toolu_01KXWexk3NJdwkjWzPMGQ2F1" || s.ToolCalls[0].Name != "mcp__refund__get_order_line" || string(s.ToolCalls[0].Arguments) != `{"order_id":"O-2048","line_id":"L1"}` {
		t.Errorf("calls = %+v", s.ToolCalls)
	}
	if s.Terminal != adapters.StatusCompleted || s.StopReason != adapters.StopFinal || s.ProviderStopReason != "end_turn" || len(s.Diagnostics) != 0 {
		t.Errorf("%s/%s/%s %v", s.Terminal, s.StopReason, s.ProviderStopReason, kinds(s))
	}
	// The result's session totals, normalised: 415 + 40024 + 160.
	if u := s.Usage; u == nil || *u.InputTokens != 40599 || *u.OutputTokens != 129 || *u.CacheReadTokens != 40024 || *u.CacheWriteTokens != 160 {
		t.Errorf("usage = %+v", s.Usage)
	}
	// The CLI's assistant lines repeat what the stream events carried:
	// nothing is decoded twice.
	if n := len(eventsOf(events, adapters.EvItemStarted)); n != 3 {
		t.Errorf("%d items, want 3 (text, call, answer)", n)
	}
	if n := len(eventsOf(events, adapters.EvTerminal)); n != 1 || events[len(events)-1].Type != adapters.EvTerminal {
		t.Errorf("%d terminals", n)
	}
	// user lines (tool results) are input, not output: no event at all.
	st := adapters.NewStream(New())
	for _, line := range strings.Split(string(adapterstest.ReadCapture(t, "partial_tool_call.ndjson")), "\n") {
		if strings.HasPrefix(line, `{"type":"user"`) {
			if out := st.Feed(adapters.RawEvent{Data: line}); len(out) != 0 {
				t.Errorf("a user line gave %+v", out)
			}
		}
	}
}

func TestWholeMessages(t *testing.T) {
	events, s := decode(t, "whole_messages.ndjson")
	if s.Reasoning != "用户要核查订单行，先调用工具。" || s.Text != "我先查询订单行。"+answer || len(s.ToolCalls) != 1 {
		t.Errorf("%+v", s)
	}
	// stop_reason null in the result: the last API stop_reason decides.
	if s.Terminal != adapters.StatusCompleted || s.StopReason != adapters.StopFinal || s.ProviderStopReason != "end_turn" {
		t.Errorf("%s/%s/%s", s.Terminal, s.StopReason, s.ProviderStopReason)
	}
	ids := map[string]bool{}
	for _, e := range eventsOf(events, adapters.EvItemStarted) {
		if ids[e.ItemID] {
			t.Errorf("item %s twice", e.ItemID)
		}
		ids[e.ItemID] = true
	}
	for _, want := range []string{"msg_01AbWh0leMsgThinkT00001#0", "msg_01AbWh0leMsgThinkT00001#1", "toolu_01Whole7tY9uI2oP4aS6dF8g", "msg_01AbWh0leMsgAnswer00002#0"} {
		if !ids[want] {
			t.Errorf("no item %s in %v", want, ids)
		}
	}
	var sig string
	for _, e := range eventsOf(events, adapters.EvItemDone) {
		if e.ItemID == "msg_01AbWh0leMsgThinkT00001#0" {
			sig = e.Signature
		}
	}
	if sig != "EqQBCkgIARABGAIiQL2n0Zr1s7YdQ==" {
		t.Errorf("thinking signature %q", sig)
	}
}

func TestErrorResults(t *testing.T) {
	_, s := decode(t, "error_max_turns.ndjson")
	if s.Terminal != adapters.StatusFailed || s.StopReason != adapters.StopError || s.ProviderStopReason != "error_max_turns" ||
		s.Error == nil || s.Error.Type != "error_max_turns" || s.Error.Message != "Reached maximum number of turns (1)" || s.Error.Code != "max_turns" {
		t.Errorf("%s/%s/%s %+v", s.Terminal, s.StopReason, s.ProviderStopReason, s.Error)
	}
	if len(s.ToolCalls) != 1 {
		t.Errorf("the call the model made is still listed: %+v", s.ToolCalls)
	}

	_, s = decode(t, "api_error.ndjson")
	if s.Terminal != adapters.StatusFailed || s.Error == nil || s.Error.HTTPStatus != 401 || s.Error.Type != "api_error" || s.Text != "" {
		t.Errorf("%s %+v text %q", s.Terminal, s.Error, s.Text)
	}
	if !hasDiag(s, adapters.DiagErrorEvent) {
		t.Errorf("the synthetic error message is not reported: %v", kinds(s))
	}
}

func TestCut(t *testing.T) {
	events, s := decode(t, "cut_mid_args.ndjson")
	if s.Terminal != adapters.StatusUnknown || !hasDiag(s, adapters.DiagStreamCut) || len(eventsOf(events, adapters.EvToolProposed)) != 0 {
		t.Errorf("%s %v", s.Terminal, kinds(s))
	}
	if len(s.IncompleteToolCalls) != 1 || s.IncompleteToolCalls[0].PartialArguments != `{"order_id":"O-20` {
		t.Errorf("%+v", s.IncompleteToolCalls)
	}
}

func TestOddities(t *testing.T) {
	events, s := decode(t, "oddities.ndjson")
	if !hasDiag(s, adapters.DiagMalformedEvent) {
		t.Errorf("%v", kinds(s))
	}
	var unknown []string
	for _, e := range eventsOf(events, adapters.EvUnknown) {
		unknown = append(unknown, e.RawType)
	}
	if strings.Join(unknown, ",") != "system/some_future_subtype,unknown_type,control_request" {
		t.Errorf("provider.unknown = %v", unknown)
	}
	// The subagent's text is model output of this session too.
	if s.Text != "子任务：订单已找到。完成。" || len(s.ToolCalls) != 1 || s.ToolCalls[0].Name != "Task" {
		t.Errorf("text %q calls %+v", s.Text, s.ToolCalls)
	}
	if s.Terminal != adapters.StatusCompleted {
		t.Errorf("%s", s.Terminal)
	}
}

// Parallel subagents interleave their stream events; each thread has its
// own block indexes.
func TestInterleavedSubagents(t *testing.T) {
	line := func(parent, ev string) string {
		p := "null"
		if parent != "" {
			p = `"` + parent + `"`
		}
		return `{"type":"stream_event","event":` + ev + `,"session_id":"s","parent_tool_use_id":` + p + `,"uuid":"u"}` + "\n"
	}
	start := func(id string) string {
		return `{"type":"message_start","message":{"id":"` + id + `","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"usage":{"input_tokens":1,"output_tokens":1}}}`
	}
	text := `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`
	delta := func(s string) string {
		return `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"` + s + `"}}`
	}
	stop := `{"type":"content_block_stop","index":0}`
	body := line("toolu_A", start("msg_A")) + line("toolu_B", start("msg_B")) +
		line("toolu_A", text) + line("toolu_B", text) +
		line("toolu_A", delta("a1")) + line("toolu_B", delta("b1")) + line("toolu_A", delta("a2")) +
		line("toolu_B", stop) + line("toolu_A", stop) +
		`{"type":"result","subtype":"success","is_error":false,"duration_ms":1,"duration_api_ms":1,"num_turns":1,"session_id":"s","stop_reason":"end_turn"}` + "\n"
	_, s := adapterstest.Decode(t, New(), []byte(body))
	if s.Text != "a1a2b1" || len(s.Diagnostics) != 0 || s.Terminal != adapters.StatusCompleted {
		t.Errorf("text %q %v %s", s.Text, kinds(s), s.Terminal)
	}
}

// --output-format json: the single result object, through DecodeBody too.
func TestResultOnly(t *testing.T) {
	_, s := decode(t, "result_only.json")
	if s.Terminal != adapters.StatusCompleted || s.StopReason != adapters.StopFinal || s.ProviderStopReason != "success" || s.ResponseID != session {
		t.Errorf("%+v", s)
	}
	if u := s.Usage; u == nil || *u.InputTokens != 3 || *u.OutputTokens != 24 || u.CacheReadTokens != nil {
		t.Errorf("usage %+v", s.Usage)
	}
	st := adapters.NewStream(New())
	events := st.FeedBody(adapterstest.ReadCapture(t, "partial_tool_call.ndjson"))
	adapterstest.CheckInvariants(t, events)
	if b := st.Summary(); b.Text != "我先查询订单行。"+answer || len(b.ToolCalls) != 1 {
		t.Errorf("DecodeBody of NDJSON: %+v", b)
	}
}

func TestLineEdgeCases(t *testing.T) {
	for _, c := range []struct {
		line string
		kind string
	}{
		{`[1,2,3]`, adapters.DiagMalformedEvent},
		{`{"no_type":true}`, adapters.DiagMalformedEvent},
		{`{"type":"stream_event","event":"oops","session_id":"s","uuid":"u"}`, adapters.DiagMalformedEvent},
		{`{"type":"stream_event","event":{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}},"session_id":"s","uuid":"u"}`, adapters.DiagErrorEvent},
	} {
		out := New().NewDecoder().Decode(adapters.RawEvent{Data: c.line})
		if len(out) != 1 || out[0].Kind != c.kind {
			b, _ := json.Marshal(out)
			t.Errorf("%s: %s", c.line, b)
		}
	}
}

func FuzzDecode(f *testing.F) {
	var seeds [][]byte
	for _, name := range captures {
		seeds = append(seeds, adapterstest.ReadCapture(f, name))
	}
	adapterstest.Fuzz(f, New(), seeds...)
}

// `--output-format json` is one result line: its result text is the
// answer, and with --json-schema its structured_output is; the model comes
// from modelUsage.
func TestResultOnlyTranscripts(t *testing.T) {
	_, s := decode(t, "result_only.json")
	if s.Text != "Hi! I'm ready to help." || s.Model != "claude-sonnet-4-5-20250929" || s.Terminal != adapters.StatusCompleted {
		t.Fatalf("result only: text %q model %q terminal %s", s.Text, s.Model, s.Terminal)
	}
	_, s = decode(t, "structured_output.json")
	if s.Text != `{"order_id":"O-2048","decision":"needs_review","max_refund_cents":13000}` || s.Terminal != adapters.StatusCompleted {
		t.Fatalf("structured output: text %q terminal %s", s.Text, s.Terminal)
	}
	// A stream-json transcript's result text repeats the streamed answer:
	// it must not be added twice.
	_, s = decode(t, "whole_messages.ndjson")
	if strings.Count(s.Text, answer) > 1 {
		t.Fatalf("the result text was added again: %q", s.Text)
	}
}
