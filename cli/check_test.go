package cli

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelwire/modelwire/adapters/registry"
	"github.com/modelwire/modelwire/diff"
)

// TestCheckCommand: the refund case recorded on all six protocols, checked
// against each other protocol (exit 0: no regression, every cell passes)
// and against refund/wrong-cap (exit 1: the domain layer regresses in
// every cell, and nothing else). Each re-sent session is stored as a fork
// of its recording, so diff opens the pair.
func TestCheckCommand(t *testing.T) {
	db := filepath.Join(t.TempDir(), "mw.db")
	var ids []string
	for _, p := range registry.Protocols {
		id, _, _ := refundRun(t, db, "--protocol", p)
		ids = append(ids, id)
	}
	code, out, errs := mw(t, "check", "--db", db, "--scenario", "refund", "--to", strings.Join(registry.Protocols, ","), "--json")
	if code != 0 {
		t.Fatalf("protocol switches: exit %d: %s\n%s", code, errs, out)
	}
	ls := lines(t, out)
	if len(ls) != len(ids)*len(registry.Protocols)+1 {
		t.Fatalf("%d lines, want %d cells and a summary", len(ls), len(ids)*len(registry.Protocols))
	}
	for _, l := range ls[:len(ls)-1] {
		if l["type"] != "cell" || l["status"] != "pass" || l["regressed"] != false || !slices.Contains(ids, l["session"].(string)) {
			t.Errorf("cell %v", l)
		}
	}
	if s := ls[len(ls)-1]; s["type"] != "summary" || s["regressed"].(interface{ String() string }).String() != "0" {
		t.Errorf("summary %v", s)
	}

	code, out, errs = mw(t, append([]string{"check", "--db", db, "--to", "sim:refund/wrong-cap", "--json"}, ids...)...)
	if code != ExitFailed {
		t.Fatalf("wrong-cap: exit %d, want 1: %s", code, errs)
	}
	ls = lines(t, out)
	var child string
	for _, l := range ls[:len(ls)-1] {
		regs, _ := l["regressions"].([]any)
		if l["status"] != "fail" || l["failed_layer"] != "domain" || len(regs) != 1 || regs[0] != "layer:domain" {
			t.Errorf("wrong-cap cell %v", l)
		}
		child = l["child"].(string)
	}
	n, changes := diffJSON(t, db, ids[len(ids)-1], child)
	if n != 1 || !slices.ContainsFunc(changes, func(c diff.Change) bool { return c.Kind == "validation" && c.Path == "validation/domain/status" }) {
		t.Errorf("diff recording child: exit %d, changes %+v; want the domain layer's", n, changes)
	}

	// The text matrix: a row per session, a column per target.
	code, out, _ = mw(t, "check", "--db", db, ids[0], "--to", "openai-chat", "--to", "sim:refund/wrong-cap")
	if code != ExitFailed || !strings.Contains(out, "fail domain ↓") || !strings.Contains(out, "tool_call_ids") || !strings.Contains(out, "1 regressed") {
		t.Errorf("text: exit %d\n%s", code, out)
	}
}

// TestCheckSuiteCommand: the capability suite on the simulator, offline:
// every probe handled, exit 0.
func TestCheckSuiteCommand(t *testing.T) {
	db := filepath.Join(t.TempDir(), "mw.db")
	code, out, errs := mw(t, "check", "--db", db, "--suite", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errs, out)
	}
	ls := lines(t, out)
	for _, l := range ls[:len(ls)-1] {
		if l["status"] != "pass" || l["proves"] == "" || l["child"] == "" {
			t.Errorf("probe %v", l)
		}
	}
}

