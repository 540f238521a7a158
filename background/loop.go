package background

import (
	"iter"
	"slices"
	"sync/atomic"
	"time"
)

// A Loop runs many tasks on one background thread (Go), each a coroutine
// (iter.Pull): a task runs until it has nothing to do and calls Wait,
// and runs on from there once something wakes it (Wake). Going from one
// task to the next is a coroutine switch on the loop's own thread. A
// lowered thread for each task instead cost every wake-up a handoff of
// the waker's P to the lowered thread and back — two thread switches on
// the thread that had just forwarded an event (docs/measurements.md).
//
// The loop works in rounds: a round resumes every task woken since the
// last, then the loop rests for its pause unless an urgent wake comes. A
// busy task (a stream's recorder) is then resumed a few times a second
// for everything that came meanwhile, not once for each thing.
type Loop struct {
	pause time.Duration

	// woken is the tasks woken since the round began, newest first: a
	// lock-free stack, since the wakers include the proxy's copy, which
	// must never wait for a lock the loop's lowered thread might hold
	// while the kernel has set it aside.
	woken    atomic.Pointer[Task]
	round    []*Task // the round's tasks, oldest first
	stopping atomic.Bool

	wake   chan struct{} // a task was queued
	urgent chan struct{} // an urgent wake: the rest ends
	done   chan struct{} // run has returned
}

// A Task is a function running on a Loop.
type Task struct {
	l      *Loop
	f      func()
	next   func() (struct{}, bool)
	yield  func(struct{}) bool
	queued atomic.Bool // on l.woken
	below  *Task       // the next on l.woken
	ended  bool        // only the loop touches it
}

// NewLoop starts a loop that rests pause after each round.
func NewLoop(pause time.Duration) *Loop {
	l := &Loop{pause: pause, wake: make(chan struct{}, 1), urgent: make(chan struct{}, 1), done: make(chan struct{})}
	Go(l.run)
	return l
}

// Task prepares f to run on the loop; Start starts it. (In two steps so
// that whoever wakes the task can be told of it before it first runs.)
func (l *Loop) Task(f func()) *Task { return &Task{l: l, f: f} }

// Start queues the task's first run, urgently.
func (t *Task) Start() { t.Wake(true) }

// Wait gives the loop's thread back until the task is woken. Only the
// task calls it. A task may be resumed without a wake of its own (one
// that came before it waited), so it waits in a loop on what it waits
// for.
func (t *Task) Wait() { t.yield(struct{}{}) }

// Wake queues the task for the loop's next round; urgent ends the loop's
// rest. Any goroutine may call it, any number of times: a task woken
// twice before a round runs once in it.
func (t *Task) Wake(urgent bool) {
	l := t.l
	if t.queued.CompareAndSwap(false, true) {
		for {
			top := l.woken.Load()
			t.below = top
			if l.woken.CompareAndSwap(top, t) {
				break
			}
		}
	}
	signal(l.wake)
	if urgent {
		signal(l.urgent)
	}
}

// Until waits until ch is closed. A nil task (work on a goroutine of its
// own) just blocks; a task gives the loop's thread back meanwhile.
func (t *Task) Until(ch <-chan struct{}) {
	if t == nil {
		<-ch
		return
	}
	if closed(ch) {
		return
	}
	go func() { <-ch; t.Wake(true) }()
	for !closed(ch) {
		t.Wait()
	}
}

// Stop ends the loop and waits until it has. The caller makes sure the
// tasks it gave the loop have returned first: Stop does not wait for
// them, and a task still waiting is never resumed.
func (l *Loop) Stop() {
	l.stopping.Store(true)
	signal(l.wake)
	signal(l.urgent)
	<-l.done
}

func (l *Loop) run() {
	defer close(l.done)
	rest := time.NewTimer(time.Hour)
	rest.Stop()
	for {
		<-l.wake
		// An urgent wake from before the round is the round's own; one
		// that comes during it ends the rest after it.
		select {
		case <-l.urgent:
		default:
		}
		stopping := l.stopping.Load()
		// The stack is newest first; the round runs the tasks oldest
		// first. A task may be woken again once it is off the stack
		// (queued false), which rewrites its below: all are read first.
		q := l.round[:0]
		for t := l.woken.Swap(nil); t != nil; t = t.below {
			q = append(q, t)
		}
		slices.Reverse(q)
		for _, t := range q {
			t.below = nil
			t.queued.Store(false)
		}
		for _, t := range q {
			t.resume()
		}
		clear(q)
		l.round = q
		if stopping {
			return
		}
		if l.pause > 0 {
			rest.Reset(l.pause)
			select {
			case <-rest.C:
			case <-l.urgent:
				rest.Stop()
			}
		}
	}
}

// resume runs t until it waits or returns.
func (t *Task) resume() {
	if t.ended {
		return
	}
	if t.next == nil {
		// Made on the loop's goroutine: a coroutine keeps to the thread
		// that made it.
		t.next, _ = iter.Pull(func(yield func(struct{}) bool) {
			t.yield = yield
			t.f()
		})
	}
	if _, ok := t.next(); !ok {
		t.ended, t.f, t.next, t.yield = true, nil, nil, nil
	}
}

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
