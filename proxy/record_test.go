package proxy

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/session"
	"github.com/modelwire/modelwire/store"
)

// observed keeps every update the proxy reports.
type observed struct {
	mu  sync.Mutex
	ups []session.Update
}

func (o *observed) observe(u session.Update) {
	o.mu.Lock()
	o.ups = append(o.ups, u)
	o.mu.Unlock()
}

// A key planted everywhere an application may put one — the key headers,
// Gemini's key= parameter, a key-named body member, the message text —
// is forwarded to the upstream and never reaches the database (every
// byte of its files, the WAL included) or the workbench's updates.
func TestKeysNeverStored(t *testing.T) {
	const planted = "sk-PLANTED-7f3a9c2e1b0d55aa"
	obs := &observed{}
	r := newRig(t, "", Options{Observe: obs.observe})
	for _, protocol := range protocols {
		for _, stream := range []bool{true, false} {
			w := wire(t, protocol, 1, stream)
			var body map[string]any
			_ = json.Unmarshal(w.Body, &body)
			switch protocol {
			case adapters.OpenAIResponses, adapters.OpenAIChat:
				body["metadata"] = map[string]string{"api_key": planted} // OpenAI refuses unknown members
			case adapters.AnthropicMessages:
				body["metadata"] = map[string]string{"user_id": planted} // so does Anthropic
			case adapters.Gemini:
				// Google refuses unknown members; its key is in the URL.
			default:
				body["api_key"] = planted // a gateway's body key
			}
			w.Body, _ = json.Marshal(body)
			if !bytes.Contains(w.Body, []byte("帮我核查订单")) {
				t.Fatal("the task's text is not in the request")
			}
			w.Body = bytes.Replace(w.Body, []byte("帮我核查订单"), []byte("我的密钥是 "+planted+"，帮我核查订单"), 1)
			if protocol == adapters.Gemini {
				sep := "?"
				if strings.Contains(w.Path, "?") {
					sep = "&"
				}
				w.Path += sep + "key=" + planted
			}
			got := send(t, r.url, protocol, w, planted)
			if got.status != 200 {
				t.Fatalf("%s: %d %s", protocol, got.status, got.body)
			}
		}
	}
	keys := r.sim.keys
	sessions := r.stop()
	if len(keys) != 2*len(protocols) {
		t.Fatalf("the upstream saw %d keys", len(keys))
	}
	for _, k := range keys {
		if k != planted {
			t.Errorf("the upstream got key %q, not the application's", k)
		}
	}
	if len(sessions) == 0 {
		t.Fatal("nothing recorded")
	}
	files, _ := filepath.Glob(r.dbPath + "*")
	if len(files) == 0 {
		t.Fatal("no database files")
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(planted)) || bytes.Contains(b, []byte("7f3a9c2e1b0d55aa")) {
			t.Errorf("%s holds the planted key", filepath.Base(f))
		}
	}
	obs.mu.Lock()
	all, _ := json.Marshal(obs.ups)
	obs.mu.Unlock()
	if bytes.Contains(all, []byte(planted)) {
		t.Error("an update shown to the workbench holds the planted key")
	}
	if !bytes.Contains(all, []byte(store.Redacted)) {
		t.Error("nothing was redacted in the updates")
	}
}

// Concurrent conversations that start alike are told apart by what the
// next request quotes of each one's answer.
func TestInterleavedConversations(t *testing.T) {
	rc := refund(t)
	r := newRig(t, "", Options{})
	ctx := context.Background()
	type loop struct {
		c      openai.Client
		params openai.ChatCompletionNewParams
	}
	var loops []*loop
	for range 2 {
		l := &loop{c: openai.NewClient(option.WithBaseURL(r.url+"/v1/"), option.WithAPIKey(sdkKey), option.WithMaxRetries(0))}
		l.params = openai.ChatCompletionNewParams{Model: "refund-model",
			Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage(rc.system), openai.UserMessage(rc.task)}}
		for _, tl := range rc.sc.Tools {
			l.params.Tools = append(l.params.Tools, openai.ChatCompletionFunctionTool(sharedFunction(t, tl.Name, tl.Description, tl.Parameters)))
		}
		loops = append(loops, l)
	}
	for turn := 0; turn < 3; turn++ {
		for _, l := range loops { // A1 B1 A2 B2 A3 B3
			cc, err := l.c.Chat.Completions.New(ctx, l.params)
			if err != nil {
				t.Fatal(err)
			}
			msg := cc.Choices[0].Message
			l.params.Messages = append(l.params.Messages, msg.ToParam())
			for _, tc := range msg.ToolCalls {
				l.params.Messages = append(l.params.Messages, openai.ToolMessage(rc.result(tc.Function.Name, []byte(tc.Function.Arguments)), tc.ID))
			}
		}
	}
	sent := r.sim.responses()
	sessions := r.stop()
	if len(sessions) != 2 {
		t.Fatalf("%d sessions, want 2", len(sessions))
	}
	for _, s := range sessions {
		if s.Turns != 3 || len(s.Attempts) != 3 {
			t.Errorf("session %s: %d turns", s.ID, s.Turns)
		}
		// Each turn answers the calls of its own conversation's last turn.
		for _, c := range s.Calls {
			if c.Turn < len(s.Attempts) && !bytes.Contains(s.Attempts[c.Turn].RequestBody, []byte(c.CallID)) {
				t.Errorf("session %s turn %d does not answer call %s of turn %d", s.ID, c.Turn+1, c.CallID, c.Turn)
			}
		}
		if len(s.Calls) != 3 {
			t.Errorf("session %s: %d calls", s.ID, len(s.Calls))
		}
	}
	// The simulator answered A1 B1 A2 B2 A3 B3: each session holds every
	// other answer.
	for _, s := range sessions {
		parity := -1
		for _, a := range s.Attempts {
			i := answered(sent, a.ResponseID)
			if parity == -1 {
				parity = i % 2
			}
			if i < 0 || i%2 != parity {
				t.Errorf("session %s holds answer %d (%s) of another conversation", s.ID, i, a.ResponseID)
			}
		}
	}
}

