package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/modelwire/modelwire/adapters"
)

// The timeline.

// Entry is one entry of a session's timeline: a canonical event with the
// raw event it came from, a raw event that produced no canonical event,
// the end of an attempt's input (canonical events without a raw event), or
// a session-level entry (a decision, a tool result, a validation).
type Entry struct {
	Seq     int
	Turn    int
	Attempt int // 0 for a session-level entry
	// Offset is monotonic time from the attempt's start (from the
	// session's start for a session-level entry).
	Offset time.Duration
	// RawIndex numbers the attempt's raw events from 0; -1 without one.
	RawIndex int
	// Raw is the raw event; the entries derived from one raw event share it.
	Raw *adapters.RawEvent
	// Type is the canonical event's type, or EntryDecision, EntryToolResult,
	// EntryValidation; "" when there is no event.
	Type string
	// Event is the event as stored (JSON), nil when there is none.
	Event json.RawMessage
}

// Canonical decodes the entry's canonical event; ok is false for entries
// without one and for session-level entries.
func (e Entry) Canonical() (ev adapters.Event, ok bool, err error) {
	if e.Event == nil || e.Attempt == 0 {
		return ev, false, nil
	}
	if ev, ok := decodePlainEvent(e.Event); ok {
		return ev, true, nil
	}
	err = json.Unmarshal(e.Event, &ev)
	return ev, err == nil, err
}

// plainKeys are the string fields appendPlainEvents writes after seq and
// type, in its order.
var plainKeys = [...]string{`,"response_id":"`, `,"model":"`, `,"item_id":"`, `,"kind":"`, `,"call_id":"`, `,"name":"`,
	`,"delta":"`, `,"final":"`, `,"signature":"`, `,"status":"`, `,"stop_reason":"`, `,"provider_stop_reason":"`,
	`,"raw_type":"`, `,"detail":"`}

// decodePlainEvent reads an event appendPlainEvents wrote, whose strings
// hold no escape, without the JSON decoder: a replay decodes every entry
// it folds, nearly all of them deltas. ok is false for anything else,
// for json.Unmarshal.
func decodePlainEvent(b []byte) (ev adapters.Event, ok bool) {
	rest, ok := bytes.CutPrefix(b, []byte(`{"seq":`))
	if !ok {
		return ev, false
	}
	n := 0
	for ; n < len(rest) && n < 18 && rest[n] >= '0' && rest[n] <= '9'; n++ {
		ev.Seq = ev.Seq*10 + int(rest[n]-'0')
	}
	if n == 0 {
		return ev, false
	}
	str := func(key string) (string, bool) {
		r, ok := bytes.CutPrefix(rest, []byte(key))
		if !ok {
			return "", false
		}
		i := bytes.IndexByte(r, '"')
		if i < 0 || bytes.IndexByte(r[:i], '\\') >= 0 {
			return "", false
		}
		rest = r[i+1:]
		return string(r[:i]), true
	}
	rest = rest[n:]
	t, ok := str(`,"type":"`)
	if !ok {
		return ev, false
	}
	ev.Type = adapters.EventType(t)
	var f [len(plainKeys)]string
	for i, key := range plainKeys {
		if bytes.HasPrefix(rest, []byte(key)) {
			if f[i], ok = str(key); !ok {
				return ev, false
			}
			if i == 7 {
				final := f[i]
				ev.Final = &final
			}
		}
	}
	if string(rest) != "}" {
		return ev, false // another field, an escape, or not this form
	}
	ev.ResponseID, ev.Model, ev.ItemID, ev.Kind, ev.CallID, ev.Name, ev.Delta = f[0], f[1], f[2], f[3], f[4], f[5], f[6]
	ev.Signature, ev.Status, ev.StopReason, ev.ProviderStopReason = f[8], adapters.Status(f[9]), adapters.StopReason(f[10]), f[11]
	ev.RawType, ev.Detail = f[12], f[13]
	return ev, true
}

// Decision decodes a decision entry (Type EntryDecision).
func (e Entry) Decision() (Decision, bool) {
	d, ok := e.sessionEntry().(decisionEvent)
	return d.decision(), ok
}

