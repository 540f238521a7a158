package reliability

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelwire/modelwire/internal/suite"
	"github.com/modelwire/modelwire/samples"
	"github.com/modelwire/modelwire/sim"
)

// canary is the key sent everywhere a key can go; it must come back from
// nowhere.
const canary = "sk-canary-9c1e5d7a0b3f4e28"

// TestSecretsCanary sends a canary key in every header style and in query
// strings and bodies through run and proxy, then looks for it in the
// database file, every export (JSONL, HAR, OTLP with content), the logs,
// the JSON outputs and a screen capture of the workbench: found nowhere.
func TestSecretsCanary(t *testing.T) {
	sc, err := samples.Lookup("refund")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	simURL, err := sim.New(sim.Options{Scenario: sc, Lookup: samples.Lookup}).Start(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	db := filepath.Join(home, "mw.db")
	sink := &suite.Sink{}
	otlp := httptest.NewServer(sink)
	defer otlp.Close()
	var places []string // where the canary was looked for
	var haystack bytes.Buffer
	look := func(place string, b []byte) {
		places = append(places, place)
		haystack.Write(b)
		haystack.WriteByte(0)
		if bytes.Contains(b, []byte(canary)) {
			t.Errorf("the canary key is in %s", place)
		}
	}

	// run, against the simulator as each real provider, the key from the
	// environment; live OTLP export with content on.
	for _, c := range []struct{ provider, protocol, env, base string }{
		{"openai", "openai-responses", "OPENAI_API_KEY", simURL + "/v1"},
		{"openai", "openai-chat", "OPENAI_API_KEY", simURL + "/v1"},
		{"anthropic", "anthropic-messages", "ANTHROPIC_API_KEY", simURL},
		{"gemini", "gemini", "GEMINI_API_KEY", simURL},
		{"deepseek", "deepseek-chat", "DEEPSEEK_API_KEY", simURL},
	} {
		out, errs, code := runBin(t, "", []string{c.env + "=" + canary, "OTEL_EXPORTER_OTLP_ENDPOINT=" + otlp.URL},
			"--db", db, "run", "--provider", c.provider, "--protocol", c.protocol, "--base-url", c.base, "--approve", "auto", "--json", "--otel-content")
		if code != 0 {
			t.Fatalf("run %s/%s: exit %d: %s", c.provider, c.protocol, code, errs)
		}
		look("run --json output ("+c.protocol+")", []byte(out))
		look("run stderr ("+c.protocol+")", []byte(errs))
	}

	// proxy: the app's own key in every header style, in the query and in
	// the body, on every provider path.
	pdb := filepath.Join(home, "proxy.db")
	cmd := exec.Command(binPath, "--db", pdb, "proxy", "--listen", "127.0.0.1:0", "--upstream", "sim")
	cmd.Env = suite.Env(t.TempDir(), "XDG_STATE_HOME="+filepath.Join(home, "state"))
	var proxyErr bytes.Buffer
	cmd.Stderr = &proxyErr
	base, exited := proxyUp(t, cmd, &proxyErr)
	user := `"请核查订单 O-2048 第 L1 行的退款申请"`
	for _, r := range []struct {
		path, body string
		header     map[string]string
	}{
		{"/v1/chat/completions", `{"model":"refund-model","stream":true,"metadata":{"api_key":"` + canary + `"},"messages":[{"role":"user","content":` + user + `}]}`,
			map[string]string{"Authorization": "Bearer " + canary, "OpenAI-Organization": "org-1"}},
		{"/v1/responses?key=" + canary, `{"model":"refund-model","stream":true,"input":` + user + `}`,
			map[string]string{"Authorization": "Bearer " + canary, "api-key": canary}},
		{"/v1/messages", `{"model":"refund-model","max_tokens":1024,"stream":true,"messages":[{"role":"user","content":` + user + `}]}`,
			map[string]string{"x-api-key": canary, "anthropic-version": "2023-06-01"}},
		{"/v1beta/models/refund-model:streamGenerateContent?alt=sse&key=" + canary, `{"contents":[{"role":"user","parts":[{"text":` + user + `}]}]}`,
			map[string]string{"x-goog-api-key": canary}},
		{"/chat/completions", `{"model":"refund-model","stream":true,"access_token":"` + canary + `","messages":[{"role":"user","content":` + user + `}]}`,
			map[string]string{"Authorization": "Bearer " + canary}},
	} {
		req, _ := http.NewRequest("POST", base+r.path, strings.NewReader(r.body))
		req.Header.Set("Content-Type", "application/json")
		for k, v := range r.header {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("through the proxy %s: %v", r.path, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("through the proxy %s: HTTP %d: %s", r.path, resp.StatusCode, b)
		}
	}
	stopProxy(t, cmd, exited)
	look("proxy stdout and stderr", proxyErr.Bytes())

	// Every export of every session, from both databases.
	for _, path := range []string{db, pdb} {
		list, _, _ := runBin(t, "", nil, "--db", path, "sessions", "--json")
		look("sessions --json", []byte(list))
		for _, line := range strings.Split(strings.TrimSpace(list), "\n") {
			id := strings.SplitN(strings.SplitN(line, `"id":"`, 2)[1], `"`, 2)[0]
			for _, args := range [][]string{{"export", id}, {"export", id, "--format", "har"}, {"replay", id, "--json"},
				{"export", id, "--format", "otlp", "--otel-content", "--endpoint", otlp.URL}} {
				out, errs, code := runBin(t, "", nil, append([]string{"--db", path}, args...)...)
				if code != 0 {
					t.Errorf("%v: exit %d: %s", args, code, errs)
				}
				look(strings.Join(args[:min(len(args), 4)], " "), []byte(out+errs))
			}
		}
		// The database file itself, WAL included.
		for _, f := range []string{path, path + "-wal"} {
			if b, err := os.ReadFile(f); err == nil {
				look("database file "+filepath.Base(f), b)
			}
		}
	}
	sink.Mu.Lock()
	look(fmt.Sprintf("OTLP exports (%d requests, content on)", sink.N), sink.Body.Bytes())
	exports := sink.N
	sink.Mu.Unlock()
	if exports < 5 {
		t.Errorf("only %d OTLP exports arrived; live export and export --format otlp should send more", exports)
	}
	// Logs the binaries wrote.
	_ = filepath.Walk(home, func(p string, info os.FileInfo, err error) error {
		if err == nil && strings.HasSuffix(p, ".log") {
			b, _ := os.ReadFile(p)
			look("log "+filepath.Base(p), b)
		}
		return nil
	})
	// The workbench's screen on a recorded session, with the wire request open.
	if screen, ok := workbenchScreen(t, pdb); ok {
		look("workbench screen (replay, wire view)", []byte(screen))
	}
	// The checks above must have been able to see something: the proxied
	// user text is in the database and the exports.
	if !bytes.Contains(haystack.Bytes(), []byte("O-2048")) {
		t.Error("the recorded content is nowhere in what was searched: the search looked at nothing")
	}
	found := bytes.Count(haystack.Bytes(), []byte(canary))
	addFigure(figure{area: "secrets", what: "canary key in Authorization, x-api-key, x-goog-api-key, api-key, ?key=, body api_key/access_token",
		tried: len(places), held: len(places) - min(found, len(places)), lost: found,
		note: "places searched: DB file + WAL, JSONL, HAR, OTLP (content on), replay/run JSON, stderr, logs, screen"})
}

// workbenchScreen opens `modelwire replay` in tmux on the first session
// of db, opens the wire view (w) and returns the screen. It reports false
// (with a log line) where tmux is missing.
func workbenchScreen(t *testing.T, db string) (string, bool) {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Log("tmux is not installed: the screen is not searched")
		return "", false
	}
	list, _, _ := runBin(t, "", nil, "--db", db, "sessions", "--json")
	id := strings.SplitN(strings.SplitN(list, `"id":"`, 2)[1], `"`, 2)[0]
	tm := suite.NewTmux(t.TempDir())
	name := fmt.Sprintf("mwsecrets%d", os.Getpid())
	env := strings.Join(append(suite.Env(t.TempDir()), "TERM=xterm-256color"), "' '")
	tm.Run("new-session", "-d", "-s", name, "-x", "160", "-y", "50", "env -i '"+env+"' "+binPath+" --db "+db+" replay "+id)
	defer tm.Run("kill-server")
	screen, ok := tm.Poll(name, func(s string) bool { return strings.Contains(s, id[:6]) || strings.Contains(s, "replay") }, 30*time.Second)
	if !ok {
		t.Errorf("the workbench never showed %s; screen:\n%s", "the replay", screen)
	}
	// w opens the wire request (its headers, keys redacted). A key that
	// arrives before the program reads its input is lost, so it is sent
	// again until the view opens — never two keys in one write, which the
	// terminal would deliver as one unknown key.
	for try := 0; try < 5 && !strings.Contains(screen, "[redacted]"); try++ {
		tm.Run("send-keys", "-t", name, "w")
		screen, _ = tm.Poll(name, func(s string) bool { return strings.Contains(s, "[redacted]") }, 3*time.Second)
	}
	if !strings.Contains(screen, "[redacted]") {
		t.Errorf("the wire view shows no redacted key header; screen:\n%s", screen)
	}
	return screen, true
}
