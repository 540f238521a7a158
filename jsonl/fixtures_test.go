package jsonl

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/store"
)

func openTemp(t testing.TB) (*store.DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "nested", "dir", "modelwire.db")
	db, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, path
}

// liveStream simulates one response the way the live path sees it: each
// raw event is decoded into decoder-level events, and a real reducer turns
// them into the canonical events a Step carries. After each step it keeps
// the reducer's state, to compare replays with.
type liveStream struct {
	red    *adapters.Reducer
	steps  []adapters.Step
	states []liveState // after each step
}

type liveState struct {
	lastSeq int // canonical seq after the step
	items   []adapters.Item
	summary adapters.Summary
}

func newLiveStream(protocol string) *liveStream {
	return &liveStream{red: adapters.NewReducer(protocol)}
}

func (l *liveStream) step(raw adapters.RawEvent, decoded ...adapters.Event) adapters.Step {
	st := adapters.Step{Index: len(l.steps), Raw: raw, Events: l.red.Apply(decoded)}
	l.record(st)
	return st
}

func (l *liveStream) end() adapters.Step {
	st := adapters.Step{Index: -1, Events: l.red.End()}
	l.record(st)
	return st
}

func (l *liveStream) record(st adapters.Step) {
	l.steps = append(l.steps, st)
	var items []adapters.Item
	for _, it := range l.red.Items() {
		items = append(items, *it)
	}
	l.states = append(l.states, liveState{lastSeq: l.red.Seq(), items: items, summary: l.red.Summary()})
}

func sse(event, data string) adapters.RawEvent { return adapters.RawEvent{Event: event, Data: data} }

// refundStream is a response with reasoning, text, a tool call, usage and
// a terminal, plus the awkward cases the reducer derives events for: a
// delta for an item that never started, a final text that differs from
// the deltas, a call whose arguments are not an object, and a late event.
func refundStream() *liveStream {
	l := newLiveStream(adapters.OpenAIResponses)
	l.step(sse("response.created", `{"id":"resp_1"}`), adapters.Event{Type: adapters.EvResponseStarted, ResponseID: "resp_1", Model: "gpt-test"})
	l.step(sse("ping", `{}`)) // a raw event with no canonical event
	l.step(sse("reasoning.added", `{}`), adapters.Event{Type: adapters.EvItemStarted, ItemID: "rs_1", Kind: "reasoning"})
	l.step(sse("reasoning.delta", `{"d":"思考"}`), adapters.Event{Type: adapters.EvReasoningDelta, ItemID: "rs_1", Delta: "思考"})
	l.step(sse("reasoning.done", `{}`), adapters.Event{Type: adapters.EvItemDone, ItemID: "rs_1"})
	l.step(sse("text.delta", `{"d":"orphan"}`), adapters.Event{Type: adapters.EvTextDelta, ItemID: "msg_0", Delta: "orphan "})
	l.step(sse("msg.added", `{}`), adapters.Event{Type: adapters.EvItemStarted, ItemID: "msg_1", Kind: "message"})
	for _, d := range []string{"退款", " <b>", "&", " draft"} {
		l.step(sse("text.delta", fmt.Sprintf(`{"d":%q}`, d)), adapters.Event{Type: adapters.EvTextDelta, ItemID: "msg_1", Delta: d})
	}
	final := "退款 <b>& draft, corrected"
	l.step(sse("text.done", `{}`), adapters.Event{Type: adapters.EvItemDone, ItemID: "msg_1", Final: &final})
	l.step(sse("call.added", `{}`), adapters.Event{Type: adapters.EvItemStarted, ItemID: "fc_1", Kind: "tool_call", CallID: "call_1", Name: "get_order"})
	l.step(sse("args.delta", `{}`), adapters.Event{Type: adapters.EvToolArgsDelta, ItemID: "fc_1", CallID: "call_1", Delta: `{"order_id":`})
	l.step(sse("args.delta", `{}`), adapters.Event{Type: adapters.EvToolArgsDelta, ItemID: "fc_1", CallID: "call_1", Delta: ` "O-2048"}`})
	l.step(sse("args.done", `{}`), adapters.Event{Type: adapters.EvItemDone, ItemID: "fc_1"})
	l.step(sse("call.added", `{}`), adapters.Event{Type: adapters.EvItemStarted, ItemID: "fc_2", Kind: "tool_call", CallID: "call_2", Name: "bad"})
	l.step(sse("args.delta", `{}`), adapters.Event{Type: adapters.EvToolArgsDelta, ItemID: "fc_2", CallID: "call_2", Delta: `[1,2]`})
	l.step(sse("args.done", `{}`), adapters.Event{Type: adapters.EvItemDone, ItemID: "fc_2"})
	l.step(sse("call.added", `{}`), adapters.Event{Type: adapters.EvItemStarted, ItemID: "fc_3", Kind: "tool_call", CallID: "call_3", Name: "cut"})
	l.step(sse("args.delta", `{}`), adapters.Event{Type: adapters.EvToolArgsDelta, ItemID: "fc_3", CallID: "call_3", Delta: `{"a":`})
	l.step(adapters.RawEvent{Event: "response.completed", Data: `{"usage":{}}`, ID: "42"},
		adapters.Event{Type: adapters.EvUsage, Usage: &adapters.Usage{InputTokens: adapters.Int(25), OutputTokens: adapters.Int(45), CacheReadTokens: adapters.Int(5), ReasoningTokens: adapters.Int(3), ProviderUsage: json.RawMessage(`{"input_tokens":25}`)}},
		adapters.Terminal(adapters.StatusCompleted, adapters.StopToolCall, "completed"))
	l.step(sse("text.delta", `{"late":true}`), adapters.Event{Type: adapters.EvTextDelta, ItemID: "msg_1", Delta: "late"})
	l.end()
	return l
}

