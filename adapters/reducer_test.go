package adapters

import (
	"encoding/json"
	"strings"
	"testing"
)

func types(evs []Event) string {
	var s []string
	for _, e := range evs {
		t := string(e.Type)
		if e.Type == EvDiagnostic {
			t += ":" + e.Kind
		}
		s = append(s, t)
	}
	return strings.Join(s, " ")
}

func toolCallEvents(id, args string, fragments int) []Event {
	evs := []Event{{Type: EvItemStarted, ItemID: id, Kind: string(KindToolCall), CallID: "call_" + id, Name: "get_order_line"}}
	step := (len(args) + fragments - 1) / fragments
	for i := 0; i < len(args); i += step {
		end := min(i+step, len(args))
		evs = append(evs, Event{Type: EvToolArgsDelta, ItemID: id, CallID: "call_" + id, Delta: args[i:end]})
	}
	return evs
}

func TestReducerProposesOnlyClosedObjectArguments(t *testing.T) {
	r := NewReducer("test")
	out := r.Apply(toolCallEvents("a", `{"order_id":"O-2048","line_id":"L1"}`, 5))
	if strings.Contains(types(out), "tool.proposed") {
		t.Fatal("proposed before the item closed")
	}
	out = r.Apply([]Event{{Type: EvItemDone, ItemID: "a"}})
	if got := types(out); got != "item.done tool.proposed" {
		t.Fatalf("got %s", got)
	}
	if string(out[1].Arguments) != `{"order_id":"O-2048","line_id":"L1"}` || out[1].CallID != "call_a" {
		t.Fatalf("proposal %+v", out[1])
	}

	// Closed but not an object: never proposed, reported, listed as incomplete.
	out = r.Apply(append(toolCallEvents("b", `["O-2048"]`, 2), Event{Type: EvItemDone, ItemID: "b"}))
	if got := types(out); strings.Contains(got, "tool.proposed") || !strings.Contains(got, "diagnostic:tool_args_invalid") {
		t.Fatalf("got %s", got)
	}
	// Never closed: the terminal makes it incomplete.
	r.Apply(toolCallEvents("c", `{"order_id":"O-20`, 2))
	r.Apply([]Event{Terminal(StatusCompleted, StopToolCall, "tool_calls")})
	s := r.Summary()
	if len(s.ToolCalls) != 1 || s.ToolCalls[0].CallID != "call_a" {
		t.Fatalf("tool_calls %+v", s.ToolCalls)
	}
	if len(s.IncompleteToolCalls) != 2 || s.IncompleteToolCalls[1].PartialArguments != `{"order_id":"O-20` {
		t.Fatalf("incomplete %+v", s.IncompleteToolCalls)
	}
	// And it can never close after the terminal.
	out = r.Apply([]Event{{Type: EvItemDone, ItemID: "c"}})
	if types(out) != "diagnostic:late_event" {
		t.Fatalf("got %s", types(out))
	}
	if len(r.Summary().ToolCalls) != 1 {
		t.Fatal("a late item.done produced a tool call")
	}
}

func TestReducerOneTerminal(t *testing.T) {
	r := NewReducer("test")
	r.Apply([]Event{{Type: EvItemStarted, ItemID: "m", Kind: string(KindMessage)}, {Type: EvTextDelta, ItemID: "m", Delta: "你好"}})
	out := r.Apply([]Event{
		Terminal(StatusCompleted, StopFinal, "stop"),
		{Type: EvTextDelta, ItemID: "m", Delta: "后来"},
		Terminal(StatusFailed, StopError, ""),
	})
	if got := types(out); got != "response.terminal diagnostic:late_event diagnostic:late_event" {
		t.Fatalf("got %s", got)
	}
	s := r.Summary()
	if s.Terminal != StatusCompleted || s.Text != "你好" {
		t.Fatalf("summary %+v", s)
	}
	if r.End() != nil {
		t.Fatal("End after a terminal must add nothing")
	}
	for i, e := range append(out[:0:0], out...) {
		if e.Seq != 3+i {
			t.Fatalf("seq %d at %d", e.Seq, i)
		}
	}
}

