package store

import (
	"bytes"
	"encoding/base64"
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

// fakeChat is a toy protocol for the store's tests: each SSE data is
// {"d":"text"} (a text delta of one message), {"finish":"stop"} or [DONE];
// a body is {"text":"…"}.
type fakeChat struct{ name string }

func (f fakeChat) Name() string               { return f.name }
func (fakeChat) Framing() adapters.Framing    { return adapters.FramingSSE }
func (fakeChat) NewDecoder() adapters.Decoder { return &fakeDecoder{} }
func (fakeChat) Encode(*adapters.Request, string) (*adapters.HTTPRequest, error) {
	return nil, errors.New("not needed")
}
func (fakeChat) DecodeBody(body []byte) []adapters.Event {
	var b struct{ Text string }
	if err := json.Unmarshal(body, &b); err != nil {
		return []adapters.Event{adapters.Diag(adapters.DiagMalformedEvent, err.Error())}
	}
	return []adapters.Event{{Type: adapters.EvItemStarted, ItemID: "m", Kind: "message"},
		{Type: adapters.EvTextDelta, ItemID: "m", Delta: b.Text}, {Type: adapters.EvItemDone, ItemID: "m"},
		adapters.Terminal(adapters.StatusCompleted, adapters.StopFinal, "stop")}
}
func (fakeChat) DecodeError(status int, h http.Header, body []byte) *adapters.APIError {
	return adapters.GenericError(status, h, body)
}

type fakeDecoder struct{ started, done bool }

func (d *fakeDecoder) Decode(raw adapters.RawEvent) []adapters.Event {
	if raw.Data == "[DONE]" {
		d.done = true
		return nil
	}
	var m struct {
		D      *string
		Finish string
	}
	if err := json.Unmarshal([]byte(raw.Data), &m); err != nil {
		return []adapters.Event{adapters.Diag(adapters.DiagMalformedEvent, err.Error())}
	}
	var out []adapters.Event
	if !d.started {
		d.started = true
		out = append(out, adapters.Event{Type: adapters.EvItemStarted, ItemID: "m", Kind: "message"})
	}
	if m.D != nil {
		out = append(out, adapters.Event{Type: adapters.EvTextDelta, ItemID: "m", Delta: *m.D})
	}
	if m.Finish != "" {
		out = append(out, adapters.Event{Type: adapters.EvItemDone, ItemID: "m"}, adapters.Terminal(adapters.StatusCompleted, adapters.StopFinal, m.Finish))
	}
	return out
}
func (d *fakeDecoder) Finish() []adapters.Event { return nil }

func fakeLookup(name string) (adapters.Protocol, error) { return fakeChat{name: name}, nil }

// fullSession records a session with two turns, a retried attempt that
// failed with 429, decisions, a result and a validation.
func fullSession(t *testing.T, db *DB) string {
	t.Helper()
	w, _ := record(t, db, refundMeta(), refundStream())
	if err := w.RecordDecision(Decision{Turn: 1, CallID: "call_1", Name: "get_order", Decision: DecisionEdited,
		Arguments: json.RawMessage(`{"order_id":"O-2048"}`), Edited: json.RawMessage(`{"order_id":"O-2049"}`), Reason: "改一下"}); err != nil {
		t.Fatal(err)
	}
	w.RecordToolResult(ToolResult{Turn: 1, CallID: "call_1", Name: "get_order", Content: "{\"paid\":18000}\n<ok>", IsError: false})
	rec, err := w.StartAttempt(2, AttemptMeta{Method: "POST", URL: "https://api.openai.com/v1/responses", Body: []byte{0xff, 0xfe, 'x'}})
	if err != nil {
		t.Fatal(err)
	}
	rec.Mark(MarkSent)
	rec.Response(429, http.Header{"Retry-After": {"1"}})
	rec.Append(adapters.Step{Index: 0, Raw: adapters.RawEvent{Data: `{"error":{"type":"rate_limit"}}`},
		Events: adapters.NewReducer("x").Apply([]adapters.Event{{Type: adapters.EvTerminal, Status: adapters.StatusFailed, StopReason: adapters.StopError,
			Error: &adapters.APIError{Type: "rate_limit", HTTPStatus: 429}}})})
	rec.Finish(errors.New("HTTP 429"))
	rec2, _ := w.StartAttempt(2, AttemptMeta{Method: "POST", URL: "https://api.openai.com/v1/responses", RetryReason: "429, Retry-After 1s"})
	l := newLiveStream(adapters.OpenAIResponses)
	l.step(sse("a", `{}`), adapters.Event{Type: adapters.EvItemStarted, ItemID: "m2", Kind: "message"})
	l.step(sse("b", "line1\nline2"), adapters.Event{Type: adapters.EvTextDelta, ItemID: "m2", Delta: `{"decision":"needs_review"}`})
	l.step(sse("c", `{}`), adapters.Event{Type: adapters.EvItemDone, ItemID: "m2"}, adapters.Terminal(adapters.StatusCompleted, adapters.StopFinal, "completed"))
	for _, st := range l.steps {
		rec2.Append(st)
	}
	rec2.Finish(nil)
	w.RecordValidation(0, []Validation{{"transport", "pass", ""}, {"schema", "fail", "/issues: missing"}})
	if err := w.Finish(StatusFailed); err != nil {
		t.Fatal(err)
	}
	return w.ID()
}

func exportJSONL(t *testing.T, db *DB, id string) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := db.ExportJSONL(&b, id); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestJSONLRoundTrip(t *testing.T) {
	a, _ := openTemp(t)
	id := fullSession(t, a)
	first := exportJSONL(t, a, id)

	b, bpath := openTemp(t)
	res, err := b.ImportJSONL(bytes.NewReader(first), "export.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(res.Sessions, []string{id}) {
		t.Fatalf("imported %+v", res)
	}
	second := exportJSONL(t, b, id)
	if !bytes.Equal(first, second) {
		t.Fatalf("export → import → export differs:\n%s\n----\n%s", first, second)
	}
	// Same timeline, same session, same state.
	ea, _ := a.Events(id, 1, 0)
	eb, _ := b.Events(id, 1, 0)
	if !reflect.DeepEqual(ea, eb) {
		t.Errorf("timelines differ")
	}
	sa, _ := a.GetSession(id)
	sb, _ := b.GetSession(id)
	if !reflect.DeepEqual(sa, sb) {
		t.Errorf("sessions differ:\n%+v\n%+v", sa, sb)
	}
	for _, n := range []int{5, 20, len(ea)} {
		xa, _ := a.StateAt(id, n)
		xb, _ := b.StateAt(id, n)
		if !reflect.DeepEqual(xa, xb) {
			t.Errorf("state at %d differs", n)
		}
	}
	// Importing again skips it.
	res, err = b.ImportJSONL(bytes.NewReader(first), "export.jsonl")
	if err != nil || len(res.Sessions) != 0 || !reflect.DeepEqual(res.Present, []string{id}) {
		t.Errorf("second import: %+v, %v", res, err)
	}
	b.Close()
	if raw, _ := os.ReadFile(bpath); len(raw) == 0 {
		t.Fatal("empty database")
	}
}

func TestJSONLImportRejectsMalformed(t *testing.T) {
	a, _ := openTemp(t)
	id := fullSession(t, a)
	good := strings.Split(strings.TrimSpace(string(exportJSONL(t, a, id))), "\n")
	with := func(i int, line string) string {
		lines := append([]string{}, good...)
		lines[i] = line
		return strings.Join(lines, "\n") + "\n"
	}
	drop := func(i int) string {
		lines := append(append([]string{}, good[:i]...), good[i+1:]...)
		return strings.Join(lines, "\n") + "\n"
	}
	firstStep, decision := 0, 0
	for i, l := range good {
		if strings.HasPrefix(l, `{"type":"step"`) && firstStep == 0 {
			firstStep = i
		}
		if strings.Contains(l, `"type":"tool.decision"`) {
			decision = i
		}
	}
	cases := []struct {
		name, body string
		line       int
		msg        string
	}{
		{"empty", "", 1, "empty"},
		{"not ours", `{"log":{}}` + "\n", 1, "not a modelwire JSONL export"},
		{"not JSON", with(3, `{"type":"attempt",`), 4, "not a JSON object"},
		{"unknown field", with(1, strings.Replace(good[1], `"title"`, `"titel"`, 1)), 2, "unknown field"},
		{"missing step", drop(firstStep + 2), firstStep + 3, "expected"},
		{"bad decision", with(decision, strings.Replace(good[decision], `"edited"`, `"maybe"`, 1)), decision + 1, "decision"},
		{"unknown type", with(2, `{"type":"mystery"}`), 3, "unknown line type"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, _ := openTemp(t)
			_, err := b.ImportJSONL(strings.NewReader(c.body), "in.jsonl")
			var ie *InputError
			if !errors.As(err, &ie) || ie.Line != c.line || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("got %v, want line %d saying %q", err, c.line, c.msg)
			}
			if !strings.HasPrefix(err.Error(), fmt.Sprintf("in.jsonl:%d: ", c.line)) {
				t.Errorf("error %q does not start with the file and line", err)
			}
			if list, _ := b.ListSessions(Filter{}); len(list) != 0 {
				t.Errorf("a malformed file imported %d sessions", len(list))
			}
		})
	}
}

