package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/modelwire/modelwire/adapters"
)

// Limits of the write path.
const (
	// A chunk row holds at most this many steps or bytes, so that reading
	// one entry decodes little.
	maxChunkSteps = 256
	maxChunkBytes = 256 << 10
	// Past this many pending steps or bytes the appender commits itself
	// instead of waiting for the timer: memory stays bounded when events
	// arrive faster than the timer drains them.
	highWaterSteps = 8192
	highWaterBytes = 8 << 20
)

// errClosed is returned by writes after Close.
var errClosed = errors.New("store: the database is closed")

// The batch is a list of ops, in the order they were made. A stepOp is
// one timeline step; an execOp is any other write. A flush runs the whole
// list in one transaction, packing consecutive steps of a session into
// chunk rows.
type op interface{}

type stepOp struct {
	ls       *liveSession
	aid      int64  // 0 for a session-level entry
	aidRef   *int64 // an attempt's step: its aid, read when the step is committed
	seq      int    // timeline seq of the step's first entry
	n        int    // entries in the step (≥ 1)
	turn     int
	attempt  int
	offsetUS int64
	rawIndex int // -1 without a raw event
	raw      adapters.RawEvent
	events   []byte // JSON array
}

type execOp func(t *txn) error

// stepOp adds s to the pending batch's arena (under mu).
func (w *writer) stepOp(s stepOp) *stepOp {
	w.steps = append(w.steps, s)
	return &w.steps[len(w.steps)-1]
}

// encodeEvents encodes plain events (plainEvents) into the pending batch's
// arena (under mu).
func (w *writer) encodeEvents(evs []adapters.Event) []byte {
	from := len(w.events)
	w.events, _ = appendPlainEvents(w.events, evs)
	return w.events[from:len(w.events):len(w.events)]
}

// liveSession is the in-memory state of a session this handle writes.
// Guarded by writer.mu.
type liveSession struct {
	sid      int64
	id       string
	protocol string    // the session's, for its attempts that name none
	start    time.Time // monotonic origin of session-level offsets
	nextSeq  int
	attempts map[int]int // turn → last attempt number
	finished bool
	// batchEntries: session-level entries wait for the batch (SessionMeta.Copy).
	batchEntries bool
}

// writer owns the write connection and the batch.
type writer struct {
	db       *DB
	conn     *sql.Conn
	interval time.Duration

	insertChunk  *sql.Stmt
	updAttempt   *sql.Stmt
	updSession   *sql.Stmt
	upsertCall   *sql.Stmt
	insertValRow *sql.Stmt
	insertSnap   *sql.Stmt
	// stmts are the ad-hoc statements of txn.exec, prepared once on conn
	// (a few fixed texts; preparing one costs more than running it).
	stmts map[string]*sql.Stmt
	// free are chunk builders whose buffers a later commit reuses (only
	// the commit in progress, under flushMu, touches them).
	free []*chunkBuilder
	// zsteps and zraws hold a chunk's columns compressed (under flushMu).
	zsteps, zraws []byte

	mu      sync.Mutex
	pending []op
	spare   []op // a committed batch's backing array, for the next one
	// steps and events are the arenas of the pending batch's steps and of
	// their encoded events, and spareSteps and spareEvents a committed
	// batch's, for the next one: a step costs no allocation of its own
	// (the garbage collector was a third of an append's cost). An arena
	// that grows leaves the ops already made pointing into its old array,
	// which nothing changes; a batch that failed keeps its arrays.
	steps        []stepOp
	events       []byte
	spareSteps   []stepOp
	spareEvents  []byte
	pendingSteps int
	pendingBytes int
	timerArmed   bool
	err          error // the last failed commit; cleared by a good one
	closed       bool
	sessions     map[int64]*liveSession
	// queuedIDs are the ids of copies whose row waits for the batch.
	queuedIDs map[string]bool

	flushMu sync.Mutex // one commit at a time, in batch order

	// afterCommit, when set (tests), is called after each commit with the
	// highest seq committed per session.
	afterCommit func(map[int64]int)
	// commits counts the transactions committed (under flushMu; tests).
	commits int
}

