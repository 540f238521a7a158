package hostile

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelwire/modelwire/internal/suite"
	"github.com/modelwire/modelwire/samples"
	"github.com/modelwire/modelwire/sim"
)

// secCanary is the canary secret of one placement: distinct per placement,
// so a leak names where the secret went in, and sharing a marker, so a
// leak of any of them is found by one search.
func secCanary(placement string) string {
	secIssued[placement] = true
	return "cnry-" + placement + secMarker
}

// secIssued names the canaries the test planted.
var secIssued = map[string]bool{}

// secMarker is in every canary.
const secMarker = "-7f3a9c1e5b"

// secEchoUpstream is a provider that echoes every secret it is sent: in
// a response header (X-Echo), in the answer's text (a JSON body or an
// SSE stream) and, when asked (X-Want-Error), in a 401 error body, as
// OpenAI's "Incorrect API key provided: …" does. It speaks OpenAI chat
// and Gemini generateContent.
func secEchoUpstream() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var seen []string
		note := func(v string) {
			if strings.Contains(v, secMarker) {
				seen = append(seen, v)
			}
		}
		for _, vs := range r.Header {
			for _, v := range vs {
				note(v)
				if rest, ok := strings.CutPrefix(v, "Basic "); ok {
					dec, _ := base64.StdEncoding.DecodeString(rest)
					note(string(dec))
				}
			}
		}
		for _, vs := range r.URL.Query() {
			for _, v := range vs {
				note(v)
			}
		}
		echo := strings.Join(seen, " ")
		w.Header().Set("X-Echo", echo)
		if r.Header.Get("X-Want-Error") != "" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintf(w, `{"error":{"message":"Incorrect API key provided: %s. You can find your API key at https://example.test/keys?key=%s","type":"invalid_request_error","code":"invalid_api_key"}}`, echo, echo)
			return
		}
		text := "O-2048 checked; your key is " + echo
		stream := bytes.Contains(body, []byte(`"stream":true`)) || r.URL.Query().Get("alt") == "sse"
		gemini := strings.Contains(r.URL.Path, ":generateContent") || strings.Contains(r.URL.Path, ":streamGenerateContent")
		var events []string
		switch {
		case gemini:
			events = []string{fmt.Sprintf(`{"candidates":[{"content":{"role":"model","parts":[{"text":%q}]},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":5,"candidatesTokenCount":5,"totalTokenCount":10},"modelVersion":"m"}`, text)}
		case stream:
			events = []string{
				fmt.Sprintf(`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":%q},"finish_reason":null}]}`, text),
				`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
			}
		default:
			events = []string{fmt.Sprintf(`{"id":"c1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":5,"total_tokens":10}}`, text)}
		}
		if !stream {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, events[0])
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, ev := range events {
			fmt.Fprintf(w, "data: %s\n\n", ev)
		}
		if !gemini {
			io.WriteString(w, "data: [DONE]\n\n")
		}
	}))
}

// secRun runs the binary to its end.
func secRun(t *testing.T, home string, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(binPath, args...)
	cmd.Env = suite.Env(home, env...)
	stdout, stderr, code, err := suite.Output(cmd)
	if err != nil {
		t.Fatalf("running modelwire %v: %v", args, err)
	}
	return stdout, stderr, code
}

// secProxy is a running `modelwire proxy`.
type secProxy struct {
	cmd    *exec.Cmd
	base   string
	out    bytes.Buffer // stdout after the first line, and stderr
	first  string
	mu     sync.Mutex
	exited chan error
}

// secStartProxy starts `modelwire proxy --upstream upstream` recording
// to db.
func secStartProxy(t *testing.T, home, db, upstream string) *secProxy {
	t.Helper()
	p := &secProxy{exited: make(chan error, 1)}
	p.cmd = exec.Command(binPath, "--db", db, "proxy", "--listen", "127.0.0.1:0", "--upstream", upstream)
	p.cmd.Env = suite.Env(home)
	p.cmd.Stderr = &secLocked{p}
	line, br, err := suite.Start(p.cmd, "")
	if err != nil {
		t.Fatalf("the proxy did not start: %v", err)
	}
	t.Cleanup(func() { _ = p.cmd.Process.Kill() })
	p.first = line + "\n"
	go func() {
		_, _ = io.Copy(&secLocked{p}, br)
		p.exited <- p.cmd.Wait()
	}()
	rest, ok := strings.CutPrefix(line, "modelwire proxy on ")
	if !ok {
		t.Fatalf("the proxy did not start: %q", line)
	}
	p.base, _, _ = strings.Cut(rest, " ")
	return p
}

// secLocked writes into a proxy's output under its lock.
type secLocked struct{ p *secProxy }

func (l *secLocked) Write(b []byte) (int, error) {
	l.p.mu.Lock()
	defer l.p.mu.Unlock()
	return l.p.out.Write(b)
}

// stop interrupts the proxy (it finishes recording) and returns all it
// printed.
func (p *secProxy) stop(t *testing.T) string {
	t.Helper()
	_ = p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.exited:
	case <-time.After(time.Minute):
		_ = p.cmd.Process.Kill()
		t.Fatal("the proxy did not stop within a minute of Ctrl-C")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.first + p.out.String()
}

// secRequest is one request sent through a proxy.
type secRequest struct {
	placement string // the canary's name
	path      string
	header    map[string]string
	stream    bool
}

// send sends r through the proxy; any status is accepted (an unreachable
// upstream answers 502).
func (p *secProxy) send(t *testing.T, r secRequest) int {
	t.Helper()
	user := `"请核查订单 O-2048 的退款"`
	body := `{"model":"m","stream":` + fmt.Sprint(r.stream) + `,"messages":[{"role":"user","content":` + user + `}]}`
	if strings.HasPrefix(r.path, "/v1beta/") {
		body = `{"contents":[{"role":"user","parts":[{"text":` + user + `}]}]}`
	}
	req, _ := http.NewRequest("POST", p.base+r.path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range r.header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s: through the proxy: %v", r.placement, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// secSearch collects every output and where it came from.
type secSearch struct {
	t      *testing.T
	places []string
	all    bytes.Buffer
	leaks  map[string][]string // placement → outputs it was found in
}

func (s *secSearch) look(place string, b []byte) {
	s.places = append(s.places, place)
	s.all.Write(b)
	s.all.WriteByte(0)
	for rest := b; ; {
		i := bytes.Index(rest, []byte(secMarker))
		if i < 0 {
			break
		}
		start := bytes.LastIndex(rest[:i], []byte("cnry-"))
		name := "?"
		if start >= 0 && i-start < 40 {
			name = string(rest[start+len("cnry-") : i])
		}
		if !secHas(s.leaks[name], place) {
			s.leaks[name] = append(s.leaks[name], place)
			ctx := rest[max(0, i-120):min(len(rest), i+40)]
			s.t.Errorf("the %s canary is in %s: …%q…", name, place, ctx)
		}
		rest = rest[i+len(secMarker):]
	}
}

func secHas(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// secEverything searches every output a database gives: the file and
// its WAL, sessions --json, and per session every export format and
// replay --json; OTLP exports go to sink.
func (s *secSearch) secEverything(home, db, otlp string) {
	t := s.t
	for _, f := range []string{db, db + "-wal"} {
		if b, err := os.ReadFile(f); err == nil {
			s.look("database file "+filepath.Base(f), b)
		}
	}
	list, errs, code := secRun(t, home, nil, "--db", db, "sessions", "--json")
	if code != 0 {
		t.Fatalf("sessions --json: exit %d: %s", code, errs)
	}
	s.look("sessions --json", []byte(list+errs))
	for _, line := range strings.Split(strings.TrimSpace(list), "\n") {
		var sess struct{ ID string }
		if json.Unmarshal([]byte(line), &sess) != nil || sess.ID == "" {
			t.Fatalf("sessions --json line %q", line)
		}
		for _, args := range [][]string{
			{"export", sess.ID}, {"export", sess.ID, "--format", "har"},
			{"export", sess.ID, "--format", "curl"}, {"export", sess.ID, "--format", "python"},
			{"export", sess.ID, "--format", "ts"}, {"export", sess.ID, "--format", "http"},
			{"export", sess.ID, "--format", "otlp", "--otel-content", "--endpoint", otlp},
			{"replay", sess.ID, "--json"}, {"replay", sess.ID, "--text"},
		} {
			out, errs, _ := secRun(t, home, nil, append([]string{"--db", db}, args...)...)
			what := args[0] + " " + strings.Join(args[2:min(4, len(args))], " ")
			if len(args) == 2 {
				what += "(jsonl)"
			}
			s.look(what, []byte(out+errs))
		}
	}
}

// secUnreachable is an address nothing listens on.
func secUnreachable(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// TestSecretsSealedEverywhere puts a canary secret in every place a key
// travels — the key headers of each provider and gateway, a custom
// header, Gemini's ?key= (plain and percent-encoded), token= and auth=,
// the upstream's and run's base URL userinfo — through the real binary
// (proxy in front of an upstream that echoes every key back in a header,
// the body, an SSE stream and a 401; proxy and run in front of an
// unreachable upstream whose transport error quotes the URL; a browser's
// HAR with the keys as sent and echoed, imported), and then
// searches every output for it: the database file and its WAL, every
// export format (JSONL, HAR, curl, python, ts, http, OTLP with content),
// replay --json and --text, sessions --json, the proxy's output and log,
// run's output and live OTLP export, and the workbench's screen. Found
// nowhere.
func TestSecretsSealedEverywhere(t *testing.T) {
	home := t.TempDir()
	search := &secSearch{t: t, leaks: map[string][]string{}}
	sink := &suite.Sink{}
	otlp := httptest.NewServer(sink)
	defer otlp.Close()
	up := secEchoUpstream()
	defer up.Close()
	upURL := strings.TrimPrefix(up.URL, "http://")
	c := secCanary
	gem := "/v1beta/models/m:generateContent"
	gemSSE := "/v1beta/models/m:streamGenerateContent?alt=sse"

	// 1. A proxy in front of the echoing upstream: each placement once.
	db := filepath.Join(home, "proxy.db")
	p := secStartProxy(t, home, db, up.URL)
	placements := []secRequest{
		{"bearer", "/v1/chat/completions", map[string]string{"Authorization": "Bearer " + c("bearer")}, true},
		{"xapikey", "/v1/chat/completions", map[string]string{"x-api-key": c("xapikey")}, false},
		{"googkey", gem, map[string]string{"x-goog-api-key": c("googkey")}, false},
		{"querykey", gemSSE + "&key=" + c("querykey"), nil, true},
		{"encodedkey", gem + "?k%65y=" + c("encodedkey"), nil, false},
		{"token", "/v1/chat/completions?token=" + c("token"), nil, true},
		{"auth", "/v1/chat/completions?auth=" + c("auth"), nil, false},
		{"portkey", "/v1/chat/completions", map[string]string{"X-Portkey-Api-Key": c("portkey")}, true},
		{"apim", "/v1/chat/completions", map[string]string{"Ocp-Apim-Subscription-Key": c("apim")}, false},
		{"custom", "/v1/chat/completions", map[string]string{"X-My-Secret-Token": c("custom")}, true},
		{"echo401", "/v1/chat/completions", map[string]string{"Authorization": "Bearer " + c("echo401"), "X-Want-Error": "1"}, false},
	}
	for _, r := range placements {
		if code := p.send(t, r); code != http.StatusOK && r.placement != "echo401" {
			t.Errorf("%s: HTTP %d through the proxy", r.placement, code)
		}
	}
	search.look("proxy output (echoing upstream)", []byte(p.stop(t)))

	// 2. A proxy whose upstream URL carries user:password@.
	udb := filepath.Join(home, "userinfo.db")
	p = secStartProxy(t, home, udb, "http://"+c("upuser")+":"+c("uppass")+"@"+upURL)
	p.send(t, secRequest{"upuserinfo", "/v1/chat/completions", nil, true})
	search.look("proxy output (upstream user:pass@)", []byte(p.stop(t)))

	// 3. A proxy whose upstream cannot be reached: the transport error
	// quotes the URL, key and userinfo included.
	ndb := filepath.Join(home, "unreachable.db")
	dead := secUnreachable(t)
	p = secStartProxy(t, home, ndb, "http://"+c("deaduser")+":"+c("deadpass")+"@"+dead)
	for _, r := range []secRequest{
		{"deadkey", gem + "?key=" + c("deadkey"), map[string]string{"x-goog-api-key": c("deadgoog")}, false},
		{"deadencoded", gemSSE + "&k%65y=" + c("deadencoded"), nil, true},
		{"deadtoken", "/v1/chat/completions?token=" + c("deadtoken"), map[string]string{"Authorization": "Bearer " + c("deadbearer")}, true},
	} {
		if code := p.send(t, r); code != http.StatusBadGateway {
			t.Errorf("%s: HTTP %d from an unreachable upstream, want 502", r.placement, code)
		}
	}
	search.look("proxy output (unreachable upstream)", []byte(p.stop(t)))

	// 4. run --base-url with user:password@, against the simulator (live
	// OTLP export with content on), and against an unreachable host.
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
	rdb := filepath.Join(home, "run.db")
	withUser := func(base, who string) string {
		return strings.Replace(base, "http://", "http://"+c(who+"user")+":"+c(who+"pass")+"@", 1)
	}
	for _, r := range []struct {
		name, provider, protocol, env, base string
		ok                                  bool
	}{
		{"sim", "openai", "openai-chat", "OPENAI_API_KEY", withUser(simURL, "run") + "/v1", true},
		{"sim", "gemini", "gemini", "GEMINI_API_KEY", withUser(simURL, "rungem"), true},
		{"sim", "openai", "openai-chat", "OPENAI_API_KEY", simURL + "/v1?key=" + c("runbasekey") + "&auth=" + c("runbaseauth"), false},
		{"unreachable", "openai", "openai-responses", "OPENAI_API_KEY", withUser("http://"+dead, "rundead") + "/v1?token=" + c("rundeadtoken"), false},
		{"unreachable", "gemini", "gemini", "GEMINI_API_KEY", withUser("http://"+dead, "rundeadgem"), false},
	} {
		out, errs, code := secRun(t, home, []string{r.env + "=" + c("runenv"), "OTEL_EXPORTER_OTLP_ENDPOINT=" + otlp.URL},
			"--db", rdb, "run", "--provider", r.provider, "--protocol", r.protocol, "--base-url", r.base, "--approve", "auto", "--json", "--otel-content")
		if r.ok && code != 0 {
			t.Errorf("run %s %s: exit %d: %s", r.name, r.protocol, code, errs)
		}
		search.look("run --json ("+r.name+" "+r.protocol+")", []byte(out+errs))
		// The same run as a person sees it.
		out, errs, _ = secRun(t, home, []string{r.env + "=" + c("runenv")},
			"--db", filepath.Join(home, "run-text.db"), "run", "--provider", r.provider, "--protocol", r.protocol, "--base-url", r.base, "--approve", "auto")
		search.look("run text ("+r.name+" "+r.protocol+")", []byte(out+errs))
	}

	// 5. A browser's HAR, keys as sent and echoed back, imported.
	hdb := filepath.Join(home, "har.db")
	harFile := filepath.Join(home, "devtools.har")
	if err := os.WriteFile(harFile, secHAR(), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, errs, code := secRun(t, home, nil, "--db", hdb, "import", harFile); code != 0 {
		t.Errorf("import of the HAR: exit %d: %s%s", code, out, errs)
	} else {
		search.look("import output (HAR)", []byte(out+errs))
	}

	// 6. Every output of every database.
	for _, f := range []string{db, udb, ndb, rdb, filepath.Join(home, "run-text.db"), hdb} {
		search.secEverything(home, f, otlp.URL)
	}
	sink.Mu.Lock()
	search.look(fmt.Sprintf("OTLP exports (%d requests, content on)", sink.N), sink.Body.Bytes())
	sink.Mu.Unlock()
	_ = filepath.Walk(home, func(path string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() && (strings.HasSuffix(path, ".log") || strings.Contains(path, string(filepath.Separator)+"state"+string(filepath.Separator))) {
			b, _ := os.ReadFile(path)
			search.look("file "+filepath.Base(path), b)
		}
		return nil
	})
	// 7. The workbench's screen on the echoed and the unreachable sessions.
	for _, f := range []string{db, ndb} {
		if screen, ok := secScreen(t, home, f); ok {
			search.look("workbench screen ("+filepath.Base(f)+")", []byte(screen))
		}
	}

	// The search saw what was recorded: the user's text and an echo
	// (redacted) are in what it read.
	if !bytes.Contains(search.all.Bytes(), []byte("O-2048")) {
		t.Error("the recorded content is nowhere in what was searched: the search looked at nothing")
	}
	if !bytes.Contains(search.all.Bytes(), []byte("your key is [redacted]")) {
		t.Error("the upstream's echo is nowhere in what was searched, redacted")
	}
	var leaked []string
	for name := range search.leaks {
		leaked = append(leaked, name)
	}
	sort.Strings(leaked)
	report("secrets: a canary in each place a key travels", "%d canaries (proxy, run, unreachable, echo, HAR); %d outputs searched; leaked: %s",
		len(secIssued), len(search.places), strings.Join(append(leaked, "none")[:max(1, len(leaked))], ", "))
}

// secScreen opens `modelwire replay` in tmux on db's first session, opens
// the wire view (w) and returns the screen; false where tmux is missing.
func secScreen(t *testing.T, home, db string) (string, bool) {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Log("tmux is not installed: the screen is not searched")
		return "", false
	}
	list, _, _ := secRun(t, home, nil, "--db", db, "sessions", "--json")
	var sess struct{ ID string }
	if json.Unmarshal([]byte(strings.SplitN(list, "\n", 2)[0]), &sess) != nil {
		t.Errorf("sessions --json: %q", list)
		return "", false
	}
	tm := suite.NewTmux(t.TempDir())
	name := fmt.Sprintf("mwsec%d", os.Getpid())
	env := strings.Join(suite.Env(home, "TERM=xterm-256color"), "' '")
	tm.Run("new-session", "-d", "-s", name, "-x", "160", "-y", "50", "env -i '"+env+"' "+binPath+" --db "+db+" replay "+sess.ID)
	defer tm.Run("kill-server")
	screen, ok := tm.Poll(name, func(s string) bool { return strings.Contains(s, sess.ID[:6]) || strings.Contains(s, "replay") }, 30*time.Second)
	if !ok {
		t.Errorf("the workbench never showed the replay; screen:\n%s", screen)
		return screen, true
	}
	all := screen
	// w opens the wire request; a key sent before the program reads its
	// input is lost, so it is sent again until the view changes.
	for try := 0; try < 5 && !strings.Contains(screen, "[redacted]"); try++ {
		tm.Run("send-keys", "-t", name, "w")
		screen, _ = tm.Poll(name, func(s string) bool { return strings.Contains(s, "[redacted]") }, 3*time.Second)
	}
	return all + "\n" + screen, true
}

// secHAR is a devtools HAR of one OpenAI chat call whose key travelled in
// the Authorization header, a cookie and the query, and whose response
// echoed it in a header and the body.
func secHAR() []byte {
	key, cookie, q := secCanary("harbearer"), secCanary("harcookie"), secCanary("harquery")
	answer := fmt.Sprintf(`{"id":"c1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"O-2048 checked; your key is %s"},"finish_reason":"stop"}]}`, key)
	har := map[string]any{"log": map[string]any{"version": "1.2", "creator": map[string]any{"name": "devtools", "version": "1"},
		"entries": []any{map[string]any{
			"startedDateTime": "2026-01-02T03:04:05.000Z", "time": 10,
			"request": map[string]any{"method": "POST", "url": "https://api.openai.com/v1/chat/completions?api_key=" + q, "httpVersion": "HTTP/1.1",
				"headers": []any{
					map[string]any{"name": "Authorization", "value": "Bearer " + key},
					map[string]any{"name": "Cookie", "value": "session=" + cookie},
					map[string]any{"name": "Content-Type", "value": "application/json"}},
				"queryString": []any{map[string]any{"name": "api_key", "value": q}}, "cookies": []any{},
				"postData":    map[string]any{"mimeType": "application/json", "text": `{"model":"m","messages":[{"role":"user","content":"O-2048"}]}`},
				"headersSize": -1, "bodySize": -1},
			"response": map[string]any{"status": 200, "statusText": "OK", "httpVersion": "HTTP/1.1", "cookies": []any{},
				"headers":     []any{map[string]any{"name": "Content-Type", "value": "application/json"}, map[string]any{"name": "X-Echo", "value": key}},
				"content":     map[string]any{"size": len(answer), "mimeType": "application/json", "text": answer},
				"redirectURL": "", "headersSize": -1, "bodySize": -1},
			"cache": map[string]any{}, "timings": map[string]any{"send": 1, "wait": 5, "receive": 4}}}}}
	b, _ := json.MarshalIndent(har, "", "  ")
	return b
}
