package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// A bad rules file stops `proxy --redact-body` at start with one line
// naming the bad pattern or pointer.
func TestProxyRedactBodyUsageErrors(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "mw.db")
	for file, want := range map[string]string{
		`{"patterns": ["(unclosed"]}`:      `patterns[0] "(unclosed"`,
		`{"pointers": ["metadata/email"]}`: `pointers[0] "metadata/email": a JSON Pointer starts with /`,
		`{"pointer": ["/a"]}`:              `unknown field "pointer"`,
	} {
		p := filepath.Join(dir, "rules.json")
		if err := os.WriteFile(p, []byte(file), 0o600); err != nil {
			t.Fatal(err)
		}
		var out, errb bytes.Buffer
		code := Main([]string{"proxy", "--redact-body", p, "--listen", "127.0.0.1:0", "--db", db}, strings.NewReader(""), &out, &errb)
		msg := strings.TrimSpace(errb.String())
		if code != ExitUsage || strings.Contains(msg, "\n") || !strings.Contains(msg, "--redact-body") || !strings.Contains(msg, want) {
			t.Errorf("%s: exit %d, stderr %q; want one line with %q", file, code, msg, want)
		}
	}
	var out, errb bytes.Buffer
	if code := Main([]string{"proxy", "--redact-body", filepath.Join(dir, "none.json"), "--db", db}, strings.NewReader(""), &out, &errb); code != ExitUsage {
		t.Errorf("a missing rules file: exit %d %q", code, errb.String())
	}
}

// `modelwire run` drives the refund case through `proxy --upstream sim
// --redact-body`: the order number it names (in the prompt, the model's
// streamed text and tool arguments) is in no export of the session.
func TestProxyRedactBodyEndToEnd(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "mw.db")
	rules := filepath.Join(dir, "pii.json")
	if err := os.WriteFile(rules, []byte(`{"patterns": ["O-\\d{4}"], "pointers": ["/metadata/user_email"]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	out := &syncBuffer{}
	var errb syncBuffer
	root := NewRoot(&App{Out: out, Err: &errb, In: strings.NewReader("")})
	root.SetArgs([]string{"proxy", "--upstream", "sim", "--listen", "127.0.0.1:0", "--db", db, "--redact-body", rules})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()
	addr := regexp.MustCompile(`modelwire proxy on (http://127\.0\.0\.1:\d+)`)
	var base string
	for deadline := time.Now().Add(10 * time.Second); base == ""; {
		if m := addr.FindStringSubmatch(out.String()); m != nil {
			base = m[1]
		} else if time.Now().After(deadline) {
			t.Fatalf("no banner: %q %q", out.String(), errb.String())
		} else {
			time.Sleep(5 * time.Millisecond)
		}
	}
	runDB := filepath.Join(dir, "run.db")
	if code, rout, rerr := mw(t, "run", "--db", runDB, "--provider", "compatible", "--protocol", "openai-chat", "--base-url", base+"/v1",
		"--approve", "auto"); code != ExitOK {
		t.Fatalf("run through the proxy: exit %d\n%s\n%s", code, rout, rerr)
	}
	// The run's own record, unredacted, holds the order number: what the
	// proxy keeps would hold it too without the rules.
	_, runs, _ := mw(t, "sessions", "--json", "--db", runDB)
	rid := regexp.MustCompile(`"id":"([^"]+)"`).FindStringSubmatch(runs)
	if rid == nil {
		t.Fatalf("no run session: %s", runs)
	}
	if _, exp, _ := mw(t, "export", rid[1], "--db", runDB); strings.Count(exp, "O-2048") < 3 {
		t.Fatalf("the run's own export names O-2048 %d times", strings.Count(exp, "O-2048"))
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("proxy: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the proxy did not stop")
	}
	code, list, errs := mw(t, "sessions", "--json", "--db", db)
	if code != ExitOK {
		t.Fatalf("sessions: %d %s", code, errs)
	}
	id := regexp.MustCompile(`"id":"([^"]+)"`).FindStringSubmatch(list)
	if id == nil {
		t.Fatalf("no session: %s", list)
	}
	all := list + out.String()
	for _, format := range []string{"jsonl", "har"} {
		code, exp, errs := mw(t, "export", id[1], "--db", db, "--format", format)
		if code != ExitOK {
			t.Fatalf("export %s: %d %s", format, code, errs)
		}
		if !strings.Contains(exp, "[redacted]") {
			t.Errorf("export %s: nothing redacted", format)
		}
		all += exp
	}
	for _, leak := range []string{"O-2048", "O-20", "-2048"} {
		if i := strings.Index(all, leak); i >= 0 {
			t.Errorf("%q is in the proxy's record: …%s…", leak, all[max(0, i-100):min(len(all), i+100)])
		}
	}
}