func TestJSONLImportRedacts(t *testing.T) {
	a, _ := openTemp(t)
	id := fullSession(t, a)
	exp := string(exportJSONL(t, a, id))
	exp = strings.Replace(exp, `"request_headers":{}`, `"request_headers":{"Authorization":["Bearer `+planted+`"],"X-Goog-Api-Key":["`+planted+`"]}`, 1)
	exp = strings.Replace(exp, `"url":"https://api.openai.com/v1/responses"`, `"url":"https://api.openai.com/v1/responses?key=`+planted+`"`, 1)
	if strings.Count(exp, planted) != 3 {
		t.Fatalf("the key was not planted: %d", strings.Count(exp, planted))
	}
	b, path := openTemp(t)
	if _, err := b.ImportJSONL(strings.NewReader(exp), "x.jsonl"); err != nil {
		t.Fatal(err)
	}
	b.Close()
	for _, p := range []string{path, path + "-wal"} {
		raw, _ := os.ReadFile(p)
		if bytes.Contains(raw, []byte(planted)) {
			t.Errorf("the planted key is in %s", filepath.Base(p))
		}
	}
}

func sseBody(events ...string) string {
	var b strings.Builder
	for _, e := range events {
		b.WriteString("data: " + e + "\n\n")
	}
	return b.String()
}

