package background

import (
	"runtime"
	"syscall"
	"testing"
)

// policy is the scheduling policy of the calling thread.
func policy(t *testing.T) int {
	t.Helper()
	r, _, errno := syscall.RawSyscall(syscall.SYS_SCHED_GETSCHEDULER, 0, 0, 0)
	if errno != 0 {
		t.Fatalf("sched_getscheduler: %v", errno)
	}
	return int(r)
}

func TestGoRunsOnALoweredThreadAndReusesIt(t *testing.T) {
	reserve(t)
	type seen struct{ tid, policy int }
	run := func() seen {
		c := make(chan seen)
		Go(func() { c <- seen{syscall.Gettid(), policy(t)} })
		return <-c
	}
	first := run()
	if first.policy != schedIdle {
		t.Fatalf("background work ran under policy %d, want SCHED_IDLE (%d)", first.policy, schedIdle)
	}
	if p := policy(t); p == schedIdle {
		t.Fatal("the test's own thread was lowered")
	}
	mu.Lock()
	reserved = 0
	mu.Unlock()
	if s := run(); s.policy == schedIdle {
		t.Fatal("background work ran on a lowered thread with no Ps reserved for it")
	}
	Reserve(1)
	// The worker goes back to the idle list just after f returns; the
	// next Go may come first and start another thread, so try a few.
	for range 50 {
		if s := run(); s.tid == first.tid {
			return
		}
		runtime.Gosched()
	}
	t.Fatal("an idle lowered thread was never reused: every Go started a thread")
}

// A loop's tasks all run on its one lowered thread, however many there
// are and however often they wait.
func TestLoopTasksShareOneLoweredThread(t *testing.T) {
	reserve(t)
	l := NewLoop(0)
	defer l.Stop()
	type seen struct{ tid, policy int }
	c := make(chan seen, 200)
	for range 20 {
		var tk *Task
		tk = l.Task(func() {
			for range 5 {
				c <- seen{syscall.Gettid(), policy(t)}
				tk.Wake(false)
				tk.Wait()
			}
		})
		tk.Start()
	}
	first := <-c
	if first.policy != schedIdle {
		t.Fatalf("a task ran under policy %d, want SCHED_IDLE (%d)", first.policy, schedIdle)
	}
	for range 20*5 - 1 {
		if s := <-c; s.tid != first.tid {
			t.Fatalf("tasks of one loop ran on threads %d and %d", first.tid, s.tid)
		}
	}
}
