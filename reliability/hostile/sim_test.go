package hostile

// The simulator opened to a room, signals, scenario expressions, the
// database under export and on read-only media, and hostile HAR/JSONL
// imports (issue 29): each attack run against the real binary, and the
// refusal or bound it must meet asserted.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/registry"
	"github.com/modelwire/modelwire/internal/suite"
)

// simExec runs the binary to its end with extra environment, and returns
// its output and exit code.
func simExec(t *testing.T, env []string, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binPath, args...)
	cmd.Env = append(os.Environ(), env...)
	out, errs, code, err := suite.Output(cmd)
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return out, errs, code
}

// simStart starts a long-running command (serve, proxy) and returns it
// with the base URL it prints on its first line.
func simStart(t *testing.T, env []string, args ...string) (*exec.Cmd, string, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(binPath, args...)
	cmd.Env = append(os.Environ(), env...)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	first, br, err := suite.Start(cmd, "")
	if err != nil {
		t.Fatalf("%v: %v; stderr: %s", args, err, errb.String())
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _, _ = cmd.Process.Wait() })
	go func() { _, _ = io.Copy(io.Discard, br) }()
	base := regexp.MustCompile(`http://127\.0\.0\.1:\d+`).FindString(first)
	if base == "" {
		t.Fatalf("no address in %q", first)
	}
	return cmd, base, &errb
}

// simRoute is one endpoint of a protocol: the request that must pass
// with the right key.
type simRoute struct {
	method, path, body string
	header             map[string]string
}

const simChat = `{"model":"refund-model","messages":[{"role":"user","content":"hi"}]}`

const simGemini = `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`

// simRoutes is every route the simulator serves, by the protocol whose
// key guards it. A protocol of the registry missing here fails the test:
// the seventh protocol's routes must be added, not forgotten.
var simRoutes = map[string][]simRoute{
	adapters.OpenAIResponses: {{"POST", "/v1/responses", `{"model":"refund-model","input":"hi"}`, nil}},
	adapters.OpenAIChat: {{"POST", "/v1/chat/completions", simChat, nil},
		{"GET", "/v1/models", "", nil}, {"GET", "/v1/models/refund-model", "", nil}},
	adapters.DeepSeekChat: {{"POST", "/chat/completions", simChat, nil}, {"GET", "/models", "", nil}},
	adapters.AnthropicMessages: {
		{"POST", "/v1/messages", `{"model":"refund-model","max_tokens":100,"messages":[{"role":"user","content":"hi"}]}`, map[string]string{"anthropic-version": "2023-06-01"}},
		{"POST", "/v1/messages/count_tokens", `{"model":"refund-model","messages":[{"role":"user","content":"hi"}]}`, map[string]string{"anthropic-version": "2023-06-01"}},
		{"GET", "/v1/models", "", map[string]string{"anthropic-version": "2023-06-01"}}},
	adapters.Gemini: {{"POST", "/v1beta/models/refund-model:generateContent", simGemini, nil},
		{"POST", "/v1beta/models/refund-model:streamGenerateContent?alt=sse", simGemini, nil},
		{"POST", "/v1beta/models/refund-model:countTokens", simGemini, nil},
		{"GET", "/v1beta/models", "", nil}},
	adapters.GeminiInteractions: {{"POST", "/v1beta/interactions", `{"model":"refund-model","input":"hi"}`, nil}},
}

// simKeyed is the request with key presented where the protocol's
// provider reads it (adapters.Auth), or with none.
func simKeyed(base string, r simRoute, a adapters.Auth, key string) *http.Request {
	req, _ := http.NewRequest(r.method, base+r.path, strings.NewReader(r.body))
	if r.body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range r.header {
		req.Header.Set(k, v)
	}
	switch {
	case key == "":
	case a.Header != "":
		req.Header.Set(a.Header, key)
	case a.Bearer:
		req.Header.Set("Authorization", "Bearer "+key)
	}
	return req
}

// simNoIDs masks the request ids an error body carries (each answer has
// its own).
func simNoIDs(body string) string {
	return regexp.MustCompile(`"request_id":\s*"[^"]*"`).ReplaceAllString(body, `"request_id":"…"`)
}

