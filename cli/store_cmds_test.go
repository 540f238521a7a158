package cli

import (
	"bytes"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mattn/go-runewidth"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/registry"
	"github.com/modelwire/modelwire/store"
)

// mw runs modelwire with args and returns its exit code and output.
func mw(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// capture is one recorded response body from the adapters' testdata.
type capture struct {
	name     string
	protocol string
	body     []byte
	stream   bool
}

// captures lists the adapters' recorded response bodies (SSE, NDJSON and
// JSON bodies of successful responses).
func captures(t *testing.T) []capture {
	t.Helper()
	dirs := map[string]string{"anthropic": adapters.AnthropicMessages, "gemini": adapters.Gemini, "openaichat": adapters.OpenAIChat,
		"openairesponses": adapters.OpenAIResponses, "claudecode": adapters.ClaudeCode, "geminiinteractions": adapters.GeminiInteractions}
	var out []capture
	for dir, protocol := range dirs {
		files, _ := filepath.Glob(filepath.Join("..", "adapters", dir, "testdata", "*"))
		for _, f := range files {
			base := filepath.Base(f)
			ext := filepath.Ext(base)
			if ext != ".sse" && ext != ".json" && ext != ".ndjson" || strings.Contains(base, "golden") ||
				strings.Contains(base, "error") || strings.HasPrefix(base, "encode") {
				continue
			}
			body, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			p := protocol
			if strings.HasPrefix(base, "deepseek") {
				p = adapters.DeepSeekChat
			}
			out = append(out, capture{name: dir + "/" + base, protocol: p, body: body, stream: ext != ".json"})
		}
	}
	if len(out) < 20 {
		t.Fatalf("only %d captures found", len(out))
	}
	return out
}

// TestReplayEqualsLiveOnEveryCapture records every capture the adapters
// test with, as the live path would, and checks that the state rebuilt
// by the store at the end of every step equals the live reducer's state
// then, stepping forward and jumping back.
func TestReplayEqualsLiveOnEveryCapture(t *testing.T) {
	db, err := store.Open(filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, c := range captures(t) {
		t.Run(c.name, func(t *testing.T) {
			p, err := registry.Lookup(c.protocol)
			if err != nil {
				t.Fatal(err)
			}
			w, err := db.CreateSession(store.SessionMeta{Title: c.name, Protocol: c.protocol})
			if err != nil {
				t.Fatal(err)
			}
			rec, err := w.StartAttempt(1, store.AttemptMeta{Stream: c.stream})
			if err != nil {
				t.Fatal(err)
			}
			type live struct {
				end     int
				items   []adapters.Item
				summary adapters.Summary
			}
			var lives []live
			entries := 0
			st := adapters.NewStream(p)
			keep := func(step adapters.Step) error {
				if step.Index < 0 && len(step.Events) == 0 {
					return nil
				}
				entries += max(1, len(step.Events))
				var items []adapters.Item
				for _, it := range st.Reducer().Items() {
					items = append(items, *it)
				}
				lives = append(lives, live{end: entries, items: items, summary: st.Summary()})
				return rec.Append(step)
			}
			if c.stream {
				err = adapters.ReadStream(p, st, bytes.NewReader(c.body), keep)
			} else {
				err = keep(adapters.Step{Index: 0, Raw: adapters.RawEvent{Data: string(c.body)}, Events: st.FeedBody(c.body)})
			}
			if err != nil {
				t.Fatal(err)
			}
			rec.Finish(nil)
			w.Finish(store.StatusDone)

			cur, err := db.NewCursor(w.ID())
			if err != nil {
				t.Fatal(err)
			}
			// Compared as JSON: a stored event's provider_usage is the
			// provider's object compacted, the live one keeps its spaces.
			asJSON := func(v any) string {
				b, _ := json.Marshal(v)
				return string(b)
			}
			check := func(how string, l live, s *store.State) {
				t.Helper()
				if asJSON(s.Items) != asJSON(l.items) || asJSON(s.Summary) != asJSON(l.summary) {
					t.Fatalf("%s, entry %d: replay differs from live\nreplay %+v\n  live %+v\nreplay %+v\n  live %+v", how, l.end, s.Items, l.items, s.Summary, l.summary)
				}
			}
			for _, l := range lives {
				s, err := cur.Seek(l.end)
				if err != nil {
					t.Fatal(err)
				}
				check("forward", l, s)
			}
			for i := len(lives) - 1; i >= 0; i -= 3 {
				s, err := db.StateAt(w.ID(), lives[i].end)
				if err != nil {
					t.Fatal(err)
				}
				check("jump", lives[i], s)
			}
		})
	}
}

func readCapture(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "adapters", path))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

const plantedKey = "sk-PLANTED-cli-4b1d"

func harEntry(method, url string, status int, mime, text, encoding string, reqBody string, headers ...string) map[string]any {
	var hs []map[string]string
	for i := 0; i+1 < len(headers); i += 2 {
		hs = append(hs, map[string]string{"name": headers[i], "value": headers[i+1]})
	}
	content := map[string]any{"size": len(text), "mimeType": mime, "text": text}
	if encoding != "" {
		content["encoding"] = encoding
	}
	return map[string]any{
		"startedDateTime": "2026-05-06T07:08:09.010Z", "time": 120,
		"request": map[string]any{"method": method, "url": url, "httpVersion": "HTTP/1.1", "headers": hs,
			"queryString": []any{}, "cookies": []any{}, "headersSize": -1, "bodySize": len(reqBody),
			"postData": map[string]any{"mimeType": "application/json", "text": reqBody}},
		"response": map[string]any{"status": status, "statusText": "", "httpVersion": "HTTP/1.1", "headers": []any{},
			"cookies": []any{}, "content": content, "redirectURL": "", "headersSize": -1, "bodySize": -1},
		"cache": map[string]any{}, "timings": map[string]any{"send": 1, "wait": 40, "receive": 79},
	}
}

func writeJSONFile(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// replayEvents runs replay --json and returns its canonical events (and
// checks each line's shape).
func replayEvents(t *testing.T, dbPath, id string) []json.RawMessage {
	t.Helper()
	code, out, errs := mw(t, "--db", dbPath, "replay", id, "--json")
	if code != 0 {
		t.Fatalf("replay: %d %s", code, errs)
	}
	var evs []json.RawMessage
	for i, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var l struct {
			Turn, Attempt, Seq *int
			OffsetMS           *float64 `json:"offset_ms"`
			Raw                json.RawMessage
			Event              json.RawMessage
		}
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("line %d: %v: %s", i+1, err, line)
		}
		if l.Turn == nil || l.Attempt == nil || l.Seq == nil || *l.Seq != i+1 || l.OffsetMS == nil || l.Raw == nil || l.Event == nil {
			t.Fatalf("line %d lacks a field: %s", i+1, line)
		}
		if string(l.Event) != "null" {
			evs = append(evs, l.Event)
		}
	}
	return evs
}

