package proxy

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/jsonl"
	"github.com/modelwire/modelwire/store"
	"github.com/modelwire/modelwire/vcr"
)

// bodies keeps the request bodies a handler received.
type bodies struct {
	h  http.Handler
	mu sync.Mutex
	b  [][]byte
}

func (c *bodies) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	c.mu.Lock()
	c.b = append(c.b, b)
	c.mu.Unlock()
	r.Body = io.NopCloser(bytes.NewReader(b))
	c.h.ServeHTTP(w, r)
}

// A request-edit rule: the upstream receives the changed body (merge
// patch and pointer), the session records the original beside it.
func TestRuleEditsRequest(t *testing.T) {
	r := newRig(t, "", Options{Rules: mustRules(t, `{"rules": [
	  {"match": {"protocol": "openai-chat", "turn": 1},
	   "edit": {"merge": {"temperature": 0.5, "user": null}, "patch": [{"pointer": "/messages/1/content", "value": "edited task"}]}}
	]}`)})
	capture := &bodies{h: r.sim}
	up := httptest.NewServer(capture)
	defer up.Close()
	r.px.opts.Upstream = up.URL
	w := wire(t, adapters.OpenAIChat, 1, false)
	got := send(t, r.url, adapters.OpenAIChat, w, sdkKey)
	if got.status != 200 {
		t.Fatalf("client got %d %s", got.status, got.body)
	}
	if len(capture.b) != 1 {
		t.Fatalf("%d requests upstream", len(capture.b))
	}
	sentUp := gjson.ParseBytes(capture.b[0])
	if sentUp.Get("temperature").Float() != 0.5 || sentUp.Get("messages.1.content").String() != "edited task" {
		t.Errorf("the upstream got %s", capture.b[0])
	}
	s := r.stop()[0]
	var found bool
	for _, c := range s.Calls {
		if c.Name == EditedRequest && strings.Contains(string(c.Edited), "edited task") && !strings.Contains(string(c.Arguments), "edited task") {
			found = true
		}
	}
	if !found {
		t.Errorf("the request edit is not recorded: %+v", s.Calls)
	}
}

// A replace rule answers with a stored session's recorded response (vcr's
// playback), the upstream never asked.
func TestRuleReplacesWithStoredSession(t *testing.T) {
	// Record one exchange first.
	rec := newRig(t, "", Options{})
	w := wire(t, adapters.OpenAIChat, 1, false)
	first := send(t, rec.url, adapters.OpenAIChat, w, sdkKey)
	sessions := rec.stop()
	id := sessions[0].ID
	db, err := store.Open(rec.dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	replay := func(sid string) (http.Handler, error) {
		var buf bytes.Buffer
		if err := jsonl.Export(db, &buf, sid); err != nil {
			return nil, err
		}
		c, err := vcr.Read(&buf)
		if err != nil {
			return nil, err
		}
		return vcr.Handler(c, false), nil
	}
	dead := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Error("the upstream was asked")
		w.WriteHeader(500)
	}))
	defer dead.Close()
	px := New(Options{Upstream: dead.URL, Replay: replay, Rules: mustRules(t, `{"rules": [{"replace": {"session": "`+id+`"}}]}`)})
	srv := httptest.NewServer(px)
	defer srv.Close()
	got := send(t, srv.URL, adapters.OpenAIChat, w, sdkKey)
	if got.status != 200 || !bytes.Equal(got.body, first.body) {
		t.Errorf("replayed %d %s\nrecorded %s", got.status, got.body, first.body)
	}
	srv.Close()
	_ = px.Close()
}

