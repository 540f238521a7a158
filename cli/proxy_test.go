package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelwire/modelwire/proxy"
	"github.com/modelwire/modelwire/session"
	"github.com/modelwire/modelwire/store"
)

func TestProxyUsageErrors(t *testing.T) {
	db := filepath.Join(t.TempDir(), "mw.db")
	for _, args := range [][]string{
		{"proxy", "--fault", "rate-limit"},
		{"proxy", "--upstream", "sim", "--fault", "no-such-fault"},
		{"proxy", "--upstream", "ftp://example.com"},
		{"proxy", "--upstream", "localhost:8080"},
		{"proxy", "--hold-tools"}, // stdin is not a terminal
		{"proxy", "--listen", "256.0.0.1:99999"},
		{"proxy", "--no-such-flag"},
	} {
		var out, errb bytes.Buffer
		code := Main(append(args, "--db", db), strings.NewReader(""), &out, &errb)
		if code != ExitUsage || strings.Count(strings.TrimSpace(errb.String()), "\n") != 0 || errb.Len() == 0 {
			t.Errorf("%v: exit %d, stderr %q", args, code, errb.String())
		}
	}
}

// syncBuffer is a bytes.Buffer safe for the proxy's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// `modelwire proxy --upstream sim` end to end: `modelwire run` drives the
// refund case through it (the simulator's 429 first, which run retries);
// the proxy prints a line per exchange and, stopped, leaves one done
// session that `modelwire sessions` lists with source proxy.
func TestProxyCommandRecordsARun(t *testing.T) {
	db := filepath.Join(t.TempDir(), "mw.db")
	out := &syncBuffer{}
	var errb syncBuffer
	app := &App{Out: out, Err: &errb, In: strings.NewReader("")}
	root := NewRoot(app)
	root.SetArgs([]string{"proxy", "--upstream", "sim", "--fault", "rate-limit", "--listen", "127.0.0.1:0", "--db", db})
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
	for _, want := range []string{"OPENAI_BASE_URL=" + base + "/v1", "ANTHROPIC_BASE_URL=" + base, "GOOGLE_GEMINI_BASE_URL=" + base} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the banner does not say %s:\n%s", want, out.String())
		}
	}

	runDB := filepath.Join(t.TempDir(), "run.db")
	var rout, rerr bytes.Buffer
	code := Main([]string{"run", "--db", runDB, "--provider", "compatible", "--protocol", "openai-chat", "--base-url", base + "/v1",
		"--approve", "auto"}, strings.NewReader(""), &rout, &rerr)
	if code != ExitOK {
		t.Fatalf("run through the proxy: exit %d\n%s\n%s", code, rout.String(), rerr.String())
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
	printed := out.String()
	for _, want := range []string{"turn 1 (attempt 2)", "turn 3  POST /v1/chat/completions  HTTP 200  completed/final", "schema pass"} {
		if !strings.Contains(printed, want) {
			t.Errorf("the proxy did not print %q:\n%s", want, printed)
		}
	}

	var sout, serr bytes.Buffer
	if code := Main([]string{"sessions", "--json", "--db", db}, strings.NewReader(""), &sout, &serr); code != ExitOK {
		t.Fatalf("sessions: %d %s", code, serr.String())
	}
	var list []map[string]any
	sc := bufio.NewScanner(&sout)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		list = append(list, m)
	}
	if len(list) != 1 {
		t.Fatalf("%d sessions: %v", len(list), list)
	}
	s := list[0]
	if s["source"] != "proxy" || s["protocol"] != "openai-chat" || s["provider"] != "sim" || s["status"] != "done" || s["turns"].(float64) != 3 {
		t.Errorf("session %v", s)
	}
	// The simulator's port is internal: the session names it "sim".
	if title, _ := s["title"].(string); !strings.HasPrefix(title, "POST sim/v1/chat/completions") || s["origin"] != "proxy → sim" {
		t.Errorf("title %q, origin %v", title, s["origin"])
	}
}

