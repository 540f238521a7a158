package proxy

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/background"
	"github.com/modelwire/modelwire/session"
)

// A recorder that falls behind never slows the client: with the observer
// blocked (a stalled screen) until the client has read the whole
// lock-step stream, the client still gets every event — a proxy that
// waited for its recorder would never deliver the first — and once the
// observer is released the recording catches up and misses nothing.
func TestSlowRecorderDoesNotSlowTheClient(t *testing.T) {
	l := &lockstep{ack: make(chan struct{})}
	up := httptest.NewServer(l)
	defer up.Close()
	release := make(chan struct{})
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	defer free()
	var steps atomic.Int64
	px := New(Options{Upstream: up.URL, Observe: func(u session.Update) {
		<-release
		if u.Kind == session.UpStep && u.Step.Index >= 0 {
			steps.Add(1)
		}
	}})
	ps := httptest.NewServer(px)
	// A hang guard, not a timing: should the client be stuck behind the
	// recorder, the observer is released after a minute and the test fails.
	guard := time.AfterFunc(time.Minute, free)
	l.stream(t, &http.Client{}, ps.URL)
	if !guard.Stop() {
		t.Fatal("the client got the stream only once the recorder was released")
	}
	if n := steps.Load(); n != 0 {
		t.Fatalf("%d steps recorded while the observer was blocked", n)
	}
	free()
	ps.Close()
	if err := px.Close(); err != nil {
		t.Fatal(err)
	}
	if n := steps.Load(); n != lockstepEvents+2 {
		t.Errorf("%d raw events recorded in the end, want %d", n, lockstepEvents+2)
	}
}

// With every recorder loop busy (a task on each that does not give its
// thread back) the client still gets the whole stream, and nothing of
// the exchange is recorded, its head included, until a loop is free: the
// recorders' work stays on the loops, which is what the Ps the proxy
// reserves for the background are counted by. Once the loops are free,
// all of it is recorded.
func TestRecordersRunOnTheirLoops(t *testing.T) {
	l := &lockstep{ack: make(chan struct{})}
	up := httptest.NewServer(l)
	defer up.Close()
	var updates, attempts, steps atomic.Int64
	px := New(Options{Upstream: up.URL, Observe: func(u session.Update) {
		updates.Add(1)
		switch {
		case u.Kind == session.UpAttempt:
			attempts.Add(1)
		case u.Kind == session.UpStep && u.Step.Index >= 0:
			steps.Add(1)
		}
	}})
	busy := make(chan struct{})
	var started sync.WaitGroup
	for _, loop := range px.recorders {
		started.Add(1)
		loop.Task(func() { started.Done(); <-busy }).Start()
	}
	started.Wait()
	ps := httptest.NewServer(px)
	l.stream(t, &http.Client{}, ps.URL)
	if n := updates.Load(); n != 0 {
		t.Fatalf("%d updates recorded while every recorder loop was busy", n)
	}
	close(busy)
	ps.Close()
	if err := px.Close(); err != nil {
		t.Fatal(err)
	}
	if a, n := attempts.Load(), steps.Load(); a != 1 || n != lockstepEvents+2 {
		t.Errorf("recorded %d attempts and %d raw events once the loops were free, want 1 and %d", a, n, lockstepEvents+2)
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
		turn: 1, attempt: 1, headDone: make(chan struct{}), summary: make(chan adapters.Summary, 1), scrub: newScrubber(nil, nil, "")}
	var ups []session.Update
	x.p.opts.Observe = func(u session.Update) { ups = append(ups, u) }
	x.p.wg.Add(1)
	sp.write([]byte("data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"},\"finish_reason\":null}]}\n\n"), time.Now())
	sp.close(ErrRecorderBehind) // as add does past the limit
	sp.close(nil)               // the body's own end comes after: it no longer counts
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

// The forward path's hand-over: a large read is kept as it is and the
// copy reads on into a fresh buffer, a small one is copied and the buffer
// reused; either way the recorder reads exactly the bytes forwarded, in
// order, whatever the copy writes into its buffer afterwards.
func TestSpoolPass(t *testing.T) {
	sp := newSpool(1 << 20)
	var want []byte
	buf := newChunk()
	for i, n := range []int{chunkSize, 10, chunkSize / 2, chunkSize/2 - 1, chunkSize} {
		for j := range n {
			buf[j] = byte('a' + (i+j)%26)
		}
		want = append(want, buf[:n]...)
		next := sp.pass(buf, buf[:n], time.Now())
		if kept := &next[0] != &buf[0]; kept != (n >= chunkSize/2) {
			t.Errorf("read of %d bytes: kept as it is %v", n, kept)
		}
		for j := range next { // the copy's next read overwrites its buffer
			next[j] = '!'
		}
		buf = next
	}
	sp.close(nil)
	got, err := io.ReadAll(sp)
	if err != nil || string(got) != string(want) {
		t.Fatalf("read %d bytes (%v), want the %d forwarded", len(got), err, len(want))
	}
}

