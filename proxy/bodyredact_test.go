package proxy

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/har"
	"github.com/modelwire/modelwire/jsonl"
	"github.com/modelwire/modelwire/redact"
	"github.com/modelwire/modelwire/session"
	"github.com/modelwire/modelwire/store"
)

// The planted personal data: a card number the upstream's stream splits
// across SSE events, and an e-mail the request carries at a pointer.
const (
	plantedCard  = "4929 1234 5678 9012"
	plantedEmail = "ann.lee@example.com"
)

// leaks are the texts that must be found nowhere stored: the card whole,
// without its spaces, each half of it as the events carried them, and
// the e-mail (and its local part).
var leaks = []string{plantedCard, "4929123456789012", "4929 1234", "5678 9012", "1234 5678", "29 1234", "5678 90", "234 5678", "4929 1",
	plantedEmail, "ann.lee", "@example.com"}

// chatChunk is one OpenAI Chat stream event carrying content.
func chatChunk(content, finish string) string {
	delta := map[string]any{}
	if content != "" {
		delta["content"] = content
	}
	choice := map[string]any{"index": 0, "delta": delta, "finish_reason": nil}
	if finish != "" {
		choice["finish_reason"] = finish
	}
	b, _ := json.Marshal(map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m",
		"choices": []any{choice}})
	return "data: " + string(b) + "\n\n"
}

// anthropicDelta is one Anthropic text delta event.
func anthropicDelta(text string) string {
	b, _ := json.Marshal(map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "text_delta", "text": text}})
	return "event: content_block_delta\ndata: " + string(b) + "\n\n"
}

