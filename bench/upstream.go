package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The proxy rows' upstream: a provider that writes Chat chunks paced,
// in lock-step with the client, or as one body at a link's rate.

// upstream serves, by the request's headers: X-Bench-Paced "N/INTERVAL",
// N events paced INTERVAL apart, each stamped when written;
// X-Bench-Stream ID, a lock-step stream whose events wait for the
// client's ack; else the body, at X-Bench-Rate bytes a second if given,
// at once if not.
type upstream struct {
	body atomic.Pointer[[]byte]
	mu   sync.Mutex
	acks map[string]chan struct{}
}

func newUpstream() *upstream {
	return &upstream{acks: map[string]chan struct{}{}}
}

func (u *upstream) setBody(b []byte) { u.body.Store(&b) }

func (u *upstream) ack(id string) chan struct{} {
	u.mu.Lock()
	defer u.mu.Unlock()
	c := u.acks[id]
	if c == nil {
		c = make(chan struct{})
		u.acks[id] = c
	}
	return c
}

// epoch is the origin of the paced events' stamps: the upstream and the
// client share this process's monotonic clock.
var epoch = time.Now()

// chunkAt is a Chat chunk stamped with stamp, ns since epoch, in its
// system_fingerprint (16 hex digits, so every chunk has the same size).
func chunkAt(b []byte, stamp time.Duration, i int) []byte {
	b = append(b, `data: {"id":"chatcmpl-b","object":"chat.completion.chunk","created":1,"model":"m","system_fingerprint":"fp_`...)
	b = fmt.Appendf(b, "%016x", uint64(stamp))
	b = append(b, `","choices":[{"index":0,"delta":{"content":"token `...)
	b = strconv.AppendInt(b, int64(i), 10)
	return append(b, ` "},"finish_reason":null}]}`+"\n\n"...)
}

const chatStop = `data: {"id":"chatcmpl-b","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\ndata: [DONE]\n\n"

func (u *upstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(200)
	f := w.(http.Flusher)
	if p := r.Header.Get("X-Bench-Paced"); p != "" {
		u.paced(w, f, r, p)
		return
	}
	if id := r.Header.Get("X-Bench-Stream"); id != "" {
		u.lockstep(w, f, r, id)
		return
	}
	body := *u.body.Load()
	rate, _ := strconv.Atoi(r.Header.Get("X-Bench-Rate"))
	if rate <= 0 {
		_, _ = w.Write(body)
		return
	}
	// A bandwidth-bound link: a tick's worth of bytes every 10 ms, on a
	// fixed schedule so a late tick does not slow the next.
	const tick = 10 * time.Millisecond
	per := max(1, rate/int(time.Second/tick))
	start, tm := time.Now(), time.NewTimer(time.Hour)
	for k, off := 0, 0; off < len(body); k, off = k+1, off+per {
		if !sleepUntil(r.Context(), tm, start.Add(time.Duration(k)*tick)) {
			return
		}
		_, _ = w.Write(body[off:min(off+per, len(body))])
		f.Flush()
	}
}

// paced writes spec's N chunks INTERVAL apart from the request's arrival,
// each stamped just before it is written.
func (u *upstream) paced(w http.ResponseWriter, f http.Flusher, r *http.Request, spec string) {
	n, interval, err := parsePaced(spec)
	if err != nil {
		return
	}
	start, tm := time.Now(), time.NewTimer(time.Hour)
	buf := make([]byte, 0, 256)
	for i := range n {
		if !sleepUntil(r.Context(), tm, start.Add(time.Duration(i)*interval)) {
			return
		}
		buf = chunkAt(buf[:0], time.Since(epoch), i)
		if _, err := w.Write(buf); err != nil {
			return
		}
		f.Flush()
	}
	_, _ = io.WriteString(w, chatStop)
	f.Flush()
}

func parsePaced(spec string) (int, time.Duration, error) {
	ns, is, _ := strings.Cut(spec, "/")
	n, err := strconv.Atoi(ns)
	if err != nil {
		return 0, 0, err
	}
	interval, err := time.ParseDuration(is)
	return n, interval, err
}

// sleepUntil waits on tm until t; false if ctx ends first. A paced
// stream reuses its timer, so that waiting makes no garbage per event.
func sleepUntil(ctx context.Context, tm *time.Timer, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	tm.Reset(d)
	select {
	case <-tm.C:
		return true
	case <-ctx.Done():
		tm.Stop()
		return false
	}
}

func (u *upstream) lockstep(w http.ResponseWriter, f http.Flusher, r *http.Request, id string) {
	ack := u.ack(id)
	defer func() {
		u.mu.Lock()
		delete(u.acks, id)
		u.mu.Unlock()
	}()
	buf := make([]byte, 0, 256)
	for i := range lockstepEvents {
		if i > 0 {
			select {
			case <-ack:
			case <-r.Context().Done():
				return
			}
		}
		buf = chunkAt(buf[:0], time.Since(epoch), i)
		_, _ = w.Write(buf)
		f.Flush()
	}
	<-ack
	_, _ = io.WriteString(w, chatStop)
	f.Flush()
}