// TestCheckBadInput: a bad target, no target, no sessions, an unknown
// session and a missing key are bad input: exit 2 and one line.
func TestCheckBadInput(t *testing.T) {
	db := filepath.Join(t.TempDir(), "mw.db")
	id, _, _ := refundRun(t, db)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{id, "--to", "bogus"}, `--to: target "bogus": unknown protocol or provider bogus; want [PROVIDER:]PROTOCOL[/MODEL]`},
		{[]string{id, "--to", "nope:openai-chat"}, "unknown provider nope"},
		{[]string{id, "--to", "openai-chat/"}, "empty model"},
		{[]string{id, "--to", "openai:refund/wrong-cap"}, "a variant is the simulator's"},
		{[]string{id}, "check needs a target"},
		{[]string{"--to", "openai-chat"}, "check needs sessions"},
		{[]string{"zzzz", "--to", "openai-chat"}, "zzzz"},
		{[]string{"--suite", id}, "--suite runs the built-in probes"},
	} {
		code, _, errs := mw(t, append([]string{"check", "--db", db}, c.args...)...)
		if code != ExitUsage || !strings.Contains(errs, c.want) || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("check %v: exit %d, stderr %q; want 2 and %q", c.args, code, errs, c.want)
		}
	}
}

// TestCheckApplicationSession: a proxied session is re-sent as the
// application sent it (calls answered from the recording) to another
// model on the simulator and regresses nothing; another protocol cannot
// be assembled from its wire, which the cell says (exit 1).
func TestCheckApplicationSession(t *testing.T) {
	db := filepath.Join(t.TempDir(), "mw.db")
	id, _, _ := proxiedRefund(t, db, "openai-chat")
	code, out, errs := mw(t, "check", "--db", db, id, "--to", "sim:/refund-model", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errs, out)
	}
	if l := lines(t, out)[0]; l["status"] != "pass" || l["regressed"] != false {
		t.Errorf("cell %v", l)
	}
	code, out, _ = mw(t, "check", "--db", db, id, "--to", "anthropic-messages", "--json")
	if l := lines(t, out)[0]; code != ExitFailed || l["status"] != "error" || !strings.Contains(l["error"].(string), "--protocol") {
		t.Errorf("another protocol: exit %d, cell %v", code, l)
	}
}

// TestCheckFile: a session exported from one database is checked from its
// file in another: imported first, then re-sent; the child is a fork of
// the imported session.
func TestCheckFile(t *testing.T) {
	dir := t.TempDir()
	src, dst, file := filepath.Join(dir, "a.db"), filepath.Join(dir, "b.db"), filepath.Join(dir, "refund.jsonl")
	id, _, _ := refundRun(t, src, "--protocol", "anthropic-messages")
	if code, _, errs := mw(t, "export", "--db", src, id, "--format", "jsonl", "--output", file); code != 0 {
		t.Fatalf("export: %d %s", code, errs)
	}
	code, out, errs := mw(t, "check", "--db", dst, "--file", file, "--to", "gemini", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errs, out)
	}
	if l := lines(t, out)[0]; l["session"] != id || l["status"] != "pass" || l["protocol"] != "gemini" {
		t.Errorf("cell %v", l)
	}
	_, list, _ := mw(t, "sessions", "--db", dst, "--json")
	if ls := lines(t, list); len(ls) != 2 {
		t.Errorf("want the imported session and its child, have %v", ls)
	}
	if code, _, errs := mw(t, "check", "--db", dst, "--file", filepath.Join(dir, "none.jsonl"), "--to", "gemini"); code != ExitUsage || !strings.Contains(errs, "none.jsonl") {
		t.Errorf("a missing file: exit %d, %s", code, errs)
	}
}

// TestCheckProviderNeedsModel: a real provider named without a model is
// resolved against the recording (For: the recording's protocol when the
// provider speaks it, else its own) and, the recording's model being the
// simulator's, its cell is an error that asks for one; nothing is sent.
func TestCheckProviderNeedsModel(t *testing.T) {
	db := filepath.Join(t.TempDir(), "mw.db")
	id, _, _ := refundRun(t, db)
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-test")
	for _, to := range []string{"anthropic", "anthropic:"} {
		code, out, errs := mw(t, "check", "--db", db, id, "--to", to, "--json")
		if code != ExitFailed {
			t.Fatalf("--to %s: exit %d: %s", to, code, errs)
		}
		l := lines(t, out)[0]
		if msg, _ := l["error"].(string); l["status"] != "error" || !strings.Contains(msg, "name a model (anthropic:/MODEL)") && !strings.Contains(msg, "name a model (anthropic/MODEL)") {
			t.Errorf("--to %s: cell %v", to, l)
		}
	}
}