// A paced stream's small chunks share slabs: the recorder, reading as the
// copy writes (draining the queue every third chunk, so its arrays are
// reused), gets each chunk whole, in order, with its own arrival time,
// across slab boundaries, whatever the copy then writes into its buffer.
func TestSpoolSmallChunks(t *testing.T) {
	sp := newSpool(1 << 20)
	t0 := time.Now()
	buf := newChunk()
	var sent []string
	p := make([]byte, 600)
	for i := range 2000 {
		n := 1 + i*37%599
		for j := range n {
			buf[j] = byte('a' + (i+j)%26)
		}
		sent = append(sent, string(buf[:n]))
		buf = sp.pass(buf, buf[:n], t0.Add(time.Duration(i)))
		for j := range n {
			buf[j] = '!'
		}
		if i%3 != 2 {
			continue
		}
		for k := i - 2; k <= i; k++ { // one Read is one chunk: p holds any
			m, err := sp.Read(p)
			if err != nil {
				t.Fatal(err)
			}
			if string(p[:m]) != sent[k] {
				t.Fatalf("chunk %d: read %q, want %q", k, p[:m], sent[k])
			}
			if at := sp.arrived().Sub(t0); at != time.Duration(k) {
				t.Fatalf("chunk %d read with the time of chunk %d", k, at)
			}
		}
	}
	sp.close(nil)
	rest, err := io.ReadAll(sp)
	if err != nil || string(rest) != strings.Join(sent[1998:], "") {
		t.Fatalf("read %q at the end (%v), want the last two chunks", rest, err)
	}
}

// What the copy hands the spool reaches the reader whole and in order,
// with the reader waiting on its own goroutine or as a task on a recorder
// loop, however the two interleave; the copy never waits for it.
func TestSpoolDeliversEveryChunkInOrder(t *testing.T) {
	for _, onLoop := range []bool{false, true} {
		sp := newSpool(spoolLimit)
		var want strings.Builder
		got := make(chan string, 1)
		read := func() {
			b, err := io.ReadAll(sp)
			if err != nil {
				t.Errorf("read: %v", err)
			}
			got <- string(b)
		}
		if onLoop {
			l := background.NewLoop(time.Millisecond)
			defer l.Stop()
			sp.task = l.Task(read)
			sp.task.Start()
		} else {
			go read()
		}
		buf := newChunk()
		for i := range 5000 {
			n := 1 + i*7919%(chunkSize-1) // small chunks copied, large ones kept
			if i%3 != 0 {
				n = 1 + i%300
			}
			for j := range n {
				buf[j] = byte('a' + (i+j)%26)
			}
			want.Write(buf[:n])
			buf = sp.pass(buf, buf[:n], time.Now())
			if i%500 == 0 {
				time.Sleep(time.Millisecond) // let the reader catch up and wait
			}
		}
		sp.close(nil)
		if s := <-got; s != want.String() {
			t.Fatalf("on a loop %v: read %d bytes, want %d (or out of order)", onLoop, len(s), want.Len())
		}
		if sp.result() != nil || sp.forwarded() != int64(want.Len()) {
			t.Fatalf("on a loop %v: result %v, forwarded %d of %d", onLoop, sp.result(), sp.forwarded(), want.Len())
		}
	}
}

// A proxy keeps the collector off a small heap: its stops would wait for
// the recorder loops' lowered threads (background.HeapFloor).
func TestProxySetsTheHeapFloor(t *testing.T) {
	if os.Getenv("GOGC") != "" {
		t.Skip("GOGC is set: the floor leaves it alone")
	}
	p := New(Options{Upstream: "http://127.0.0.1:1"})
	defer p.Close()
	runtime.GC()
	// The floor is set again after each collection (a finalizer, soon after).
	var ms runtime.MemStats
	for end := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		if runtime.ReadMemStats(&ms); ms.NextGC >= heapFloor || time.Now().After(end) {
			break
		}
	}
	if ms.NextGC < heapFloor {
		t.Fatalf("with a proxy running, the next collection is at %d MiB of heap; want at least the floor, %d MiB", ms.NextGC>>20, heapFloor>>20)
	}
}
