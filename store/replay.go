package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/modelwire/modelwire/adapters"
)

// State is what a session looked like right after one entry of its
// timeline: the lanes of the response being received (rebuilt by the same
// adapters.Reducer the live path uses), the tool calls with their
// decisions and results, and the validations, as of that entry.
type State struct {
	Seq   int    // the entry; 0 is before the first
	Entry *Entry // nil for Seq 0
	// Turn and Attempt name the response shown: the entry's attempt, or
	// for a session-level entry the last attempt that had received
	// something by then (0 when none had).
	Turn, Attempt int
	Protocol      string
	Items         []adapters.Item
	Summary       adapters.Summary
	// Done: the response has its terminal.
	Done        bool
	Calls       []Call
	Validations []ValidationRecord
}

// RangeError is returned for an entry past the end of the timeline.
type RangeError struct {
	Seq, Len int
}

func (e *RangeError) Error() string {
	return fmt.Sprintf("entry %d is past the end of the timeline (%d entries)", e.Seq, e.Len)
}

// StateAt rebuilds the state right after entry n.
func (db *DB) StateAt(id string, n int) (*State, error) {
	c, err := db.NewCursor(id)
	if err != nil {
		return nil, err
	}
	return c.Seek(n)
}

// Cursor steps through a stored session. It keeps the reducer of the
// response it is in, so stepping forward costs one entry; stepping back,
// into another attempt, or far ahead restores the reducer from the
// attempt's last snapshot at or before the entry (snapshot.go) and replays
// from there, or from the attempt's start when there is none. Cost is
// therefore bounded by snapshotEvery entries (plus one step), not by the
// length of the response or of the session. A Cursor is not safe for
// concurrent use.
type Cursor struct {
	db  *DB
	id  string
	sid int64

	aid int64             // the attempt the reducer is in (0: none)
	red *adapters.Reducer // nil when aid is 0
	pos int               // the last entry fed to red

	// replayOnly ignores snapshots (tests compare with it); replayed
	// counts the entries the last Seek fed to the reducer.
	replayOnly bool
	replayed   int
}

// NewCursor opens a cursor on a session, before its first entry.
func (db *DB) NewCursor(id string) (*Cursor, error) {
	sid, err := db.sid(context.Background(), id)
	if err != nil {
		return nil, err
	}
	return &Cursor{db: db, id: id, sid: sid}, nil
}

// Len is the number of entries in the timeline now (it grows while the
// session is recorded).
func (c *Cursor) Len() (int, error) {
	var n int
	err := c.db.sql.QueryRow(`SELECT events FROM sessions WHERE sid = ?`, c.sid).Scan(&n)
	return n, err
}

// Seek moves to entry n (0: before the first) and returns the state there.
func (c *Cursor) Seek(n int) (*State, error) {
	ctx := context.Background()
	length, err := c.Len()
	if err != nil {
		return nil, err
	}
	if n < 0 || n > length {
		return nil, &RangeError{Seq: n, Len: length}
	}
	st := &State{Seq: n}
	c.replayed = 0
	var target *replayAttempt
	if n > 0 {
		entries, err := c.db.Events(c.id, n, 1)
		if err != nil {
			return nil, err
		}
		if len(entries) == 0 {
			return nil, &RangeError{Seq: n, Len: length}
		}
		st.Entry = &entries[0]
		if target, err = c.attemptFor(ctx, st.Entry); err != nil {
			return nil, err
		}
	}
	if target == nil {
		c.aid, c.red, c.pos = 0, nil, 0
	} else {
		if err := c.moveTo(ctx, target, n); err != nil {
			return nil, err
		}
		st.Turn, st.Attempt, st.Protocol = target.turn, target.attempt, target.protocol
		for _, it := range c.red.Items() {
			st.Items = append(st.Items, *it)
		}
		st.Summary = c.red.Summary()
		st.Done = c.red.Done()
	}
	if n > 0 {
		if st.Calls, err = c.db.calls(ctx, c.sid, n); err != nil {
			return nil, err
		}
		if st.Validations, err = c.db.validations(ctx, c.sid, n); err != nil {
			return nil, err
		}
	}
	return st, nil
}

