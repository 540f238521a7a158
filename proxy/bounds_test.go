package proxy

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/session"
)

// boundsProxy runs a proxy in front of h and returns its URL and the
// read_error diagnostics it recorded (once closed).
func boundsProxy(t *testing.T, h http.Handler, opts Options) (string, func() []string) {
	t.Helper()
	up := httptest.NewServer(h)
	t.Cleanup(up.Close)
	var mu sync.Mutex
	var diags []string
	opts.Upstream = up.URL + "/v1"
	opts.Observe = func(u session.Update) {
		if u.Kind != session.UpStep || u.Step == nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		for _, ev := range u.Step.Events {
			if ev.Type == adapters.EvDiagnostic {
				diags = append(diags, ev.Detail)
			}
		}
	}
	p := New(opts)
	srv := httptest.NewServer(p)
	return srv.URL, func() []string {
		srv.Close()
		_ = p.Close()
		mu.Lock()
		defer mu.Unlock()
		return diags
	}
}

func boundsPost(t *testing.T, url, body string) []byte {
	t.Helper()
	c := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	resp, err := c.Post(url+"/v1/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

const boundsReq = `{"model":"m","messages":[{"role":"user","content":"hello there"}]}`

// A whole body past MaxDecoded, or a gzip body past MaxInflate, reaches
// the client whole and is recorded as too large to decode.
func TestDecodeBounds(t *testing.T) {
	plain := []byte(`{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"` +
		strings.Repeat("a", 3<<20) + `"},"finish_reason":"stop"}]}`)
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	_, _ = zw.Write(make([]byte, 64<<20))
	_ = zw.Close()
	for _, tc := range []struct {
		name string
		body []byte
		gzip bool
		max  int64
		want string
	}{{"plain", plain, false, 1 << 20, "--max-decoded"}, {"bomb", zipped.Bytes(), true, 0, "--max-inflate"}} {
		t.Run(tc.name, func(t *testing.T) {
			url, done := boundsProxy(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				if tc.gzip {
					w.Header().Set("Content-Encoding", "gzip")
				}
				_, _ = w.Write(tc.body)
			}), Options{MaxDecoded: tc.max})
			if got := boundsPost(t, url, boundsReq); !bytes.Equal(got, tc.body) {
				t.Fatalf("the client got %d bytes, want the %d sent", len(got), len(tc.body))
			}
			diags := done()
			if len(diags) != 1 || !strings.Contains(diags[0], "too large to decode") || !strings.Contains(diags[0], tc.want) {
				t.Fatalf("recorded %q, want one diagnostic naming %s", diags, tc.want)
			}
		})
	}
}

// A stream whose content passes MaxStreamText is recorded up to there; the client gets it all.
func TestStreamBound(t *testing.T) {
	event := `data: {"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"` + strings.Repeat("b", 200) + `"}}]}` + "\n\n"
	var sent bytes.Buffer
	for sent.Len() < 3<<20 {
		sent.WriteString(event)
	}
	sent.WriteString("data: [DONE]\n\n")
	url, done := boundsProxy(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(sent.Bytes())
	}), Options{MaxStreamText: 1 << 20})
	if got := boundsPost(t, url, `{"model":"m","stream":true,"messages":[{"role":"user","content":"hello there"}]}`); !bytes.Equal(got, sent.Bytes()) {
		t.Fatalf("the client got %d bytes, want %d", len(got), sent.Len())
	}
	diags := done()
	found := false
	for _, d := range diags {
		found = found || strings.Contains(d, "too large to record whole")
	}
	if !found {
		t.Fatalf("recorded %q, want the stream's bound named", diags)
	}
}

// The budget lets a request through alone whatever its size, and makes
// one that does not fit wait for room.
func TestBudget(t *testing.T) {
	b := newBudget(10)
	ctx := context.Background()
	if !b.acquire(ctx, 25) { // larger than the whole budget: alone
		t.Fatal("a request larger than the budget did not go alone")
	}
	got := make(chan bool, 1)
	go func() { got <- b.acquire(ctx, 1) }()
	select {
	case <-got:
		t.Fatal("a request went past a full budget")
	case <-time.After(50 * time.Millisecond):
	}
	b.release(25)
	if !<-got {
		t.Fatal("the waiting request did not get room")
	}
	cctx, cancel := context.WithCancel(ctx)
	go func() { got <- b.acquire(cctx, 10) }()
	time.Sleep(10 * time.Millisecond)
	cancel()
	if <-got {
		t.Fatal("a cancelled wait got room")
	}
}

// Hold mode holds a response in memory: one past MaxDecoded is refused as
// a rejection is (fail closed), never passed on unapproved.
func TestHoldBound(t *testing.T) {
	d := &fakeDecider{answer: approveAll}
	body := []byte(`{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"` +
		strings.Repeat("c", 3<<20) + `"},"finish_reason":"stop"}]}`)
	url, done := boundsProxy(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}), Options{MaxDecoded: 1 << 20, Hold: d})
	c := &http.Client{}
	resp, err := c.Post(url+"/v1/chat/completions", "application/json", strings.NewReader(
		`{"model":"m","messages":[{"role":"user","content":"hello there"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	done()
	if resp.StatusCode != holdStatus || resp.Header.Get("X-Modelwire-Hold") != "rejected" || !strings.Contains(string(got), "cannot be held") {
		t.Fatalf("got HTTP %d %q, want the hold rejection naming the bound", resp.StatusCode, got)
	}
}

// A body of unknown length past the first MiB waits for the budget and
// still goes upstream whole.
func TestChunkedBodyBudgeted(t *testing.T) {
	var got int64
	url, done := boundsProxy(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}`)
	}), Options{RequestBudget: 1 << 20})
	body := `{"model":"m","messages":[{"role":"user","content":"` + strings.Repeat("d", 3<<20) + `"}]}`
	pr, pw := io.Pipe()
	go func() {
		_, _ = io.Copy(pw, strings.NewReader(body)) // no Content-Length: chunked
		pw.Close()
	}()
	resp, err := http.Post(url+"/v1/chat/completions", "application/json", pr)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	done()
	if resp.StatusCode != 200 || got != int64(len(body)) {
		t.Fatalf("HTTP %d, the upstream got %d bytes of %d", resp.StatusCode, got, len(body))
	}
}