func harJSON(t *testing.T, entries ...map[string]any) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{"log": map[string]any{"version": "1.2", "creator": map[string]any{"name": "test"}, "entries": entries}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func harEntryMap(method, url string, status int, mime, text, encoding string, headers ...string) map[string]any {
	var hs []map[string]string
	for i := 0; i+1 < len(headers); i += 2 {
		hs = append(hs, map[string]string{"name": headers[i], "value": headers[i+1]})
	}
	content := map[string]any{"size": len(text), "mimeType": mime, "text": text}
	if encoding != "" {
		content["encoding"] = encoding
	}
	return map[string]any{
		"startedDateTime": "2026-03-04T05:06:07.123+00:00",
		"time":            50,
		"request": map[string]any{"method": method, "url": url, "httpVersion": "HTTP/2", "headers": hs,
			"queryString": []any{}, "cookies": []any{}, "headersSize": -1, "bodySize": 20,
			"postData": map[string]any{"mimeType": "application/json", "text": `{"model":"gpt-x","stream":true}`}},
		"response": map[string]any{"status": status, "statusText": "", "httpVersion": "HTTP/2", "headers": []any{},
			"cookies": []any{}, "content": content, "redirectURL": "", "headersSize": -1, "bodySize": -1},
		"cache":   map[string]any{},
		"timings": map[string]any{"blocked": 1, "dns": -1, "connect": -1, "send": 2, "wait": 30, "receive": 17},
	}
}

func TestHARImportExport(t *testing.T) {
	db, path := openTemp(t)
	stream := sseBody(`{"d":"Hello"}`, `{"d":", 世界"}`, `{"finish":"stop"}`, "[DONE]")
	body := base64.StdEncoding.EncodeToString([]byte(`{"text":"plain answer"}`))
	har := harJSON(t,
		harEntryMap("POST", "https://api.openai.com/v1/chat/completions", 200, "text/event-stream; charset=utf-8", stream, "",
			"Authorization", "Bearer "+planted, "content-type", "application/json"),
		harEntryMap("GET", "https://example.com/index.html", 200, "text/html", "<html>", ""),
		harEntryMap("POST", "https://api.anthropic.com/v1/messages", 200, "application/json", body, "base64", "x-api-key", planted),
		harEntryMap("OPTIONS", "https://api.anthropic.com/v1/messages", 204, "", "", ""),
		harEntryMap("POST", "https://generativelanguage.googleapis.com/v1beta/models/gemini-x:streamGenerateContent?alt=sse&key="+planted,
			429, "application/json", `{"error":{"code":429,"message":"quota","status":"RESOURCE_EXHAUSTED"}}`, ""),
		harEntryMap("POST", "https://api.deepseek.com/chat/completions", 200, "text/event-stream", sseBody(`{"d":"深"}`), ""),
	)
	res, err := importHAR(db, bytes.NewReader(har), "cap.har", fakeLookup)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Sessions) != 4 || res.Skipped != 2 || res.Entries != 6 {
		t.Fatalf("import %+v", res)
	}
	want := []struct {
		protocol, provider, model string
		status                    Status
		text, terminal            string
	}{
		{adapters.OpenAIChat, "openai", "gpt-x", StatusDone, "Hello, 世界", "completed"},
		{adapters.AnthropicMessages, "anthropic", "gpt-x", StatusDone, "plain answer", "completed"},
		{adapters.Gemini, "gemini", "gemini-x", StatusFailed, "", "failed"},
		// cut before its terminal event: failed at the protocol layer
		// (issue 29; it used to import as done)
		{adapters.DeepSeekChat, "deepseek", "gpt-x", StatusFailed, "深", "unknown"},
	}
	for i, id := range res.Sessions {
		s, err := db.GetSession(id)
		if err != nil {
			t.Fatal(err)
		}
		w := want[i]
		if s.Protocol != w.protocol || s.Provider != w.provider || s.Model != w.model || s.Status != w.status || s.Source != "har" {
			t.Errorf("session %d: %+v", i, s.SessionInfo)
		}
		st, err := db.StateAt(id, s.Events)
		if err != nil {
			t.Fatal(err)
		}
		if st.Summary.Text != w.text || string(st.Summary.Terminal) != w.terminal {
			t.Errorf("session %d: text %q terminal %s", i, st.Summary.Text, st.Summary.Terminal)
		}
		a := s.Attempts[0]
		if a.Timings.Sent == nil || *a.Timings.Sent != 3*time.Millisecond || *a.Timings.FirstByte != 33*time.Millisecond ||
			!a.StartedAt.Equal(time.Date(2026, 3, 4, 5, 6, 7, 123e6, time.UTC)) {
			t.Errorf("session %d timings %+v started %v", i, a.Timings, a.StartedAt)
		}
	}
	if s, _ := db.GetSession(res.Sessions[2]); s.Attempts[0].StatusCode != 429 || s.Attempts[0].State != StatusFailed {
		t.Errorf("the 429 entry: %+v", s.Attempts[0])
	}

	// Export the streamed session as HAR: a valid HAR 1.2 whose body is
	// the stream again, which imports back to the same events.
	var out bytes.Buffer
	if err := db.ExportHAR(&out, res.Sessions[0], "test"); err != nil {
		t.Fatal(err)
	}
	var h harFile
	if err := json.Unmarshal(out.Bytes(), &h); err != nil {
		t.Fatal(err)
	}
	if h.Log.Version != "1.2" || h.Log.Creator.Name != "modelwire" || len(h.Log.Entries) != 1 {
		t.Fatalf("exported %s", out.String())
	}
	e := h.Log.Entries[0]
	if e.Response.Content.Text != stream || e.Request.PostData == nil || e.Request.Method != "POST" ||
		e.Response.Status != 200 || e.StartedDateTime != "2026-03-04T05:06:07.123Z" || e.Timings.Wait != 30 {
		t.Errorf("exported entry %+v", e)
	}
	again, err := importHAR(db, bytes.NewReader(out.Bytes()), "again.har", fakeLookup)
	if err != nil || len(again.Sessions) != 1 {
		t.Fatalf("re-import: %+v %v", again, err)
	}
	e1, _ := db.Events(res.Sessions[0], 1, 0)
	e2, _ := db.Events(again.Sessions[0], 1, 0)
	if len(e1) != len(e2) {
		t.Fatalf("re-imported %d entries, want %d", len(e2), len(e1))
	}
	for i := range e1 {
		if !bytes.Equal(e1[i].Event, e2[i].Event) || !reflect.DeepEqual(e1[i].Raw, e2[i].Raw) {
			t.Errorf("entry %d: %s / %s", i+1, e1[i].Event, e2[i].Event)
		}
	}

	db.Close()
	for _, p := range []string{path, path + "-wal"} {
		raw, _ := os.ReadFile(p)
		if bytes.Contains(raw, []byte(planted)) {
			t.Errorf("the planted key is in %s", filepath.Base(p))
		}
	}
}

