package proxy

import (
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelwire/modelwire/background"
)

// The tee. The handler copies the upstream body to the client: it reads a
// chunk, writes it to the client, flushes, and only then hands a copy of
// the chunk to the spool. The spool is the recorder's side: an in-memory
// queue of chunks that the recorder (recorders.go) reads through
// adapters.ReadStream at its own pace. Handing a chunk over is a copy and
// a lock-free push; it never waits for the reader, so the
// recorder — decoding, the store, the workbench — can never slow the
// client down.
//
// If the recorder falls behind by more than the spool's limit (it would
// take a stalled database or screen: decoding runs at hundreds of MB/s),
// the spool stops keeping chunks and the recorder, once it has read what
// was kept, gets ErrRecorderBehind: the response is recorded up to there
// and ends with a read_error diagnostic saying so, and the attempt fails
// at the transport layer as "not fully recorded". The client still gets
// every byte.

// spoolLimit bounds the bytes waiting for the recorder.
const spoolLimit = 64 << 20

// chunkSize is the forward path's read buffer. A read that fills at least
// half of one is handed to the spool whole and the copy takes a fresh
// buffer (from chunks, where the spool returns them once read): at full
// speed that saves the copy and the allocation of every chunk. A smaller
// read (an event of a slow stream) is copied into the spool's slab.
const chunkSize = 32 << 10

// slabSize is the block small chunks are copied into, one after another,
// each kept as a sub-slice of it: a paced stream's events (a few hundred
// bytes each) then cost the forward path one allocation a slab, not one
// an event, so the client's path makes less garbage and does less GC
// assist work. A slab is held until its last chunk is read: at most
// slabSize more than the bytes counted.
const slabSize = 8 << 10

var chunks = sync.Pool{New: func() any { return new([chunkSize]byte) }}

// newChunk is a read buffer for the forward path.
func newChunk() []byte { return chunks.Get().(*[chunkSize]byte)[:] }

// ErrRecorderBehind ends a recording whose recorder fell too far behind.
var ErrRecorderBehind = errors.New("modelwire: the recorder fell behind the stream by more than its buffer; the rest of the response was forwarded but not recorded")

// spool is the recorder's side of the tee. The copy never takes a lock
// the recorder may hold: the recorder runs on a lowered thread, which the
// kernel may set aside in the middle of any critical section, and the
// copy would wait for it as long. Chunks go to the reader through a
// lock-free stack (inbox) that the reader takes whole; the counts and
// flags are atomics.
type spool struct {
	limit int64

	// The writer's side: one goroutine, the copy.
	slab  []byte      // where small chunks are copied (add)
	nodes []chunkNode // where the next chunk's node is taken from
	ended bool        // close (the body's end or an overrun) has pushed the end

	// Shared, without locks.
	inbox     atomic.Pointer[chunkNode] // the chunks the reader has not taken, newest first
	waiting   atomic.Int64              // bytes kept and not yet read
	total     atomic.Int64              // bytes forwarded
	cancelled atomic.Bool               // the client went away and the copy stopped
	parked    atomic.Bool               // the reader waits for a chunk

	// task, when set, is the recording's task on a recorder loop
	// (recorders.go): the reader gives the loop back while it waits for
	// a chunk, and the writer wakes it. Without one the reader waits on
	// notify.
	task   *background.Task
	notify chan struct{}

	// The reader's side.
	queue  *chunkNode // taken from inbox, oldest first
	cur    []byte     // the chunk being read
	curBuf []byte     // cur's pooled buffer, if it is one, to return once read
	curAt  time.Time
	done   bool  // the reader has reached the end
	err    error // how the input ended (nil: io.EOF), once done
}

// chunkNode is a chunk on its way to the reader, or the end of the input.
type chunkNode struct {
	p    []byte
	at   time.Time
	next *chunkNode
	end  bool
	err  error
}

// nodeBlock is how many chunk nodes the writer allocates at once.
const nodeBlock = 64

func newSpool(limit int) *spool {
	return &spool{limit: int64(limit), notify: make(chan struct{}, 1)}
}

// write hands a chunk to the recorder (copied: the caller reuses p). It
// never blocks.
func (s *spool) write(p []byte, at time.Time) { s.add(p, at, false) }

// pass hands the recorder p, a chunk read into buf (from newChunk), and
// returns the buffer the caller reads the next chunk into: buf again when
// p was copied, a fresh one when p was kept as it is. It never blocks.
func (s *spool) pass(buf, p []byte, at time.Time) []byte {
	if len(p) < chunkSize/2 {
		s.add(p, at, false)
		return buf
	}
	if !s.add(p, at, true) {
		return buf
	}
	return newChunk()
}