// `modelwire proxy | head -1`: the log's reader goes away after the first
// line. The proxy goes on forwarding and recording (it used to die of
// SIGPIPE at its first exchange, taking the application's request down).
func TestProxyOutlivesItsLogReader(t *testing.T) {
	db := filepath.Join(t.TempDir(), "mw.db")
	cmd, stdout, stderr := startModelwire(t, "proxy", "--db", db, "--listen", "127.0.0.1:0", "--upstream", "sim")
	first, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	base := regexp.MustCompile(`http://127\.0\.0\.1:\d+`).FindString(first)
	if base == "" {
		t.Fatalf("no address in %q", first)
	}
	stdout.Close()
	for i := range 2 {
		resp, err := http.Post(base+"/v1/chat/completions", "application/json",
			strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
		if err != nil {
			t.Fatalf("request %d: %v; stderr: %s", i+1, err, stderr.String())
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 || !bytes.Contains(body, []byte(`"chat.completion"`)) {
			t.Fatalf("request %d: HTTP %d, %v: %s", i+1, resp.StatusCode, err, body)
		}
	}
	cmd.Process.Signal(os.Interrupt)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("after Ctrl-C: %v; stderr: %s", err, stderr.String())
	}
	var out, errb bytes.Buffer
	if code := Main([]string{"sessions", "--db", db, "--json"}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("sessions: exit %d: %s", code, errb.String())
	}
	if n := strings.Count(out.String(), `"status":"done"`); n != 2 {
		t.Errorf("%d sessions done, want the 2 exchanges: %s", n, out.String())
	}
}

// The terminal's hold question offers only what hold can do: no [e]dit,
// and "e" says why and asks again.
func TestHoldOnTheTerminalOffersNoEdit(t *testing.T) {
	t.Setenv("VISUAL", "false") // were an editor opened, it fails at once
	var out bytes.Buffer
	d := &terminalDecider{in: strings.NewReader("e\na\n"), out: &out}
	p := session.Proposal{Of: 1, CallID: "call_order", Name: "get_order_line", Arguments: []byte(`{"order_id":"O-2048"}`), Known: true, NoEdit: true}
	dec, err := d.Decide(context.Background(), p)
	if err != nil || dec.Kind != session.Approved {
		t.Fatalf("decision %+v, %v", dec, err)
	}
	if s := out.String(); strings.Contains(s, "[e]dit") || !strings.Contains(s, session.EditUnavailable) || strings.Count(s, "[a]pprove, [A]pprove all, [r]eject? ") != 2 {
		t.Errorf("the dialogue:\n%s", s)
	}
}

// The proxy's terminal decider edits with one line of JSON when no editor
// is set; a bad rules file is a usage error naming its line and pointer.
func TestProxyTerminalEditAndRulesFile(t *testing.T) {
	t.Setenv("VISUAL", "")
	t.Setenv("EDITOR", "")
	var out bytes.Buffer
	d := &terminalDecider{in: strings.NewReader("e\n{\"order_id\": \"O-1\"}\n"), out: &out, scenario: &session.Scenario{}, lineEdit: true}
	p := session.Proposal{Of: 1, CallID: "call_order", Name: "get_order_line", Arguments: []byte(`{"order_id":"O-2048"}`), Known: true}
	dec, err := d.Decide(context.Background(), p)
	if err != nil || dec.Kind != session.Edited || string(dec.Arguments) != `{"order_id": "O-1"}` {
		t.Fatalf("decision %+v, %v\n%s", dec, err, out.String())
	}

	dir := t.TempDir()
	rules := filepath.Join(dir, "rules.json")
	if err := os.WriteFile(rules, []byte("{\"rules\": [\n  {\"match\": {\"tol\": \"x\"}, \"delay\": \"1s\"}\n]}"), 0o600); err != nil {
		t.Fatal(err)
	}
	var o, errb bytes.Buffer
	code := Main([]string{"proxy", "--rules", rules, "--listen", "127.0.0.1:0", "--db", filepath.Join(dir, "mw.db")}, strings.NewReader(""), &o, &errb)
	if code != ExitUsage || !strings.Contains(errb.String(), "rules.json:2: /rules/0/match/tol: unknown field") {
		t.Errorf("exit %d, stderr %q", code, errb.String())
	}
}

// A refused edit is not lost: the editor opens again on it.
func TestTerminalEditKeepsTheRefusedDraft(t *testing.T) {
	script := filepath.Join(t.TempDir(), "ed.sh")
	body := "#!/bin/sh\nif grep -q '{bad' \"$1\"; then printf '{\"order_id\":\"FIXED\"}' > \"$1\"; else printf '{bad' > \"$1\"; fi\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("VISUAL", script)
	var out bytes.Buffer
	d := &terminalDecider{in: strings.NewReader("e\ne\n"), out: &out, scenario: &session.Scenario{}, lineEdit: true}
	p := session.Proposal{Of: 1, CallID: "call_order", Name: "get_order_line", Arguments: []byte(`{"order_id":"O-2048"}`), Known: true}
	dec, err := d.Decide(context.Background(), p)
	if err != nil || dec.Kind != session.Edited || string(dec.Arguments) != `{"order_id":"FIXED"}` || !strings.Contains(out.String(), "not valid JSON") {
		t.Fatalf("decision %+v, %v\n%s", dec, err, out.String())
	}
}

// The proxy's store commits every proxy.StoreFlush, not at the default
// pace: a commit costs as much for each session in flight.
func TestProxyStoreCommitsAtTheProxysPace(t *testing.T) {
	db, err := openProxyStore(&App{DB: filepath.Join(t.TempDir(), "mw.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if got := db.FlushInterval(); got != proxy.StoreFlush || got == store.DefaultFlushInterval {
		t.Errorf("the proxy's store commits every %v; want proxy.StoreFlush, %v (the default is %v)", got, proxy.StoreFlush, store.DefaultFlushInterval)
	}
}
