package store

import (
	"strings"
	"testing"
)

// TagTitle puts the tag in front of the title once, redacted, and the
// list's search finds the session by it.
func TestTagTitle(t *testing.T) {
	db, _ := openTemp(t)
	w, err := db.CreateSession(SessionMeta{Title: "POST sim/v1/chat/completions · hi", Source: SourceProxy})
	if err != nil {
		t.Fatal(err)
	}
	tag := "python agent.py --key=sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"
	for range 2 {
		if err := db.TagTitle(w.ID(), tag); err != nil {
			t.Fatal(err)
		}
	}
	list, err := db.ListSessions(Filter{Search: "python agent.py"})
	if err != nil || len(list) != 1 {
		t.Fatalf("search by the tag: %v, %v", list, err)
	}
	title := list[0].Title
	if !strings.HasPrefix(title, "[python agent.py --key=") || !strings.HasSuffix(title, "] POST sim/v1/chat/completions · hi") ||
		strings.Count(title, "[python") != 1 || strings.Contains(title, "abcdefghij") {
		t.Errorf("title %q: want the redacted tag once, then the title", title)
	}
}