// decision turns the entry back into the Decision it records.
func (d decisionEvent) decision() Decision {
	out := Decision{Turn: d.Turn, CallID: d.CallID, Name: d.Name, Decision: d.Decision, Arguments: d.Arguments, Reason: d.Reason, At: d.At}
	if len(d.OriginalArguments) > 0 {
		out.Arguments, out.Edited = d.OriginalArguments, d.Arguments
	}
	return out
}

// ToolResult decodes a tool result entry (Type EntryToolResult).
func (e Entry) ToolResult() (ToolResult, bool) {
	r, ok := e.sessionEntry().(resultEvent)
	return ToolResult{Turn: r.Turn, CallID: r.CallID, Name: r.Name, Content: r.Content, IsError: r.IsError, At: r.At}, ok
}

// Validation decodes a validation entry (Type EntryValidation): the turn
// it judged (0 for the session) and the layers' verdicts.
func (e Entry) Validation() (turn int, results []Validation, ok bool) {
	v, ok := e.sessionEntry().(validationEvent)
	return v.Turn, v.Results, ok
}

func (e Entry) sessionEntry() any {
	if e.Attempt != 0 || e.Event == nil {
		return nil
	}
	v, _ := parseSessionEntry(e.Event)
	return v
}

// StoredStep is a step as kept in a chunk.
type StoredStep struct {
	Seq      int                `json:"seq"`
	Turn     int                `json:"turn"`
	Attempt  int                `json:"attempt"`
	OffsetUS int64              `json:"offset_us"`
	RawIndex *int               `json:"raw_index,omitempty"`
	Raw      *adapters.RawEvent `json:"raw,omitempty"`
	Events   []json.RawMessage  `json:"events"`

	// decoded holds the events instead of Events when the iterator was
	// asked for canonical events (replay).
	decoded []adapters.Event
}

// Entries is how many timeline entries the step holds.
func (s *StoredStep) Entries() int { return max(1, len(s.Events), len(s.decoded)) }

// canonicalStep decodes a stored step's events in one pass, for replay.
type canonicalStep struct {
	Seq    int              `json:"seq"`
	Events []adapters.Event `json:"events"`
}

// entry returns the step's i-th entry (with its own copy of the raw event).
func (s *StoredStep) entry(i int) Entry {
	e := Entry{Seq: s.Seq + i, Turn: s.Turn, Attempt: s.Attempt, Offset: time.Duration(s.OffsetUS) * time.Microsecond, RawIndex: -1}
	if s.Raw != nil {
		raw := *s.Raw
		e.Raw = &raw
	}
	if s.RawIndex != nil {
		e.RawIndex = *s.RawIndex
	}
	if i < len(s.Events) {
		e.Event = s.Events[i]
		e.Type = eventType(e.Event)
	}
	return e
}

// eventType finds the "type" of a stored event without decoding it: the
// first "type" key (string values inside are escaped, so the unescaped
// key cannot occur in them).
func eventType(raw json.RawMessage) string {
	i := bytes.Index(raw, []byte(`"type":"`))
	if i < 0 {
		return ""
	}
	rest := raw[i+8:]
	j := bytes.IndexByte(rest, '"')
	if j < 0 {
		return ""
	}
	return string(rest[:j])
}

// splitArray returns the top-level elements of a JSON array that this
// package wrote (so it is trusted to be valid), without decoding them.
func splitArray(b []byte) [][]byte {
	var out [][]byte
	depth, start, inString := 0, -1, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if inString {
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
			if depth == 2 {
				start = i
			}
		case '}', ']':
			if depth == 2 && start >= 0 {
				out = append(out, b[start:i+1])
				start = -1
			}
			depth--
		}
	}
	return out
}

// elemSeq reads the seq of a stored step from its prefix {"seq":N.
func elemSeq(e []byte) int {
	const prefix = `{"seq":`
	if !bytes.HasPrefix(e, []byte(prefix)) {
		return -1
	}
	n := 0
	for _, c := range e[len(prefix):] {
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + int(c-'0')
	}
	return n
}

