package har

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/modelwire/modelwire/store"
)

// chatEntry is a Chat Completions exchange whose request carries msgs as
// its history, started at sec seconds.
func chatEntry(t *testing.T, sec int, status int, msgs ...string) map[string]any {
	t.Helper()
	body := `{"model":"gpt-x","stream":true,"messages":[` + joinJSON(msgs) + `]}`
	text, mime := sseBody(`{"d":"turn `+string(rune('0'+len(msgs)))+`"}`, `{"finish":"stop"}`, "[DONE]"), "text/event-stream"
	if status >= 400 {
		text, mime = `{"error":{"message":"slow down","type":"rate_limit"}}`, "application/json"
	}
	e := harEntryMap("POST", "https://api.openai.com/v1/chat/completions", status, mime, text, "")
	e["startedDateTime"] = time.Date(2026, 3, 4, 5, 6, sec, 0, time.UTC).Format(time.RFC3339Nano)
	e["request"].(map[string]any)["postData"] = map[string]any{"mimeType": "application/json", "text": body}
	return e
}

func joinJSON(items []string) string {
	var b bytes.Buffer
	for i, s := range items {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(s)
	}
	return b.String()
}

// A HAR of a three-turn exchange (with a rate-limited attempt retried) is
// one session, whatever else the capture holds; exported as HAR, that
// session imports back as one session with the same turns and events.
func TestHARImportLinksTurnsIntoOneSession(t *testing.T) {
	db, _ := openTemp(t)
	u1 := `{"role":"user","content":"请核查订单 O-2048"}`
	a1 := `{"role":"assistant","tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_order","arguments":"{}"}}]}`
	r1 := `{"role":"tool","tool_call_id":"call_1","content":"{\"paid\":18000}"}`
	// The SDK re-serialises the history: other key order, explicit nulls.
	a1again := `{"tool_calls":[{"function":{"arguments":"{}","name":"get_order"},"type":"function","id":"call_1"}],"content":null,"role":"assistant"}`
	a2 := `{"role":"assistant","content":"needs review"}`
	u2 := `{"role":"user","content":"thanks"}`
	other := `{"role":"user","content":"a different app"}`
	har := harJSON(t,
		chatEntry(t, 1, 200, u1),
		chatEntry(t, 2, 200, other),
		chatEntry(t, 3, 429, u1, a1, r1),
		chatEntry(t, 5, 200, u1, a1again, r1),
		chatEntry(t, 7, 200, u1, a1, r1, a2, u2),
	)
	res, err := Import(db, bytes.NewReader(har), "three-turns.har", fakeLookup)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Sessions) != 2 {
		t.Fatalf("imported %d sessions, want 2 (the conversation and the other app): %+v", len(res.Sessions), res)
	}
	s, err := db.GetSession(res.Sessions[0])
	if err != nil {
		t.Fatal(err)
	}
	type ta struct{ turn, attempt int }
	var got []ta
	for _, a := range s.Attempts {
		got = append(got, ta{a.Turn, a.Attempt})
	}
	if want := []ta{{1, 1}, {2, 1}, {2, 2}, {3, 1}}; !reflect.DeepEqual(got, want) || s.Turns != 3 {
		t.Fatalf("turns and attempts %v (turns %d), want %v", got, s.Turns, want)
	}
	if s.Attempts[2].RetryReason != "HTTP 429" || s.Status != store.StatusDone {
		t.Errorf("retry reason %q, status %s", s.Attempts[2].RetryReason, s.Status)
	}
	if o, _ := db.GetSession(res.Sessions[1]); o.Turns != 1 {
		t.Errorf("the other app's session has %d turns", o.Turns)
	}

	var out bytes.Buffer
	if err := Export(db, &out, s.ID, "test"); err != nil {
		t.Fatal(err)
	}
	var h harFile
	if err := json.Unmarshal(out.Bytes(), &h); err != nil || len(h.Log.Entries) != 4 {
		t.Fatalf("exported %d entries (%v), want 4", len(h.Log.Entries), err)
	}
	again, err := Import(db, bytes.NewReader(out.Bytes()), "again.har", fakeLookup)
	if err != nil || len(again.Sessions) != 1 {
		t.Fatalf("re-import: %+v %v", again, err)
	}
	s2, _ := db.GetSession(again.Sessions[0])
	if s2.Turns != 3 || len(s2.Attempts) != 4 || s2.Attempts[2].Attempt != 2 {
		t.Errorf("re-imported %d turns, %d attempts", s2.Turns, len(s2.Attempts))
	}
	e1, _ := db.Events(s.ID, 1, 0)
	e2, _ := db.Events(s2.ID, 1, 0)
	if len(e1) != len(e2) || len(e1) == 0 {
		t.Fatalf("re-imported %d entries, want %d", len(e2), len(e1))
	}
	for i := range e1 {
		if e1[i].Turn != e2[i].Turn || !bytes.Equal(e1[i].Event, e2[i].Event) || !reflect.DeepEqual(e1[i].Raw, e2[i].Raw) {
			t.Errorf("entry %d: turn %d %s / turn %d %s", i+1, e1[i].Turn, e1[i].Event, e2[i].Turn, e2[i].Event)
		}
	}
}