// serve --require-key holds on every route of every protocol: the right
// key passes, a missing or wrong one (or one in another protocol's
// header) gets that provider's own authentication error, byte for byte.
func TestSimKeyOnEveryRoute(t *testing.T) {
	keys := map[string]string{}
	var env []string
	for _, p := range registry.Protocols {
		a, ok := authOf(p)
		if !ok {
			t.Fatalf("the registry has no auth row for %s", p)
		}
		keys[p] = "key-for-" + a.Env
		env = append(env, a.Env+"="+keys[p])
	}
	_, base, _ := simStart(t, env, "serve", "--addr", "127.0.0.1:0", "--require-key")
	client := &http.Client{Timeout: 20 * time.Second}
	do := func(req *http.Request) (int, string) {
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	checked := 0
	for _, p := range registry.Protocols {
		routes := simRoutes[p]
		if len(routes) == 0 {
			t.Errorf("%s: no routes in simRoutes; add the protocol's endpoints", p)
			continue
		}
		a, _ := authOf(p)
		proto, _ := registry.Lookup(p)
		simp := proto.(adapters.Simulated)
		missing := simp.ErrorResponse(a.Missing.Status, a.Missing.Kind, a.Missing.Message)
		const wrongKey = "wrong-key-0123"
		wrong := simp.ErrorResponse(a.Wrong.Status, a.Wrong.Kind, strings.ReplaceAll(a.Wrong.Message, "{key}", strings.Repeat("*", len(wrongKey))))
		for _, r := range routes {
			name := p + " " + r.method + " " + r.path
			// The models lists are guarded by the key of the protocol they
			// answer for (OpenAI's for /v1/models without anthropic-version).
			if code, body := do(simKeyed(base, r, a, keys[p])); code != 200 {
				t.Errorf("%s, right key: %d %s", name, code, body)
			}
			if code, body := do(simKeyed(base, r, a, "")); code != missing.Status || simNoIDs(body) != simNoIDs(string(missing.Body)) {
				t.Errorf("%s, no key: %d %s\nwant %d %s", name, code, body, missing.Status, missing.Body)
			}
			if code, body := do(simKeyed(base, r, a, wrongKey)); code != wrong.Status || simNoIDs(body) != simNoIDs(string(wrong.Body)) {
				t.Errorf("%s, wrong key: %d %s\nwant %d %s", name, code, body, wrong.Status, wrong.Body)
			}
			// The right key in a header this provider does not read.
			other := simKeyed(base, r, a, "")
			if a.Header != "" {
				other.Header.Set("Authorization", "Bearer "+keys[p])
				if a.Bearer {
					other.Header.Del("Authorization")
					other.Header.Set("x-goog-api-key", keys[p])
				}
			} else {
				other.Header.Set("x-api-key", keys[p])
			}
			if code, _ := do(other); code == 200 {
				t.Errorf("%s: the key in a header %s does not read passed", name, p)
			}
			checked++
		}
	}
	// Gemini's ?key= is the same key.
	if code, body := do(simKeyed(base, simRoute{"GET", "/v1beta/models?key=" + keys[adapters.Gemini], "", nil}, adapters.Auth{}, "")); code != 200 {
		t.Errorf("?key=: %d %s", code, body)
	}
	report("sim: --require-key on every route", "%d routes of %d protocols: right key 200, none or wrong the provider's error", checked, len(registry.Protocols))
}

// X-Modelwire-Scenario names a built-in scenario or a file inside
// --scenarios DIR, and nothing else: no absolute path, no "..", no
// symlink out, no FIFO (which would pin a thread), and what the client
// learns does not depend on what exists outside.
func TestSimScenarioHeaderRefusesPaths(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	refund, err := os.ReadFile("../../samples/refund.json")
	if err != nil {
		t.Fatal(err)
	}
	simMust(t, os.WriteFile(filepath.Join(dir, "mine.json"), refund, 0o644))
	simMust(t, os.WriteFile(filepath.Join(outside, "secret.json"), refund, 0o644))
	simMust(t, os.Symlink(filepath.Join(outside, "secret.json"), filepath.Join(dir, "out.json")))
	simMust(t, syscall.Mkfifo(filepath.Join(dir, "pipe.json"), 0o644))
	simMust(t, syscall.Mkfifo(filepath.Join(outside, "pipe.json"), 0o644))

	_, base, _ := simStart(t, nil, "serve", "--addr", "127.0.0.1:0", "--scenarios", dir)
	client := &http.Client{Timeout: 10 * time.Second}
	ask := func(scenario string) (int, string, time.Duration) {
		req, _ := http.NewRequest("POST", base+"/v1/chat/completions", strings.NewReader(simChat))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Modelwire-Scenario", scenario)
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", scenario, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), time.Since(start)
	}
	for _, ok := range []string{"refund", "refund/fenced", "mine.json"} {
		if code, body, _ := ask(ok); code != 200 {
			t.Errorf("%s: %d %s", ok, code, body)
		}
	}
	refused := 0
	var slowest time.Duration
	for _, bad := range []string{
		filepath.Join(outside, "secret.json"), "/etc/passwd", "/dev/zero", filepath.Join(outside, "pipe.json"),
		"../" + filepath.Base(outside) + "/secret.json", "out.json", "pipe.json", "nothing-here.json",
	} {
		code, body, took := ask(bad)
		slowest = max(slowest, took)
		if code != 400 || strings.Contains(body, "root:") {
			t.Errorf("%s: %d %s", bad, code, body)
		}
		refused++
	}
	// Outside the directory, a file that exists and one that does not
	// answer alike.
	_, a, _ := ask(filepath.Join(outside, "secret.json"))
	_, b, _ := ask(filepath.Join(outside, "absent.json"))
	if strings.ReplaceAll(a, "secret", "X") != strings.ReplaceAll(b, "absent", "X") {
		t.Errorf("an outside file's existence shows:\n%s\n%s", a, b)
	}
	report("sim: X-Modelwire-Scenario paths", "%d paths refused with 400, slowest %s (FIFOs never opened)", refused, slowest.Round(time.Millisecond))
}

// A client that sends its headers and then trickles nothing gets 408
// after --body-timeout; --max-conns holds connections to that many.
func TestSimBodyTimeoutAndConnLimit(t *testing.T) {
	_, base, _ := simStart(t, nil, "serve", "--addr", "127.0.0.1:0", "--body-timeout", "500ms", "--max-conns", "2")
	addr := strings.TrimPrefix(base, "http://")
	var held []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_, _ = c.Write([]byte("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"))
		held = append(held, c)
	}
	third := make(chan time.Time, 1)
	go func() {
		resp, err := http.Post(base+"/v1/chat/completions", "application/json", strings.NewReader(simChat))
		if err == nil {
			resp.Body.Close()
		}
		third <- time.Now()
	}()
	start := time.Now()
	for _, c := range held {
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("a trickling client: %v", err)
		}
		if resp.StatusCode != http.StatusRequestTimeout {
			t.Errorf("a trickling client: %d, want 408", resp.StatusCode)
		}
		c.Close()
	}
	cut := time.Since(start)
	select {
	case at := <-third:
		if at.Sub(start) < 400*time.Millisecond {
			t.Errorf("a third connection was served at once with --max-conns 2")
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the third connection was never served")
	}
	report("sim: trickled body, connection limit", "408 after %s (--body-timeout 500ms); the 3rd of --max-conns 2 waited", cut.Round(10*time.Millisecond))
}