// TestHARImportWithTheRealAdapters imports a HAR made of the adapters'
// captures, one entry per protocol, streamed, plain, base64 and an error,
// and checks the decoded sessions, the HAR export and its re-import.
func TestHARImportWithTheRealAdapters(t *testing.T) {
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "m.db")
	responsesSSE := readCapture(t, "openairesponses/testdata/refund_turn1.sse")
	chatJSON := readCapture(t, "openaichat/testdata/chat_refund_turn1.json")
	geminiSSE := readCapture(t, "gemini/testdata/refund_turn1.sse")
	deepseekSSE := readCapture(t, "openaichat/testdata/deepseek_refund_turn1.sse")
	interactionsSSE := readCapture(t, "geminiinteractions/testdata/refund_turn1.sse")
	anthropicErr := readCapture(t, "anthropic/testdata/error_body.json")
	har := map[string]any{"log": map[string]any{"version": "1.2", "creator": map[string]any{"name": "WebInspector", "version": "537.36"},
		"pages": []any{}, "entries": []any{
			harEntry("POST", "https://api.openai.com/v1/responses", 200, "text/event-stream", responsesSSE, "", `{"model":"gpt-5","stream":true}`,
				"Authorization", "Bearer "+plantedKey),
			harEntry("GET", "https://platform.openai.com/favicon.ico", 200, "image/x-icon", "", "", ""),
			harEntry("POST", "https://api.openai.com/v1/chat/completions", 200, "application/json",
				base64.StdEncoding.EncodeToString([]byte(chatJSON)), "base64", `{"model":"gpt-4.1"}`),
			harEntry("POST", "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse&key="+plantedKey,
				200, "text/event-stream", geminiSSE, "", `{"contents":[]}`, "x-goog-api-key", plantedKey),
			harEntry("POST", "https://api.deepseek.com/chat/completions", 200, "text/event-stream", deepseekSSE, "", `{"model":"deepseek-chat","stream":true}`),
			harEntry("POST", "https://generativelanguage.googleapis.com/v1beta/interactions", 200, "text/event-stream", interactionsSSE, "",
				`{"model":"gemini-3-flash-preview","stream":true,"input":"hi"}`, "x-goog-api-key", plantedKey),
			harEntry("POST", "https://api.anthropic.com/v1/messages", 429, "application/json", anthropicErr, "", `{"model":"claude-x"}`,
				"x-api-key", plantedKey),
		}}}
	harPath := filepath.Join(dir, "capture.har")
	writeJSONFile(t, harPath, har)

	code, out, errs := mw(t, "--db", dbPath, "import", harPath)
	if code != 0 || !strings.Contains(out, "imported 6 session(s)") || !strings.Contains(out, "1 of 7 HAR entries skipped") {
		t.Fatalf("import: %d %q %q", code, out, errs)
	}
	code, out, _ = mw(t, "--db", dbPath, "sessions", "--json")
	if code != 0 {
		t.Fatal(out)
	}
	byProtocol := map[string]sessionObject{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var s sessionObject
		if err := json.Unmarshal([]byte(line), &s); err != nil {
			t.Fatal(err)
		}
		byProtocol[s.Protocol] = s
	}
	want := map[string][3]string{ // provider, model, status
		adapters.OpenAIResponses:    {"openai", "gpt-5", "done"},
		adapters.OpenAIChat:         {"openai", "gpt-4.1", "done"},
		adapters.Gemini:             {"gemini", "gemini-2.5-flash", "done"},
		adapters.DeepSeekChat:       {"deepseek", "deepseek-chat", "done"},
		adapters.AnthropicMessages:  {"anthropic", "claude-x", "failed"},
		adapters.GeminiInteractions: {"gemini", "gemini-3-flash-preview", "done"},
	}
	for protocol, w := range want {
		s, ok := byProtocol[protocol]
		if !ok || s.Provider != w[0] || s.Model != w[1] || s.Status != w[2] || s.Turns != 1 || s.Events == 0 {
			t.Errorf("%s: %+v", protocol, s)
		}
	}
	// The stored events are the adapter's own decoding of the body.
	check := func(id, protocol, body string) {
		t.Helper()
		p, _ := registry.Lookup(protocol)
		st := adapters.NewStream(p)
		var live []adapters.Event
		_ = adapters.ReadStream(p, st, strings.NewReader(body), func(s adapters.Step) error {
			live = append(live, s.Events...)
			return nil
		})
		got := replayEvents(t, dbPath, id)
		if len(got) != len(live) {
			t.Fatalf("%s: %d events replayed, %d decoded", protocol, len(got), len(live))
		}
		for i := range live {
			var ev adapters.Event
			a, _ := json.Marshal(ev)
			if err := json.Unmarshal(got[i], &ev); err == nil {
				a, _ = json.Marshal(ev)
			}
			if b, _ := json.Marshal(live[i]); !bytes.Equal(a, b) {
				t.Fatalf("%s event %d: %s, want %+v", protocol, i, got[i], live[i])
			}
		}
	}
	check(byProtocol[adapters.OpenAIResponses].ID, adapters.OpenAIResponses, responsesSSE)
	check(byProtocol[adapters.Gemini].ID, adapters.Gemini, geminiSSE)
	check(byProtocol[adapters.GeminiInteractions].ID, adapters.GeminiInteractions, interactionsSSE)

	// HAR export, then import of the export: the same events again.
	exported := filepath.Join(dir, "out.har")
	if code, _, errs := mw(t, "--db", dbPath, "export", byProtocol[adapters.OpenAIResponses].ID, "--format", "har", "-o", exported); code != 0 {
		t.Fatalf("export har: %s", errs)
	}
	var h struct {
		Log struct {
			Version string
			Entries []struct {
				Request  struct{ Method, URL string }
				Response struct {
					Status  int
					Content struct{ MimeType, Text string }
				}
			}
		}
	}
	raw, _ := os.ReadFile(exported)
	if err := json.Unmarshal(raw, &h); err != nil || h.Log.Version != "1.2" || len(h.Log.Entries) != 1 ||
		h.Log.Entries[0].Response.Content.MimeType != "text/event-stream" {
		t.Fatalf("exported HAR: %v %s", err, raw)
	}
	db2 := filepath.Join(dir, "second.db")
	code, out, errs = mw(t, "--db", db2, "import", exported)
	if code != 0 || !strings.Contains(out, "imported 1 session(s)") {
		t.Fatalf("re-import: %d %s %s", code, out, errs)
	}
	id2 := strings.Fields(strings.SplitN(out, ": ", 2)[1])[0]
	a, b := replayEvents(t, dbPath, byProtocol[adapters.OpenAIResponses].ID), replayEvents(t, db2, id2)
	if !reflect.DeepEqual(a, b) {
		t.Errorf("events after a HAR round trip differ")
	}

	for _, p := range []string{dbPath, dbPath + "-wal", exported} {
		if raw, err := os.ReadFile(p); err == nil && bytes.Contains(raw, []byte(plantedKey)) {
			t.Errorf("the planted key is in %s", filepath.Base(p))
		}
	}
}