// stepIter walks a session's steps in seq order, from the chunk holding
// entry from, decoding only the steps at or after from. aid, when not 0,
// restricts it to one attempt's chunks; withRaw attaches the raw events.
type stepIter struct {
	rows      *sql.Rows
	from      int
	withRaw   bool
	canonical bool // decode events into StoredStep.decoded
	elems     [][]byte
	raws      []adapters.RawEvent
	// stepsBuf and rawsBuf hold the decompressed chunk.
	stepsBuf, rawsBuf []byte
	first             int // raw_index of raws[0]
	i                 int
	cur               StoredStep
	err               error
}

func (db *DB) iterSteps(ctx context.Context, sid int64, from int, aid int64, withRaw bool) (*stepIter, error) {
	from = max(from, 1)
	var start int
	err := db.sql.QueryRowContext(ctx, `SELECT coalesce(max(seq), 0) FROM chunks WHERE sid = ? AND seq <= ?`, sid, from).Scan(&start)
	if err != nil {
		return nil, err
	}
	cols := `steps, coalesce(first_raw, -1), NULL`
	if withRaw {
		cols = `steps, coalesce(first_raw, -1), raws`
	}
	cols += `, ` + db.chunkCodec()
	var rows *sql.Rows
	if aid != 0 {
		rows, err = db.sql.QueryContext(ctx, `SELECT `+cols+` FROM chunks WHERE aid = ? AND seq >= ? ORDER BY seq`, aid, start)
	} else {
		rows, err = db.sql.QueryContext(ctx, `SELECT `+cols+` FROM chunks WHERE sid = ? AND seq >= ? ORDER BY seq`, sid, start)
	}
	if err != nil {
		return nil, err
	}
	it := &stepIter{rows: rows, from: from, withRaw: withRaw}
	if b, ok := chunkBufs.Get().(*[2][]byte); ok {
		it.stepsBuf, it.rawsBuf = b[0], b[1]
	}
	return it, nil
}

// sessionSteps walks all the steps of the session id, raw events included.
func (db *DB) sessionSteps(id string) (*stepIter, error) {
	ctx := context.Background()
	sid, err := db.sid(ctx, id)
	if err != nil {
		return nil, err
	}
	return db.iterSteps(ctx, sid, 1, 0, true)
}

// decodeStep reads a step in the form writeStep writes, without the JSON
// decoder, which was most of what folding a replay's entries cost; false
// for any other form (the export's, with its raw event inline), for
// json.Unmarshal. Its events are one copy of the step's bytes, split, as
// the decoder would copy them, so no entry keeps a whole chunk alive.
func decodeStep(b []byte, s *StoredStep) bool {
	var v [5]int64
	rest := b
	for i, key := range []string{`{"seq":`, `,"turn":`, `,"attempt":`, `,"offset_us":`, `,"raw_index":`} {
		r, ok := bytes.CutPrefix(rest, []byte(key))
		if !ok {
			if i == 4 {
				v[i] = -1 // no raw event
				break
			}
			return false
		}
		neg := len(r) > 0 && r[0] == '-'
		n := 0
		if neg {
			n = 1
		}
		start := n
		for ; n < len(r) && r[n] >= '0' && r[n] <= '9' && n-start < 18; n++ {
			v[i] = v[i]*10 + int64(r[n]-'0')
		}
		if n == start {
			return false
		}
		if neg {
			v[i] = -v[i]
		}
		rest = r[n:]
	}
	arr, ok := bytes.CutPrefix(rest, []byte(`,"events":`))
	if !ok || len(arr) < 3 || arr[0] != '[' || !bytes.HasSuffix(arr, []byte("]}")) {
		return false
	}
	*s = StoredStep{Seq: int(v[0]), Turn: int(v[1]), Attempt: int(v[2]), OffsetUS: v[3]}
	if v[4] >= 0 {
		ri := int(v[4])
		s.RawIndex = &ri
	}
	if parts := splitArray(slices.Clone(arr[:len(arr)-1])); len(parts) > 0 {
		s.Events = make([]json.RawMessage, len(parts))
		for i, p := range parts {
			s.Events[i] = p
		}
	}
	return true
}