// A fault rule answers with the provider's own error; disconnect cuts.
func TestRuleFaults(t *testing.T) {
	r := newRig(t, "", Options{Rules: mustRules(t, `{"rules": [{"match": {"protocol": "anthropic-messages"}, "fault": "overloaded"},
	  {"match": {"protocol": "openai-chat"}, "fault": "disconnect"}]}`)})
	got := send(t, r.url, adapters.AnthropicMessages, wire(t, adapters.AnthropicMessages, 1, false), sdkKey)
	if got.status != 529 || !strings.Contains(string(got.body), "overloaded_error") {
		t.Errorf("overloaded: %d %s", got.status, got.body)
	}
	req, _ := http.NewRequest("POST", r.url+"/v1/chat/completions", bytes.NewReader(wire(t, adapters.OpenAIChat, 1, true).Body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err == nil {
		b, rerr := io.ReadAll(resp.Body)
		resp.Body.Close()
		if rerr == nil || strings.Count(string(b), "data: ") != cutAfterEvents {
			t.Errorf("disconnect: read %d events, err %v", strings.Count(string(b), "data: "), rerr)
		}
	}
}

// Errors name the file, line and pointer; a reload with an error keeps
// the rules in force.
func TestRulesFileErrorsAndReload(t *testing.T) {
	cases := map[string]string{
		"{\n \"rules\": [\n  {\"match\": {\"protocol\": \"openai-chat\"}, \"delay\": \"1s\"},\n  {\"match\": {\n    \"tool\": \"x\",\n    \"tols\": \"y\"}, \"hold\": true}\n ]\n}": "rules.json:6: /rules/1/match/tols: unknown field",
		"{\"rules\": [{\"fault\": \"nope\"}]}":                         "rules.json:1: /rules/0/fault: unknown fault \"nope\"",
		"{\"rules\": [\n{\"delay\": \"1s\", \"hold\": true}]}":         "rules.json:2: /rules/0: a rule takes exactly one action",
		"{\"rules\": [\n{\"edit\": {\"text\": \"hi\"}}]}":              "rules.json:2: /rules/0/edit/text: unknown field",
		"{\"rules\": [\n\n{\"edit\": {\"merge\": {}}, ]}":              "rules.json:3: not JSON",
		"{\"rules\": [{\"match\": {\"turn\": 0}, \"delay\": \"1s\"}]}": "rules.json:1: /rules/0/match/turn: a turn number from 1",
	}
	for doc, want := range cases {
		_, err := ParseRules("rules.json", []byte(doc))
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%q: got %v, want %s…", doc, err, want)
		}
	}

	file := filepath.Join(t.TempDir(), "rules.json")
	good := `{"rules": [{"match": {"model": "gpt-*"}, "delay": "10ms"}]}`
	if err := os.WriteFile(file, []byte(good), 0o600); err != nil {
		t.Fatal(err)
	}
	rs, err := LoadRules(file)
	if err != nil {
		t.Fatal(err)
	}
	set := NewRuleSet(rs)
	var logged bytes.Buffer
	var mu sync.Mutex
	log := slog.New(slog.NewTextHandler(&lockedWriter{w: &logged, mu: &mu}, nil))
	ctx, cancel := contextWithCancel()
	defer cancel()
	go WatchRules(ctx, file, set, 5*time.Millisecond, log)
	time.Sleep(20 * time.Millisecond)
	if err := os.WriteFile(file, []byte(`{"rules": [{"delay": "soon"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(3 * time.Second)
	for {
		mu.Lock()
		s := logged.String()
		mu.Unlock()
		if strings.Contains(s, "rules not reloaded") {
			if !strings.Contains(s, "rules.json:1: /rules/0/delay") {
				t.Errorf("log: %s", s)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the bad reload was not logged")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if got := set.Get(); got != rs {
		t.Error("a bad reload replaced the rules in force")
	}
	better := `{"rules": [{"delay": "20ms"}, {"fault": "rate-limit"}]}`
	if err := os.WriteFile(file, []byte(better), 0o600); err != nil {
		t.Fatal(err)
	}
	for time.Now().Before(deadline) && len(set.Get().List) != 2 {
		time.Sleep(5 * time.Millisecond)
	}
	if len(set.Get().List) != 2 {
		t.Error("a good reload was not taken")
	}
}

type lockedWriter struct {
	w  io.Writer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func contextWithCancel() (context.Context, context.CancelFunc) {
	return context.WithCancel(context.Background())
}

// A hold rule asks the decider about the matching calls only, showing the
// arguments as an edit rule left them; approved, the record keeps the edit.
func TestRuleHoldAfterEdit(t *testing.T) {
	d := &fakeDecider{answer: approveAll}
	r := newRig(t, "", Options{Hold: d, HoldByRuleOnly: true, Rules: mustRules(t, `{"rules": [
	  {"match": {"direction": "response", "tool": "get_order_line"}, "edit": {"arguments": {"get_order_line": {"line_id": "L2"}}}},
	  {"match": {"direction": "response", "tool": "get_order_line"}, "hold": true}]}`)})
	got := send(t, r.url, adapters.AnthropicMessages, wire(t, adapters.AnthropicMessages, 1, true), sdkKey)
	if got.status != 200 || !strings.Contains(string(got.body), "event: content_block_delta") || !strings.Contains(string(got.body), `L2`) {
		t.Fatalf("client got %d %s", got.status, got.body)
	}
	if len(d.asked) != 1 || !strings.Contains(string(d.asked[0].Arguments), `"line_id":"L2"`) {
		t.Fatalf("asked %+v", d.asked)
	}
	// A final answer (turn 3) matches no hold rule: not asked.
	_ = send(t, r.url, adapters.Gemini, wire(t, adapters.Gemini, 3, true), sdkKey)
	if len(d.asked) != 1 {
		t.Errorf("asked %d times", len(d.asked))
	}
	for _, s := range r.stop() {
		for _, c := range s.Calls {
			if c.Name == "get_order_line" && (c.Decision != "edited" || !strings.Contains(string(c.Edited), "L2") || !strings.Contains(string(c.Arguments), "L1")) {
				t.Errorf("stored %+v", c)
			}
		}
	}
}

// A rule's HTTP fault answers exactly as the simulator's fault of the same
// name: status, Retry-After and error (the request ids differ).
func TestRuleFaultsAnswerAsTheSimulator(t *testing.T) {
	for _, name := range FaultNames() {
		if name == FaultDisconnect {
			continue
		}
		simURL, _ := startSim(t, name+":always")
		w := wire(t, adapters.AnthropicMessages, 1, false)
		want := send(t, simURL, adapters.AnthropicMessages, w, sdkKey)
		resp := faultResponse(adapters.AnthropicMessages, name)
		got, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != want.status || gjson.GetBytes(got, "error").Raw != gjson.GetBytes(want.body, "error").Raw || resp.Header.Get("Retry-After") != want.header.Get("Retry-After") {
			t.Errorf("%s: rule %d %q %s; simulator %d %q %s", name, resp.StatusCode, resp.Header.Get("Retry-After"), got, want.status, want.header.Get("Retry-After"), want.body)
		}
	}
}
