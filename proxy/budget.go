package proxy

import (
	"context"
	"sync"
)

// budget bounds the request bodies the proxy holds in memory at once
// (Options.RequestBudget). A body is held from its read until it has
// gone upstream and its recording has written it; while it is held, the
// decoding of the request makes a few transient copies of it (the
// canonical form, the linking key, the recorded JSON), so the proxy's
// memory for requests is a small multiple of the budget, whatever the
// number of clients. A request that does not fit waits for room: the
// application is slowed, never refused; one larger than the whole budget
// goes alone.
type budget struct {
	mu   sync.Mutex
	cond *sync.Cond
	used int64
	max  int64
}

func newBudget(n int64) *budget {
	b := &budget{max: n}
	b.cond = sync.NewCond(&b.mu)
	return b
}

// acquire waits until n bytes fit (or nothing else is held); false when
// ctx ended first.
func (b *budget) acquire(ctx context.Context, n int64) bool {
	stop := context.AfterFunc(ctx, func() {
		b.mu.Lock()
		b.cond.Broadcast()
		b.mu.Unlock()
	})
	defer stop()
	b.mu.Lock()
	defer b.mu.Unlock()
	for b.used > 0 && b.used+n > b.max {
		if ctx.Err() != nil {
			return false
		}
		b.cond.Wait()
	}
	b.used += n
	return true
}

// release gives n bytes back.
func (b *budget) release(n int64) {
	b.mu.Lock()
	b.used -= n
	b.cond.Broadcast()
	b.mu.Unlock()
}

// bodyShare is one request's share of the budget, given back once both the
// handler (the body went upstream) and the recorder (the body is
// recorded) are done with it.
type bodyShare struct {
	b    *budget
	n    int64
	mu   sync.Mutex
	left int
}

func (h *bodyShare) done() {
	if h == nil {
		return
	}
	h.mu.Lock()
	h.left--
	last := h.left == 0
	h.mu.Unlock()
	if last {
		h.b.release(h.n)
	}
}
