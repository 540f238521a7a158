// Package sse reads Server-Sent Events streams exactly as the WHATWG HTML
// standard parses them (§9.2.5 "Parsing an event stream", §9.2.6
// "Interpreting an event stream").
//
// It follows WHATWG where the official LLM SDK decoders do not: one leading
// byte order mark is stripped, a bare CR ends a line, a `data:` line with an
// empty value dispatches an event with empty data, and an event that is not
// closed by a blank line before the end of the stream is discarded (and
// counted in Stats.DiscardedTail). Ill-formed UTF-8 never aborts a stream: each
// maximal ill-formed subsequence becomes one U+FFFD, as the WHATWG "UTF-8
// decode" of the whole stream would produce.
//
// The reader never buffers the whole body: it works over a reader that
// delivers one byte at a time, and Next returns an event as soon as the blank
// line that dispatches it has been read. (A CR that is the last byte received
// so far is held until the next byte or the end of the stream tells CR from
// CRLF, so only a stream whose lines end in a bare CR can see an event held
// until the next byte arrives.)
package sse

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"iter"
	"math"
	"unicode/utf8"
	"unsafe"
)

// DefaultMaxEventSize is the data size limit of a new Reader.
const DefaultMaxEventSize = 8 << 20

const (
	bufSize = 64 << 10
	// linePrefix is the longest a legal data line can be beyond its value
	// ("data: "), so a line longer than the limit plus this is too large for
	// any event. Lines are bounded too so that a stream without line ends
	// cannot grow memory without end.
	linePrefix = len("data: ")
	// maxInterned bounds the table of event type strings reused between
	// events: LLM streams use a handful of types, a hostile one many.
	maxInterned = 64
)

var bom = [3]byte{0xEF, 0xBB, 0xBF}

// ErrEventTooLarge is returned (wrapped, with the offset of the event) when
// an event's data, or a single line, exceeds the reader's maximum event size.
var ErrEventTooLarge = errors.New("sse: event too large")

// Event is one dispatched event.
type Event struct {
	// Type is the `event:` field, "" when none was given. It is not
	// defaulted to "message": callers need to know it was absent.
	Type string
	// Data is the data lines joined with "\n", one trailing LF removed.
	Data string
	// ID is the last-event-ID buffer after this event; it is sticky per
	// WHATWG, so it may come from an earlier block.
	ID string
	// HasID is true when this event's own block contained an `id:` field
	// that was not ignored (an id containing U+0000 is ignored).
	HasID bool
	// Retry is the reconnection time in ms from a valid `retry:` field in
	// this block, 0 if none.
	Retry int
	// Offset is the byte offset in the raw stream where this event's block
	// started. Offsets count the raw bytes, so with a stripped BOM the first
	// block starts at 3; stream[Offset:End] is the event's block.
	Offset int64
	// End is the byte offset just after the blank line that dispatched the
	// event, including its whole line end (CRLF counts 2).
	End int64
}

// Stats counts framing facts a decoder reports as diagnostics.
type Stats struct {
	BOMStripped bool
	// BareCR is set when a line ended by CR alone was seen.
	BareCR bool
	// IgnoredFields counts unknown fields, `retry:` values that are not
	// only ASCII digits, and `id:` values containing U+0000.
	IgnoredFields int
	// InvalidUTF8 is set when ill-formed UTF-8 in an event's type, data or
	// id was replaced by U+FFFD.
	InvalidUTF8 bool
	// DiscardedTail is the number of bytes after the last blank line that
	// were discarded at EOF (an unterminated last event, or a last block of
	// comments or fields only), 0 if none.
	DiscardedTail int64
	// Comments counts comment lines (lines starting with ':').
	Comments int
}

// Reader decodes an event stream. It is not safe for concurrent use.
type Reader struct {
	br  *bufio.Reader
	max int

	started bool
	readErr error // first error of the underlying reader, reported once the buffer is drained
	err     error // sticky error returned by Next

	pos        int64 // raw offset of the first byte not yet consumed from br
	blockStart int64 // raw offset where the current block began
	// lfAt and crAt cache the line-end search so that every byte is
	// scanned at most once per character, even when a Next call returns
	// in the middle of the buffer: there is no LF (CR) in [pos, lfAt)
	// ([pos, crAt)); see nextLineEnd.
	lfAt, crAt int64

	line []byte // a line that spans buffer refills
	data []byte // data buffer: each value followed by LF
	typ  []byte // event type buffer
	id   string // last event ID buffer

	hasID     bool // this block had an id field
	retry     int  // retry from this block, 0 if none
	reconnect int  // reconnection time from the last valid retry field
	hasRetry  bool

	arena []byte // where event data strings are carved from; see dataString

	types    map[string]string // interned event types, keyed by raw bytes
	lastType string            // the type of the last event, valid UTF-8
	stats    Stats
}