func newWriter(db *DB, interval time.Duration) (*writer, error) {
	ctx := context.Background()
	conn, err := db.sql.Conn(ctx)
	if err != nil {
		return nil, err
	}
	w := &writer{db: db, conn: conn, interval: interval, sessions: map[int64]*liveSession{}, queuedIDs: map[string]bool{}, stmts: map[string]*sql.Stmt{}}
	prep := func(dst **sql.Stmt, q string) {
		if err == nil {
			*dst, err = conn.PrepareContext(ctx, q)
		}
	}
	prep(&w.insertChunk, `INSERT INTO chunks (sid, seq, last_seq, aid, first_raw, steps, raws, codec) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`)
	prep(&w.updAttempt, `UPDATE attempts SET first_seq = coalesce(first_seq, ?), last_seq = max(coalesce(last_seq, 0), ?),
		raw_events = raw_events + ? WHERE aid = ?`)
	prep(&w.updSession, `UPDATE sessions SET events = max(events, ?), turns = max(turns, ?) WHERE sid = ?`)
	prep(&w.upsertCall, `INSERT INTO tool_calls (sid, turn, call_id, name, arguments, proposed_seq) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (sid, turn, call_id) DO UPDATE SET name = excluded.name, arguments = excluded.arguments,
		proposed_seq = coalesce(tool_calls.proposed_seq, excluded.proposed_seq)`)
	prep(&w.insertValRow, `INSERT INTO validations (sid, seq, ord, turn, layer, status, detail) VALUES (?, ?, ?, ?, ?, ?, ?)`)
	prep(&w.insertSnap, `INSERT OR REPLACE INTO snapshots (aid, level, seq, state, text) VALUES (?, ?, ?, ?, ?)`)
	if err != nil {
		conn.Close()
		return nil, err
	}
	return w, nil
}

// append allocates n timeline seqs for ls and queues the ops build appends
// to the batch for them, in one critical section so that the batch stays
// in seq order.
// It commits at once when now is set or the batch is past its high-water
// mark; otherwise the timer commits it.
func (w *writer) append(ls *liveSession, n int, now bool, build func(seq int, batch []op) []op) (int, error) {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return 0, errClosed
	}
	if ls.finished {
		w.mu.Unlock()
		return 0, errors.New("store: session " + ls.id + " is finished")
	}
	seq := 0
	if n > 0 {
		seq = ls.nextSeq
		ls.nextSeq += n
	}
	from := len(w.pending)
	w.pending = build(seq, w.pending)
	for _, o := range w.pending[from:] {
		if s, ok := o.(*stepOp); ok {
			w.pendingSteps++
			w.pendingBytes += len(s.raw.Data) + len(s.events) + 64
		}
	}
	if w.pendingSteps >= highWaterSteps || w.pendingBytes >= highWaterBytes {
		now = true
	}
	prevErr := w.err
	if !now && !w.timerArmed && len(w.pending) > 0 {
		w.arm()
	}
	w.mu.Unlock()
	if now {
		return seq, w.flush()
	}
	return seq, prevErr
}

// close stops new writes, commits what is pending, marks this handle's
// unfinished sessions interrupted and releases the connection.
func (w *writer) close() error {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	err := w.flush()
	w.flushMu.Lock()
	defer w.flushMu.Unlock()
	w.mu.Lock()
	var open []int64
	for sid, ls := range w.sessions {
		if !ls.finished {
			open = append(open, sid)
		}
	}
	w.mu.Unlock()
	if len(open) > 0 {
		_, e := w.inTx(func(t *txn) error {
			for _, sid := range open {
				if err := t.exec(sqlInterruptSession, sid); err != nil {
					return err
				}
				if err := t.exec(sqlInterruptAttempts, sid); err != nil {
					return err
				}
			}
			return nil
		})
		if err == nil {
			err = e
		}
	}
	for _, s := range []*sql.Stmt{w.insertChunk, w.updAttempt, w.updSession, w.upsertCall, w.insertValRow, w.insertSnap} {
		s.Close()
	}
	for _, s := range w.stmts {
		s.Close()
	}
	if e := w.conn.Close(); e != nil && err == nil {
		err = e
	}
	return err
}

const (
	sqlInterruptSession  = `UPDATE sessions SET status = 'interrupted' WHERE sid = ? AND status = 'running'`
	sqlInterruptAttempts = `UPDATE attempts SET state = 'interrupted' WHERE sid = ? AND state = 'running'`
)