// Requests the proxy cannot classify are forwarded untouched and listed
// in an "unknown" session.
func TestUnknownRequests(t *testing.T) {
	r := newRig(t, "", Options{})
	resp, err := http.Get(r.url + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	up := r.sim.responses()
	if resp.StatusCode != up[0].status || !bytes.Equal(body, up[0].body) {
		t.Errorf("client got %d %q; the upstream sent %d %q", resp.StatusCode, body, up[0].status, up[0].body)
	}
	sessions := r.stop()
	if len(sessions) != 1 || sessions[0].Protocol != "unknown" || sessions[0].Source != "proxy" || sessions[0].Turns != 1 {
		t.Fatalf("sessions %+v", sessions)
	}
	a := sessions[0].Attempts[0]
	if a.Method != "GET" || !strings.HasSuffix(a.URL, "/v1/models") || a.RawEvents != 1 || a.StatusCode != up[0].status {
		t.Errorf("attempt %+v", a)
	}
	es := r.entries(sessions[0].ID)
	if len(es) == 0 || es[0].Raw == nil || es[0].Raw.Data != string(up[0].body) {
		t.Errorf("entries %+v", es)
	}
}

// A compressed body passes compressed (the proxy adds no Accept-Encoding
// of its own, nor a User-Agent) and is recorded decoded.
func TestCompressedBodies(t *testing.T) {
	body := []byte(`{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"hello there"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}`)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write(body)
	_ = zw.Close()
	var seen []http.Header
	var mu sync.Mutex
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Clone())
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			w.Header().Set("Content-Encoding", "gzip")
			_, _ = w.Write(gz.Bytes())
			return
		}
		_, _ = w.Write(body)
	}))
	defer up.Close()
	dir := t.TempDir()
	db, err := store.Open(filepath.Join(dir, "p.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	obs := &observed{}
	px := New(Options{Upstream: up.URL, DB: db, Observe: obs.observe})
	srv := httptest.NewServer(px)
	for _, enc := range []string{"gzip", ""} {
		req, _ := http.NewRequest("POST", srv.URL+"/v1/chat/completions", strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
		req.Header["User-Agent"] = []string{""} // this client sends none
		if enc != "" {
			req.Header.Set("Accept-Encoding", enc)
		}
		resp, err := rawClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		want := body
		if enc == "gzip" {
			want = gz.Bytes()
		}
		if !bytes.Equal(got, want) || resp.Header.Get("Content-Encoding") != map[string]string{"gzip": "gzip"}[enc] {
			t.Errorf("accept %q: got %d bytes, encoding %q", enc, len(got), resp.Header.Get("Content-Encoding"))
		}
	}
	srv.Close()
	if err := px.Close(); err != nil {
		t.Fatal(err)
	}
	if seen[1].Get("Accept-Encoding") != "" || seen[1].Get("User-Agent") != "" {
		t.Errorf("the proxy added headers: %v", seen[1])
	}
	var texts []string
	for _, u := range obs.ups {
		if u.Kind == session.UpResponse && u.Summary != nil {
			texts = append(texts, u.Summary.Text)
		}
	}
	if len(texts) != 2 || texts[0] != "hello there" || texts[1] != "hello there" {
		t.Errorf("recorded texts %q", texts)
	}
}

type sharedFunctionDef = shared.FunctionDefinitionParam

func sharedFunction(t testing.TB, name, desc string, params json.RawMessage) sharedFunctionDef {
	return sharedFunctionDef{Name: name, Description: openai.String(desc), Parameters: schemaMap(t, params)}
}

// answered is the index of the simulator's answer that carries id.
func answered(sent []*sent, id string) int {
	for i, s := range sent {
		if id != "" && bytes.Contains(s.body, []byte(id)) {
			return i
		}
	}
	return -1
}