// seedSessions records a few sessions directly through the store.
func seedSessions(t *testing.T, dbPath string) []string {
	t.Helper()
	db, err := store.Open(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var ids []string
	base := time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)
	for i, m := range []store.SessionMeta{
		{Title: "退款评估：订单 O-2048 的部分退款", Scenario: "refund", Protocol: adapters.AnthropicMessages, Provider: "sim", Model: "claude-sim"},
		{Title: "refund walkthrough", Scenario: "refund", Variant: "no-evidence", Protocol: adapters.OpenAIChat, Provider: "sim", Model: "gpt-sim"},
		{Title: "混合 mixed タイトル", Scenario: "custom.yaml", Protocol: adapters.Gemini, Provider: "gemini", Model: "gemini-x"},
	} {
		m.CreatedAt = base.Add(time.Duration(i) * time.Hour)
		w, err := db.CreateSession(m)
		if err != nil {
			t.Fatal(err)
		}
		rec, _ := w.StartAttempt(1, store.AttemptMeta{Method: "POST", URL: "http://127.0.0.1:8787/v1/messages", Stream: true,
			Header: http.Header{"X-Api-Key": {plantedKey}}})
		red := adapters.NewReducer(m.Protocol)
		steps := [][]adapters.Event{
			{{Type: adapters.EvResponseStarted, ResponseID: "r1", Model: m.Model}},
			{{Type: adapters.EvItemStarted, ItemID: "m1", Kind: "message"}},
			{{Type: adapters.EvTextDelta, ItemID: "m1", Delta: "你好，"}},
			{{Type: adapters.EvTextDelta, ItemID: "m1", Delta: "world"}},
			{},
			{{Type: adapters.EvItemDone, ItemID: "m1"}, {Type: adapters.EvItemStarted, ItemID: "c1", Kind: "tool_call", CallID: "call_1", Name: "get_order"}},
			{{Type: adapters.EvToolArgsDelta, ItemID: "c1", Delta: `{"order_id":"O-2048"}`}},
			{{Type: adapters.EvItemDone, ItemID: "c1"}, adapters.Terminal(adapters.StatusCompleted, adapters.StopToolCall, "tool_use")},
		}
		for k, evs := range steps {
			rec.AppendAt(time.Duration(k)*time.Millisecond, adapters.Step{Index: k, Raw: adapters.RawEvent{Event: fmt.Sprintf("e%d", k), Data: `{"k":` + fmt.Sprint(k) + `}`},
				Events: red.Apply(evs)})
		}
		rec.Finish(nil)
		w.RecordDecision(store.Decision{Turn: 1, CallID: "call_1", Name: "get_order", Decision: store.DecisionApproved, Arguments: json.RawMessage(`{"order_id":"O-2048"}`)})
		w.RecordToolResult(store.ToolResult{Turn: 1, CallID: "call_1", Name: "get_order", Content: `{"paid":18000}`})
		w.RecordValidation(0, []store.Validation{{Layer: "transport", Status: "pass"}, {Layer: "protocol", Status: "fail", Detail: "no final answer"}})
		status := store.StatusDone
		if i == 1 {
			status = store.StatusFailed
		}
		w.Finish(status)
		ids = append(ids, w.ID())
	}
	return ids
}