func TestHARImportRejectsMalformed(t *testing.T) {
	ok := harEntryMap("POST", "https://api.openai.com/v1/responses", 200, "application/json", `{"text":"x"}`, "")
	badB64 := harEntryMap("POST", "https://api.openai.com/v1/responses", 200, "application/json", "!!!", "base64")
	noURL := harEntryMap("POST", "", 200, "application/json", "", "")
	badDate := harEntryMap("POST", "https://api.openai.com/v1/responses", 200, "application/json", `{}`, "")
	badDate["startedDateTime"] = "yesterday"
	cases := []struct {
		name  string
		body  []byte
		line  int
		entry int
		msg   string
	}{
		{"syntax", []byte("{\n  \"log\": {\n    \"entries\": [,]\n  }\n}"), 3, -1, "not valid JSON"},
		{"no log", []byte(`{"entries":[]}`), 0, -1, "no log.entries"},
		{"bad base64", harJSON(t, ok, badB64), 0, 1, "base64"},
		{"no url", harJSON(t, noURL), 0, 0, "request.url"},
		{"bad date", harJSON(t, ok, ok, badDate), 0, 2, "startedDateTime"},
		{"wrong type", []byte(`{"log":{"entries":[{"request":{"method":1}}]}}`), 0, 0, "cannot unmarshal"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			db, _ := openTemp(t)
			_, err := importHAR(db, bytes.NewReader(c.body), "cap.har", fakeLookup)
			var ie *InputError
			if !errors.As(err, &ie) || ie.Line != c.line || ie.Entry != c.entry || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("got %v (%+v), want line %d entry %d saying %q", err, ie, c.line, c.entry, c.msg)
			}
			if list, _ := db.ListSessions(Filter{}); len(list) != 0 {
				t.Errorf("a malformed file imported %d sessions", len(list))
			}
		})
	}
}