func TestReducerStreamCut(t *testing.T) {
	r := NewReducer("test")
	r.Apply(toolCallEvents("a", `{"order_id":`, 3))
	out := r.End()
	if got := types(out); got != "diagnostic:stream_cut response.terminal" {
		t.Fatalf("got %s", got)
	}
	s := r.Summary()
	if s.Terminal != StatusUnknown || s.StopReason != StopUnknown || len(s.ToolCalls) != 0 || len(s.IncompleteToolCalls) != 1 {
		t.Fatalf("summary %+v", s)
	}
	if !strings.Contains(out[0].Detail, "1 item(s) still open") {
		t.Fatalf("detail %q", out[0].Detail)
	}
}

func TestReducerFinalTextWins(t *testing.T) {
	r := NewReducer("test")
	final := `{"a":1}`
	out := r.Apply(append(toolCallEvents("a", `{"a":`, 1), Event{Type: EvItemDone, ItemID: "a", Final: &final}))
	if got := types(out); !strings.Contains(got, "diagnostic:arguments_done_mismatch") || !strings.HasSuffix(got, "tool.proposed") {
		t.Fatalf("got %s", got)
	}
}

func TestReducerDeltaForUnknownItemIsKept(t *testing.T) {
	r := NewReducer("test")
	out := r.Apply([]Event{{Type: EvTextDelta, ItemID: "x", Delta: "hi"}})
	if got := types(out); got != "diagnostic:unknown_item item.started text.delta" {
		t.Fatalf("got %s", got)
	}
	if r.Summary().Text != "hi" {
		t.Fatal("text lost")
	}
}

func TestUsageJSONHasNulls(t *testing.T) {
	ev := Event{Seq: 3, Type: EvUsage, Usage: &Usage{InputTokens: Int(25), OutputTokens: Int(45), CacheReadTokens: Int(0)}}
	b, _ := json.Marshal(ev)
	want := `{"seq":3,"type":"usage","input_tokens":25,"output_tokens":45,"cache_read_tokens":0,"cache_write_tokens":null,"reasoning_tokens":null}`
	if string(b) != want {
		t.Fatalf("got  %s\nwant %s", b, want)
	}
	var back Event
	if err := json.Unmarshal(b, &back); err != nil || back.Usage == nil || *back.InputTokens != 25 {
		t.Fatalf("round trip: %v %+v", err, back)
	}
}

func TestSummaryJSONShape(t *testing.T) {
	r := NewReducer("anthropic-messages")
	r.Apply([]Event{{Type: EvResponseStarted, ResponseID: "msg_1", Model: "m"}, Terminal(StatusCompleted, StopFinal, "end_turn")})
	b, _ := json.Marshal(r.Summary())
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	for _, k := range []string{"protocol", "terminal", "stop_reason", "provider_stop_reason", "response_id", "model", "text", "reasoning", "refusal", "tool_calls", "incomplete_tool_calls", "usage", "error", "diagnostics"} {
		if _, ok := m[k]; !ok {
			t.Errorf("summary lacks %q: %s", k, b)
		}
	}
	if m["tool_calls"] == nil || m["refusal"] != nil {
		t.Errorf("tool_calls must be [] and refusal null: %s", b)
	}
}

// Apply's results share a slab: a caller that keeps one and appends to it
// must not change another.
func TestApplyResultsDoNotAlias(t *testing.T) {
	r := NewReducer(OpenAIChat)
	first := r.Apply([]Event{{Type: EvResponseStarted, ResponseID: "r1"}, {Type: EvItemStarted, ItemID: "m", Kind: "message"}})
	second := r.Apply([]Event{{Type: EvTextDelta, ItemID: "m", Delta: "退款"}})
	_ = append(first, Event{Type: EvTextDelta, Delta: "overwrite?"})
	third := r.Apply([]Event{{Type: EvTextDelta, ItemID: "m", Delta: " 150"}})
	if len(second) != 1 || second[0].Delta != "退款" || second[0].Seq != 3 {
		t.Fatalf("second result changed: %+v", second)
	}
	if len(third) != 1 || third[0].Delta != " 150" || first[1].ItemID != "m" {
		t.Fatalf("results overlap: %+v %+v", first, third)
	}
	// Many results (several slabs) stay as they were returned.
	var all [][]Event
	for i := range 600 {
		all = append(all, r.Apply([]Event{{Type: EvTextDelta, ItemID: "m", Delta: string(rune('a' + i%26))}}))
	}
	for i, res := range all {
		if len(res) != 1 || res[0].Delta != string(rune('a'+i%26)) || res[0].Seq != 5+i {
			t.Fatalf("result %d is now %+v", i, res)
		}
	}
}
