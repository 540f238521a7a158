package background

import (
	"runtime"
	"sync"
	"testing"
)

// reserve makes Go lower its threads for the test, as proxy.New does.
func reserve(t *testing.T) {
	procs := runtime.GOMAXPROCS(0)
	mu.Lock()
	was := reserved
	mu.Unlock()
	Reserve(1)
	t.Cleanup(func() {
		mu.Lock()
		reserved = was
		mu.Unlock()
		runtime.GOMAXPROCS(procs)
	})
}

func TestGoRunsEverythingPastTheThreadBound(t *testing.T) {
	reserve(t)
	n := maxThreads + 50
	var wg sync.WaitGroup
	release := make(chan struct{})
	var ranMu sync.Mutex
	ran := 0
	for range n {
		wg.Add(1)
		Go(func() {
			defer wg.Done()
			<-release // all at once: the last 50 find no thread to run on
			ranMu.Lock()
			ran++
			ranMu.Unlock()
		})
	}
	close(release)
	wg.Wait()
	if ran != n {
		t.Fatalf("%d of %d background functions ran", ran, n)
	}
	mu.Lock()
	defer mu.Unlock()
	if threads > maxThreads || len(idle) > threads {
		t.Fatalf("%d lowered threads, %d idle: the bound is %d", threads, len(idle), maxThreads)
	}
}

func TestReserveAddsPsOnceForTheLargestAsk(t *testing.T) {
	if !lowers {
		t.Skip("nothing is lowered here, so nothing is reserved")
	}
	procs := runtime.GOMAXPROCS(0)
	mu.Lock()
	was := reserved
	reserved = 0
	mu.Unlock()
	defer func() {
		mu.Lock()
		reserved = was
		mu.Unlock()
		runtime.GOMAXPROCS(procs)
	}()
	Reserve(2)
	Reserve(1)
	if got := runtime.GOMAXPROCS(0); got != Cores()+2 {
		t.Fatalf("GOMAXPROCS %d after Reserve(2) and Reserve(1), want %d", got, Cores()+2)
	}
	Reserve(3)
	if got := runtime.GOMAXPROCS(0); got != Cores()+3 {
		t.Fatalf("GOMAXPROCS %d after Reserve(3), want %d", got, Cores()+3)
	}
}