// NewReader returns a Reader that decodes the event stream read from r, with
// a maximum event size of DefaultMaxEventSize.
func NewReader(r io.Reader) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, bufSize), max: DefaultMaxEventSize}
}

// SetMaxEventSize sets the largest data, in bytes, one event may carry (and,
// plus the length of "data: ", the longest line). n <= 0 restores
// DefaultMaxEventSize.
func (r *Reader) SetMaxEventSize(n int) {
	if n <= 0 {
		n = DefaultMaxEventSize
	}
	r.max = min(n, math.MaxInt/2) // leaves room for the sums below
}

// Stats returns the framing facts counted so far.
func (r *Reader) Stats() Stats { return r.stats }

// Pending reports whether bytes have been read that do not yet belong to a
// dispatched event or a finished block: an event in progress, bytes read
// ahead, or after io.EOF the discarded tail. It tells a caller whose stream
// was cut whether it was cut inside an event.
func (r *Reader) Pending() bool {
	return r.pos > r.blockStart || r.br.Buffered() > 0
}

// ReconnectionTime returns the reconnection time in ms set by the last
// valid `retry:` field, in any block, dispatched or not.
func (r *Reader) ReconnectionTime() (ms int, ok bool) { return r.reconnect, r.hasRetry }

// All returns an iterator over the remaining events. It ends silently at a
// clean end of stream; any other error is yielded once, with a zero Event,
// and ends the iteration.
func (r *Reader) All() iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		for {
			ev, err := r.Next()
			if err == io.EOF {
				return
			}
			if err != nil {
				yield(Event{}, err)
				return
			}
			if !yield(ev, nil) {
				return
			}
		}
	}
}

// Next returns the next event. It returns io.EOF at the end of the stream
// (after discarding an unterminated last event), an error wrapping
// ErrEventTooLarge when an event's data or a line exceeds the maximum event
// size, and errors of the underlying reader wrapped with the offset at which
// they happened. After an error, Next keeps returning it.
func (r *Reader) Next() (Event, error) {
	if r.err != nil {
		return Event{}, r.err
	}
	if !r.started {
		r.start()
	}
	for {
		// Work on the buffered bytes in place; the slice stays valid until
		// the next read from br.
		buf, _ := r.br.Peek(r.br.Buffered())
		off := 0
	scan:
		for off < len(buf) {
			e := r.nextLineEnd(buf, off)
			if e == len(buf) {
				// The line goes on past the buffered bytes.
				if err := r.carry(buf[off:]); err != nil {
					r.discard(len(buf))
					return r.fail(err)
				}
				off = len(buf)
				break
			}
			n := 1 // length of the line end
			bare := false
			if buf[e] == '\r' {
				switch {
				case e+1 < len(buf):
					if buf[e+1] == '\n' {
						n = 2
					} else {
						bare = true
					}
				case r.readErr == nil:
					// The CR is the last byte received: only the next one
					// tells CR from CRLF. Keep the line, leave the CR
					// buffered, and read on.
					if err := r.carry(buf[off:e]); err != nil {
						r.discard(e)
						return r.fail(err)
					}
					off = e
					break scan
				default:
					bare = true // nothing follows
				}
			}
			line := buf[off:e]
			if len(r.line) > 0 {
				r.line = append(r.line, line...)
				line = r.line
			}
			if len(line) > r.max+linePrefix {
				r.discard(e + n)
				return r.fail(r.tooLarge())
			}
			if bare {
				r.stats.BareCR = true
			}
			off = e + n
			if len(line) == 0 {
				var ev Event
				if r.dispatch(r.pos+int64(off), &ev) {
					r.line = r.line[:0]
					r.discard(off)
					return ev, nil
				}
			} else if err := r.field(line); err != nil {
				r.discard(off)
				return r.fail(err)
			}
			r.line = r.line[:0]
		}
		r.discard(off)
		if r.readErr != nil {
			// Every buffered byte has been used: report the end.
			return r.finish()
		}
		// Read at least one more byte (br holds at most the held CR, so
		// this cannot exceed its size).
		if _, err := r.br.Peek(r.br.Buffered() + 1); err != nil {
			r.readErr = err
		}
	}
}

// start strips one leading BOM. It only waits for more bytes while those
// read so far are a prefix of the BOM, so no event is delayed by it.
func (r *Reader) start() {
	r.started = true
	for n := 1; n <= len(bom); n++ {
		b, err := r.br.Peek(n)
		if len(b) < n {
			r.readErr = err
			return
		}
		if b[n-1] != bom[n-1] {
			return
		}
	}
	r.discard(len(bom))
	r.blockStart = r.pos
	r.stats.BOMStripped = true
}