// next returns the next step, or nil at the end or on error (see err). The
// step is valid until the following call.
func (it *stepIter) next() *StoredStep {
	for {
		for it.i < len(it.elems) {
			e := it.elems[it.i]
			it.i++
			if seq := elemSeq(e); seq >= 0 && seq < it.from {
				// Skip whole steps before from; a step that spans from
				// is kept (its entries are filtered by the caller).
				if it.i < len(it.elems) && elemSeq(it.elems[it.i]) <= it.from {
					continue
				}
			}
			it.cur = StoredStep{}
			if it.canonical {
				var cs canonicalStep
				if it.err = json.Unmarshal(e, &cs); it.err != nil {
					return nil
				}
				it.cur.Seq, it.cur.decoded = cs.Seq, cs.Events
				return &it.cur
			}
			if !decodeStep(e, &it.cur) {
				if it.err = json.Unmarshal(e, &it.cur); it.err != nil {
					return nil
				}
			}
			if it.withRaw && it.cur.RawIndex != nil {
				k := *it.cur.RawIndex - it.first
				if k < 0 || k >= len(it.raws) {
					it.err = fmt.Errorf("store: entry %d: its raw event is missing", it.cur.Seq)
					return nil
				}
				it.cur.Raw = &it.raws[k]
			}
			return &it.cur
		}
		if it.err != nil || !it.rows.Next() {
			if it.err == nil {
				it.err = it.rows.Err()
			}
			return nil
		}
		var steps, raws []byte
		var codec int
		if it.err = it.rows.Scan(&steps, &it.first, &raws, &codec); it.err != nil {
			return nil
		}
		// Decompressed into the iterator's buffers, reused chunk after
		// chunk: what a step or raw event keeps is copied out of them.
		if steps, it.err = decodeChunkInto(it.stepsBuf, steps, codec); it.err != nil {
			return nil
		}
		if raws, it.err = decodeChunkInto(it.rawsBuf, raws, codec); it.err != nil {
			return nil
		}
		if codec != codecPlain {
			it.stepsBuf = steps
			if raws != nil {
				it.rawsBuf = raws
			}
		}
		it.elems, it.i = splitArray(steps), 0
		if it.withRaw && raws != nil {
			if it.raws, it.err = readRaws(raws); it.err != nil {
				return nil
			}
		}
	}
}

func (it *stepIter) close() error {
	it.rows.Close()
	if it.stepsBuf != nil || it.rawsBuf != nil {
		chunkBufs.Put(&[2][]byte{it.stepsBuf, it.rawsBuf})
		it.stepsBuf, it.rawsBuf, it.elems = nil, nil, nil
	}
	return it.err
}

// chunkBufs are the buffers iterators decompress chunks into (*[2][]byte:
// steps, raws), passed from one to the next: a jump reads a chunk or two
// with each of several iterators, and a new buffer each time was a
// sixth of what it allocated.
var chunkBufs sync.Pool

// Events returns up to limit timeline entries of a session starting at
// entry from (1-based), reading only the chunks that hold them.
func (db *DB) Events(id string, from, limit int) ([]Entry, error) {
	ctx := context.Background()
	sid, err := db.sid(ctx, id)
	if err != nil {
		return nil, err
	}
	from = max(from, 1)
	it, err := db.iterSteps(ctx, sid, from, 0, true)
	if err != nil {
		return nil, err
	}
	var out []Entry
	for s := it.next(); s != nil && (limit <= 0 || len(out) < limit); s = it.next() {
		for i := 0; i < s.Entries() && (limit <= 0 || len(out) < limit); i++ {
			if s.Seq+i >= from {
				out = append(out, s.entry(i))
			}
		}
	}
	return out, it.close()
}

// EachEntry calls fn for every entry of a session from entry from to entry
// to (0: the end), reading a chunk at a time. fn returning an error stops
// it.
func (db *DB) EachEntry(id string, from, to int, fn func(Entry) error) error {
	ctx := context.Background()
	sid, err := db.sid(ctx, id)
	if err != nil {
		return err
	}
	from = max(from, 1)
	it, err := db.iterSteps(ctx, sid, from, 0, true)
	if err != nil {
		return err
	}
	defer it.close()
	for s := it.next(); s != nil; s = it.next() {
		for i := 0; i < s.Entries(); i++ {
			seq := s.Seq + i
			if to > 0 && seq > to {
				return it.close()
			}
			if seq < from {
				continue
			}
			if err := fn(s.entry(i)); err != nil {
				return err
			}
		}
	}
	return it.close()
}
