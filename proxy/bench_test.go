package proxy

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelwire/modelwire/store"
)

// What the proxy adds per event, on loopback. The upstream streams Chat
// chunks in lock step with the client: it writes (and flushes) event i+1
// only once the client has read event i, so each event's time is one
// transit, upstream → client, not a share of a burst. The same stream is
// timed straight and through a recording proxy (decoding, a SQLite store,
// an observer); the difference per event is the proxy's cost.

const lockstepEvents = 200

// lockstep is an upstream whose events wait for the client's ack.
type lockstep struct {
	ack chan struct{}
}

func (l *lockstep) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(200)
	f := w.(http.Flusher)
	for i := 0; i < lockstepEvents; i++ {
		if i > 0 {
			select {
			case <-l.ack:
			case <-r.Context().Done():
				return
			}
		}
		fmt.Fprintf(w, `data: {"id":"chatcmpl-b","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"token %d "},"finish_reason":null}]}`+"\n\n", i)
		f.Flush()
	}
	<-l.ack
	fmt.Fprint(w, `data: {"id":"chatcmpl-b","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
}

// stream sends one request to base and reads the stream event by event,
// acking each; it returns the time from the first event to the last.
func (l *lockstep) stream(tb testing.TB, c *http.Client, base string) time.Duration {
	req, _ := http.NewRequest("POST", base+"/v1/chat/completions", strings.NewReader(`{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	resp, err := c.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	var first time.Time
	n := 0
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			tb.Fatalf("after %d events: %v", n, err)
		}
		if line != "\n" {
			continue
		}
		n++
		if n == 1 {
			first = time.Now()
		}
		if n == lockstepEvents+2 {
			return time.Since(first)
		}
		if n <= lockstepEvents {
			l.ack <- struct{}{}
		}
	}
}

type pair struct {
	l            *lockstep
	direct, prox string
	client       *http.Client
	close        func()
}

func newPair(tb testing.TB) *pair {
	l := &lockstep{ack: make(chan struct{})}
	up := httptest.NewServer(l)
	db, err := store.Open(filepath.Join(tb.TempDir(), "bench.db"))
	if err != nil {
		tb.Fatal(err)
	}
	obs := &observed{}
	px := New(Options{Upstream: up.URL, DB: db, Observe: obs.observe})
	ps := httptest.NewServer(px)
	return &pair{l: l, direct: up.URL, prox: ps.URL, client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}},
		close: func() { ps.Close(); _ = px.Close(); up.Close(); _ = db.Close() }}
}

// BenchmarkProxyPerEvent reports the proxy's added time per event
// (proxy-overhead-ms/event), and each path's time per event.
func BenchmarkProxyPerEvent(b *testing.B) {
	p := newPair(b)
	defer p.close()
	p.l.stream(b, p.client, p.direct) // warm both paths' connections
	p.l.stream(b, p.client, p.prox)
	var direct, prox time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		direct += p.l.stream(b, p.client, p.direct)
		prox += p.l.stream(b, p.client, p.prox)
	}
	b.StopTimer()
	events := float64(b.N * (lockstepEvents + 1))
	d := float64(direct.Microseconds()) / events
	x := float64(prox.Microseconds()) / events
	b.ReportMetric(d, "direct-µs/event")
	b.ReportMetric(x, "proxy-µs/event")
	b.ReportMetric((x-d)/1000, "proxy-overhead-ms/event")
}
