package proxy

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/session"
)

// A recorder that falls behind never slows the client: with an observer
// that takes 5 ms per update (a stalled screen), the client still gets
// each event of a lock-step stream as it comes; the recording catches up
// afterwards and misses nothing.
func TestSlowRecorderDoesNotSlowTheClient(t *testing.T) {
	l := &lockstep{ack: make(chan struct{})}
	up := httptest.NewServer(l)
	defer up.Close()
	var steps atomic.Int64
	px := New(Options{Upstream: up.URL, Observe: func(u session.Update) {
		time.Sleep(5 * time.Millisecond)
		if u.Kind == session.UpStep && u.Step.Index >= 0 {
			steps.Add(1)
		}
	}})
	ps := httptest.NewServer(px)
	c := &http.Client{}
	took := l.stream(t, c, ps.URL)
	recorded := steps.Load()
	ps.Close()
	if err := px.Close(); err != nil {
		t.Fatal(err)
	}
	// The recorder needs ≥ 5 ms × 202 updates ≈ 1 s; the client, lock-step
	// through the proxy, a few ms.
	if took > 500*time.Millisecond {
		t.Errorf("the client took %s for %d events: the recorder slowed it", took, lockstepEvents)
	}
	if recorded >= lockstepEvents {
		t.Logf("the recorder kept up (%d steps by the end of the stream)", recorded)
	}
	if n := steps.Load(); n != lockstepEvents+2 {
		t.Errorf("%d raw events recorded in the end, want %d", n, lockstepEvents+2)
	}
}

// The spool never blocks its writer; past its limit it stops keeping
// chunks and the reader, after what was kept, learns the recorder fell
// behind.
func TestSpoolOverrun(t *testing.T) {
	sp := newSpool(10)
	now := time.Now()
	sp.write([]byte("0123456"), now)
	sp.write([]byte("789ab"), now) // would make 12 > 10: dropped, overrun
	sp.write([]byte("cd"), now)
	sp.close(nil)
	got, err := io.ReadAll(sp)
	if string(got) != "0123456" || !errors.Is(err, ErrRecorderBehind) || !errors.Is(sp.result(), ErrRecorderBehind) {
		t.Fatalf("read %q, %v", got, err)
	}
	if sp.forwarded() != 14 {
		t.Errorf("forwarded %d", sp.forwarded())
	}
}

// A recording cut short by the spool ends with a read_error diagnostic
// and a transport failure, and still holds what it kept.
func TestOverrunIsRecorded(t *testing.T) {
	sp := newSpool(1 << 20)
	x := &exchange{p: New(Options{}), conv: &conversation{verdicts: map[int]verdict{}}, req: request{protocol: adapters.OpenAIChat},
		turn: 1, attempt: 1, headDone: make(chan struct{}), summary: make(chan adapters.Summary, 1), scrub: newScrubber(nil)}
	var ups []session.Update
	x.p.opts.Observe = func(u session.Update) { ups = append(ups, u) }
	x.p.wg.Add(1)
	sp.write([]byte("data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"},\"finish_reason\":null}]}\n\n"), time.Now())
	sp.mu.Lock()
	sp.overrun = true
	sp.mu.Unlock()
	sp.close(nil)
	x.record(200, http.Header{"Content-Type": {"text/event-stream"}}, time.Now(), sp, false)
	var layers []session.LayerResult
	diag := false
	for _, u := range ups {
		if u.Kind == session.UpStep {
			for _, ev := range u.Step.Events {
				diag = diag || (ev.Type == adapters.EvDiagnostic && ev.Kind == adapters.DiagReadError)
			}
		}
		if u.Kind == session.UpValidated {
			layers = u.Layers
		}
	}
	if !diag || len(layers) == 0 || layers[0].Status != session.Fail || layers[0].Detail == "" {
		t.Fatalf("diagnostic %v, layers %+v", diag, layers)
	}
}