// nextLineEnd returns the index in buf of the first CR or LF at or after
// off, or len(buf) if there is none. buf holds the bytes from r.pos.
//
// Two IndexByte scans (vectorised) beat one bytes.IndexAny (a byte loop);
// caching their results keeps the work linear when one character is rare:
// without it, an LF-only stream would rescan the whole buffer for a CR at
// every line.
func (r *Reader) nextLineEnd(buf []byte, off int) int {
	at := r.pos + int64(off)
	end := r.pos + int64(len(buf))
	if r.crAt < end { // else no CR is buffered: skip the call
		r.crAt = scanFrom(buf, r.pos, at, end, r.crAt, '\r')
	}
	r.lfAt = scanFrom(buf, r.pos, at, end, r.lfAt, '\n')
	return int(min(r.lfAt, r.crAt) - r.pos)
}

// scanFrom advances a cached position c (no ch in [at, c)) to the next
// occurrence of ch in buf (which starts at stream offset base), or to end.
func scanFrom(buf []byte, base, at, end, c int64, ch byte) int64 {
	if c < at {
		c = at
	}
	if c < end && buf[c-base] != ch {
		if j := bytes.IndexByte(buf[c-base:], ch); j >= 0 {
			return c + int64(j)
		}
		return end
	}
	return c
}

// carry keeps part of a line that continues beyond the buffered bytes.
func (r *Reader) carry(part []byte) error {
	if len(r.line)+len(part) > r.max+linePrefix {
		return r.tooLarge()
	}
	r.line = append(r.line, part...)
	return nil
}

func (r *Reader) discard(n int) {
	r.br.Discard(n)
	r.pos += int64(n)
}

func (r *Reader) fail(err error) (Event, error) {
	r.err = err
	return Event{}, err
}

func (r *Reader) tooLarge() error {
	return fmt.Errorf("sse: event at offset %d exceeds %d bytes: %w", r.blockStart, r.max, ErrEventTooLarge)
}

// finish reports the end of the stream once every buffered byte is used.
func (r *Reader) finish() (Event, error) {
	if r.readErr == io.EOF {
		// WHATWG: pending data is discarded at the end of the stream.
		r.stats.DiscardedTail = r.pos - r.blockStart
		r.err = io.EOF
	} else {
		r.err = fmt.Errorf("sse: read error at offset %d: %w", r.pos, r.readErr)
	}
	return Event{}, r.err
}

// field interprets one non-empty line.
func (r *Reader) field(line []byte) error {
	if line[0] == ':' {
		r.stats.Comments++
		return nil
	}
	name, value := line, line[len(line):]
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		name, value = line[:i], line[i+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(name) {
	case "data":
		if len(r.data)+len(value) > r.max {
			return r.tooLarge()
		}
		r.data = append(r.data, value...)
		r.data = append(r.data, '\n')
	case "event":
		r.typ = append(r.typ[:0], value...)
	case "id":
		if bytes.IndexByte(value, 0) >= 0 {
			r.stats.IgnoredFields++
			return nil
		}
		r.hasID = true
		if string(value) != r.id { // most streams repeat or omit ids: no allocation then
			r.id = r.text(value)
		}
	case "retry":
		ms, ok := parseRetry(value)
		if !ok {
			r.stats.IgnoredFields++
			return nil
		}
		r.retry, r.reconnect, r.hasRetry = ms, ms, true
	default:
		r.stats.IgnoredFields++
	}
	return nil
}

// parseRetry accepts a non-empty run of ASCII digits; values beyond int
// saturate.
func parseRetry(v []byte) (int, bool) {
	if len(v) == 0 {
		return 0, false
	}
	n := 0
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
		if n > (math.MaxInt-9)/10 {
			n = math.MaxInt
		} else {
			n = n*10 + int(c-'0')
		}
	}
	return n, true
}

// dispatch handles a blank line ending at end. It fills ev and returns true
// unless the data buffer is empty; either way the block's buffers are reset.
func (r *Reader) dispatch(end int64, ev *Event) bool {
	start := r.blockStart
	r.blockStart = end
	hasID, retry := r.hasID, r.retry
	r.hasID, r.retry = false, 0
	if len(r.data) == 0 {
		r.typ = r.typ[:0]
		return false
	}
	ev.Type = r.typeString()
	ev.Data = r.dataString(r.data[:len(r.data)-1])
	ev.ID = r.id
	ev.HasID = hasID
	ev.Retry = retry
	ev.Offset = start
	ev.End = end
	r.data = r.freeArena()
	r.typ = r.typ[:0]
	return true
}

