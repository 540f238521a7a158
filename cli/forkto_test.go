package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelwire/modelwire/store"
)

// TestForkToThreeTargets: `fork --to` with three targets makes three
// children, stored under the parent, and compares them with it: the
// JSON names each target with its verdict (the wrong-cap variant fails
// the domain layer, the protocol switches pass), the text prints the
// three diffs and the columns side by side; exit 1 as a child failed.
func TestForkToThreeTargets(t *testing.T) {
	db := filepath.Join(t.TempDir(), "mw.db")
	parent, _, _ := refundRun(t, db)
	targets := []string{"openai-chat", "anthropic-messages/claude-x", "sim:refund/wrong-cap"}
	code, out, errs := mw(t, "fork", parent, "--db", db, "--turn", "3", "--to", strings.Join(targets, ","), "--approve", "auto", "--json")
	if code != 1 {
		t.Fatalf("fork --to: exit %d, want 1 (a child fails): %s", code, errs)
	}
	var cmp struct {
		Type   string `json:"type"`
		Parent string `json:"parent"`
		Sides  []struct {
			Target, Session, Protocol, Model, Verdict string
			Failed                                    string `json:"failed_layer"`
			Differences                               int
		} `json:"sides"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &cmp); err != nil || cmp.Type != "fork.comparison" {
		t.Fatalf("not one fork.comparison line (%v):\n%s", err, out)
	}
	if len(cmp.Sides) != 4 || cmp.Parent != parent || cmp.Sides[0].Session != parent || cmp.Sides[0].Verdict != "pass" {
		t.Fatalf("comparison %+v", cmp)
	}
	want := []struct{ protocol, model, verdict, failed string }{
		{"openai-chat", "refund-model", "pass", ""},
		{"anthropic-messages", "claude-x", "pass", ""},
		{"openai-responses", "refund-model", "fail", "domain"},
	}
	s, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i, w := range want {
		c := cmp.Sides[i+1]
		if c.Target != targets[i] || c.Protocol != w.protocol || c.Model != w.model || c.Verdict != w.verdict || c.Failed != w.failed || c.Differences == 0 {
			t.Errorf("side %d: %+v, want %s %+v", i+1, c, targets[i], w)
		}
		got, err := s.GetSession(c.Session)
		if err != nil || got.ParentID != parent {
			t.Errorf("child %s: parent %q (%v), want %s", c.Session, got.ParentID, err, parent)
		}
	}

	// The text: the three diffs, then the columns.
	code, out, _ = mw(t, "fork", parent, "--db", db, "--turn", "3", "--to", strings.Join(targets, ","), "--approve", "auto")
	if code != 1 {
		t.Fatalf("fork --to (text): exit %d", code)
	}
	for _, s := range append(targets, "comparison from turn 3", "verdict", "fail (domain)", "answer.max_refund_cents") {
		if !strings.Contains(out, s) {
			t.Errorf("the text lacks %q:\n%s", s, out)
		}
	}
	if n := strings.Count(out, "(a fork of a at turn 3)"); n != 3 {
		t.Errorf("%d diffs printed, want 3", n)
	}
}

// TestForkToBadTarget: a target that does not parse is one line, exit 2,
// and nothing runs.
func TestForkToBadTarget(t *testing.T) {
	db := filepath.Join(t.TempDir(), "mw.db")
	parent, _, _ := refundRun(t, db)
	for _, c := range []struct{ to, msg string }{
		{"openai-chat,bogus", `target "bogus": unknown protocol or provider bogus`},
		{"sim:nope", `unknown scenario nope`},
		{"anthropic-messages/", `empty model`},
		{"nobody:openai-chat", `unknown provider nobody`},
	} {
		code, _, errs := mw(t, "fork", parent, "--db", db, "--turn", "3", "--to", c.to, "--approve", "auto")
		if code != 2 || !strings.Contains(errs, c.msg) || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("--to %s: exit %d, %q; want 2 and %q on one line", c.to, code, errs, c.msg)
		}
	}
	if code, _, errs := mw(t, "fork", parent, "--db", db, "--turn", "3", "--to", "openai-chat", "--protocol", "openai-chat", "--approve", "auto"); code != 2 {
		t.Errorf("--to with --protocol: exit %d: %s", code, errs)
	}
	if code, _, errs := mw(t, "fork", parent, "--db", db, "--turn", "3", "--tui", "--approve", "auto"); code != 2 || !strings.Contains(errs, "give --to") {
		t.Errorf("--tui without --to: exit %d: %s", code, errs)
	}
}

// TestDiffShowsManifest: sessions --json carries each session's manifest,
// and diff lists a manifest difference where the prompt template changed
// (the wrong-cap variant edits a source) and none where only a fault did.
func TestDiffShowsManifest(t *testing.T) {
	db := filepath.Join(t.TempDir(), "mw.db")
	base, _, _ := refundRun(t, db)
	_, out, _ := mw(t, "run", "--db", db, "--approve", "auto", "--json", "--scenario", "refund/wrong-cap") // fails domain
	ls := lines(t, out)
	variant, _ := ls[len(ls)-1]["session_id"].(string)
	faulted, _, _ := refundRun(t, db, "--fault", "duplicate-events")
	_, list, _ := mw(t, "sessions", "--db", db, "--json")
	for _, s := range lines(t, list) {
		m, _ := s["manifest"].(map[string]any)
		hashes, _ := m["hashes"].(map[string]any)
		if m["client"] == nil || m["adapter_version"] == nil || hashes["prompt"] == nil || m["tool_hashes"] == nil || m["tools"] != nil {
			t.Errorf("session %s's manifest %v", s["id"], m)
		}
	}
	manifest := func(b string) []string {
		_, cs := diffJSON(t, db, base, b)
		var paths []string
		for _, c := range cs {
			if c.Kind == "manifest" {
				paths = append(paths, c.Path)
			}
		}
		return paths
	}
	if got := manifest(variant); len(got) != 1 || got[0] != "prompt" {
		t.Errorf("refund → refund/wrong-cap: manifest differences %v, want [prompt]", got)
	}
	if got := manifest(faulted); len(got) != 0 {
		t.Errorf("refund → the same with a fault: manifest differences %v, want none", got)
	}
}

// TestForkToForms: the forms check --to reads work for fork --to too — a
// provider alone keeps the parent's protocol (the simulator speaks them
// all), PROVIDER:/MODEL changes the model alone, SCENARIO/VARIANT needs no
// sim: — resolved against the parent as check resolves them.
func TestForkToForms(t *testing.T) {
	db := filepath.Join(t.TempDir(), "mw.db")
	parent, _, _ := refundRun(t, db, "--protocol", "anthropic-messages")
	targets := []string{"sim", "sim:/other-model", "refund/wrong-cap"}
	_, out, errs := mw(t, "fork", parent, "--db", db, "--turn", "3", "--to", strings.Join(targets, ","), "--approve", "auto", "--json")
	var cmp struct {
		Sides []struct{ Target, Session, Protocol, Model, Verdict string } `json:"sides"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &cmp); err != nil || len(cmp.Sides) != 4 {
		t.Fatalf("not a comparison of 4 sides (%v): %s\n%s", err, out, errs)
	}
	want := []struct{ protocol, model string }{
		{"anthropic-messages", "refund-model"},
		{"anthropic-messages", "other-model"},
		{"anthropic-messages", "refund-model"},
	}
	for i, w := range want {
		if s := cmp.Sides[i+1]; s.Target != targets[i] || s.Protocol != w.protocol || s.Model != w.model || s.Session == "" {
			t.Errorf("side %d: %+v, want %s on %s/%s", i+1, s, targets[i], w.protocol, w.model)
		}
	}
}
