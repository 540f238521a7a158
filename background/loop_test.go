package background

import (
	"sync"
	"testing"
	"time"
)

// Tasks that wait take turns on one loop: each gives the thread back at
// Wait and runs on once woken, and a wake that comes before its Wait is
// not lost.
func TestLoopTasksTakeTurns(t *testing.T) {
	l := NewLoop(0)
	defer l.Stop()
	const tasks, steps = 20, 50
	var mu sync.Mutex
	var log []int
	var tk [tasks]*Task
	var wg sync.WaitGroup
	for i := range tasks {
		wg.Add(1)
		got := 0
		tk[i] = l.Task(func() {
			defer wg.Done()
			for got < steps {
				mu.Lock()
				log = append(log, i)
				mu.Unlock()
				got++
				tk[(i+1)%tasks].Wake(false) // the next one, before this one waits
				tk[i].Wait()
			}
		})
	}
	for i := range tasks {
		tk[i].Start()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("stuck after %d of %d steps: a wake was lost", len(log), tasks*steps)
	}
	if len(log) != tasks*steps {
		t.Fatalf("%d steps ran, want %d", len(log), tasks*steps)
	}
	// Rounds: every task runs once a round.
	for k := range steps {
		seen := map[int]bool{}
		for _, i := range log[k*tasks : (k+1)*tasks] {
			if seen[i] {
				t.Fatalf("task %d ran twice in round %d: %v", i, k, log[k*tasks:(k+1)*tasks])
			}
			seen[i] = true
		}
	}
}

// A task waiting on a channel with Until gives its loop to the others
// meanwhile, and runs on once the channel is closed.
func TestUntilLetsTheLoopRunOthers(t *testing.T) {
	l := NewLoop(time.Hour) // only urgent wakes end its rest
	defer l.Stop()
	gate := make(chan struct{})
	order := make(chan string, 3)
	var first *Task
	first = l.Task(func() { first.Until(gate); order <- "first" })
	second := l.Task(func() { order <- "second"; close(gate) })
	first.Start()
	second.Start()
	for _, want := range []string{"second", "first"} {
		select {
		case got := <-order:
			if got != want {
				t.Fatalf("ran %q, want %q", got, want)
			}
		case <-time.After(time.Minute):
			t.Fatalf("%q never ran: a task blocked on a channel held the loop", want)
		}
	}
}

// A loop rests between rounds: a wake that is not urgent waits for the
// rest to end, an urgent one ends it.
func TestLoopRestsUnlessUrgent(t *testing.T) {
	l := NewLoop(time.Hour)
	defer l.Stop()
	ran := make(chan int, 4)
	var tk *Task
	n := 0
	tk = l.Task(func() {
		for {
			n++
			ran <- n
			tk.Wait()
		}
	})
	tk.Start()
	<-ran // the first round; the loop rests now
	tk.Wake(false)
	select {
	case <-ran:
		t.Fatal("a wake that was not urgent ended the rest")
	case <-time.After(50 * time.Millisecond):
	}
	tk.Wake(true)
	select {
	case <-ran:
	case <-time.After(time.Minute):
		t.Fatal("an urgent wake did not end the rest")
	}
}