// txn is one commit in progress.
type txn struct {
	w        *writer
	ctx      context.Context
	open     map[int64]*chunkBuilder // per session: the chunk being filled
	attempts map[int64]*attemptProgress
	sessions map[int64]*sessionProgress
}

type chunkBuilder struct {
	sid, aid int64
	seq      int // first entry
	next     int // the seq the next step must start at to join
	steps    int
	firstRaw int // raw_index of the first raw event, -1 before one
	nextRaw  int
	buf      bytes.Buffer // the steps' JSON array
	raws     []byte       // the raw events (see appendRaw)
}

type attemptProgress struct{ first, last, raws int }

type sessionProgress struct{ lastSeq, turns int }

func (t *txn) run(batch []op) error {
	for _, o := range batch {
		switch o := o.(type) {
		case *stepOp:
			if err := t.addStep(o); err != nil {
				return err
			}
		case execOp:
			if err := o(t); err != nil {
				return err
			}
		}
	}
	for _, b := range t.open {
		if err := t.closeChunk(b); err != nil {
			return err
		}
	}
	for aid, p := range t.attempts {
		if _, err := t.w.updAttempt.ExecContext(t.ctx, p.first, p.last, p.raws, aid); err != nil {
			return err
		}
	}
	for sid, p := range t.sessions {
		if _, err := t.w.updSession.ExecContext(t.ctx, p.lastSeq, p.turns, sid); err != nil {
			return err
		}
	}
	return nil
}

func (t *txn) addStep(s *stepOp) error {
	if s.aidRef != nil {
		s.aid = *s.aidRef
	}
	sid := s.ls.sid
	b := t.open[sid]
	if b != nil && (b.aid != s.aid || b.next != s.seq || b.steps >= maxChunkSteps || b.buf.Len()+len(b.raws) >= maxChunkBytes ||
		s.rawIndex >= 0 && b.firstRaw >= 0 && s.rawIndex != b.nextRaw) {
		if err := t.closeChunk(b); err != nil {
			return err
		}
		b = nil
	}
	if b == nil {
		b = t.w.chunk()
		b.sid, b.aid, b.seq = sid, s.aid, s.seq
		b.buf.WriteByte('[')
		t.open[sid] = b
	} else {
		b.buf.WriteByte(',')
	}
	writeStep(&b.buf, s)
	if s.rawIndex >= 0 {
		if b.firstRaw < 0 {
			b.firstRaw = s.rawIndex
		}
		b.nextRaw = s.rawIndex + 1
		b.raws = appendRaw(b.raws, s.raw)
	}
	b.steps++
	b.next = s.seq + s.n

	last := s.seq + s.n - 1
	sp := t.sessions[sid]
	if sp == nil {
		sp = &sessionProgress{}
		t.sessions[sid] = sp
	}
	sp.lastSeq = max(sp.lastSeq, last)
	sp.turns = max(sp.turns, s.turn)
	if s.aid != 0 {
		ap := t.attempts[s.aid]
		if ap == nil {
			ap = &attemptProgress{first: s.seq}
			t.attempts[s.aid] = ap
		}
		ap.last = last
		if s.rawIndex >= 0 {
			ap.raws++
		}
	}
	return nil
}

func (t *txn) closeChunk(b *chunkBuilder) error {
	delete(t.open, b.sid)
	b.buf.WriteByte(']')
	var aid, firstRaw, raws any
	if b.aid != 0 {
		aid = b.aid
	}
	w := t.w
	w.zsteps = compressChunk(w.zsteps, b.buf.Bytes())
	if b.firstRaw >= 0 {
		w.zraws = compressChunk(w.zraws, b.raws)
		firstRaw, raws = b.firstRaw, w.zraws
	}
	_, err := w.insertChunk.ExecContext(t.ctx, b.sid, b.seq, b.next-1, aid, firstRaw, w.zsteps, raws, chunkCodec)
	// The driver copied the values: the buffers serve the next chunk.
	b.buf.Reset()
	*b = chunkBuilder{buf: b.buf, raws: b.raws[:0], firstRaw: -1}
	t.w.free = append(t.w.free, b)
	return err
}