func record(t testing.TB, db *store.DB, meta store.SessionMeta, l *liveStream) (*store.SessionWriter, *store.Recorder) {
	t.Helper()
	w, err := db.CreateSession(meta)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := w.StartAttempt(1, store.AttemptMeta{Method: "POST", URL: "https://api.openai.com/v1/responses", Stream: true,
		Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(`{"model":"gpt-test"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if err := rec.Mark(store.MarkSent); err != nil {
		t.Fatal(err)
	}
	if err := rec.Response(200, http.Header{"Content-Type": {"text/event-stream"}}); err != nil {
		t.Fatal(err)
	}
	if err := rec.ServerTime(93*time.Millisecond, "openai-processing-ms"); err != nil {
		t.Fatal(err)
	}
	for i, st := range l.steps {
		if err := rec.AppendAt(time.Duration(i+1)*time.Millisecond, st); err != nil {
			t.Fatal(err)
		}
	}
	if err := rec.Finish(nil); err != nil {
		t.Fatal(err)
	}
	return w, rec
}

func refundMeta() store.SessionMeta {
	return store.SessionMeta{Title: "退款评估 refund walkthrough", Scenario: "refund", Protocol: adapters.OpenAIResponses,
		Provider: "sim", Model: "gpt-test", Source: "test", Version: "test",
		Manifest: store.Manifest{Parameters: json.RawMessage(`{"max_output_tokens": 100}`), AdapterVersion: "1"}}
}

// fullSession records a session with two turns, a retried attempt that
// failed with 429, decisions, a result and a validation.
func fullSession(t *testing.T, db *store.DB) string {
	t.Helper()
	w, _ := record(t, db, refundMeta(), refundStream())
	if err := w.RecordDecision(store.Decision{Turn: 1, CallID: "call_1", Name: "get_order", Decision: store.DecisionEdited,
		Arguments: json.RawMessage(`{"order_id":"O-2048"}`), Edited: json.RawMessage(`{"order_id":"O-2049"}`), Reason: "改一下"}); err != nil {
		t.Fatal(err)
	}
	w.RecordToolResult(store.ToolResult{Turn: 1, CallID: "call_1", Name: "get_order", Content: "{\"paid\":18000}\n<ok>", IsError: false})
	rec, err := w.StartAttempt(2, store.AttemptMeta{Method: "POST", URL: "https://api.openai.com/v1/responses", Body: []byte{0xff, 0xfe, 'x'}})
	if err != nil {
		t.Fatal(err)
	}
	rec.Mark(store.MarkSent)
	rec.Response(429, http.Header{"Retry-After": {"1"}})
	rec.Append(adapters.Step{Index: 0, Raw: adapters.RawEvent{Data: `{"error":{"type":"rate_limit"}}`},
		Events: adapters.NewReducer("x").Apply([]adapters.Event{{Type: adapters.EvTerminal, Status: adapters.StatusFailed, StopReason: adapters.StopError,
			Error: &adapters.APIError{Type: "rate_limit", HTTPStatus: 429}}})})
	rec.Finish(errors.New("HTTP 429"))
	rec2, _ := w.StartAttempt(2, store.AttemptMeta{Method: "POST", URL: "https://api.openai.com/v1/responses", RetryReason: "429, Retry-After 1s"})
	l := newLiveStream(adapters.OpenAIResponses)
	l.step(sse("a", `{}`), adapters.Event{Type: adapters.EvItemStarted, ItemID: "m2", Kind: "message"})
	l.step(sse("b", "line1\nline2"), adapters.Event{Type: adapters.EvTextDelta, ItemID: "m2", Delta: `{"decision":"needs_review"}`})
	l.step(sse("c", `{}`), adapters.Event{Type: adapters.EvItemDone, ItemID: "m2"}, adapters.Terminal(adapters.StatusCompleted, adapters.StopFinal, "completed"))
	for _, st := range l.steps {
		rec2.Append(st)
	}
	rec2.Finish(nil)
	w.RecordValidation(0, []store.Validation{{Layer: "transport", Status: "pass"}, {Layer: "schema", Status: "fail", Detail: "/issues: missing"}})
	if err := w.Finish(store.StatusFailed); err != nil {
		t.Fatal(err)
	}
	return w.ID()
}

func exportJSONL(t *testing.T, db *store.DB, id string) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := Export(db, &b, id); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

const planted = "sk-PLANTED-d6f1c0ffee"