// simLines collects a process's stdout lines as they come.
type simLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *simLines) count(pred func(string) bool) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, s := range l.lines {
		if pred(s) {
			n++
		}
	}
	return n
}

// simWaitFor polls until cond holds or the time is up.
func simWaitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// simReplay is a stored session's timeline: the canonical events with a
// seq of its attempts, the raw events, and the whole text.
func simReplay(t *testing.T, db, id string) (events, raws int, text string) {
	t.Helper()
	out, errs, code := simExec(t, nil, "replay", "--db", db, "--json", id)
	if code != 0 {
		t.Fatalf("replay: %d %s", code, errs)
	}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var e struct {
			Attempt int             `json:"attempt"`
			Raw     json.RawMessage `json:"raw"`
			Event   map[string]any  `json:"event"`
		}
		if json.Unmarshal([]byte(l), &e) != nil {
			continue
		}
		if e.Attempt > 0 && e.Event != nil {
			if _, ok := e.Event["seq"]; ok {
				events++
			}
		}
		if len(e.Raw) > 0 && string(e.Raw) != "null" {
			raws++
		}
	}
	return events, raws, out
}

// simOnlySession is the id of the one session in db.
func simOnlySession(t *testing.T, db string) map[string]any {
	t.Helper()
	out, errs, code := simExec(t, nil, "sessions", "--db", db, "--json")
	if code != 0 {
		t.Fatalf("sessions: %d %s", code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 1 {
		t.Fatalf("%d sessions: %s", len(lines), out)
	}
	var s map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &s); err != nil {
		t.Fatal(err)
	}
	return s
}

var simSignalText = map[syscall.Signal]string{
	syscall.SIGINT: "interrupt signal received", syscall.SIGTERM: "terminated signal received", syscall.SIGHUP: "hangup signal received",
}

// simLikeCtrlC checks that sig ended the command with Ctrl-C's exit code:
// SIGINT comes first and sets want.
func simLikeCtrlC(t *testing.T, sig syscall.Signal, code int, want *int) {
	t.Helper()
	if sig == syscall.SIGINT {
		*want = code
	} else if code != *want {
		t.Errorf("%v: exit %d, Ctrl-C's is %d", sig, code, *want)
	}
}

// SIGTERM and SIGHUP stop `run` as Ctrl-C does: the same exit status,
// every event printed is stored, and the reason names the signal.
func TestSimSignalsStopRun(t *testing.T) {
	want := -1
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		db := filepath.Join(t.TempDir(), "m.db")
		cmd := exec.Command(binPath, "run", "--db", db, "--approve", "auto", "--json", "--pace", "5")
		stdout, _ := cmd.StdoutPipe()
		var errb bytes.Buffer
		cmd.Stderr = &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var got simLines
		done := make(chan struct{})
		go func() {
			defer close(done)
			sc := bufio.NewScanner(stdout)
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				got.mu.Lock()
				got.lines = append(got.lines, sc.Text())
				got.mu.Unlock()
			}
		}()
		isDelta := func(s string) bool { return strings.Contains(s, `.delta"`) }
		simWaitFor(t, "deltas", func() bool { return got.count(isDelta) >= 3 })
		_ = cmd.Process.Signal(sig)
		<-done
		code, _ := suite.ExitCode(cmd.Wait())
		simLikeCtrlC(t, sig, code, &want)
		printed := got.count(func(s string) bool { return strings.Contains(s, `"seq":`) })
		s := simOnlySession(t, db)
		stored, _, text := simReplay(t, db, s["id"].(string))
		if stored != printed {
			t.Errorf("%v: %d events printed, %d stored", sig, printed, stored)
		}
		if s["status"] == "running" || !strings.Contains(text+errb.String(), simSignalText[sig]) {
			t.Errorf("%v: status %v, no %q stored; stderr %s", sig, s["status"], simSignalText[sig], errb.String())
		}
		report(fmt.Sprintf("signals: run stopped by %v", sig), "exit %d, %d events printed = %d stored, status %v, reason %q", code, printed, stored, s["status"], simSignalText[sig])
	}
}

