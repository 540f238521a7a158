package store

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/modelwire/modelwire/adapters"
)

func openTemp(t testing.TB) (*DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "nested", "dir", "modelwire.db")
	db, err := Open(path)
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

// stepEntries is how many timeline entries a step makes: one per
// canonical event, one for a raw event without any, none for an empty end.
func stepEntries(st adapters.Step) int {
	if st.Index < 0 && len(st.Events) == 0 {
		return 0
	}
	return max(1, len(st.Events))
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

func record(t testing.TB, db *DB, meta SessionMeta, l *liveStream) (*SessionWriter, *Recorder) {
	t.Helper()
	w, err := db.CreateSession(meta)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := w.StartAttempt(1, AttemptMeta{Method: "POST", URL: "https://api.openai.com/v1/responses", Stream: true,
		Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(`{"model":"gpt-test"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if err := rec.Mark(MarkSent); err != nil {
		t.Fatal(err)
	}
	if err := rec.Response(200, http.Header{"Content-Type": {"text/event-stream"}}); err != nil {
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

func refundMeta() SessionMeta {
	return SessionMeta{Title: "退款评估 refund walkthrough", Scenario: "refund", Protocol: adapters.OpenAIResponses,
		Provider: "sim", Model: "gpt-test", Source: "test", Version: "test",
		Manifest: Manifest{Parameters: json.RawMessage(`{"max_output_tokens": 100}`), AdapterVersion: "1"}}
}

func TestOpenCreatesWithPragmas(t *testing.T) {
	db, path := openTemp(t)
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
	conn, err := db.sql.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for pragma, want := range map[string]string{"journal_mode": "wal", "foreign_keys": "1", "synchronous": "1",
		"busy_timeout": "10000", "user_version": fmt.Sprint(SchemaVersion), "application_id": fmt.Sprint(applicationID)} {
		var got string
		if err := conn.QueryRowContext(t.Context(), "PRAGMA "+pragma).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("PRAGMA %s = %s, want %s", pragma, got, want)
		}
	}
	// Opening again migrates nothing and works.
	db2, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	db2.Close()
}

func TestOpenRefusesForeignFilesUntouched(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "notes.txt")
	os.WriteFile(text, []byte("hello, this is not a database at all\n"), 0o644)

	foreign := filepath.Join(dir, "other.db")
	fdb, err := sql.Open("sqlite", foreign)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fdb.Exec(`CREATE TABLE things (x); INSERT INTO things VALUES (1)`); err != nil {
		t.Fatal(err)
	}
	fdb.Close()

	newer := filepath.Join(dir, "newer.db")
	ndb, err := Open(newer)
	if err != nil {
		t.Fatal(err)
	}
	ndb.Close()
	ndb2, _ := sql.Open("sqlite", newer)
	if _, err := ndb2.Exec(fmt.Sprintf("PRAGMA user_version = %d", SchemaVersion+5)); err != nil {
		t.Fatal(err)
	}
	ndb2.Exec("PRAGMA wal_checkpoint(TRUNCATE)")
	ndb2.Close()

	for _, c := range []struct {
		path string
		kind error
		msg  string
	}{
		{text, ErrNotSQLite, "not a SQLite database"},
		{foreign, ErrNotModelwire, "not a modelwire database"},
		{newer, ErrNewerSchema, fmt.Sprintf("schema version %d, newer than this modelwire (%d)", SchemaVersion+5, SchemaVersion)},
		{dir, ErrIsDirectory, "is a directory"},
	} {
		before, _ := os.ReadFile(c.path)
		_, err := Open(c.path)
		if !errors.Is(err, c.kind) {
			t.Errorf("Open(%s) = %v, want %v", filepath.Base(c.path), err, c.kind)
			continue
		}
		var oe *OpenError
		if !errors.As(err, &oe) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("Open(%s) error %q does not say %q", filepath.Base(c.path), err, c.msg)
		}
		after, _ := os.ReadFile(c.path)
		if !bytes.Equal(before, after) {
			t.Errorf("Open(%s) changed the file", filepath.Base(c.path))
		}
	}
	if _, err := os.Stat(foreign + "-wal"); err == nil {
		t.Errorf("opening a foreign database left a -wal file")
	}
}

func TestOpenReadOnlyLocation(t *testing.T) {
	// A path whose parent is a file cannot be created by anyone, root
	// included.
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	os.WriteFile(file, nil, 0o644)
	_, err := Open(filepath.Join(file, "sub", "modelwire.db"))
	if !errors.Is(err, ErrReadOnly) || !strings.Contains(err.Error(), "cannot write") {
		t.Fatalf("Open under a file = %v, want a read-only location error", err)
	}
}

func TestRecordAndRead(t *testing.T) {
	db, _ := openTemp(t)
	l := refundStream()
	w, _ := record(t, db, refundMeta(), l)
	if err := w.RecordDecision(Decision{Turn: 1, CallID: "call_1", Name: "get_order", Decision: DecisionEdited,
		Arguments: json.RawMessage(`{"order_id":"O-2048"}`), Edited: json.RawMessage(`{"order_id": "O-2049"}`), Reason: "typo"}); err != nil {
		t.Fatal(err)
	}
	if err := w.RecordToolResult(ToolResult{Turn: 1, CallID: "call_1", Name: "get_order", Content: `{"paid":18000}`}); err != nil {
		t.Fatal(err)
	}
	vals := []Validation{{"transport", "pass", ""}, {"protocol", "fail", "unanswered call call_3"}}
	if err := w.RecordValidation(1, vals); err != nil {
		t.Fatal(err)
	}
	if err := w.Finish(StatusFailed); err != nil {
		t.Fatal(err)
	}

	list, err := db.ListSessions(Filter{})
	if err != nil || len(list) != 1 {
		t.Fatalf("ListSessions = %v, %v", list, err)
	}
	info := list[0]
	wantEntries := 0
	for _, st := range l.steps {
		wantEntries += stepEntries(st)
	}
	wantEntries += 3 // decision, result, validation
	if info.ID != w.ID() || info.Status != StatusFailed || info.Turns != 1 || info.Events != wantEntries ||
		info.ModelReported != "gpt-test" || info.Title != refundMeta().Title {
		t.Errorf("listed %+v", info)
	}

	s, err := db.GetSession(w.ID())
	if err != nil {
		t.Fatal(err)
	}
	if s.Manifest.Hashes["parameters"] == "" || !strings.HasPrefix(s.Manifest.Hashes["parameters"], "sha256:") {
		t.Errorf("manifest hashes %v", s.Manifest.Hashes)
	}
	if len(s.Attempts) != 1 {
		t.Fatalf("attempts %+v", s.Attempts)
	}
	a := s.Attempts[0]
	if a.State != StatusDone || a.StatusCode != 200 || a.TerminalStatus != "completed" || a.StopReason != "tool_call" ||
		a.ResponseID != "resp_1" || a.RawEvents != len(l.steps)-1 || a.Protocol != adapters.OpenAIResponses {
		t.Errorf("attempt %+v", a)
	}
	tm := a.Timings
	if tm.Sent == nil || tm.FirstByte == nil || tm.FirstEvent == nil || *tm.FirstEvent != time.Millisecond ||
		tm.FirstText == nil || *tm.FirstText != 6*time.Millisecond || tm.Terminal == nil || *tm.Terminal != 22*time.Millisecond || tm.Finished == nil {
		t.Errorf("timings %+v", tm)
	}
	if a.Usage == nil || *a.Usage.InputTokens != 25 || *a.Usage.CacheReadTokens != 5 || a.Usage.CacheWriteTokens != nil ||
		string(a.Usage.ProviderUsage) != `{"input_tokens":25}` {
		t.Errorf("usage %+v", a.Usage)
	}
	if u := s.Usage(); len(u) != 1 || *u[0].OutputTokens != 45 {
		t.Errorf("turn usage %+v", u)
	}
	if len(s.Calls) != 1 || s.Calls[0].CallID != "call_1" || s.Calls[0].Decision != DecisionEdited ||
		string(s.Calls[0].Edited) != `{"order_id":"O-2049"}` || string(s.Calls[0].Arguments) != `{"order_id":"O-2048"}` ||
		!s.Calls[0].HasResult || s.Calls[0].Result != `{"paid":18000}` || s.Calls[0].ProposedSeq == 0 {
		t.Errorf("calls %+v", s.Calls)
	}
	if len(s.Validations) != 2 || s.Validations[1].Detail != "unanswered call call_3" {
		t.Errorf("validations %+v", s.Validations)
	}

	// The timeline holds every raw event and every canonical event, in
	// order, and pages from any entry.
	all, err := db.Events(w.ID(), 1, 0)
	if err != nil || len(all) != wantEntries {
		t.Fatalf("Events = %d entries, %v; want %d", len(all), err, wantEntries)
	}
	i := 0
	for si, st := range l.steps {
		for k := 0; k < stepEntries(st); k++ {
			e := all[i]
			i++
			if e.Seq != i || e.Attempt != 1 || e.Turn != 1 || e.Offset != time.Duration(si+1)*time.Millisecond {
				t.Fatalf("entry %d: %+v", i, e)
			}
			if st.Index >= 0 && (e.Raw == nil || *e.Raw != st.Raw || e.RawIndex != st.Index) {
				t.Fatalf("entry %d raw %+v, want %+v", i, e.Raw, st.Raw)
			}
			if len(st.Events) == 0 {
				if e.Event != nil || e.Type != "" {
					t.Fatalf("entry %d should have no event: %s", i, e.Event)
				}
				continue
			}
			ev, ok, err := e.Canonical()
			if !ok || err != nil || !reflect.DeepEqual(ev, st.Events[k]) || e.Type != string(st.Events[k].Type) {
				t.Fatalf("entry %d: %+v, want %+v", i, ev, st.Events[k])
			}
		}
	}
	tail := all[len(all)-3:]
	if tail[0].Type != EntryDecision || tail[1].Type != EntryToolResult || tail[2].Type != EntryValidation || tail[0].Attempt != 0 {
		t.Errorf("session entries %+v", tail)
	}
	page, err := db.Events(w.ID(), 10, 5)
	if err != nil || len(page) != 5 || page[0].Seq != 10 || page[4].Seq != 14 {
		t.Errorf("page = %+v, %v", page, err)
	}
}

// TestReplayMatchesLive: the state rebuilt at the end of every step is
// the live reducer's state after that step, whichever way the cursor got
// there (forward one step at a time, fresh, or backwards).
func TestReplayMatchesLive(t *testing.T) {
	db, _ := openTemp(t)
	l := refundStream()
	w, _ := record(t, db, refundMeta(), l)
	w.Finish(StatusDone)

	ends := []int{}
	seq := 0
	for _, st := range l.steps {
		seq += stepEntries(st)
		ends = append(ends, seq)
	}
	check := func(how string, st *State, i int) {
		t.Helper()
		want := l.states[i]
		if !reflect.DeepEqual(st.Items, want.items) {
			t.Errorf("%s step %d (entry %d): items\n got %+v\nwant %+v", how, i, ends[i], st.Items, want.items)
		}
		if !reflect.DeepEqual(st.Summary, want.summary) {
			t.Errorf("%s step %d (entry %d): summary\n got %+v\nwant %+v", how, i, ends[i], st.Summary, want.summary)
		}
	}
	c, err := db.NewCursor(w.ID())
	if err != nil {
		t.Fatal(err)
	}
	for i, end := range ends {
		st, err := c.Seek(end)
		if err != nil {
			t.Fatal(err)
		}
		check("forward", st, i)
	}
	for i := len(ends) - 1; i >= 0; i-- {
		st, err := c.Seek(ends[i])
		if err != nil {
			t.Fatal(err)
		}
		check("backward", st, i)
		st, err = db.StateAt(w.ID(), ends[i])
		if err != nil {
			t.Fatal(err)
		}
		check("fresh", st, i)
	}
	var re *RangeError
	if _, err := c.Seek(ends[len(ends)-1] + 1); !errors.As(err, &re) {
		t.Errorf("Seek past the end = %v", err)
	}
}

func TestStateAtSessionEntries(t *testing.T) {
	db, _ := openTemp(t)
	l := refundStream()
	w, _ := record(t, db, refundMeta(), l)
	w.RecordDecision(Decision{Turn: 1, CallID: "call_1", Name: "get_order", Decision: DecisionApproved, Arguments: json.RawMessage(`{"order_id":"O-2048"}`)})
	w.RecordToolResult(ToolResult{Turn: 1, CallID: "call_1", Content: "ok"})
	w.Finish(StatusDone)
	info, _ := db.GetSession(w.ID())
	last := info.Events

	st, err := db.StateAt(w.ID(), last-1) // the decision
	if err != nil {
		t.Fatal(err)
	}
	if st.Attempt != 1 || !st.Done || len(st.Calls) != 1 || st.Calls[0].Decision != DecisionApproved || st.Calls[0].HasResult {
		t.Errorf("at the decision: %+v", st)
	}
	st, _ = db.StateAt(w.ID(), last)
	if !st.Calls[0].HasResult || st.Calls[0].Result != "ok" {
		t.Errorf("at the result: %+v", st.Calls)
	}
	// Before the proposal there is no call.
	st, _ = db.StateAt(w.ID(), 3)
	if len(st.Calls) != 0 || st.Done {
		t.Errorf("at entry 3: %+v", st)
	}
	st, err = db.StateAt(w.ID(), 0)
	if err != nil || st.Attempt != 0 || len(st.Items) != 0 {
		t.Errorf("at 0: %+v %v", st, err)
	}
	var re *RangeError
	if _, err := db.StateAt(w.ID(), last+1); !errors.As(err, &re) {
		t.Errorf("past the end: %v", err)
	}
}

func TestListFilterAndResolve(t *testing.T) {
	db, _ := openTemp(t)
	mk := func(title, scenario, variant, protocol, provider string, at time.Time) string {
		w, err := db.CreateSession(SessionMeta{Title: title, Scenario: scenario, Variant: variant, Protocol: protocol, Provider: provider, CreatedAt: at})
		if err != nil {
			t.Fatal(err)
		}
		w.Finish(StatusDone)
		return w.ID()
	}
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	a := mk("退款评估 first", "refund", "", "openai-chat", "sim", t0)
	b := mk("second", "refund", "no-evidence", "gemini", "gemini", t0.Add(time.Hour))
	c := mk("third 100%_done", "custom.yaml", "", "openai-chat", "openai", t0.Add(2*time.Hour))

	ids := func(f Filter) []string {
		list, err := db.ListSessions(f)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, s := range list {
			out = append(out, s.ID)
		}
		return out
	}
	for _, tc := range []struct {
		f    Filter
		want []string
	}{
		{Filter{}, []string{c, b, a}},
		{Filter{Scenario: "refund"}, []string{b, a}},
		{Filter{Scenario: "refund/no-evidence"}, []string{b}},
		{Filter{Protocol: "openai-chat"}, []string{c, a}},
		{Filter{Provider: "gemini"}, []string{b}},
		{Filter{Search: "退款"}, []string{a}},
		{Filter{Search: "100%_"}, []string{c}},
		{Filter{Search: "0%x"}, nil},
		{Filter{Status: "running"}, nil},
		{Filter{Limit: 1}, []string{c}},
	} {
		if got := ids(tc.f); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%+v: got %v, want %v", tc.f, got, tc.want)
		}
	}
	if len(a) != IDLength || !(a < b && b < c) {
		t.Errorf("ids not time-ordered: %s %s %s", a, b, c)
	}
	if got, err := db.Resolve(strings.ToUpper(c)); err != nil || got != c {
		t.Errorf("Resolve(upper) = %s, %v", got, err)
	}
	if got, err := db.Resolve(c[:10]); err != nil || got != c {
		t.Errorf("Resolve(prefix) = %s, %v", got, err)
	}
	var amb *AmbiguousError
	if _, err := db.Resolve(a[:3]); !errors.As(err, &amb) || len(amb.Matches) != 3 {
		t.Errorf("Resolve(short) = %v", err)
	}
	var nf *NotFoundError
	if _, err := db.Resolve("zzzz"); !errors.As(err, &nf) {
		t.Errorf("Resolve(zzzz) = %v", err)
	}
	if _, err := db.Resolve("not an id!"); !errors.As(err, &nf) {
		t.Errorf("Resolve(junk) = %v", err)
	}
	if err := db.DeleteSession(b); err != nil {
		t.Fatal(err)
	}
	if got := ids(Filter{}); !reflect.DeepEqual(got, []string{c, a}) {
		t.Errorf("after delete: %v", got)
	}
}

func TestCloseInterruptsUnfinished(t *testing.T) {
	db, path := openTemp(t)
	w, _ := record(t, db, refundMeta(), refundStream())
	other, err := Open(path) // a second handle in the same process: the session is alive
	if err != nil {
		t.Fatal(err)
	}
	list, _ := other.ListSessions(Filter{})
	if list[0].Status != StatusRunning {
		t.Errorf("while its writer is open: %s", list[0].Status)
	}
	db.Close()
	list, _ = other.ListSessions(Filter{})
	if list[0].Status != StatusInterrupted || list[0].ID != w.ID() {
		t.Errorf("after its writer closed: %+v", list[0])
	}
	other.Close()
}

func TestReadOnlyHandle(t *testing.T) {
	db, path := openTemp(t)
	w, _ := record(t, db, refundMeta(), refundStream())
	w.Finish(StatusDone)
	db.Close()
	ro, err := OpenWith(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	list, err := ro.ListSessions(Filter{})
	if err != nil || len(list) != 1 {
		t.Fatalf("%v %v", list, err)
	}
	if _, err := ro.CreateSession(SessionMeta{}); err == nil {
		t.Errorf("a read-only handle created a session")
	}
}

func TestEntryDecoders(t *testing.T) {
	db, _ := openTemp(t)
	w, _ := record(t, db, refundMeta(), refundStream())
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	d := Decision{Turn: 1, CallID: "call_1", Name: "get_order", Decision: DecisionEdited, Arguments: json.RawMessage(`{"a":1}`),
		Edited: json.RawMessage(`{"a":2}`), Reason: "why", At: at}
	w.RecordDecision(d)
	w.RecordToolResult(ToolResult{Turn: 1, CallID: "call_1", Name: "get_order", Content: "c", IsError: true, At: at})
	w.RecordValidation(2, []Validation{{"parse", "fail", "not JSON"}})
	w.Finish(StatusDone)
	es, _ := db.Events(w.ID(), 1, 0)
	tail := es[len(es)-3:]
	if got, ok := tail[0].Decision(); !ok || !reflect.DeepEqual(got, d) {
		t.Errorf("Decision() = %+v %v", got, ok)
	}
	if got, ok := tail[1].ToolResult(); !ok || got != (ToolResult{Turn: 1, CallID: "call_1", Name: "get_order", Content: "c", IsError: true, At: at}) {
		t.Errorf("ToolResult() = %+v %v", got, ok)
	}
	if turn, vs, ok := tail[2].Validation(); !ok || turn != 2 || len(vs) != 1 || vs[0].Detail != "not JSON" {
		t.Errorf("Validation() = %d %+v %v", turn, vs, ok)
	}
	if _, ok := es[0].Decision(); ok {
		t.Errorf("a canonical event decoded as a decision")
	}
}

// TestGetSessionAttemptRecords reads back attempts whose texts hold what
// the packed read separates fields with (',', ':', '-', digits),
// multibyte text and a body with a NUL byte, with and without usage and
// timings, recorded out of turn order: each field as written, in the
// order written.
func TestGetSessionAttemptRecords(t *testing.T) {
	db, _ := openTemp(t)
	w, err := db.CreateSession(refundMeta())
	if err != nil {
		t.Fatal(err)
	}
	body := []byte("{\"q\":\"退款\x00,12:-\"}")
	rec, err := w.StartAttempt(2, AttemptMeta{Method: "POST", URL: "http://h/v1/x?a=1,2:3", Body: body, Stream: true,
		Header: http.Header{"X-Note": {"1:-,退"}}, RetryReason: "-3:, Retry-After 1s"})
	if err != nil {
		t.Fatal(err)
	}
	if err := rec.Response(429, http.Header{"Retry-After": {"1"}}); err != nil {
		t.Fatal(err)
	}
	if err := rec.Finish(errors.New("12:34 - 限流, again")); err != nil {
		t.Fatal(err)
	}
	rec, err = w.StartAttempt(1, AttemptMeta{Method: "GET", URL: "http://h/"})
	if err != nil {
		t.Fatal(err)
	}
	l := refundStream()
	for _, st := range l.steps {
		if err := rec.Append(st); err != nil {
			t.Fatal(err)
		}
	}
	if err := rec.Finish(nil); err != nil {
		t.Fatal(err)
	}
	if err := w.Finish(StatusDone); err != nil {
		t.Fatal(err)
	}
	s, err := db.GetSession(w.ID())
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Attempts) != 2 || s.Attempts[0].Turn != 2 || s.Attempts[1].Turn != 1 {
		t.Fatalf("attempts %+v, want turn 2's then turn 1's", s.Attempts)
	}
	a := s.Attempts[0]
	if a.Method != "POST" || a.URL != "http://h/v1/x?a=1,2:3" || !bytes.Equal(a.RequestBody, body) || !a.Stream ||
		a.RequestHeader.Get("X-Note") != "1:-,退" || a.RetryReason != "-3:, Retry-After 1s" || a.StatusCode != 429 ||
		a.ResponseHeader.Get("Retry-After") != "1" || a.Error != "12:34 - 限流, again" || a.State != StatusFailed ||
		a.Usage != nil || a.Timings.FirstEvent != nil || a.Timings.Finished == nil || a.FirstSeq != 0 || a.Attempt != 1 {
		t.Errorf("failed attempt %+v", a)
	}
	b := s.Attempts[1]
	if b.Method != "GET" || b.RequestBody != nil || b.Stream || b.Error != "" || b.State != StatusDone || b.ResponseID != "resp_1" ||
		b.Usage == nil || *b.Usage.OutputTokens != 45 || b.Usage.CacheWriteTokens != nil || string(b.Usage.ProviderUsage) != `{"input_tokens":25}` ||
		b.Timings.FirstEvent == nil || b.FirstSeq != 1 || b.LastSeq == 0 || b.RawEvents != len(l.steps)-1 {
		t.Errorf("done attempt %+v", b)
	}
	if s.InputTokens != 25 || s.OutputTokens != 45 || s.CacheReadTokens != 5 || s.ReasoningTokens != 3 || s.CacheWriteTokens != 0 {
		t.Errorf("session tokens %d %d %d %d %d", s.InputTokens, s.OutputTokens, s.CacheReadTokens, s.CacheWriteTokens, s.ReasoningTokens)
	}
}

// TestDecodeStep reads steps as writeStep writes them exactly as the JSON
// decoder does, and leaves any other form (the export's, with its raw
// event inline) to it.
func TestDecodeStep(t *testing.T) {
	for _, op := range []stepOp{
		{seq: 1, turn: 1, attempt: 1, offsetUS: 20, rawIndex: 0,
			events: []byte(`[{"type":"text.delta","delta":"退款 ]}{\"x\":[1]}"},{"type":"usage","usage":{"input_tokens":5}}]`)},
		{seq: 1234567, turn: 999, attempt: 3, offsetUS: 98765432101, rawIndex: -1},
		{seq: 7, turn: 0, attempt: 0, offsetUS: 0, rawIndex: 12, events: []byte(`[{"type":"decision","args":{"a":"}"}}]`)},
	} {
		var buf bytes.Buffer
		writeStep(&buf, &op)
		var got, want StoredStep
		if !decodeStep(buf.Bytes(), &got) {
			t.Fatalf("decodeStep refused %s", buf.Bytes())
		}
		if err := json.Unmarshal(buf.Bytes(), &want); err != nil {
			t.Fatal(err)
		}
		if len(want.Events) == 0 {
			want.Events = nil
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\ngot  %+v\nwant %+v", buf.Bytes(), got, want)
		}
		buf.Reset()
		writeStepJSON(&buf, &op, true)
		if op.rawIndex >= 0 && decodeStep(buf.Bytes(), &got) {
			t.Errorf("decodeStep read the export's form %s", buf.Bytes())
		}
	}
}

// TestSessionSumsBilledBuckets: the list's and the session's sums carry the
// hour-long cache writes and web searches (0005), so the sessions list
// prices every bucket the attempts reported.
func TestSessionSumsBilledBuckets(t *testing.T) {
	db, _ := openTemp(t)
	w, err := db.CreateSession(refundMeta())
	if err != nil {
		t.Fatal(err)
	}
	for _, hour := range []int64{300, 200} {
		rec, err := w.StartAttempt(1, AttemptMeta{Method: "POST", URL: "http://h/v1/messages"})
		if err != nil {
			t.Fatal(err)
		}
		u := &adapters.Usage{InputTokens: adapters.Int(1000), OutputTokens: adapters.Int(10), CacheWriteTokens: adapters.Int(hour + 100),
			CacheWrite1hTokens: adapters.Int(hour), WebSearchCalls: adapters.Int(2)}
		if err := rec.Append(adapters.Step{Raw: adapters.RawEvent{Event: "e", Data: "{}"}, Events: []adapters.Event{{Type: adapters.EvUsage, Usage: u}}}); err != nil {
			t.Fatal(err)
		}
		if err := rec.Finish(nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Finish(StatusDone); err != nil {
		t.Fatal(err)
	}
	list, err := db.ListSessions(Filter{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := db.GetSession(w.ID())
	if err != nil {
		t.Fatal(err)
	}
	for _, got := range []SessionInfo{list[0], s.SessionInfo} {
		if got.CacheWriteTokens != 700 || got.CacheWrite1hTokens != 500 || got.WebSearchCalls != 4 {
			t.Errorf("cache writes %d (1h %d), web searches %d; want 700 (500), 4", got.CacheWriteTokens, got.CacheWrite1hTokens, got.WebSearchCalls)
		}
	}
}