// chunk returns an empty chunk builder, reusing a closed one's buffers.
func (w *writer) chunk() *chunkBuilder {
	if n := len(w.free); n > 0 {
		b := w.free[n-1]
		w.free = w.free[:n-1]
		return b
	}
	return &chunkBuilder{firstRaw: -1}
}

// appendRaw appends a raw event to a chunk's raws: its event name, data and
// id, each a uvarint length and the bytes, exactly as received.
func appendRaw(dst []byte, raw adapters.RawEvent) []byte {
	for _, s := range [3]string{raw.Event, raw.Data, raw.ID} {
		dst = binary.AppendUvarint(dst, uint64(len(s)))
		dst = append(dst, s...)
	}
	return dst
}

// readRaws decodes a chunk's raws.
func readRaws(b []byte) ([]adapters.RawEvent, error) {
	var out []adapters.RawEvent
	for len(b) > 0 {
		var f [3]string
		for i := range f {
			n, k := binary.Uvarint(b)
			if k <= 0 || uint64(len(b)-k) < n {
				return nil, errors.New("store: a chunk's raw events are damaged")
			}
			f[i] = string(b[k : k+int(n)])
			b = b[k+int(n):]
		}
		out = append(out, adapters.RawEvent{Event: f[0], Data: f[1], ID: f[2]})
	}
	return out, nil
}

// exec runs an ad-hoc statement inside the commit, prepared on first use.
func (t *txn) exec(query string, args ...any) error {
	st, err := t.stmt(query)
	if err != nil {
		return err
	}
	_, err = st.ExecContext(t.ctx, args...)
	return err
}

// stmt is query prepared on the writer's connection, once: preparing costs
// more than running the short statements of the write path.
func (t *txn) stmt(query string) (*sql.Stmt, error) {
	st := t.w.stmts[query]
	if st == nil {
		var err error
		if st, err = t.w.conn.PrepareContext(t.ctx, query); err != nil {
			return nil, err
		}
		t.w.stmts[query] = st
	}
	return st, nil
}

// writeStep writes one step as JSON:
// {"seq","turn","attempt","offset_us"[,"raw_index"],"events"}; the raw
// event goes to the chunk's raws. ("seq" must stay first: readers find it
// without decoding.)
func writeStep(buf *bytes.Buffer, s *stepOp) { writeStepJSON(buf, s, false) }

// writeStepJSON writes a step, with its raw event inline when withRaw
// (the export's form).
func writeStepJSON(buf *bytes.Buffer, s *stepOp, withRaw bool) {
	var num [20]byte
	buf.WriteString(`{"seq":`)
	buf.Write(strconv.AppendInt(num[:0], int64(s.seq), 10))
	buf.WriteString(`,"turn":`)
	buf.Write(strconv.AppendInt(num[:0], int64(s.turn), 10))
	buf.WriteString(`,"attempt":`)
	buf.Write(strconv.AppendInt(num[:0], int64(s.attempt), 10))
	buf.WriteString(`,"offset_us":`)
	buf.Write(strconv.AppendInt(num[:0], s.offsetUS, 10))
	if s.rawIndex >= 0 {
		buf.WriteString(`,"raw_index":`)
		buf.Write(strconv.AppendInt(num[:0], int64(s.rawIndex), 10))
	}
	if s.rawIndex >= 0 && withRaw {
		buf.WriteString(`,"raw":{`)
		if s.raw.Event != "" {
			buf.WriteString(`"event":`)
			writeJSONString(buf, s.raw.Event)
			buf.WriteByte(',')
		}
		buf.WriteString(`"data":`)
		writeJSONString(buf, s.raw.Data)
		if s.raw.ID != "" {
			buf.WriteString(`,"id":`)
			writeJSONString(buf, s.raw.ID)
		}
		buf.WriteByte('}')
	}
	buf.WriteString(`,"events":`)
	if len(s.events) == 0 {
		buf.WriteString("[]")
	} else {
		buf.Write(s.events)
	}
	buf.WriteByte('}')
}

// writeJSONString writes s as a JSON string (adapters.AppendJSONString).
func writeJSONString(buf *bytes.Buffer, s string) {
	buf.Write(adapters.AppendJSONString(buf.AvailableBuffer(), s))
}