// add keeps p for the reader; owned: p is the caller's to give away
// (a pooled chunk), else it is copied. It reports whether p was kept
// without a copy.
func (s *spool) add(p []byte, at time.Time, owned bool) bool {
	if len(p) == 0 {
		return false
	}
	s.total.Add(int64(len(p)))
	if s.ended {
		return false
	}
	if s.waiting.Load()+int64(len(p)) > s.limit {
		s.close(ErrRecorderBehind)
		return false
	}
	if !owned {
		if len(p) > cap(s.slab)-len(s.slab) {
			s.slab = make([]byte, 0, max(slabSize, len(p)))
		}
		from := len(s.slab)
		s.slab = append(s.slab, p...)
		p = s.slab[from:len(s.slab):len(s.slab)]
	}
	s.waiting.Add(int64(len(p)))
	n := s.node()
	n.p, n.at = p, at
	s.push(n, false)
	return owned
}

// node is a fresh chunk node, from the writer's block.
func (s *spool) node() *chunkNode {
	if len(s.nodes) == 0 {
		s.nodes = make([]chunkNode, nodeBlock)
	}
	n := &s.nodes[0]
	s.nodes = s.nodes[1:]
	return n
}

// push hands n to the reader and wakes it if it waits; urgent (the end
// of the input) has its loop run it without resting first.
func (s *spool) push(n *chunkNode, urgent bool) {
	for {
		old := s.inbox.Load()
		n.next = old
		if s.inbox.CompareAndSwap(old, n) {
			break
		}
	}
	if s.parked.CompareAndSwap(true, false) || urgent {
		if s.task != nil {
			s.task.Wake(urgent)
			return
		}
		select {
		case s.notify <- struct{}{}:
		default:
		}
	}
}

// close ends the input for the reader, after the chunks kept so far:
// err nil is a clean end of the body. Only the first close counts.
func (s *spool) close(err error) {
	if s.ended {
		return
	}
	s.ended = true
	n := s.node()
	n.end, n.err = true, err
	s.push(n, true)
}

// Read gives the recorder the next bytes, waiting for them.
func (s *spool) Read(p []byte) (int, error) {
	for len(s.cur) == 0 {
		if s.curBuf != nil {
			chunks.Put((*[chunkSize]byte)(s.curBuf))
			s.curBuf = nil
		}
		if s.done {
			if s.err == nil {
				return 0, io.EOF
			}
			return 0, s.err
		}
		n := s.take()
		switch {
		case n == nil:
			s.wait()
		case n.end:
			s.done, s.err = true, n.err
		default:
			s.cur, s.curAt = n.p, n.at
			if cap(s.cur) == chunkSize {
				s.curBuf = s.cur[:chunkSize]
			}
			s.waiting.Add(-int64(len(n.p)))
			// The node lives on in its block of nodeBlock until they are
			// all read: it must not keep its slab (or a pooled buffer) too.
			n.p = nil
		}
	}
	n := copy(p, s.cur)
	s.cur = s.cur[n:]
	return n, nil
}

// take is the oldest chunk not yet read, or nil.
func (s *spool) take() *chunkNode {
	if s.queue == nil {
		// The inbox is newest first: reversed, it is the queue.
		for n := s.inbox.Swap(nil); n != nil; {
			next := n.next
			n.next, s.queue = s.queue, n
			n = next
		}
	}
	n := s.queue
	if n != nil {
		s.queue, n.next = n.next, nil
	}
	return n
}

// wait waits until the writer pushes a chunk: it parks, then looks once
// more (a chunk pushed before the writer could see it park would
// otherwise wait for the next).
func (s *spool) wait() {
	s.parked.Store(true)
	if s.inbox.Load() != nil {
		s.parked.Store(false)
		return
	}
	if s.task != nil {
		s.task.Wait()
		return
	}
	<-s.notify
}

// arrived is when the chunk last read arrived from upstream: the time of
// the event the reader has just completed.
func (s *spool) arrived() time.Time { return s.curAt }

// result is how the input ended once it has been read: nil for a clean
// end, ErrRecorderBehind when the recorder fell behind, else the error.
func (s *spool) result() error { return s.err }

// forwarded is how many bytes went to the client.
func (s *spool) forwarded() int64 { return s.total.Load() }

// cancel ends the input because the client went away: the recorder reads
// what came as a body that ended there (a cut event is discarded, a
// missing terminal is a cut stream), and the exchange says who ended it.
func (s *spool) cancel() {
	s.cancelled.Store(true)
	s.close(nil)
}

// wasCancelled reports whether the client ended the response.
func (s *spool) wasCancelled() bool { return s.cancelled.Load() }