func TestSessionsCommand(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "m.db")
	code, out, _ := mw(t, "--db", dbPath, "sessions")
	if code != 0 || !strings.Contains(out, "No sessions") {
		t.Fatalf("empty: %d %q", code, out)
	}
	if _, err := os.Stat(dbPath); err == nil {
		t.Errorf("listing created the database")
	}
	ids := seedSessions(t, dbPath)

	code, out, _ = mw(t, "--db", dbPath, "sessions")
	if code != 0 {
		t.Fatal(out)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[1], ids[2]) || !strings.HasPrefix(lines[3], ids[0]) {
		t.Fatalf("table:\n%s", out)
	}
	// Columns line up in terminal cells, Chinese titles included: the
	// STATUS and TITLE columns start at the same cell on every line.
	cellOf := func(line, word string) int {
		i := strings.Index(line, word)
		if i < 0 {
			t.Fatalf("%q not in %q", word, line)
		}
		return runewidth.StringWidth(line[:i])
	}
	statusCol, titleCol := cellOf(lines[0], "STATUS"), cellOf(lines[0], "TITLE")
	for i, want := range []struct{ status, title string }{{"done", "混合"}, {"failed", "refund walkthrough"}, {"done", "退款评估"}} {
		if cellOf(lines[i+1], " "+want.status+" ")+1 != statusCol || cellOf(lines[i+1], want.title) != titleCol {
			t.Errorf("line %d misaligned:\n%s", i+1, out)
		}
	}

	code, out, _ = mw(t, "--db", dbPath, "sessions", "--json")
	var objs []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var o map[string]any
		if err := json.Unmarshal([]byte(line), &o); err != nil {
			t.Fatal(err)
		}
		objs = append(objs, o)
	}
	if code != 0 || len(objs) != 3 {
		t.Fatalf("json: %s", out)
	}
	for _, k := range []string{"id", "created_at", "scenario", "protocol", "provider", "model", "status", "turns", "events"} {
		if _, ok := objs[0][k]; !ok {
			t.Errorf("session object lacks %q: %v", k, objs[0])
		}
	}
	if objs[1]["scenario"] != "refund/no-evidence" || objs[1]["status"] != "failed" || objs[2]["created_at"] != "2026-06-01T10:00:00.000Z" ||
		objs[0]["events"] != float64(14) || objs[0]["turns"] != float64(1) {
		t.Errorf("objects: %v", objs)
	}
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--status", "failed"}, []string{ids[1]}},
		{[]string{"--scenario", "refund"}, []string{ids[1], ids[0]}},
		{[]string{"--protocol", "gemini"}, []string{ids[2]}},
		{[]string{"--provider", "sim"}, []string{ids[1], ids[0]}},
		{[]string{"--search", "退款"}, []string{ids[0]}},
	} {
		_, out, _ := mw(t, append([]string{"--db", dbPath, "sessions", "--json"}, c.args...)...)
		var got []string
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			var o sessionObject
			if json.Unmarshal([]byte(line), &o) == nil {
				got = append(got, o.ID)
			}
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%v: %v, want %v", c.args, got, c.want)
		}
	}
	if code, _, errs := mw(t, "--db", dbPath, "sessions", "--status", "weird"); code != 2 || !strings.Contains(errs, "--status") {
		t.Errorf("bad status: %d %s", code, errs)
	}
}