// responsesEvents is an OpenAI Responses stream of one message whose
// text comes in these deltas; its done events and the completed response
// carry the whole text again, as the API's do.
func responsesEvents(deltas ...string) []string {
	full := strings.Join(deltas, "")
	ev := func(typ string, m map[string]any) string {
		m["type"] = typ
		b, _ := json.Marshal(m)
		return "event: " + typ + "\ndata: " + string(b) + "\n\n"
	}
	part := map[string]any{"type": "output_text", "text": full, "annotations": []any{}}
	item := map[string]any{"id": "msg_1", "type": "message", "status": "completed", "role": "assistant", "content": []any{part}}
	out := []string{
		ev("response.created", map[string]any{"sequence_number": 0, "response": map[string]any{"id": "resp_1", "object": "response", "status": "in_progress", "model": "m", "output": []any{}}}),
		ev("response.output_item.added", map[string]any{"sequence_number": 1, "output_index": 0,
			"item": map[string]any{"id": "msg_1", "type": "message", "status": "in_progress", "role": "assistant", "content": []any{}}}),
		ev("response.content_part.added", map[string]any{"sequence_number": 2, "item_id": "msg_1", "output_index": 0, "content_index": 0,
			"part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}}),
	}
	for i, d := range deltas {
		out = append(out, ev("response.output_text.delta", map[string]any{"sequence_number": 3 + i, "item_id": "msg_1", "output_index": 0, "content_index": 0, "delta": d}))
	}
	n := 3 + len(deltas)
	return append(out,
		ev("response.output_text.done", map[string]any{"sequence_number": n, "item_id": "msg_1", "output_index": 0, "content_index": 0, "text": full}),
		ev("response.content_part.done", map[string]any{"sequence_number": n + 1, "item_id": "msg_1", "output_index": 0, "content_index": 0, "part": part}),
		ev("response.output_item.done", map[string]any{"sequence_number": n + 2, "output_index": 0, "item": item}),
		ev("response.completed", map[string]any{"sequence_number": n + 3, "response": map[string]any{"id": "resp_1", "object": "response", "status": "completed",
			"model": "m", "output": []any{item}, "usage": map[string]any{"input_tokens": 5, "output_tokens": 9, "total_tokens": 14}}}),
	)
}

// splitUpstream answers Chat and Anthropic Messages with streams written
// by hand, the card number split across events, each event flushed on
// its own.
func splitUpstream(t *testing.T) *httptest.Server {
	chat := []string{
		chatChunk("Your card ", ""), chatChunk("4929 1234 ", ""), chatChunk("5678 9012", ""), chatChunk(" is on file.", ""),
		chatChunk("", "stop"), "data: [DONE]\n\n",
	}
	anthropic := []string{
		"event: message_start\ndata: " + `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-x","content":[],"stop_reason":null,"usage":{"input_tokens":5,"output_tokens":0}}}` + "\n\n",
		"event: content_block_start\ndata: " + `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}` + "\n\n",
		anthropicDelta("Card 49"), anthropicDelta("29 1234 5678 90"), anthropicDelta("12, ok"),
		"event: content_block_stop\ndata: " + `{"type":"content_block_stop","index":0}` + "\n\n",
		"event: message_delta\ndata: " + `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":9}}` + "\n\n",
		"event: message_stop\ndata: " + `{"type":"message_stop"}` + "\n\n",
	}
	responses := responsesEvents("Sent to ", "4929 1", "234 5678 9012", " today.")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		events := chat
		if strings.HasSuffix(r.URL.Path, "/messages") {
			events = anthropic
		} else if strings.HasSuffix(r.URL.Path, "/responses") {
			events = responses
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		for _, e := range events {
			_, _ = io.WriteString(w, e)
			w.(http.Flusher).Flush()
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// A card number split across two SSE events, and an e-mail at a pointer
// of the request, reach the client unchanged and are found nowhere the
// proxy keeps: the database's files, the stored session (request body,
// summary), its raw and canonical events, its JSONL and HAR exports, the
// updates shown live.
func TestBodyRedactionAcrossEvents(t *testing.T) {
	up := splitUpstream(t)
	rules, err := redact.ParseBodyRules([]byte(`{"patterns": ["\\b\\d{4}(?: ?\\d{4}){3}\\b"], "pointers": ["/metadata/user_email"]}`))
	if err != nil {
		t.Fatal(err)
	}
	dbPath := filepath.Join(t.TempDir(), "proxy.db")
	db, err := store.Open(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	obs := &observed{}
	px := New(Options{Upstream: up.URL, Provider: "compatible", DB: db, BodyRules: rules, Observe: obs.observe})
	srv := httptest.NewServer(px)

	wantText := map[string]string{"/v1/chat/completions": "Your card 4929 1234 5678 9012 is on file.", "/v1/messages": "Card 4929 1234 5678 9012, ok",
		"/v1/responses": "Sent to 4929 1234 5678 9012 today."}
	for path := range wantText {
		body := `{"model":"m","stream":true,"max_tokens":50,"metadata":{"user_email":"` + plantedEmail + `"},` +
			`"messages":[{"role":"user","content":"What card do you have on file?"}]}`
		resp, err := http.Post(srv.URL+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		// The client gets the original bytes: every delta as sent.
		if !bytes.Contains(got, []byte("4929 1234 ")) && !bytes.Contains(got, []byte(`"29 1234 5678 90"`)) && !bytes.Contains(got, []byte(`"234 5678 9012"`)) {
			t.Errorf("%s: the client did not get the card's pieces: %s", path, got)
		}
		if n := bytes.Count(got, []byte("\n\n")); n < 6 {
			t.Errorf("%s: the client got %d events", path, n)
		}
	}
	srv.Close()
	if err := px.Close(); err != nil {
		t.Fatal(err)
	}
	_ = db.Close()

	var all bytes.Buffer // everything stored or exported, as text
	files, _ := filepath.Glob(dbPath + "*")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		all.Write(b)
	}
	db, err = store.Open(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	list, err := db.ListSessions(store.Filter{})
	if err != nil || len(list) != len(wantText) {
		t.Fatalf("%d sessions, %v", len(list), err)
	}
	summaries := ""
	for _, s := range list {
		full, err := db.GetSession(s.ID)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(full)
		all.Write(b)
		es, err := db.Events(s.ID, 1, 0)
		if err != nil {
			t.Fatal(err)
		}
		var raws, deltas strings.Builder
		for _, e := range es {
			b, _ := json.Marshal(e)
			all.Write(b)
			if e.Raw != nil {
				raws.WriteString(e.Raw.Data)
				if !json.Valid([]byte(e.Raw.Data)) && e.Raw.Data != "[DONE]" {
					t.Errorf("a stored raw event is no longer JSON: %s", e.Raw.Data)
				}
			}
			var ev adapters.Event
			if e.Type == string(adapters.EvTextDelta) && json.Unmarshal(e.Event, &ev) == nil {
				deltas.WriteString(ev.Delta)
			}
		}
		if !strings.Contains(deltas.String(), redact.Redacted) {
			t.Errorf("%s: the stored deltas show no redaction: %q", s.Title, deltas.String())
		}
		summaries += deltas.String() + "\n"
		var jl, hr bytes.Buffer
		if err := jsonl.Export(db, &jl, s.ID); err != nil {
			t.Fatal(err)
		}
		if err := har.Export(db, &hr, s.ID, "test"); err != nil {
			t.Fatal(err)
		}
		all.Write(jl.Bytes())
		all.Write(hr.Bytes())
	}
	obs.mu.Lock()
	shown, _ := json.Marshal(obs.ups)
	obs.mu.Unlock()
	all.Write(shown)
	for _, l := range leaks {
		if i := bytes.Index(all.Bytes(), []byte(l)); i >= 0 {
			lo, hi := max(0, i-80), min(all.Len(), i+80)
			t.Errorf("%q is stored: …%q…", l, all.Bytes()[lo:hi])
		}
	}
	// What is left reads as the text with the match replaced once.
	for _, want := range []string{"Your card [redacted] is on file.", "Card [redacted], ok", "Sent to [redacted] today."} {
		if !strings.Contains(summaries, want) {
			t.Errorf("the stored deltas read %q, want %q", summaries, want)
		}
		if !bytes.Contains(all.Bytes(), []byte(`"text":"`+want+`"`)) && !bytes.Contains(all.Bytes(), []byte(`"text": "`+want+`"`)) {
			t.Errorf("no stored summary reads %q", want)
		}
	}
	if !bytes.Contains(all.Bytes(), []byte(`"user_email":"[redacted]"`)) {
		t.Error("the request's pointer was not redacted in place")
	}
}

// cutAcross cuts a match split across events from the deltas and from
// the raw events' JSON strings (the exact string, or, when an event's
// string holds more than its delta, the pieces), keeping the JSON valid,
// and leaves the caller's steps unchanged.
func TestCutAcross(t *testing.T) {
	rules := &redact.BodyRules{Patterns: []*regexp.Regexp{regexp.MustCompile(`\b\d{4}(?: ?\d{4}){3}\b`)}}
	mk := func(raw string, deltas ...string) *adapters.Step {
		st := &adapters.Step{Raw: adapters.RawEvent{Data: raw}}
		for _, d := range deltas {
			st.Events = append(st.Events, adapters.Event{Type: adapters.EvTextDelta, ItemID: "m", Delta: d})
		}
		return st
	}
	steps := []*adapters.Step{
		mk(`{"delta":{"content":"Card 4929 1234 "},"model":"gpt-4"}`, "Card 4929 1234 "),
		mk(`{"parts":[{"text":"5678"},{"text":" 9012 ok"}],"id":"5678"}`, "5678", " 9012 ok"),
		mk(`{"whole":"x 56789012 y and more"}`, "56789012"), // another lane's text, below
		mk(`not json 1111 2222 `, "1111 2222 "),
		mk(`{"t":"3333 4444"}`, "3333 4444"),
	}
	steps[2].Events[0].ItemID = "other"
	steps[3].Events[0].ItemID, steps[4].Events[0].ItemID = "third", "third"
	before, _ := json.Marshal(steps)
	us := make([]session.Update, len(steps))
	for i, st := range steps {
		us[i] = session.Update{Kind: session.UpStep, Step: st}
	}
	cutAcross(us, rules)
	if after, _ := json.Marshal(steps); !bytes.Equal(before, after) {
		t.Error("the caller's steps were changed")
	}
	want := []struct{ raw, deltas string }{
		{`{"delta":{"content":"Card [redacted]"},"model":"gpt-4"}`, "Card [redacted]"},
		{`{"parts":[{"text":""},{"text":" ok"}],"id":""}`, "| ok"},
		{`{"whole":"x 56789012 y and more"}`, "56789012"},
		{`not json [redacted]`, "[redacted]"},
		{`{"t":""}`, ""},
	}
	for i, u := range us {
		var ds []string
		for _, ev := range u.Step.Events {
			ds = append(ds, ev.Delta)
		}
		if u.Step.Raw.Data != want[i].raw || strings.Join(ds, "|") != want[i].deltas {
			t.Errorf("step %d: raw %s deltas %q; want %s %q", i, u.Step.Raw.Data, strings.Join(ds, "|"), want[i].raw, want[i].deltas)
		}
	}
	// A delta its raw event does not hold as one string: its pieces are
	// replaced wherever a string holds them.
	got := cutRaw(`{"a":"pre 4929 12","b":"4929 12"}`, []deltaCut{{orig: "4929 12 absent", cut: "[redacted] absent", pieces: []string{"4929 12"}}})
	if got != `{"a":"pre [redacted]","b":"[redacted]"}` {
		t.Errorf("fallback: %s", got)
	}
}

// recordThrough sends one request through a proxy with rules in front of
// an upstream that writes body, and returns everything stored of the
// session (its stored form, every entry) as JSON text, and what the
// client got.
func recordThrough(t *testing.T, rules *redact.BodyRules, maxDecoded int64, contentType, body, request string) (stored, client string) {
	t.Helper()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", contentType)
		_, _ = io.WriteString(w, body)
	}))
	defer up.Close()
	dbPath := filepath.Join(t.TempDir(), "proxy.db")
	db, err := store.Open(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	px := New(Options{Upstream: up.URL, Provider: "compatible", DB: db, BodyRules: rules, MaxDecoded: maxDecoded})
	srv := httptest.NewServer(px)
	resp, err := http.Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(request))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	srv.Close()
	if err := px.Close(); err != nil {
		t.Fatal(err)
	}
	list, err := db.ListSessions(store.Filter{})
	if err != nil || len(list) != 1 {
		t.Fatalf("%d sessions, %v", len(list), err)
	}
	full, err := db.GetSession(list[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	es, err := db.Events(list[0].ID, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal([]any{full, es})
	_ = db.Close()
	return string(b), string(got)
}

// A pointer that names a whole response's text: the raw body, its
// events and the summary recorded are the redacted body's.
func TestBodyRedactionPointerInAWholeResponse(t *testing.T) {
	rules, err := redact.ParseBodyRules([]byte(`{"pointers": ["/choices/*/message/content"]}`))
	if err != nil {
		t.Fatal(err)
	}
	body := `{"id":"c1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,` +
		`"message":{"role":"assistant","content":"Call Ann on 555-0199."},"finish_reason":"stop"}]}`
	stored, client := recordThrough(t, rules, 0, "application/json", body,
		`{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
	if client != body {
		t.Errorf("the client got %s", client)
	}
	if strings.Contains(stored, "555-0199") || strings.Contains(stored, "Call Ann") {
		t.Errorf("the pointed text is stored: %s", stored)
	}
	if !strings.Contains(stored, `\"content\":\"[redacted]\"`) || !strings.Contains(stored, `"final":"[redacted]"`) {
		t.Errorf("the raw body or the events are not the redacted one: %s", stored)
	}
}

// Past --max-decoded bytes held for body redaction, the recording of a
// stream stops and says so; the client still gets every event, and what
// was recorded has the match cut across its events.
func TestBodyRedactionHeldBound(t *testing.T) {
	rules, err := redact.ParseBodyRules([]byte(`{"patterns": ["\\b\\d{4}(?: ?\\d{4}){3}\\b"]}`))
	if err != nil {
		t.Fatal(err)
	}
	var sse strings.Builder
	sse.WriteString(chatChunk("Card 4929 1234 ", "") + chatChunk("5678 9012 then", ""))
	for i := 0; i < 400; i++ {
		sse.WriteString(chatChunk(" filler", ""))
	}
	sse.WriteString(chatChunk(" the end", "") + chatChunk("", "stop") + "data: [DONE]\n\n")
	stored, client := recordThrough(t, rules, 8<<10, "text/event-stream", sse.String(),
		`{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	if client != sse.String() {
		t.Error("the client did not get the stream whole")
	}
	if !strings.Contains(stored, "held for body redaction (--max-decoded)") {
		t.Error("no read_error says the recording stopped")
	}
	if strings.Contains(stored, " the end") {
		t.Error("the stream was recorded past the bound")
	}
	for _, l := range leaks[:7] {
		if strings.Contains(stored, l) {
			t.Errorf("%q is stored", l)
		}
	}
	if !strings.Contains(stored, "Card [redacted]") {
		t.Error("the cut is not recorded")
	}
}

// Every protocol, streamed and whole, through the simulator: the order
// number the refund case names (in the request, the model's tool
// arguments, its text and the simulator's headers) reaches the client
// and is nowhere in the record; every raw event stored as JSON still is.
func TestBodyRedactionEveryProtocol(t *testing.T) {
	rules, err := redact.ParseBodyRules([]byte(`{"patterns": ["O-\\d{4}"]}`))
	if err != nil {
		t.Fatal(err)
	}
	r := newRig(t, "", Options{BodyRules: rules})
	seen := 0
	for _, protocol := range protocols {
		for _, stream := range []bool{true, false} {
			for _, turn := range []int{1, 3} {
				got := send(t, r.url, protocol, wire(t, protocol, turn, stream), "sk-test-key-0123456789")
				if got.status != 200 {
					t.Fatalf("%s turn %d: %d %s", protocol, turn, got.status, got.body)
				}
				seen += bytes.Count(got.body, []byte("O-2048"))
			}
		}
	}
	if seen == 0 {
		t.Fatal("no response named the order: the test proves nothing")
	}
	sessions := r.stop()
	db, err := store.Open(r.dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range sessions {
		es, err := db.Events(s.ID, 1, 0)
		if err != nil {
			t.Fatal(err)
		}
		var jl bytes.Buffer
		if err := jsonl.Export(db, &jl, s.ID); err != nil {
			t.Fatal(err)
		}
		all, _ := json.Marshal([]any{s, es})
		all = append(all, jl.Bytes()...)
		for _, leak := range []string{"O-2048", "O-20", "-2048"} {
			if i := bytes.Index(all, []byte(leak)); i >= 0 {
				t.Errorf("%s: %q stored: …%s…", s.Protocol, leak, all[max(0, i-120):min(len(all), i+60)])
			}
		}
		for _, e := range es {
			if e.Raw != nil && strings.HasPrefix(e.Raw.Data, "{") && !json.Valid([]byte(e.Raw.Data)) {
				t.Errorf("%s: a raw event is no longer JSON: %s", s.Protocol, e.Raw.Data)
			}
		}
	}
}

// A pointer into a stream's events names each event's text: the stream
// is recorded as decoded from the redacted events (raw, deltas and
// summary alike), with no diagnostic the original did not have.
func TestBodyRedactionPointerInAStream(t *testing.T) {
	rules, err := redact.ParseBodyRules([]byte(`{"pointers": ["/choices/*/delta/content"]}`))
	if err != nil {
		t.Fatal(err)
	}
	sse := chatChunk("Ann Lee lives at ", "") + chatChunk("12 Elm Street.", "") + chatChunk("", "stop") + "data: [DONE]\n\n"
	stored, client := recordThrough(t, rules, 0, "text/event-stream", sse,
		`{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	if client != sse {
		t.Error("the client did not get the stream as sent")
	}
	for _, l := range []string{"Ann Lee", "Elm Street"} {
		if strings.Contains(stored, l) {
			t.Errorf("%q is stored", l)
		}
	}
	if !strings.Contains(stored, `"delta":"[redacted]"`) || !strings.Contains(stored, `\"content\":\"[redacted]\"`) {
		t.Errorf("the events are not recorded redacted: %s", stored)
	}
	for _, kind := range []string{adapters.DiagMalformedEvent, adapters.DiagUnknownEvent, adapters.DiagDuplicateEvent} {
		if strings.Contains(stored, `"kind":"`+kind+`"`) {
			t.Errorf("the redacted stream records a %s", kind)
		}
	}
}
