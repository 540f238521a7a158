// Package background runs work nobody is waiting for — recording what the
// proxy has already forwarded, committing the store's batches — on OS
// threads the kernel runs only when nothing else wants the CPU, so that
// the work somebody waits for (a forwarded event on its way to the
// client) never queues behind it.
//
// Go's scheduler has no priorities, the kernel's has. A process that
// wants it (the proxy) calls Reserve, which gives it a P for each
// background thread that may run at once; from then on Go locks each
// background function to a thread of its own and lowers that thread
// (SCHED_IDLE on Linux; elsewhere nothing is lowered), and a lowered
// thread that holds a P while the kernel has set it aside never keeps a
// forwarded event waiting for one. In a process that reserved nothing, Go
// is the go statement. A Loop (loop.go) runs many tasks on one such
// thread, as coroutines. A garbage collection stops the world until such
// a thread reaches a safe point, so HeapFloor (heapfloor.go) makes the
// collections of a small heap rare.
package background

import (
	"runtime"
	"sync"
)

// maxThreads bounds the lowered threads, which, once started, wait for
// work for the process's life. Past it, work runs on ordinary goroutines
// at the foreground's priority: a lowered thread waits as long as the
// machine is busy, and a backlog that grows past the bound (a client
// sending requests as fast as the proxy takes them) must then catch up by
// sharing the CPU, as it did before.
const maxThreads = 64

var (
	cores = runtime.GOMAXPROCS(0) // as the process started

	mu       sync.Mutex
	idle     []chan func()
	threads  int
	reserved int
)

// Cores is GOMAXPROCS as the process started, before any Reserve.
func Cores() int { return cores }

// Reserve makes room for n background threads running at once:
// GOMAXPROCS becomes Cores plus the largest n asked for.
func Reserve(n int) {
	if !lowers {
		return
	}
	mu.Lock()
	defer mu.Unlock()
	if n > reserved {
		reserved = n
		runtime.GOMAXPROCS(cores + n)
	}
}

// Go runs f in the background: on an idle lowered thread or a new one,
// or, past maxThreads, on an ordinary goroutine. Until the process has
// reserved Ps for the background (Reserve), f runs on an ordinary
// goroutine: a lowered thread holding one of the process's own Ps while
// the kernel sets it aside would slow what the background is meant to
// spare.
func Go(f func()) {
	if !lowers {
		go f()
		return
	}
	mu.Lock()
	if reserved == 0 {
		mu.Unlock()
		go f()
		return
	}
	if n := len(idle); n > 0 {
		c := idle[n-1]
		idle = idle[:n-1]
		mu.Unlock()
		c <- f
		return
	}
	if threads >= maxThreads {
		mu.Unlock()
		go f()
		return
	}
	threads++
	mu.Unlock()
	go worker(f)
}

// worker runs f, then waits for more, on its lowered thread.
func worker(f func()) {
	runtime.LockOSThread() // never unlocked: a lowered thread cannot be raised back
	lower()
	c := make(chan func(), 1)
	for {
		f()
		f = nil
		mu.Lock()
		idle = append(idle, c)
		mu.Unlock()
		f = <-c
	}
}
