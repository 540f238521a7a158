// Package collect is modelwire's OTLP receiver: it takes traces from any
// application instrumented with OpenTelemetry's GenAI conventions (over
// OTLP/HTTP, protobuf or JSON, and OTLP/gRPC) and records them as
// sessions — one per trace, a turn per model call, tool executions by
// call_id — through the journal every session records through, so they
// list, replay, diff and export like a proxied session. It can pass every
// request on, unchanged, to another OTLP endpoint.
package collect

import (
	"context"
	"encoding/hex"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"

	"github.com/modelwire/modelwire/session"
	"github.com/modelwire/modelwire/store"
)

// Options configure a Collector.
type Options struct {
	DB      *store.DB
	Version string // modelwire's, recorded with each session
	// Observe, when set, sees every session update (the workbench's live view).
	Observe session.Observer
	// Idle ends a trace's session when no span of it has come for this
	// long and its root has not come either (default 30s).
	Idle time.Duration
	// Settle is how long a trace's spans wait, once none has come for it,
	// before they are written (and its session ends, once its root has
	// come): requests arrive out of order (default 300ms).
	Settle time.Duration
	// MaxOpen bounds the sessions being written at once; past it the one
	// heard from least recently ends (default 1000).
	MaxOpen int
	// MaxRequest bounds a request's body, decompressed (default 16 MiB).
	MaxRequest int64
	// Forward is an OTLP/HTTP traces URL every request is passed on to
	// ("" for none); ForwardBuffer bounds the bytes waiting to go (default 64 MiB).
	Forward       string
	ForwardBuffer int64
	Log           *slog.Logger
}

// Stats count what a Collector received.
type Stats struct {
	Requests  int64 `json:"requests"`
	Spans     int64 `json:"spans"`
	Rejected  int64 `json:"rejected_spans"` // invalid ids: refused, reported as a partial success
	Sessions  int64 `json:"sessions"`
	Turns     int64 `json:"turns"`
	Tools     int64 `json:"tool_executions"`
	Passed    int64 `json:"passed_by"` // not GenAI spans: counted, not recorded
	Failed    int64 `json:"failed"`    // spans the store could not record
	Forwarded int64 `json:"forwarded_requests"`
	Dropped   int64 `json:"forward_dropped"` // the forward queue was full
	FwdFailed int64 `json:"forward_failed"`  // the endpoint refused or was unreachable
}

type counters struct {
	requests, spans, rejected, sessions, turns, tools, passed, failed atomic.Int64
}

// Collector turns received spans into sessions. Its methods are safe for
// concurrent use.
type Collector struct {
	o     Options
	stats counters
	fwd   *forwarder

	mu       sync.Mutex
	open     map[string]*openTrace // by trace id (hex)
	decoding chan struct{}         // a slot per request being read and decoded

	stop      chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

// New starts a Collector; Close ends it.
func New(o Options) *Collector {
	if o.Idle <= 0 {
		o.Idle = 30 * time.Second
	}
	if o.Settle <= 0 {
		o.Settle = 300 * time.Millisecond
	}
	if o.MaxOpen <= 0 {
		o.MaxOpen = 1000
	}
	if o.MaxRequest <= 0 {
		o.MaxRequest = 16 << 20
	}
	if o.ForwardBuffer <= 0 {
		o.ForwardBuffer = 64 << 20
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	c := &Collector{o: o, open: map[string]*openTrace{}, decoding: make(chan struct{}, maxDecoding),
		stop: make(chan struct{}), done: make(chan struct{})}
	if o.Forward != "" {
		c.fwd = newForwarder(o.Forward, o.ForwardBuffer, o.Log)
	}
	go c.sweep()
	return c
}

// Stats are the counts so far.
func (c *Collector) Stats() Stats {
	s := Stats{Requests: c.stats.requests.Load(), Spans: c.stats.spans.Load(), Rejected: c.stats.rejected.Load(),
		Sessions: c.stats.sessions.Load(), Turns: c.stats.turns.Load(), Tools: c.stats.tools.Load(),
		Passed: c.stats.passed.Load(), Failed: c.stats.failed.Load()}
	if c.fwd != nil {
		s.Forwarded, s.Dropped, s.FwdFailed = c.fwd.sent.Load(), c.fwd.dropped.Load(), c.fwd.failed.Load()
	}
	return s
}

// Export takes one decoded request and records its spans; it returns
// how many spans it refused (invalid ids) and why.
func (c *Collector) Export(req *coltracepb.ExportTraceServiceRequest) (rejected int64, why string) {
	c.stats.requests.Add(1)
	byTrace := map[string][]*span{}
	var order []string
	for _, rs := range req.GetResourceSpans() {
		service := ""
		for _, kv := range rs.GetResource().GetAttributes() {
			if kv.Key == "service.name" {
				service = kv.GetValue().GetStringValue()
			}
		}
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				c.stats.spans.Add(1)
				if !validID(s.TraceId, 16) || !validID(s.SpanId, 8) {
					rejected++
					why = errInvalidIDs
					continue
				}
				tid := hex.EncodeToString(s.TraceId)
				if byTrace[tid] == nil {
					order = append(order, tid)
				}
				byTrace[tid] = append(byTrace[tid], newSpan(s, service))
			}
		}
	}
	c.stats.rejected.Add(rejected)
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, tid := range order {
		c.ingest(tid, byTrace[tid])
	}
	return rejected, why
}

// sweep writes the spans of traces quiet for Settle, and ends the
// sessions of those whose root has come, or that have been quiet for Idle.
func (c *Collector) sweep() {
	defer close(c.done)
	tick := time.NewTicker(min(100*time.Millisecond, c.o.Settle/2, c.o.Idle/2))
	defer tick.Stop()
	for {
		select {
		case <-c.stop:
			return
		case now := <-tick.C:
			c.mu.Lock()
			for _, t := range c.open {
				quiet := now.Sub(t.last)
				switch {
				case quiet >= c.o.Idle || (t.rootSeen && quiet >= c.o.Settle):
					c.finish(t)
				case quiet >= c.o.Settle:
					c.flush(t)
				}
			}
			c.mu.Unlock()
		}
	}
}

// Close ends every open session, and waits up to ctx for the forward
// queue to drain.
func (c *Collector) Close(ctx context.Context) error {
	first := false
	c.closeOnce.Do(func() { first = true })
	if !first {
		return nil
	}
	close(c.stop)
	<-c.done
	c.mu.Lock()
	for _, t := range c.open {
		c.finish(t)
	}
	c.mu.Unlock()
	if c.fwd != nil {
		c.fwd.close(ctx)
	}
	return c.o.DB.Flush()
}
