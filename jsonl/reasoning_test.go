package jsonl

import (
	"bytes"
	"testing"

	"github.com/modelwire/modelwire/store"
)

// An attempt's reasoning setting travels through an export: set, set to
// none (""), and not known (an attempt recorded without its body).
func TestReasoningSettingRoundTrip(t *testing.T) {
	a, _ := openTemp(t)
	w, err := a.CreateSession(store.SessionMeta{Title: "settings", Protocol: "openai-responses"})
	if err != nil {
		t.Fatal(err)
	}
	high, none := "effort=high", ""
	for i, r := range []*string{&high, &none, nil} {
		rec, err := w.StartAttempt(i+1, store.AttemptMeta{Method: "POST", URL: "https://api.openai.com/v1/responses", Reasoning: r})
		if err != nil {
			t.Fatal(err)
		}
		if err := rec.Finish(nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Finish(store.StatusDone); err != nil {
		t.Fatal(err)
	}
	b, _ := openTemp(t)
	if _, err := Import(b, bytes.NewReader(exportJSONL(t, a, w.ID())), "x.jsonl"); err != nil {
		t.Fatal(err)
	}
	s, err := b.GetSession(w.ID())
	if err != nil {
		t.Fatal(err)
	}
	show := func(p *string) string {
		if p == nil {
			return "<unknown>"
		}
		return "=" + *p
	}
	for i, want := range []string{"=effort=high", "=", "<unknown>"} {
		if got := show(s.Attempts[i].Reasoning); got != want {
			t.Errorf("attempt %d: reasoning %s, want %s", i+1, got, want)
		}
	}
}