// moveTo brings the reducer to entry n of attempt a: on from where it
// is when n is a little ahead in the same attempt, else from the last
// snapshot at or before n (or from where it is, when that is nearer), else
// from the attempt's start.
func (c *Cursor) moveTo(ctx context.Context, a *replayAttempt, n int) error {
	reuse := a.aid == c.aid && c.red != nil && n >= c.pos
	if reuse && n-c.pos <= snapshotEvery {
		return c.feedTo(ctx, n)
	}
	at := 0
	if !c.replayOnly && c.db.schema >= 2 {
		if !a.snapshots && !a.running && c.db.w != nil && n-a.firstSeq >= snapshotEvery {
			// Written before schema 2: add its snapshots now, once. If
			// that fails, replay without them.
			a.snapshots = c.db.backfill(ctx, c.sid, a) == nil
		}
		var err error
		if at, err = c.db.lastSnapshot(ctx, a.aid, n); err != nil {
			return err
		}
	}
	if at > 0 && !(reuse && at <= c.pos) {
		if red, _, err := c.db.restoreSnapshot(ctx, a.aid, at, a.protocol); err == nil {
			c.aid, c.red, c.pos = a.aid, red, at
			return c.feedTo(ctx, n)
		}
		// A snapshot that does not fold is ignored: replay as without.
	}
	if !reuse {
		c.aid, c.red, c.pos = a.aid, adapters.NewReducer(a.protocol), a.firstSeq-1
	}
	return c.feedTo(ctx, n)
}

// replayAttempt is what the cursor needs of an attempt.
type replayAttempt struct {
	aid                     int64
	turn, attempt, firstSeq int
	protocol                string
	snapshots               bool // its snapshots were kept as it was written
	running                 bool
}

// attemptFor finds the attempt whose response is shown at entry e: its
// own, or for a session-level entry the last one that had received
// something by then. nil when there is none.
func (c *Cursor) attemptFor(ctx context.Context, e *Entry) (*replayAttempt, error) {
	var a replayAttempt
	var row *sql.Row
	cols := `aid, turn, attempt, coalesce(first_seq, 0), protocol, state = 'running', `
	if c.db.schema >= 2 {
		cols += `snapshots`
	} else {
		cols += `0`
	}
	if e.Attempt != 0 {
		row = c.db.sql.QueryRowContext(ctx, `SELECT `+cols+` FROM attempts
			WHERE sid = ? AND turn = ? AND attempt = ?`, c.sid, e.Turn, e.Attempt)
	} else {
		row = c.db.sql.QueryRowContext(ctx, `SELECT `+cols+` FROM attempts
			WHERE sid = ? AND first_seq <= ? ORDER BY first_seq DESC LIMIT 1`, c.sid, e.Seq)
	}
	err := row.Scan(&a.aid, &a.turn, &a.attempt, &a.firstSeq, &a.protocol, &a.running, &a.snapshots)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &a, nil
}

// feedTo feeds the current attempt's entries after c.pos up to entry n.
func (c *Cursor) feedTo(ctx context.Context, n int) error {
	if n <= c.pos {
		return nil
	}
	c.replayed += n - c.pos
	it, err := c.db.iterSteps(ctx, c.sid, c.pos+1, c.aid, false)
	if err != nil {
		return err
	}
	it.canonical = true
	defer it.close()
	for s := it.next(); s != nil && s.Seq <= n; s = it.next() {
		if s.Seq+s.Entries()-1 <= c.pos {
			continue
		}
		evs := s.decoded
		first := max(c.pos+1-s.Seq, 0)
		last := min(n-s.Seq, len(evs)-1)
		feed(c.red, evs, first, last)
		c.pos = min(n, s.Seq+s.Entries()-1)
	}
	c.pos = n
	return it.close()
}

// feed applies the stored events evs[first..last] of one step to red.
//
// Stored events are the reducer's output, not its input: the reducer
// derives some events itself (tool.proposed or tool_args_invalid after an
// item.done, a *_done_mismatch diagnostic before it). Feeding them back
// as they are would derive them twice. The events' own seqs say which
// ones the reducer has already produced again: an event whose seq the
// reducer has passed is skipped. A mismatch diagnostic comes before its
// cause, so it is skipped when the item.done it belongs to follows.
func feed(red *adapters.Reducer, evs []adapters.Event, first, last int) {
	for i := first; i <= last; i++ {
		ev := evs[i]
		if ev.Seq > 0 && ev.Seq <= red.Seq() {
			continue
		}
		if ev.Type == adapters.EvDiagnostic && (ev.Kind == adapters.DiagTextDoneMismatch || ev.Kind == adapters.DiagArgsDoneMismatch) &&
			i+1 < len(evs) && evs[i+1].Type == adapters.EvItemDone {
			continue
		}
		ev.Seq = 0
		red.Apply([]adapters.Event{ev})
	}
}
