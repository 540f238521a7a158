package background

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// The collector's pauses. Every collection stops the world twice, and a
// stop waits until every P has reached a safe point: a lowered thread
// that holds a P while the kernel has set it aside reaches none until
// the kernel runs it again, and meanwhile every goroutine of the process
// waits, the forward path's too. A heap of a few MiB (a proxy that has
// just started) is collected several times a second under load, so each
// of those stops could cost the streams in flight a millisecond or more
// (docs/measurements.md). HeapFloor makes collections rarer while the
// heap is small, which is where they are most frequent.

var floorOnce sync.Once

// HeapFloor keeps the collector from running before the heap has grown
// to floor bytes: after each collection, the next one is set for twice
// the live heap (GOGC=100) or floor, whichever is larger. A memory limit
// (debug.SetMemoryLimit, GOMEMLIMIT) still wins over it. It does nothing
// when GOGC is set (the person running the process chose), and only its
// first call counts.
func HeapFloor(floor uint64) {
	if os.Getenv("GOGC") != "" {
		return
	}
	floorOnce.Do(func() {
		f := &heapFloor{floor: floor, sample: []metrics.Sample{
			{Name: "/gc/heap/live:bytes"}, {Name: "/gc/scan/stack:bytes"}, {Name: "/gc/scan/globals:bytes"}}}
		f.tune()
		f.arm()
	})
}

type heapFloor struct {
	floor  uint64
	sample []metrics.Sample
}

// arm has tune run once the next collection has ended: a finalizer runs
// after the cycle that found its object unreachable.
func (f *heapFloor) arm() {
	sentinel := new([16]byte)
	runtime.SetFinalizer(sentinel, func(*[16]byte) {
		f.tune()
		f.arm()
	})
}

// tune sets GOGC for the next collection from the heap the last one left.
func (f *heapFloor) tune() {
	metrics.Read(f.sample)
	var v [3]uint64
	for i, s := range f.sample {
		if s.Value.Kind() == metrics.KindUint64 {
			v[i] = s.Value.Uint64()
		}
	}
	debug.SetGCPercent(percentFor(v[0], v[1]+v[2], f.floor))
}

// percentFor is the GOGC that sets the next collection at the floor, or
// where GOGC=100 sets it if that is further. The collector sets it at
// live + (live + roots) × GOGC/100, where roots are the stacks and
// globals it scanned, but never below its minimum heap, 4 MiB × GOGC/100
// (the runtime's defaultHeapMinimum): for a heap of almost nothing that
// minimum is the floor.
func percentFor(live, roots, floor uint64) int {
	const base, minHeap = 100, 4 << 20
	scanned := max(live+roots, 1)
	if live+scanned*base/100 >= floor {
		return base
	}
	// Rounded up: a goal a few bytes short of the floor is under it.
	return int(min(((floor-live)*100+scanned-1)/scanned, floor*100/minHeap))
}
