package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// The proxy rows' upstream: a provider that writes Chat chunks paced,
// whole, or as one body at once or at a link's rate.

// upstream serves, by the request's headers: X-Bench-Paced "N/INTERVAL",
// N events paced INTERVAL apart, each stamped when written; X-Bench-Whole,
// one non-streaming Chat completion (chatWhole); else the body, at
// X-Bench-Rate bytes a second if given, at once if not.
type upstream struct {
	body atomic.Pointer[[]byte]
}

func newUpstream() *upstream { return &upstream{} }

func (u *upstream) setBody(b []byte) { u.body.Store(&b) }

// chatWholeBody is the sequential requests' body, chatWhole their answer:
// a short chat completion, as a provider returns it whole.
const (
	chatWholeBody = `{"model":"m","messages":[{"role":"user","content":"What is the refundable amount for order O-2048?"}]}`
	chatWhole     = `{"id":"chatcmpl-whole","object":"chat.completion","created":1767571200,"model":"m","system_fingerprint":"fp_bench",` +
		`"choices":[{"index":0,"message":{"role":"assistant","content":"The refundable cap is paid minus refunded minus the pending hold: at most 130 yuan. 复核前不会执行任何退款。"},` +
		`"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":24,"completion_tokens":38,"total_tokens":62}}`
)

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
	if r.Header.Get("X-Bench-Whole") != "" {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(chatWhole)))
		_, _ = io.WriteString(w, chatWhole)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(200)
	f := w.(http.Flusher)
	if p := r.Header.Get("X-Bench-Paced"); p != "" {
		u.paced(w, f, r, p)
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
