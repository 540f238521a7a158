package background

import (
	"os"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestPercentForSetsTheNextCollectionAtTheFloor(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		live, roots, floor uint64
		want               int
	}{
		{live: 10 * mib, floor: 128 * mib, want: 1180},                // 10 MiB + 10 × 11.8 = 128 MiB
		{live: 10 * mib, roots: 6 * mib, floor: 128 * mib, want: 738}, // 10 + 16 × 7.38 ≥ 128 MiB
		{live: 64 * mib, floor: 128 * mib, want: 100},                 // twice the live heap is the floor
		{live: 100 * mib, floor: 128 * mib, want: 100},                // past it, GOGC=100 as usual
		{live: 1 * mib, floor: 128 * mib, want: 3200},                 // the minimum heap, 4 MiB × 32, is the floor
		{live: 0, floor: 128 * mib, want: 3200},                       // nothing live yet: the same
	} {
		got := percentFor(c.live, c.roots, c.floor)
		if got != c.want {
			t.Errorf("percentFor(%d MiB, %d MiB, %d MiB) = %d, want %d", c.live/mib, c.roots/mib, c.floor/mib, got, c.want)
		}
		// The collector's goal, which may pass the floor by a rounding.
		next := max(c.live+(c.live+c.roots)*uint64(got)/100, 4*mib*uint64(got)/100)
		if next < min(c.floor, 2*c.live) || next > max(c.floor, 2*c.live+c.roots)+(c.live+c.roots)/100 {
			t.Errorf("live %d MiB: next collection at %d MiB", c.live/mib, next/mib)
		}
	}
}

// A small heap's garbage is not collected until the heap reaches the
// floor, and collections resume past it; each collection re-tunes.
func TestHeapFloorDefersCollectionsOfASmallHeap(t *testing.T) {
	if os.Getenv("GOGC") != "" {
		t.Skip("GOGC is set: HeapFloor leaves it alone")
	}
	// The floor then lasts for the test process: it is set again after
	// every collection, so there is nothing to restore.
	const floor = 96 << 20
	HeapFloor(floor)
	runtime.GC()
	runtime.GC() // the first collection's finalizer has tuned for the second's
	settle := time.Now().Add(5 * time.Second)
	for gcPercent() <= 100 && time.Now().Before(settle) {
		time.Sleep(time.Millisecond)
	}
	if p := gcPercent(); p <= 100 {
		t.Fatalf("GOGC after a collection of a small heap = %d, want more than 100", p)
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	before := ms.NumGC
	garbage(32 << 20) // far under the floor
	runtime.ReadMemStats(&ms)
	if ms.NumGC != before {
		t.Fatalf("%d collections of a heap under the floor (%d MiB in use)", ms.NumGC-before, ms.HeapAlloc>>20)
	}
	garbage(3 * floor) // past it: a collection begins, and ends soon after
	for end := time.Now().Add(5 * time.Second); ms.NumGC == before && time.Now().Before(end); time.Sleep(time.Millisecond) {
		runtime.ReadMemStats(&ms)
	}
	if ms.NumGC == before {
		t.Fatalf("no collection after %d MiB of garbage, past a floor of %d MiB", 3*floor>>20, floor>>20)
	}
}

var sink []byte

// garbage allocates n bytes in 64 KiB pieces, each dropped at once.
func garbage(n int) {
	for range n / (64 << 10) {
		sink = make([]byte, 64<<10)
	}
	sink = nil
}

func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}
