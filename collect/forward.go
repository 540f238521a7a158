package collect

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// forwarder passes received requests on, unchanged, to another OTLP/HTTP
// endpoint, from its own goroutine: receiving never waits for it. What
// waits is bounded in bytes; a request that does not fit is dropped and
// counted.
type forwarder struct {
	url    string
	client *http.Client
	log    *slog.Logger
	max    int64

	queue   chan fwdItem
	queued  atomic.Int64 // bytes waiting
	sent    atomic.Int64
	dropped atomic.Int64
	failed  atomic.Int64

	mu     sync.RWMutex
	closed bool
	done   chan struct{}
}

type fwdItem struct {
	body     []byte
	ctype    string
	encoding string
}

func newForwarder(url string, max int64, log *slog.Logger) *forwarder {
	f := &forwarder{url: url, max: max, log: log, client: &http.Client{Timeout: 10 * time.Second},
		queue: make(chan fwdItem, 4096), done: make(chan struct{})}
	go f.run()
	return f
}

// send queues body (as received: its content type and encoding kept), or
// drops it when the queue is full.
func (f *forwarder) send(body []byte, ctype, encoding string) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	n := int64(len(body))
	if f.closed {
		f.dropped.Add(1)
		return
	}
	if f.queued.Add(n) > f.max {
		f.queued.Add(-n)
		f.dropped.Add(1)
		return
	}
	select {
	case f.queue <- fwdItem{body: body, ctype: ctype, encoding: encoding}:
	default:
		f.queued.Add(-n)
		f.dropped.Add(1)
	}
}

func (f *forwarder) run() {
	defer close(f.done)
	for it := range f.queue {
		if err := f.post(it); err != nil {
			f.failed.Add(1)
			f.log.Warn("collect: forwarding", "err", err)
		} else {
			f.sent.Add(1)
		}
		f.queued.Add(-int64(len(it.body)))
	}
}

func (f *forwarder) post(it fwdItem) error {
	req, err := http.NewRequest(http.MethodPost, f.url, bytes.NewReader(it.body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", it.ctype)
	if it.encoding != "" {
		req.Header.Set("Content-Encoding", it.encoding)
	}
	resp, err := f.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s answered HTTP %d", f.url, resp.StatusCode)
	}
	return nil
}

// close stops taking requests and waits up to ctx for those queued.
func (f *forwarder) close(ctx context.Context) {
	f.mu.Lock()
	if !f.closed {
		f.closed = true
		close(f.queue)
	}
	f.mu.Unlock()
	select {
	case <-f.done:
	case <-ctx.Done():
	}
}