func TestReplayCommand(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "m.db")
	ids := seedSessions(t, dbPath)
	id := ids[0]

	code, out, errs := mw(t, "--db", dbPath, "replay", id[:9], "--json")
	if code != 0 {
		t.Fatalf("%d %s", code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 14 {
		t.Fatalf("%d lines:\n%s", len(lines), out)
	}
	var first, empty, decision struct {
		Turn, Attempt, Seq int
		OffsetMS           float64 `json:"offset_ms"`
		Raw                *adapters.RawEvent
		Event              json.RawMessage
	}
	json.Unmarshal([]byte(lines[0]), &first)
	json.Unmarshal([]byte(lines[4]), &empty)
	json.Unmarshal([]byte(lines[11]), &decision)
	if first.Turn != 1 || first.Attempt != 1 || first.Seq != 1 || first.Raw == nil || first.Raw.Event != "e0" ||
		!strings.Contains(string(first.Event), `"type":"response.started"`) {
		t.Errorf("first line %s", lines[0])
	}
	if empty.Raw == nil || empty.Raw.Event != "e4" || string(empty.Event) != "null" || empty.OffsetMS != 4 {
		t.Errorf("raw event without canonical event: %s", lines[4])
	}
	if decision.Attempt != 0 || decision.Raw != nil || !strings.Contains(string(decision.Event), `"type":"tool.decision"`) {
		t.Errorf("decision line: %s", lines[11])
	}
	_, out, _ = mw(t, "--db", dbPath, "replay", id, "--json", "--to", "5")
	if n := len(strings.Split(strings.TrimSpace(out), "\n")); n != 5 {
		t.Errorf("--to 5 printed %d lines", n)
	}

	code, out, _ = mw(t, "--db", dbPath, "replay", id, "--to", "12")
	if code != 0 || !strings.Contains(out, "text.delta") || !strings.Contains(out, `"你好，"`) || !strings.Contains(out, "tool.decision") ||
		!strings.Contains(out, "State after entry 12") || !strings.Contains(out, "你好，world") || !strings.Contains(out, "→ approved") {
		t.Errorf("text replay (%d):\n%s", code, out)
	}
	if strings.Contains(out, "tool.result") {
		t.Errorf("--to 12 printed past entry 12:\n%s", out)
	}

	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"replay", "zzzzzzzz", "--json"}, `no session "zzzzzzzz"`},
		{[]string{"replay", ids[0][:2], "--json"}, "ambiguous"},
		{[]string{"replay", id, "--text", "--to", "99"}, "past the end"},
		{[]string{"replay", id, "--json", "--to", "-1"}, "--to"},
		{[]string{"replay"}, "accepts 1 arg"},
	} {
		code, _, errs := mw(t, append([]string{"--db", dbPath}, c.args...)...)
		if code != 2 || !strings.Contains(errs, c.msg) || strings.Count(errs, "\n") != 1 {
			t.Errorf("%v: %d %q, want exit 2 saying %q", c.args, code, errs, c.msg)
		}
	}
}

