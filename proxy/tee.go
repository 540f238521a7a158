package proxy

import (
	"errors"
	"io"
	"sync"
	"time"
)

// The tee. The handler copies the upstream body to the client: it reads a
// chunk, writes it to the client, flushes, and only then hands a copy of
// the chunk to the spool. The spool is the recorder's side: an in-memory
// queue of chunks that the recording goroutine reads through
// adapters.ReadStream at its own pace. Handing a chunk over is a copy and
// an append under a mutex; it never waits for the reader, so the
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

// recordPause: a recorder that has read all it was given waits this long
// before it waits for the next chunk, when its stream is busy (the last
// chunk came less than recordPause after the one before). A stream paced
// by the model (an event every few ms) is then recorded several events a
// wake-up and a slot, not one: the wake-ups cost more CPU than recording
// an event does. 50 ms (it was 20) took the recording proxy's CPU per
// paced event from 45–54 µs to 38–46 µs (50 streams at 100 events/s, the
// proxy alone in its process as `bench --only proxy` runs it, five runs
// of each alternated at load 3–12); the workbench's live view still gets
// a busy stream's events 20 times a second. The client
// never waits for it; the end of the body ends the pause at once.
const recordPause = 50 * time.Millisecond

// ErrRecorderBehind ends a recording whose recorder fell too far behind.
var ErrRecorderBehind = errors.New("modelwire: the recorder fell behind the stream by more than its buffer; the rest of the response was forwarded but not recorded")

// spool is the recorder's side of the tee.
type spool struct {
	mu      sync.Mutex
	cond    *sync.Cond
	chunks  [][]byte
	at      []time.Time
	slab    []byte // where small chunks are copied (add)
	cur     []byte // the chunk being read
	curBuf  []byte // cur's pooled buffer, if it is one, to return once read
	curAt   time.Time
	waiting int // bytes kept and not yet read
	limit   int
	total   int64
	closed  bool
	err     error // how the input ended (nil: io.EOF)
	overrun bool
	// cancelled: the client went away and the copy stopped.
	cancelled bool

	// slots, when set, is the proxy's recorder slots (see Proxy.slots):
	// the reader holds one from the chunk it takes until it has read all
	// it was given, so it never holds one while it waits.
	slots chan struct{}
	held  bool

	prevAt time.Time   // when the chunk before cur arrived
	pause  *time.Timer // the reader's (nap)
	woken  chan struct{}
}

func newSpool(limit int) *spool {
	s := &spool{limit: limit, woken: make(chan struct{}, 1)}
	s.cond = sync.NewCond(&s.mu)
	return s
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
	s.mu.Lock()
	defer s.mu.Unlock()
	s.total += int64(len(p))
	if s.closed || s.overrun {
		return false
	}
	if s.waiting+len(p) > s.limit {
		s.overrun = true
		s.cond.Signal()
		s.wake()
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
	s.chunks = append(s.chunks, p)
	s.at = append(s.at, at)
	s.waiting += len(p)
	s.cond.Signal()
	return owned
}

// close ends the input: err nil is a clean end of the body.
func (s *spool) close(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.closed, s.err = true, err
	s.cond.Signal()
	s.wake()
}

// wake ends the reader's pause, if it is in one (the input ended).
func (s *spool) wake() {
	select {
	case s.woken <- struct{}{}:
	default:
	}
}

// nap is the reader's pause (recordPause), ended early by wake.
func (s *spool) nap() {
	if s.pause == nil {
		s.pause = time.NewTimer(recordPause)
	} else {
		s.pause.Reset(recordPause)
	}
	select {
	case <-s.pause.C:
	case <-s.woken:
		s.pause.Stop()
	}
}

// Read gives the recorder the next bytes, waiting for them.
func (s *spool) Read(p []byte) (int, error) {
	if len(s.cur) == 0 {
		if s.curBuf != nil {
			chunks.Put((*[chunkSize]byte)(s.curBuf))
			s.curBuf = nil
		}
		s.mu.Lock()
		if len(s.chunks) == 0 && s.held {
			s.release()
		}
		if len(s.chunks) == 0 && !s.closed && !s.overrun && !s.prevAt.IsZero() && s.curAt.Sub(s.prevAt) < recordPause {
			s.mu.Unlock()
			s.nap()
			s.mu.Lock()
		}
		for len(s.chunks) == 0 && !s.closed && !s.overrun {
			s.cond.Wait()
		}
		switch {
		case len(s.chunks) > 0:
			s.cur, s.prevAt, s.curAt = s.chunks[0], s.curAt, s.at[0]
			if cap(s.cur) == chunkSize {
				s.curBuf = s.cur[:chunkSize]
			}
			s.chunks[0] = nil
			if len(s.chunks) == 1 {
				// Drained: the next chunks reuse the arrays from the start.
				s.chunks, s.at = s.chunks[:0], s.at[:0]
			} else {
				s.chunks, s.at = s.chunks[1:], s.at[1:]
			}
			s.waiting -= len(s.cur)
		case s.overrun:
			s.mu.Unlock()
			s.release()
			return 0, ErrRecorderBehind
		default:
			err := s.err
			s.mu.Unlock()
			s.release()
			if err == nil {
				return 0, io.EOF
			}
			return 0, err
		}
		s.mu.Unlock()
		s.acquire()
	}
	n := copy(p, s.cur)
	s.cur = s.cur[n:]
	return n, nil
}

// acquire takes a recorder slot for the reader, waiting for a free one,
// if it holds none. Only the reader calls it (Read, and the recorder for
// its work before and after the body), never while it waits for another
// exchange; the copy never does.
func (s *spool) acquire() {
	if s.slots != nil && !s.held {
		s.slots <- struct{}{}
		s.held = true
	}
}

// release gives back the reader's recorder slot, if it holds one. Only
// the reader calls it (Read, and the recorder once it is done).
func (s *spool) release() {
	if s.held {
		<-s.slots
		s.held = false
	}
}

// arrived is when the chunk last read arrived from upstream: the time of
// the event the reader has just completed.
func (s *spool) arrived() time.Time { return s.curAt }

// result is how the input ended once it has been read: nil for a clean
// end, ErrRecorderBehind when the recorder fell behind, else the error.
func (s *spool) result() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.overrun {
		return ErrRecorderBehind
	}
	return s.err
}

// forwarded is how many bytes went to the client.
func (s *spool) forwarded() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.total
}

// cancel ends the input because the client went away: the recorder reads
// what came as a body that ended there (a cut event is discarded, a
// missing terminal is a cut stream), and the exchange says who ended it.
func (s *spool) cancel() {
	s.mu.Lock()
	s.cancelled = true
	s.mu.Unlock()
	s.close(nil)
}

// wasCancelled reports whether the client ended the response.
func (s *spool) wasCancelled() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cancelled
}
