package proxy

import (
	"time"

	"github.com/modelwire/modelwire/background"
)

// The recorders. Each recording runs as a task on one of the proxy's
// recorder loops (background.Loop): a coroutine on a lowered thread that
// reads its spool while it has chunks and gives the thread back when it
// has none; the copy wakes it with the next chunk. One lowered thread
// serves any number of streams, and the copy's thread never hands its P
// to a recorder's own thread and back, as it did with a thread for each.

// recordPause is how long a recorder loop rests after a round, unless a
// body ends or an exchange begins: a stream paced by the model (an event
// every few ms) is then recorded several events a round, not one: the
// wake-ups cost more CPU than recording an event does. A round comes 20
// times a second however many streams are in flight, and the workbench's
// live view gets a busy stream's events as often.
const recordPause = 50 * time.Millisecond

// StoreFlush is how often the proxy's store commits (store.Options'
// FlushInterval; the default is 50 ms): a commit costs the same for each
// session with new events, and a proxy records many at once, so at 20
// commits a second the commits cost more CPU than the decoding
// (docs/measurements.md). The live view does not wait for it (it gets
// each recorder round's events); another process reading the database
// sees a busy stream's events 5 times a second.
const StoreFlush = 200 * time.Millisecond

// heapFloor is the heap below which the proxy's collector does not run
// (background.HeapFloor): a collection's stops wait for the recorder
// loops' lowered threads, and a young proxy's few MiB of heap would be
// collected several times a second under load. It costs up to this much
// more memory than GOGC=100 would hold, far inside the soft memory limit.
const heapFloor = 128 << 20

// startRecorders starts a proxy's recorder loops, one fewer than the
// cores (at least one), reserves a P for each and one for the store's
// commit (background.Reserve), and sets the heap floor.
func startRecorders() []*background.Loop {
	n := max(1, background.Cores()-1)
	background.Reserve(n + 1)
	background.HeapFloor(heapFloor)
	loops := make([]*background.Loop, n)
	for i := range loops {
		loops[i] = background.NewLoop(recordPause)
	}
	return loops
}

// startRecording runs record, which reads sp, on a recorder loop; a held
// response's recorder, which waits for a person mid-way, on a goroutine
// of its own (a task waiting there would stop its loop).
func (p *Proxy) startRecording(sp *spool, hold bool, record func()) {
	if hold {
		go record()
		return
	}
	l := p.recorders[int(p.nextLoop.Add(1))%len(p.recorders)]
	sp.task = l.Task(record)
	sp.task.Start()
}