func TestExportImportJSONLCommands(t *testing.T) {
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "m.db")
	ids := seedSessions(t, dbPath)
	file := filepath.Join(dir, "s.jsonl")
	if code, _, errs := mw(t, "--db", dbPath, "export", ids[0], "-o", file); code != 0 {
		t.Fatal(errs)
	}
	first, _ := os.ReadFile(file)
	// stdout gives the same bytes.
	if _, out, _ := mw(t, "--db", dbPath, "export", ids[0], "--format", "jsonl"); out != string(first) {
		t.Errorf("stdout export differs from -o export")
	}
	// Never overwrite without --force.
	os.WriteFile(file, []byte("keep me"), 0o644)
	code, _, errs := mw(t, "--db", dbPath, "export", ids[0], "-o", file)
	if kept, _ := os.ReadFile(file); code != 2 || !strings.Contains(errs, file) || !strings.Contains(errs, "--force") || string(kept) != "keep me" {
		t.Fatalf("overwrite without --force: %d %s", code, errs)
	}
	if code, _, errs := mw(t, "--db", dbPath, "export", ids[0], "-o", file, "--force"); code != 0 {
		t.Fatal(errs)
	}
	if again, _ := os.ReadFile(file); !bytes.Equal(again, first) {
		t.Fatal("--force export differs")
	}

	// Import into another database and export again: the same bytes.
	os.Mkdir(filepath.Join(dir, "other"), 0o755)
	db2 := filepath.Join(dir, "other", "m2.db")
	code, out, errs := mw(t, "--db", db2, "import", file)
	if code != 0 || !strings.Contains(out, "imported 1 session(s)") || !strings.Contains(out, ids[0]) {
		t.Fatalf("import: %d %s %s", code, out, errs)
	}
	_, second, _ := mw(t, "--db", db2, "export", ids[0])
	if second != string(first) {
		t.Fatalf("export → import → export differs:\n%s\n---\n%s", first, second)
	}
	code, out, _ = mw(t, "--db", db2, "import", file)
	if code != 0 || !strings.Contains(out, "imported 0 session(s)") || !strings.Contains(out, "already in the database") {
		t.Errorf("second import: %d %s", code, out)
	}
	if code, _, errs := mw(t, "--db", dbPath, "export", ids[0], "--format", "pdf"); code != 2 || !strings.Contains(errs, "want jsonl, har, otlp, curl, python, ts or http") {
		t.Errorf("bad format: %d %s", code, errs)
	}
	for _, p := range []string{db2, db2 + "-wal", file} {
		if raw, err := os.ReadFile(p); err == nil && bytes.Contains(raw, []byte(plantedKey)) {
			t.Errorf("the planted key is in %s", p)
		}
	}
}

