package har

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/store"
)

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
	res, err := Import(db, bytes.NewReader(har), "cap.har", fakeLookup)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Sessions) != 4 || res.Skipped != 2 || res.Entries != 6 {
		t.Fatalf("import %+v", res)
	}
	want := []struct {
		protocol, provider, model string
		status                    store.Status
		text, terminal            string
	}{
		{adapters.OpenAIChat, "openai", "gpt-x", store.StatusDone, "Hello, 世界", "completed"},
		{adapters.AnthropicMessages, "anthropic", "gpt-x", store.StatusDone, "plain answer", "completed"},
		{adapters.Gemini, "gemini", "gemini-x", store.StatusFailed, "", "failed"},
		// cut before its terminal event: failed at the protocol layer
		// (issue 29; it used to import as done)
		{adapters.DeepSeekChat, "deepseek", "gpt-x", store.StatusFailed, "深", "unknown"},
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
	if s, _ := db.GetSession(res.Sessions[2]); s.Attempts[0].StatusCode != 429 || s.Attempts[0].State != store.StatusFailed {
		t.Errorf("the 429 entry: %+v", s.Attempts[0])
	}

	// Export the streamed session as HAR: a valid HAR 1.2 whose body is
	// the stream again, which imports back to the same events.
	var out bytes.Buffer
	if err := Export(db, &out, res.Sessions[0], "test"); err != nil {
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
	again, err := Import(db, bytes.NewReader(out.Bytes()), "again.har", fakeLookup)
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
			_, err := Import(db, bytes.NewReader(c.body), "cap.har", fakeLookup)
			var ie *store.InputError
			if !errors.As(err, &ie) || ie.Line != c.line || ie.Entry != c.entry || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("got %v (%+v), want line %d entry %d saying %q", err, ie, c.line, c.entry, c.msg)
			}
			if list, _ := db.ListSessions(store.Filter{}); len(list) != 0 {
				t.Errorf("a malformed file imported %d sessions", len(list))
			}
		})
	}
}