// typeString returns the type buffer as a string, reusing the string of an
// earlier event with the same type so that typical streams allocate only
// the data string per event.
func (r *Reader) typeString() string {
	if len(r.typ) == 0 {
		return ""
	}
	if string(r.typ) == r.lastType { // runs of one type are the norm
		return r.lastType
	}
	if s, ok := r.types[string(r.typ)]; ok {
		r.lastType = s
		return s
	}
	s := r.text(r.typ)
	if r.types == nil {
		r.types = make(map[string]string)
	}
	if len(r.types) < maxInterned {
		r.types[string(r.typ)] = s
	}
	r.lastType = s
	return s
}

// arenaSize is the size of one chunk of event data strings; minFree is
// the room below which a new chunk is taken for the next event.
const (
	arenaSize = 32 << 10
	minFree   = 512
)

// freeArena is the data buffer for the next event: the free end of the
// current chunk of event data strings, so that data lines are appended
// where dispatch will hand them out and no copy is needed (see
// dataString). A chunk's bytes are never written again once handed out:
// appends only go past them.
func (r *Reader) freeArena() []byte {
	if cap(r.arena)-len(r.arena) < minFree {
		r.arena = make([]byte, 0, arenaSize)
	}
	return r.arena[len(r.arena):len(r.arena)]
}

// dataString is text for an event's data b (the data buffer without its
// last LF). Data strings are carved from a shared chunk, so that a stream
// allocates once per chunk instead of once per event: the allocation was
// the reader's largest cost. When b was appended in place at the chunk's
// free end (freeArena), it is taken as it is; data that outgrew that room
// has a buffer of its own, which a large event keeps and a small one
// copies into a new chunk. Either way the data buffer is replaced after
// dispatch, so the string's bytes are never written again. The price is
// that a string kept alone keeps its chunk alive.
func (r *Reader) dataString(b []byte) string {
	if len(b) == 0 || !utf8.Valid(b) {
		return r.text(b)
	}
	free := r.arena[len(r.arena):cap(r.arena)]
	if len(free) > 0 && unsafe.SliceData(b) == unsafe.SliceData(free) {
		r.arena = r.arena[:len(r.arena)+len(b)]
		return unsafe.String(&b[0], len(b))
	}
	if len(b) > arenaSize/8 {
		return unsafe.String(&b[0], len(b)) // its own buffer, dropped by dispatch
	}
	if cap(r.arena)-len(r.arena) < len(b) {
		r.arena = make([]byte, 0, arenaSize)
	}
	start := len(r.arena)
	r.arena = append(r.arena, b...)
	return unsafe.String(&r.arena[start], len(b))
}

// text converts complete bytes to a string, replacing ill-formed UTF-8.
// Line ends, ':' and ' ' are ASCII, which ends any UTF-8 sequence, so
// decoding a whole value gives what decoding the whole stream would.
func (r *Reader) text(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	r.stats.InvalidUTF8 = true
	return string(appendValidUTF8(make([]byte, 0, len(b)+8), b))
}

// appendValidUTF8 appends s to dst with each maximal ill-formed subsequence
// replaced by one U+FFFD, as the WHATWG "UTF-8 decode" does. Neither Go's
// utf8 decoding (one U+FFFD per byte) nor strings.ToValidUTF8 (one per run)
// matches it: "\xE2\x82x" is one U+FFFD and "x" here, "\xFF\xFF" is two.
func appendValidUTF8(dst, s []byte) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			dst = append(dst, c)
			i++
			continue
		}
		if ru, n := utf8.DecodeRune(s[i:]); ru != utf8.RuneError || n > 1 {
			dst = append(dst, s[i:i+n]...)
			i += n
			continue
		}
		i += illFormedLen(s[i:])
		dst = append(dst, "\uFFFD"...)
	}
	return dst
}

// illFormedLen returns the length of the maximal subpart at the start of s,
// which does not begin with a well-formed sequence: the lead byte and the
// continuation bytes that the WHATWG decoder accepts before it fails.
func illFormedLen(s []byte) int {
	need, lo, hi := 0, byte(0x80), byte(0xBF)
	switch c := s[0]; {
	case c >= 0xC2 && c <= 0xDF:
		need = 1
	case c == 0xE0:
		need, lo = 2, 0xA0
	case c == 0xED:
		need, hi = 2, 0x9F
	case c >= 0xE1 && c <= 0xEF:
		need = 2
	case c == 0xF0:
		need, lo = 3, 0x90
	case c == 0xF4:
		need, hi = 3, 0x8F
	case c >= 0xF1 && c <= 0xF3:
		need = 3
	default:
		return 1
	}
	n := 1
	for n <= need && n < len(s) && s[n] >= lo && s[n] <= hi {
		lo, hi = 0x80, 0xBF
		n++
	}
	return n
}