func TestImportRejectsBadFiles(t *testing.T) {
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "m.db")
	ids := seedSessions(t, dbPath)
	_, export, _ := mw(t, "--db", dbPath, "export", ids[0])
	lines := strings.Split(export, "\n")
	lines[6] = lines[6][:len(lines[6])/2]
	truncated := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(truncated, []byte(strings.Join(lines, "\n")), 0o644)

	badHAR := filepath.Join(dir, "bad.har")
	writeJSONFile(t, badHAR, map[string]any{"log": map[string]any{"entries": []any{
		harEntry("POST", "https://api.openai.com/v1/responses", 200, "application/json", `{}`, "", `{}`),
		harEntry("POST", "https://api.openai.com/v1/responses", 200, "application/json", "@@@", "base64", `{}`),
	}}})
	syntax := filepath.Join(dir, "syntax.har")
	os.WriteFile(syntax, []byte("{\n \"log\": {\n  \"entries\": [}\n}"), 0o644)
	text := filepath.Join(dir, "notes.txt")
	os.WriteFile(text, []byte("hello"), 0o644)

	fresh := filepath.Join(dir, "fresh.db")
	for _, c := range []struct {
		file, msg string
	}{
		{truncated, "bad.jsonl:7: "},
		{badHAR, "log.entries[1]: response.content.text is not valid base64"},
		{syntax, "syntax.har:3: not valid JSON"},
		{text, "neither a modelwire JSONL export, a HAR file nor a Claude Code transcript"},
		{filepath.Join(dir, "missing.jsonl"), "cannot read"},
		{dir, "directory"},
	} {
		code, _, errs := mw(t, "--db", fresh, "import", c.file)
		if code != 2 || !strings.Contains(errs, c.msg) {
			t.Errorf("import %s: %d %q, want exit 2 saying %q", filepath.Base(c.file), code, errs, c.msg)
		}
	}
	if _, out, _ := mw(t, "--db", fresh, "sessions", "--json"); strings.TrimSpace(out) != "" {
		t.Errorf("bad imports left sessions: %s", out)
	}
}

