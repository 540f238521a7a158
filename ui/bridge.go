package ui

import (
	"sync"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/session"
)

// How session updates reach the screen:
//
//	engine (session goroutine) → coalescer → bounded channel → bridge goroutine → send (p.Send)
//
// The observer only appends to the coalescer's pending batch under a
// mutex, so the session goroutine never waits for rendering. A timer
// flushes the batch every frameEvery; anything that is not a plain stream
// step (a proposal, a terminal event, the end) flushes at once, so a
// decision or the validation never waits a frame. Flushes and control
// messages (asks, pauses, the end) go through one send mutex, which keeps
// them in order. The channel is bounded: if the UI falls behind, the
// flusher waits on it, and updates pile up in the batch (one slice) rather
// than in thousands of messages. Update never calls send (a known Bubble
// Tea deadlock).

// frameEvery is the coalescing window: ~30 frames a second.
const frameEvery = 33 * time.Millisecond

// bridge forwards messages from the channel to the program, on its own
// goroutine. One bridge serves every run; generations tell runs apart.
type bridge struct {
	ch   chan tea.Msg
	once sync.Once
	stop chan struct{}
}

func newBridge() *bridge {
	return &bridge{ch: make(chan tea.Msg, 64), stop: make(chan struct{})}
}

// start runs the bridge goroutine, delivering with send (p.Send).
func (b *bridge) start(send func(tea.Msg)) {
	b.once.Do(func() {
		go func() {
			for {
				select {
				case m := <-b.ch:
					send(m)
				case <-b.stop:
					return
				}
			}
		}()
	})
}

// close stops the bridge goroutine. Flushers blocked on the channel are
// released by their run's context.
func (b *bridge) close() {
	select {
	case <-b.stop:
	default:
		close(b.stop)
	}
}

// coalescer batches one run's updates into frames.
type coalescer struct {
	gen   int
	out   chan<- tea.Msg
	done  <-chan struct{} // the run's context: a flush gives up when it ends
	every time.Duration

	sendMu sync.Mutex // held while taking a batch and sending it: keeps order

	mu      sync.Mutex
	pending []session.Update
	armed   bool
	timer   *time.Timer
}

func newCoalescer(gen int, out chan<- tea.Msg, done <-chan struct{}) *coalescer {
	return &coalescer{gen: gen, out: out, done: done, every: frameEvery}
}

// observe is the session's Observer. It never blocks on the UI for a
// stream step; urgent updates flush (and may wait for room in the
// channel, which is bounded backpressure, not a lock-up: the flush also
// ends with the run's context).
func (c *coalescer) observe(u session.Update) {
	c.mu.Lock()
	c.pending = append(c.pending, u)
	urgent := isUrgent(u)
	if !urgent && !c.armed {
		c.armed = true
		if c.timer == nil {
			c.timer = time.AfterFunc(c.every, c.flush)
		} else {
			c.timer.Reset(c.every)
		}
	}
	c.mu.Unlock()
	if urgent {
		c.flush()
	}
}

// isUrgent: anything but a plain stream step, and steps that end a
// response, are shown at once.
func isUrgent(u session.Update) bool {
	if u.Kind != session.UpStep {
		return true
	}
	if u.Step == nil || u.Step.Index < 0 {
		return true
	}
	for _, ev := range u.Step.Events {
		if ev.Type == adapters.EvTerminal {
			return true
		}
	}
	return false
}

// flush sends the pending batch.
func (c *coalescer) flush() {
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	c.deliverPending()
}

// push flushes the pending batch, then sends m after it.
func (c *coalescer) push(m tea.Msg) {
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	c.deliverPending()
	c.deliver(m)
}

// deliverPending takes the pending batch and delivers it; the caller holds
// sendMu so batches and pushed messages keep their order.
func (c *coalescer) deliverPending() {
	c.mu.Lock()
	batch := c.pending
	c.pending = nil
	c.armed = false
	c.mu.Unlock()
	if len(batch) > 0 {
		c.deliver(updatesMsg{gen: c.gen, ups: batch})
	}
}

// deliver puts m on the bounded channel, unless the run is over.
func (c *coalescer) deliver(m tea.Msg) {
	select {
	case c.out <- m:
	case <-c.done:
	}
}

// stopTimer releases the timer at the end of a run.
func (c *coalescer) stopTimer() {
	c.mu.Lock()
	if c.timer != nil {
		c.timer.Stop()
	}
	c.mu.Unlock()
}