// SIGTERM and SIGHUP stop `proxy` as Ctrl-C does: every event the client
// got is stored, and the exchange cut in flight says the proxy stopped
// and why.
func TestSimSignalsStopProxy(t *testing.T) {
	want := -1
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		db := filepath.Join(t.TempDir(), "m.db")
		cmd, base, _ := simStart(t, nil, "proxy", "--db", db, "--listen", "127.0.0.1:0", "--upstream", "sim", "--fault", "stall")
		resp, err := http.Post(base+"/v1/chat/completions", "application/json",
			strings.NewReader(`{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		var got simLines
		done := make(chan struct{})
		go func() {
			defer close(done)
			sc := bufio.NewScanner(resp.Body)
			for sc.Scan() {
				got.mu.Lock()
				got.lines = append(got.lines, sc.Text())
				got.mu.Unlock()
			}
		}()
		isData := func(s string) bool { return strings.HasPrefix(s, "data:") }
		// The stall fault holds the stream after its first events.
		simWaitFor(t, "events", func() bool { return got.count(isData) >= 3 })
		time.Sleep(300 * time.Millisecond)
		sent := got.count(isData)
		_ = cmd.Process.Signal(sig)
		code, _ := suite.ExitCode(cmd.Wait())
		<-done
		resp.Body.Close()
		simLikeCtrlC(t, sig, code, &want)
		received := got.count(isData)
		s := simOnlySession(t, db)
		_, raws, text := simReplay(t, db, s["id"].(string))
		if raws != received {
			t.Errorf("%v: the client got %d events, %d stored", sig, received, raws)
		}
		if !strings.Contains(text, "the proxy stopped ("+simSignalText[sig]+")") {
			t.Errorf("%v: the reason is not stored: %s", sig, text[max(0, len(text)-600):])
		}
		report(fmt.Sprintf("signals: proxy stopped by %v", sig), "exit %d, %d events forwarded (%d at the signal) = %d stored, reason stored", code, received, sent, raws)
	}
}

// A scenario whose checks would loop for hours or build a terabyte
// string is stopped with a one-line error naming the check.
func TestSimExpressionBounded(t *testing.T) {
	var sc map[string]any
	b, err := os.ReadFile("../../samples/refund.json")
	if err != nil {
		t.Fatal(err)
	}
	simMust(t, json.Unmarshal(b, &sc))
	sc["checks"] = append(sc["checks"].([]any),
		map[string]any{"id": "runaway-loop", "expr": "let a = 1..999; all(a, all(a, all(a, true)))"},
		map[string]any{"id": "runaway-string", "expr": `reduce(1..40, #acc + #acc, "x") != ""`})
	file := filepath.Join(t.TempDir(), "hostile.json")
	b, _ = json.Marshal(sc)
	simMust(t, os.WriteFile(file, b, 0o644))
	db := filepath.Join(t.TempDir(), "m.db")
	start := time.Now()
	cmd := exec.Command(binPath, "run", "--db", db, "--scenario", file, "--approve", "auto", "--json")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	simMust(t, cmd.Start())
	done, peak := make(chan struct{}), make(chan int64)
	go func() { peak <- suite.PeakWhile(cmd.Process.Pid, done) }()
	err = cmd.Wait()
	close(done)
	rss := <-peak
	took := time.Since(start)
	if code, _ := suite.ExitCode(err); code != 1 {
		t.Fatalf("run: %v; stderr %s", err, errb.String())
	}
	all := out.String() + errb.String()
	for _, want := range []string{"check runaway-loop: expression stopped: it ran longer than", "check runaway-string: expression stopped: it made a value"} {
		if !strings.Contains(all, want) {
			t.Errorf("no %q in the output", want)
		}
	}
	if took > time.Minute || rss > 1<<30 {
		t.Errorf("took %s, peak RSS %s", took, mib(rss))
	}
	report("expr: runaway loop and string in a check", "stopped in %s, peak RSS %s, both checks named", took.Round(100*time.Millisecond), mib(rss))
}

// simSession runs the refund case once into db and returns its id.
func simSession(t *testing.T, db string) string {
	t.Helper()
	if _, errs, code := simExec(t, nil, "run", "--db", db, "--approve", "auto", "--json"); code != 0 {
		t.Fatalf("run: %d %s", code, errs)
	}
	return simOnlySession(t, db)["id"].(string)
}

// export -o THE_DB --force is refused, by any name of the file, and the
// database is left as it was.
func TestSimExportOntoDatabase(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "m.db")
	id := simSession(t, db)
	simMust(t, os.Symlink(db, filepath.Join(dir, "alias.db")))
	before, _ := os.ReadFile(db)
	for _, o := range []string{db, filepath.Join(dir, "alias.db"), filepath.Join(dir, ".", "m.db"), db + "-wal"} {
		_, errs, code := simExec(t, nil, "export", id, "--db", db, "-o", o, "--force")
		if code != 2 || !strings.Contains(errs, "this command reads") {
			t.Errorf("-o %s: exit %d %s", o, code, errs)
		}
	}
	if after, _ := os.ReadFile(db); !bytes.Equal(before, after) {
		t.Error("the database changed")
	}
	simOnlySession(t, db)
	report("export -o the database --force", "refused (exit 2) by path, symlink, ./ and -wal; database unchanged")
}

// On a directory the reader cannot write, the read commands read.
func TestSimReadOnlyDatabase(t *testing.T) {
	// Under /tmp itself, not t.TempDir (private to this user), so that
	// nobody can reach the binary and the database.
	top, err := os.MkdirTemp("", "modelwire-ro-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(filepath.Join(top, "db"), 0o755); os.RemoveAll(top) })
	simMust(t, os.Chmod(top, 0o755))
	dir := filepath.Join(top, "db")
	simMust(t, os.Mkdir(dir, 0o755))
	db := filepath.Join(dir, "m.db")
	id := simSession(t, db)
	bin := filepath.Join(top, "modelwire")
	b, err := os.ReadFile(binPath)
	if err != nil {
		t.Fatal(err)
	}
	simMust(t, os.WriteFile(bin, b, 0o755))
	simMust(t, os.Chmod(db, 0o644))
	simMust(t, os.Chmod(dir, 0o555))
	var cred *syscall.Credential
	if os.Geteuid() == 0 { // root writes anywhere: read as nobody
		cred = &syscall.Credential{Uid: 65534, Gid: 65534}
	}
	for _, args := range [][]string{{"sessions"}, {"replay", "--json", id}, {"export", id}, {"export", "--format", "har", id}, {"diff", id, id}} {
		cmd := exec.Command(bin, append(args, "--db", db)...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		cmd.Dir = "/"
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil || out.Len() == 0 {
			t.Errorf("%v on a read-only directory: %v %s", args, err, errb.String())
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("the directory holds %d files", len(entries))
	}
	report("read-only database directory", "sessions, replay, export (jsonl, har), diff read it")
}

// simHAR is a real session exported as HAR, as a generic JSON value.
func simHAR(t *testing.T) map[string]any {
	t.Helper()
	db := filepath.Join(t.TempDir(), "m.db")
	id := simSession(t, db)
	out, errs, code := simExec(t, nil, "export", id, "--db", db, "--format", "har")
	if code != 0 {
		t.Fatalf("export: %s", errs)
	}
	var h map[string]any
	simMust(t, json.Unmarshal([]byte(out), &h))
	return h
}

// A foreign HAR whose SSE body was cut imports failed at the protocol
// layer; one whose body is gzip in base64 imports done; a crafted turn of
// 2·10⁹ is refused with nothing written.
func TestSimHARImport(t *testing.T) {
	entries := func(h map[string]any) []any { return h["log"].(map[string]any)["entries"].([]any) }
	write := func(h map[string]any) string {
		f := filepath.Join(t.TempDir(), "x.har")
		b, _ := json.Marshal(h)
		simMust(t, os.WriteFile(f, b, 0o644))
		return f
	}

	cut := simHAR(t)
	e := entries(cut)[0].(map[string]any)
	delete(e, "_modelwire")
	content := e["response"].(map[string]any)["content"].(map[string]any)
	text := content["text"].(string)
	content["text"] = text[:len(text)/2]
	cut["log"].(map[string]any)["entries"] = []any{e}
	db := filepath.Join(t.TempDir(), "m.db")
	if _, errs, code := simExec(t, nil, "import", "--db", db, write(cut)); code != 0 {
		t.Fatalf("import: %s", errs)
	}
	if s := simOnlySession(t, db); s["status"] != "failed" || s["failed_layer"] != "protocol" {
		t.Errorf("the cut stream imported %v at %v", s["status"], s["failed_layer"])
	}

	huge := simHAR(t)
	for i, x := range entries(huge) {
		x.(map[string]any)["_modelwire"].(map[string]any)["turn"] = 2000000000 + i
	}
	db2 := filepath.Join(t.TempDir(), "m.db")
	_, errs, code := simExec(t, nil, "import", "--db", db2, write(huge))
	if code != 2 || !strings.Contains(errs, "can exceed") {
		t.Errorf("the huge turn: exit %d %s", code, errs)
	}
	if out, _, _ := simExec(t, nil, "sessions", "--db", db2, "--json"); strings.TrimSpace(out) != "" {
		t.Errorf("sessions written: %s", out)
	}
	report("HAR import: cut SSE, turn 2e9", "cut stream imported failed at protocol; turn 2e9 refused (exit 2), nothing written")
}

func simMust(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// authOf is a protocol's key handling, from its descriptor.
func authOf(protocol string) (adapters.Auth, bool) {
	d, ok := registry.Describe(protocol)
	return d.Auth, ok
}