// TestBadDatabaseFiles: a --db that is not SQLite, not ours, or from a
// newer modelwire is refused with exit 2 and one line saying which, and
// the file is left as it was.
func TestBadDatabaseFiles(t *testing.T) {
	dir := t.TempDir()
	notSQLite := filepath.Join(dir, "notes.db")
	os.WriteFile(notSQLite, []byte("just some text, not a database\n"), 0o644)
	foreign := filepath.Join(dir, "foreign.db")
	fdb, _ := sql.Open("sqlite", foreign)
	fdb.Exec("CREATE TABLE t (x)")
	fdb.Close()
	newer := filepath.Join(dir, "newer.db")
	seedSessions(t, newer)
	ndb, _ := sql.Open("sqlite", newer)
	ndb.Exec(fmt.Sprintf("PRAGMA user_version = %d", store.SchemaVersion+1))
	ndb.Exec("PRAGMA wal_checkpoint(TRUNCATE)")
	ndb.Close()
	os.Remove(newer + "-wal")
	os.Remove(newer + "-shm")
	good := filepath.Join(dir, "good.jsonl")
	src := filepath.Join(dir, "src.db")
	ids := seedSessions(t, src)
	if code, _, errs := mw(t, "--db", src, "export", ids[0], "-o", good); code != 0 {
		t.Fatal(errs)
	}

	for _, c := range []struct {
		path, msg string
	}{
		{notSQLite, "is not a SQLite database"},
		{foreign, "not a modelwire database"},
		{newer, fmt.Sprintf("schema version %d, newer than this modelwire (%d)", store.SchemaVersion+1, store.SchemaVersion)},
		{dir, "is a directory"},
	} {
		before, _ := os.ReadFile(c.path)
		for _, args := range [][]string{{"sessions"}, {"replay", "abc", "--json"}, {"export", "abc"}, {"import", good}} {
			code, out, errs := mw(t, append([]string{"--db", c.path}, args...)...)
			if code != 2 || !strings.Contains(errs, c.msg) || out != "" || strings.Count(errs, "\n") != 1 {
				t.Errorf("%s %v: %d %q %q", filepath.Base(c.path), args, code, out, errs)
			}
		}
		if after, _ := os.ReadFile(c.path); !bytes.Equal(before, after) {
			t.Errorf("%s was changed", filepath.Base(c.path))
		}
	}
	// A location nobody can write: a clear error, not a crash.
	under := filepath.Join(notSQLite, "sub", "m.db")
	if code, _, errs := mw(t, "--db", under, "import", good); code != 2 || !strings.Contains(errs, "cannot write") {
		t.Errorf("unwritable location: %d %s", code, errs)
	}
}

func TestVersionCommand(t *testing.T) {
	code, out, _ := mw(t, "version")
	if code != 0 || !strings.Contains(out, "modelwire "+Version) || !strings.Contains(out, "go1.") ||
		!strings.Contains(out, fmt.Sprintf("schema    %d", store.SchemaVersion)) {
		t.Errorf("version: %q", out)
	}
	code, out, _ = mw(t, "version", "--json")
	var v struct {
		Version, Go string
		Schema      int
	}
	if err := json.Unmarshal([]byte(out), &v); code != 0 || err != nil || v.Version != Version || v.Schema != store.SchemaVersion || v.Go == "" {
		t.Errorf("version --json: %q", out)
	}
}
