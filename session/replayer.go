package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/registry"
	"github.com/modelwire/modelwire/store"
)

// Replayer steps through a stored session: the one place that says what
// entry N of a timeline is, which turn it belongs to and what the session
// looked like right after it. The workbench and `modelwire replay` both
// drive it.
//
// Positions count timeline entries: position p is the state right after
// entry p (0: before the first). Entry p belongs to the turn of its own
// record; a session-level verdict recorded without a turn (the final
// validation) belongs to the turn before it. Turn t starts at the first
// entry recorded with turn t or later. The state at p shows p's turn
// (State.Current), as replay --json and the header name it: what opens a
// turn comes with the turn's first entry (timelineBuilder).
//
// Neither time to open nor memory grows with the timeline: opening reads
// the session's records, not its entries (index); the state is folded
// from the entries as they are read, a chunk at a time. The scrubber's
// marks are found by a separate pass (Marks). Stepping forward reads only
// the new entries. Folding keeps
// checkpoints (a copy of the fold, cheap: State.Clone shares the turns
// that do not change) every checkpointEvery entries, at most
// maxCheckpoints of them (beyond, the spacing doubles), and finer ones
// within the interval of the last seek back; stepping back, or a jump,
// folds from the last checkpoint at or before the target. The state keeps
// every turn's lanes and event log, as live, up to detailedUpTo entries;
// beyond, only the current turn's, and a jump folds the turns before its
// own from the records (skeleton, settle).
//
// The store's Cursor cannot serve this: its snapshots hold the reducer of
// one response (items, usage, terminal), while the workbench's State is
// the fold of every update — each turn's request, attempts, lanes with
// their timings and delta counts, event log, proposals, decisions,
// results and verdicts — none of which the reducer keeps.
type Replayer struct {
	db   *store.DB
	sess *store.Session
	sc   *Scenario

	stream  bool
	history adapters.HistoryMode
	fmap    []adapters.FieldMapping
	degr    []string
	attempt map[[2]int]*store.Attempt // by (turn, attempt)
	cursor  *store.Cursor             // the store's view of the response at an entry, opened when asked for

	n          int
	turnStarts []int       // turnStarts[t-1] is turn t's first entry
	session    []sessEntry // the session-level entries, in order
	byFirst    []int       // the attempts with entries (indexes), by their first entry
	// turns are what the records say of each turn's response (records),
	// for a long session's earlier turns (settle).
	turns []turnRecord
	marks struct {
		sync.Mutex
		done              bool
		proposals, errors []int
		err               error
	}

	pos int
	b   *timelineBuilder // nil: fold again from the start

	// Checkpoints, by position: spaced about every entries apart; fine
	// ones, fineParts of them, in [fineFrom, fineTo): the stretch the
	// last step back had to fold, so that the next steps back fold little.
	cps, fine        []*timelineBuilder
	every            int
	fineFrom, fineTo int
	skipped          int // skeletons folded (tests)

	lastURL [2]string // the URL urlPath parsed last, and its path
}

// Checkpoint spacing. A fold costs ~10-15 µs an entry (reading and
// decoding it), so an interval of 512 is ~5-8 ms; a checkpoint of a
// session of T turns costs ~20·T bytes plus the copy of the turn it is in.
var (
	checkpointEvery = 512
	maxCheckpoints  = 1024
	checkpointBytes = 8 << 20
	fineParts       = 16
)

// NewReplayer opens a replayer on a stored session, before its first
// entry. sc, when known, gives the source map and the proposals' schema
// checks.
func NewReplayer(db *store.DB, id string, sc *Scenario) (*Replayer, error) {
	s, err := db.GetSession(id)
	if err != nil {
		return nil, err
	}
	return ReplayerOf(db, s, sc)
}

// ReplayerOf is NewReplayer for a session already read (db.GetSession),
// which it keeps and sorts: reading a long session's records is most of
// what opening it costs.
func ReplayerOf(db *store.DB, s *store.Session, sc *Scenario) (*Replayer, error) {
	r := &Replayer{db: db, sess: s, sc: sc, history: adapters.HistoryFull, attempt: map[[2]int]*store.Attempt{},
		every: checkpointEvery}
	slices.SortStableFunc(s.Attempts, func(a, b store.Attempt) int {
		if a.Turn != b.Turn {
			return a.Turn - b.Turn
		}
		return a.Attempt - b.Attempt
	})
	for i, a := range s.Attempts {
		r.attempt[[2]int{a.Turn, a.Attempt}] = &s.Attempts[i]
	}
	if len(s.Attempts) > 0 {
		r.stream = s.Attempts[0].Stream
	}
	var params struct {
		History adapters.HistoryMode `json:"history"`
	}
	if json.Unmarshal(s.Manifest.Parameters, &params) == nil && params.History != "" {
		r.history = params.History
	}
	if sc != nil {
		if p, err := registry.Lookup(s.Protocol); err == nil {
			if w, err := p.Encode(sc.Request(r.stream, r.history), s.Provider); err == nil {
				r.fmap, r.degr = w.Map, w.Degradations
			}
		}
	}
	if err := r.index(); err != nil {
		return nil, err
	}
	return r, r.Seek(0)
}

// index counts the entries and finds where turns start from what the
// store keeps beside the timeline — its length, the attempts' first
// entries, the calls' and verdicts' records (sessionRecords) — without
// reading the timeline: opening costs the same at any length. An
// attempt's entries all carry its turn, so its first entry stands for
// them.
func (r *Replayer) index() error {
	r.n = r.sess.Events
	r.session = r.sessionRecords()
	type first struct{ seq, turn int }
	var firsts []first
	for i, a := range r.sess.Attempts {
		if a.FirstSeq > 0 {
			firsts = append(firsts, first{a.FirstSeq, a.Turn})
			r.byFirst = append(r.byFirst, i)
		}
	}
	slices.SortStableFunc(r.byFirst, func(x, y int) int { return r.sess.Attempts[x].FirstSeq - r.sess.Attempts[y].FirstSeq })
	for _, e := range r.session {
		firsts = append(firsts, first{e.seq, e.turn})
	}
	slices.SortFunc(firsts, func(a, b first) int { return a.seq - b.seq })
	// turnStarts is indexed by turn: a turn number beyond what the session
	// holds (a database written by something else; imports refuse it)
	// would size it, so it is refused here instead.
	limit := len(r.sess.Attempts) + len(r.session) + 1
	for _, f := range firsts {
		if f.turn > limit {
			return fmt.Errorf("session %s names turn %d but holds %d attempts: not a session modelwire wrote", r.sess.ID, f.turn, len(r.sess.Attempts))
		}
	}
	for _, f := range firsts {
		for len(r.turnStarts) < f.turn {
			r.turnStarts = append(r.turnStarts, f.seq)
		}
	}
	r.records()
	return nil
}

// Marks are the entries that proposed a tool call and those that went
// wrong (a diagnostic, a failed terminal), for the scrubber. The store
// keeps no index of them, so the first call reads the chunks that
// contain one (store.EachEntryContaining) — a pass over the session's
// bytes in SQLite, decoding only those chunks; later calls return what it
// found. It may run while a Seek runs in another goroutine.
func (r *Replayer) Marks() (proposals, errs []int, err error) {
	r.marks.Lock()
	defer r.marks.Unlock()
	if !r.marks.done {
		r.marks.err = r.db.EachEntryContaining(r.sess.ID,
			[]string{`"type":"` + string(adapters.EvToolProposed) + `"`, `"type":"` + string(adapters.EvDiagnostic) + `"`,
				`"status":"` + string(adapters.StatusFailed) + `"`},
			func(e store.Entry) error {
				switch adapters.EventType(e.Type) {
				case adapters.EvToolProposed:
					r.marks.proposals = append(r.marks.proposals, e.Seq)
				case adapters.EvDiagnostic:
					r.marks.errors = append(r.marks.errors, e.Seq)
				case adapters.EvTerminal:
					if ev, ok, _ := e.Canonical(); ok && ev.Status == adapters.StatusFailed {
						r.marks.errors = append(r.marks.errors, e.Seq)
					}
				}
				return nil
			})
		r.marks.done = true
	}
	return slices.Clone(r.marks.proposals), slices.Clone(r.marks.errors), r.marks.err
}

// Info is the session's metadata.
func (r *Replayer) Info() store.SessionInfo { return r.sess.SessionInfo }

// Scenario is the scenario the session ran, nil when unknown.
func (r *Replayer) Scenario() *Scenario { return r.sc }

// Stream reports whether the session's attempts streamed.
func (r *Replayer) Stream() bool { return r.stream }

// History is the history mode the session ran with.
func (r *Replayer) History() adapters.HistoryMode { return r.history }

// Len is the number of entries in the timeline.
func (r *Replayer) Len() int { return r.n }

// Pos is the current position.
func (r *Replayer) Pos() int { return r.pos }

// Turns is the number of turns that have entries.
func (r *Replayer) Turns() int { return len(r.turnStarts) }

// TurnStarts are the turns' first entries, in order.
func (r *Replayer) TurnStarts() []int { return slices.Clone(r.turnStarts) }

// TurnOf is the turn entry p belongs to (0 for position 0, before any).
func (r *Replayer) TurnOf(p int) int {
	t, _ := slices.BinarySearch(r.turnStarts, p+1)
	return t
}

// NextTurn is the first entry of the turn after the current one, or the
// end.
func (r *Replayer) NextTurn() int { return r.NextTurnFrom(r.pos) }

// PrevTurn is the first entry of the current turn, or of the one before
// when already there; 0 before the first turn.
func (r *Replayer) PrevTurn() int { return r.PrevTurnFrom(r.pos) }

// NextTurnFrom is NextTurn from position p. It reads only what opening
// read, so it may run while a Seek runs in another goroutine.
func (r *Replayer) NextTurnFrom(p int) int {
	if i, _ := slices.BinarySearch(r.turnStarts, p+1); i < len(r.turnStarts) {
		return r.turnStarts[i]
	}
	return r.n
}

// PrevTurnFrom is PrevTurn from position p (as NextTurnFrom, safe beside
// a Seek).
func (r *Replayer) PrevTurnFrom(p int) int {
	i, _ := slices.BinarySearch(r.turnStarts, p)
	if i == 0 {
		return 0
	}
	return r.turnStarts[i-1]
}

// State is the session right after the current entry. It is the
// replayer's own: it changes on the next Seek (State.Clone makes a copy
// that does not).
func (r *Replayer) State() *State {
	if r.b == nil {
		return NewState() // the last Seek failed
	}
	return r.b.st
}

// Seek moves to position p (clamped to 0…Len).
func (r *Replayer) Seek(p int) error {
	p = max(0, min(p, r.n))
	back := r.b != nil && p < r.pos
	cp := r.checkpoint(p)
	if back && (p < r.fineFrom || p >= r.fineTo) {
		// A step back outside the stretch of fine checkpoints: keep fine
		// ones on the stretch this fold covers.
		r.fine, r.fineFrom, r.fineTo = nil, 0, p
		if cp = r.checkpoint(p); cp != nil {
			r.fineFrom = cp.pos
		}
	}
	if r.b == nil || back || r.b.partial || (cp != nil && cp.pos > r.b.pos) || (r.b.pos == p && r.b.opened()) {
		if cp != nil {
			r.b = cp.clone()
		} else {
			r.b = r.newBuilder()
		}
	}
	if t := r.baseTurn(p); t > 0 && r.turnStarts[t-1]-1-r.b.pos > r.every {
		// A long session's turns before p's are folded from the records
		// rather than from their entries (skeleton): a jump reads only
		// the entries of the turn it lands in.
		switch b, err := r.skeleton(t); {
		case err == nil:
			r.b = b
			r.keep(b, true)
		case !errors.Is(err, errNoSkeleton):
			r.b = nil
			return err
		}
	}
	if err := r.b.advance(p); err != nil {
		r.b = nil
		return err
	}
	r.pos = p
	return nil
}

// long reports whether the session is long enough that a replay keeps
// only the shown turn's detail (detailedUpTo).
func (r *Replayer) long() bool { return r.n > detailedUpTo }

// baseTurn is, in a long session, the last turn whose first entry is at
// or before p; 0 when there is none or the session is not long. (Its
// skeleton is opened: at the position before that entry the state still
// shows the turn before, in detail.)
func (r *Replayer) baseTurn(p int) int {
	if !r.long() {
		return 0
	}
	t, _ := slices.BinarySearch(r.turnStarts, p+1)
	return t
}

// turnRecord is what the attempts' records say of a turn's response: the
// last terminal status, usage and timings among its attempts.
type turnRecord struct {
	terminal *adapters.Event
	usage    *adapters.Usage
	timings  *Timings
}

// records collects the turns' records from the attempts (in turn and
// attempt order: the last one wins, as in the fold).
func (r *Replayer) records() {
	atts := r.sess.Attempts
	if len(atts) > 0 {
		// A capacity, not a length: the turn is a stored number, and the
		// attempts are what the session holds.
		r.turns = make([]turnRecord, 0, min(atts[len(atts)-1].Turn, len(atts)))
	}
	// The records are read, never changed: turns that ended alike share
	// their terminal event, and the timings are one slice.
	terminals := map[[2]string]*adapters.Event{}
	timings := make([]Timings, len(atts))
	for i, a := range atts {
		if a.Turn < 1 {
			continue
		}
		for len(r.turns) < a.Turn {
			r.turns = append(r.turns, turnRecord{})
		}
		tr := &r.turns[a.Turn-1]
		if a.TerminalStatus != "" {
			k := [2]string{string(a.TerminalStatus), string(a.StopReason)}
			if terminals[k] == nil {
				terminals[k] = &adapters.Event{Type: adapters.EvTerminal, Status: a.TerminalStatus, StopReason: a.StopReason}
			}
			tr.terminal = terminals[k]
		}
		if a.Usage != nil {
			tr.usage = a.Usage
		}
		if a.LastSeq > 0 {
			timings[i] = *timingsOf(a.Timings)
			tr.timings = &timings[i]
		}
	}
}

// turnAt is turn t's record so far (zero when none).
func (r *Replayer) turnAt(t int) turnRecord {
	if t >= 1 && t <= len(r.turns) {
		return r.turns[t-1]
	}
	return turnRecord{}
}

// skeleton folds a long session up to turn t's start — position
// turnStarts[t-1]-1, with the updates before turn t's first entry, those
// that open turn t included: a state for the positions from turn t's
// first entry on (opened) — from
// the records alone: the attempts (their assembly, attempt and response
// updates) and the session-level entries, never the responses' events.
// Only what a long session keeps of an earlier turn comes out of those
// events, and settle takes it from the records in every fold, so the
// state equals the fold from the start. Two entries are read: those
// around the start, for their times.
func (r *Replayer) skeleton(t int) (*timelineBuilder, error) {
	start := r.turnStarts[t-1]
	r.skipped++
	// From the last checkpoint at a turn start before, if any: the turns
	// before it are shared with it rather than made again (a skeleton's
	// checkpoint would otherwise hold a copy of every turn).
	b, from := r.newBuilder(), 1
	if cp := r.turnCheckpoint(start - 1); cp != nil {
		b, from = cp.clone(), cp.pos+1
		b.answered = false
	}
	si, _ := slices.BinarySearchFunc(r.session, from, func(e sessEntry, seq int) int { return e.seq - seq })
	ai, _ := slices.BinarySearchFunc(r.byFirst, from, func(i, seq int) int { return r.sess.Attempts[i].FirstSeq - seq })
	for _, i := range r.byFirst[ai:] {
		a := &r.sess.Attempts[i]
		if a.FirstSeq >= start {
			break
		}
		for ; si < len(r.session) && r.session[si].seq < a.FirstSeq; si++ {
			b.skipSession(r.session[si])
		}
		b.before(store.Entry{Seq: a.FirstSeq, Turn: a.Turn, Attempt: a.Attempt}, true)
		if tr := r.turnAt(a.Turn); tr.terminal != nil {
			b.terminal = setTurn(b.terminal, a.Turn, tr.terminal)
		}
		b.pos = max(b.pos, a.LastSeq)
	}
	for ; si < len(r.session) && r.session[si].seq < start; si++ {
		b.skipSession(r.session[si])
	}
	if b.answered {
		return nil, errNoSkeleton
	}
	es, err := r.db.Events(r.sess.ID, max(1, start-1), 2)
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(es, func(e store.Entry) bool { return e.Seq == start })
	if i < 0 {
		return nil, fmt.Errorf("entry %d: not in the timeline", start)
	}
	e := es[i]
	if i > 0 {
		b.at = r.at(es[i-1])
	}
	b.pos = start - 1
	if _, err := b.before(e, true); err != nil {
		return nil, fmt.Errorf("entry %d: %w", e.Seq, err)
	}
	b.prelude, b.next, b.hasNext = start, r.at(e), true
	return b, nil
}

// turnCheckpoint is the last checkpoint at or before p that is at a turn
// start — the position just before a turn's first entry: a skeleton's,
// or one keep took there — nil if none.
func (r *Replayer) turnCheckpoint(p int) *timelineBuilder {
	var best *timelineBuilder
	for _, l := range [][]*timelineBuilder{r.cps, r.fine} {
		i, _ := slices.BinarySearchFunc(l, p+1, byPos)
		for i--; i >= 0; i-- {
			if c := l[i]; !c.partial {
				if _, ok := slices.BinarySearch(r.turnStarts, c.pos+1); ok {
					if best == nil || c.pos > best.pos {
						best = c
					}
					break
				}
			}
		}
	}
	return best
}

// skipSession folds a session-level entry in a skeleton, as advance does.
func (b *timelineBuilder) skipSession(se sessEntry) {
	b.beforeSession(se, true)
	b.prelude = se.seq
	b.applySession(se)
	b.pos = se.seq
}

// errNoSkeleton: the turns before cannot be folded from the records — a
// verdict among them took the answer shown then, which only the
// entries hold (finalAnswer) — so they are folded from their entries.
var errNoSkeleton = errors.New("no skeleton")

// settle makes a long session's turns before the shown one what the
// records say they were — their lanes and event log dropped, their
// terminal, usage and timings from the attempts' records — whether they
// were folded from their entries or skipped (skeleton), so that the two
// agree; the counts of updates and events restart with the shown turn.
func (b *timelineBuilder) settle() {
	st := b.st
	for i := b.settled; i < len(st.Turns)-1; i++ {
		t := st.Turn(i + 1)
		tr := b.r.turnAt(i + 1)
		t.Lanes, t.Log, t.byItem, t.lastClosed = nil, nil, nil, nil
		t.Terminal, t.Usage, t.Timings = tr.terminal, tr.usage, tr.timings
		if t.Summary != nil {
			sum := *t.Summary
			sum.Terminal, sum.StopReason, sum.ProviderStopReason = adapters.StatusUnknown, adapters.StopUnknown, ""
			if tr.terminal != nil {
				sum.Terminal, sum.StopReason = tr.terminal.Status, tr.terminal.StopReason
			}
			t.Summary = &sum
		}
	}
	b.settled = max(b.settled, len(st.Turns)-1)
	st.Applied, st.Events = 0, 0
}

// byPos orders checkpoints by position.
func byPos(c *timelineBuilder, p int) int { return c.pos - p }

// checkpoint is the last checkpoint at or before p that p's state may be
// folded from (one at p that opened the next turn may not), nil if none.
func (r *Replayer) checkpoint(p int) *timelineBuilder {
	var best *timelineBuilder
	for _, l := range [][]*timelineBuilder{r.cps, r.fine} {
		i, _ := slices.BinarySearchFunc(l, p+1, byPos)
		if i > 0 && l[i-1].pos == p && l[i-1].opened() {
			i--
		}
		if i > 0 && (best == nil || l[i-1].pos > best.pos) {
			best = l[i-1]
		}
	}
	return best
}

// opened reports whether b has folded what opens the turn of the entry
// after pos (its assembly: b is at a turn start, its prelude folded),
// which the state at pos does not show: b serves the positions after pos
// only. Position 0 shows the first turn's request.
func (b *timelineBuilder) opened() bool {
	if b.pos == 0 || b.partial || b.prelude != b.pos+1 {
		return false
	}
	_, start := slices.BinarySearch(b.r.turnStarts, b.prelude)
	return start
}

// keep takes a checkpoint of b, folded to the end of an entry group, when
// the last one before it is far enough. A checkpoint holds the event log
// of the turn it is in (a long session's state keeps no other), so they
// are taken where a turn starts (turnStart: b has folded the turn's
// assembly), half an interval apart; inside a turn only when the next
// turn's start is an interval away or more.
func (r *Replayer) keep(b *timelineBuilder, turnStart bool) {
	add := func(l []*timelineBuilder, every int) ([]*timelineBuilder, bool) {
		i, _ := slices.BinarySearchFunc(l, b.pos+1, byPos)
		if i < len(l) && l[i].pos-b.pos < every/2 {
			return l, false // the one after is near
		}
		if !turnStart && r.NextTurnFrom(b.pos)-b.pos < every {
			return l, false
		} else if turnStart {
			every /= 2
		}
		if (i > 0 && b.pos-l[i-1].pos < every) || (i == 0 && b.pos < every) {
			return l, false
		}
		return slices.Insert(l, i, b.clone()), true
	}
	var added bool
	if r.cps, added = add(r.cps, r.every); added && len(r.cps) > r.most() {
		r.thin()
	}
	if !added && b.pos >= r.fineFrom && b.pos < r.fineTo {
		r.fine, _ = add(r.fine, max(1, (r.fineTo-r.fineFrom)/fineParts))
	}
}

// most is how many checkpoints to keep: each holds a pointer or two per
// turn, so a session of many turns keeps fewer (checkpointBytes in all,
// roughly), at least 16 and at most maxCheckpoints.
func (r *Replayer) most() int {
	return min(maxCheckpoints, max(16, checkpointBytes/(24*len(r.turnStarts)+1)))
}

// thin doubles the spacing until the checkpoints are few enough, keeping
// those spaced by half the new interval (turn starts are kept at half).
func (r *Replayer) thin() {
	for len(r.cps) > r.most() {
		r.every *= 2
		kept := r.cps[:0]
		last := 0
		for _, c := range r.cps {
			if c.pos-last >= r.every/2 {
				kept = append(kept, c)
				last = c.pos
			}
		}
		clear(r.cps[len(kept):])
		r.cps = kept
	}
	r.fine, r.fineFrom, r.fineTo = nil, 0, 0
}

// Gap is the recorded time between the current entry and the next (0 at
// either end). It reads nothing: the fold saw both entries.
func (r *Replayer) Gap() time.Duration {
	if r.b == nil || r.pos <= 0 || !r.b.hasNext {
		return 0
	}
	return max(0, r.b.next-r.b.at)
}

// at is an entry's time from the session's start.
func (r *Replayer) at(e store.Entry) time.Duration {
	if a := r.attempt[[2]int{e.Turn, e.Attempt}]; a != nil {
		return a.Start + e.Offset
	}
	return e.Offset
}

// StoreState is the store's view of the session right after entry n: the
// response being received as the reducer rebuilds it from the stored
// events, with the calls and verdicts so far (store.Cursor).
func (r *Replayer) StoreState(n int) (*store.State, error) {
	if r.cursor == nil {
		c, err := r.db.NewCursor(r.sess.ID)
		if err != nil {
			return nil, err
		}
		r.cursor = c
	}
	return r.cursor.Seek(n)
}

// Each calls fn for entries from to to (0: the end), in order.
func (r *Replayer) Each(from, to int, fn func(store.Entry) error) error {
	if to > r.n {
		return &store.RangeError{Seq: to, Len: r.n}
	}
	return r.db.EachEntry(r.sess.ID, from, to, fn)
}

// PerTurnVerdicts reports whether the session records a verdict per turn
// (a proxied conversation judges each exchange) rather than one for the
// session with a verdict per regenerated answer (a run).
func (r *Replayer) PerTurnVerdicts() bool { return r.sess.Source == store.SourceProxy }

// timelineBuilder folds a stored timeline into a State, producing the
// updates a live session would have produced. Updates that cover no entry
// (an assembly, an attempt, a turn's response) are folded as soon as the
// entries before them are — the state at position p includes those that
// come before entry p+1 — except those that open a turn (its
// regeneration, its assembly and its attempts), which come with the
// turn's first entry: at a turn's last entry the panels still show that
// turn, its result just arrived, as replay --json and the header count
// it. Before the first entry (position 0) the first turn's request shows.
type timelineBuilder struct {
	r  *Replayer
	st *State

	emitted int // attempts emitted
	// By turn (index turn-1): assembled, responded, the terminal event.
	assembled, responded []bool
	terminal             []*adapters.Event

	pos int // entries folded
	// prelude is the entry whose prelude (updates before it) is folded
	// whole; of the entry after pos, the part that opens no turn may be
	// folded too (before), whatever prelude says.
	prelude int
	// regenerate are the regenerations a verdict asked for, waiting for
	// their turn to open.
	regenerate []Update
	// at is the time of entry pos from the session's start, next that
	// of the entry after it (hasNext: there is one), seen while folding
	// so that playback needs no read of its own.
	at, next time.Duration
	hasNext  bool
	partial  bool // pos is inside an entry group: the builder cannot go on
	ended    bool
	settled  int  // turns settle has made final (a long session's)
	answered bool // a verdict took the shown answer (finalAnswer)
}

func (r *Replayer) newBuilder() *timelineBuilder {
	b := &timelineBuilder{r: r, st: NewState()}
	b.emit(Update{Kind: UpStarted})
	return b
}

// clone copies the fold: a checkpoint, or a fold restored from one.
func (b *timelineBuilder) clone() *timelineBuilder {
	c := *b
	c.st = b.st.Clone()
	c.assembled, c.responded, c.terminal = slices.Clone(b.assembled), slices.Clone(b.responded), slices.Clone(b.terminal)
	c.regenerate = slices.Clone(b.regenerate)
	return &c
}

// turnFlag reports flags[turn-1].
func turnFlag(flags []bool, turn int) bool { return turn >= 1 && turn <= len(flags) && flags[turn-1] }

// setTurn sets s[turn-1], growing s.
func setTurn[T any](s []T, turn int, v T) []T {
	for len(s) < turn {
		var zero T
		s = append(s, zero)
	}
	s[turn-1] = v
	return s
}

// proposed reports whether the state shows the proposal of call id in turn.
func (b *timelineBuilder) proposed(turn int, id string) bool {
	return turn >= 1 && turn <= len(b.st.Turns) && b.st.Turns[turn-1].proposal(id) != nil
}

// errStop ends an EachEntry walk early.
var errStop = errors.New("stop")

// advance folds the entries after b.pos up to p.
func (b *timelineBuilder) advance(p int) error {
	if b.ended || (b.pos == p && b.prelude == p+1) {
		return nil
	}
	var group []store.Entry
	err := b.r.db.EachEntry(b.r.sess.ID, b.pos+1, 0, func(e store.Entry) error {
		if len(group) > 0 && sameStep(group[0], e) {
			group = append(group, e)
			return nil
		}
		if len(group) > 0 {
			if err := b.fold(group, p); err != nil {
				return err
			}
			group = group[:0]
			if b.partial {
				return errStop
			}
			b.r.keep(b, false)
		}
		if b.prelude != e.Seq {
			// What opens a turn waits until e itself is folded, unless
			// nothing is yet: position 0 shows the first request.
			done, err := b.before(e, b.pos < p || b.pos == 0)
			if err != nil {
				return fmt.Errorf("entry %d: %w", e.Seq, err)
			}
			if done {
				b.prelude = e.Seq
			}
			if b.pos == e.Seq-1 && !b.partial {
				b.next, b.hasNext = b.r.at(e), true
				if _, start := slices.BinarySearch(b.r.turnStarts, e.Seq); start && done {
					b.r.keep(b, true) // opened: a long session's turns before are settled
				}
			}
		}
		if b.pos >= p {
			b.next, b.hasNext = b.r.at(e), true
			return errStop
		}
		group = append(group, e)
		return nil
	})
	if errors.Is(err, errStop) {
		return nil
	}
	if err != nil {
		return err
	}
	if len(group) > 0 {
		if err := b.fold(group, p); err != nil {
			return err
		}
	}
	if !b.partial && b.pos >= b.r.n {
		b.hasNext = false
		b.end()
	}
	return nil
}

// sameStep reports whether e continues the step that first opened: the
// entries of one raw event (or of the end of an attempt's input).
func sameStep(first, e store.Entry) bool {
	return first.Attempt != 0 && e.Attempt == first.Attempt && e.Turn == first.Turn && e.RawIndex == first.RawIndex &&
		(first.RawIndex >= 0 || e.Raw == nil)
}

// end folds what follows the last entry: the attempts and responses not
// yet shown, and the session's status.
func (b *timelineBuilder) end() {
	b.ended = true
	b.flushAttempts(func(store.Attempt) bool { return true }, true)
	b.openRegenerations(-1)
	b.respond(len(b.st.Turns) + 1)
	b.emit(Update{Kind: UpFinished, Status: b.r.sess.Status})
}

func (b *timelineBuilder) emit(u Update) {
	u.SessionID = b.r.sess.ID
	if u.Kind == UpStep && u.Turn <= b.settled {
		// A step of a settled turn (attempts that interleave): settle
		// took what the turn keeps from the records, and a skeleton
		// never sees it, so it is not folded either way.
		return
	}
	b.st.Apply(u)
	if u.Kind == UpAssembled && b.r.long() {
		// A long session keeps the lanes and the event log of the turn
		// being shown only, so the replay's memory stays bounded by a
		// turn, not the session; earlier turns keep their request,
		// attempts, summary, usage and proposals (settle).
		b.settle()
	}
}

// detailedUpTo is the length of timeline up to which a replay keeps every
// turn's lanes and event log, as the live session does (a variable for
// tests).
var detailedUpTo = 100_000

// before folds the updates that come before entry e and cover no entry;
// unless open, it stops before the first that opens a turn (a turn's
// response, which closes the turn before, still comes), and reports
// whether it folded them all. It may be called again: what it folded is
// not folded twice.
func (b *timelineBuilder) before(e store.Entry, open bool) (bool, error) {
	if e.Attempt != 0 {
		return !b.flushAttempts(func(a store.Attempt) bool {
			return a.Turn < e.Turn || (a.Turn == e.Turn && a.Attempt <= e.Attempt)
		}, open), nil
	}
	se, err := decodeSession(e)
	if err != nil {
		return false, err
	}
	return b.beforeSession(se, open), nil
}

// beforeSession is before for a session-level entry.
func (b *timelineBuilder) beforeSession(se sessEntry, open bool) bool {
	switch se.kind {
	case store.EntryDecision:
		d := se.decision
		if b.flushAttempts(func(a store.Attempt) bool { return a.Turn <= d.Turn }, open) {
			return false
		}
		b.respond(d.Turn + 1)
		if !b.proposed(d.Turn, d.CallID) {
			p := b.proposal(d)
			b.emit(Update{Kind: UpProposal, Turn: d.Turn, Proposal: &p})
		}
	case store.EntryValidation:
		// A verdict on a turn follows that turn's attempts, not those
		// after it (a regeneration's); the session's, all of them.
		upto := func(a store.Attempt) bool { return se.turn <= 0 || a.Turn <= se.turn }
		if b.flushAttempts(upto, open) {
			return false
		}
		b.respond(len(b.st.Turns) + 1)
	}
	return true
}

// sessEntry is a session-level entry decoded: from the timeline
// (decodeSession) or rebuilt from the calls' and verdicts' records
// (Replayer.sessionRecords).
type sessEntry struct {
	seq, turn int
	kind      string // store.EntryDecision, EntryToolResult, EntryValidation, or one this version does not know
	decision  store.Decision
	result    store.ToolResult
	vturn     int // the turn a validation judged (0: the session)
	verdicts  []store.Validation
}

// decodeSession decodes a session-level entry.
func decodeSession(e store.Entry) (sessEntry, error) {
	se := sessEntry{seq: e.Seq, turn: e.Turn, kind: e.Type}
	var ok bool
	switch e.Type {
	case store.EntryDecision:
		var err error
		se.decision, err = decisionOf(e)
		return se, err
	case store.EntryToolResult:
		if se.result, ok = e.ToolResult(); !ok {
			return se, errors.New("a tool result entry that does not decode")
		}
		if se.result.Turn == 0 {
			se.result.Turn = e.Turn
		}
	case store.EntryValidation:
		if se.vturn, se.verdicts, ok = e.Validation(); !ok {
			return se, errors.New("a validation entry that does not decode")
		}
	}
	return se, nil
}

// sessionRecords rebuilds the session-level entries from the records
// GetSession read (the tool calls' decisions and results, the verdicts),
// in timeline order, for the index and the skeleton: the store keeps them
// there as well as in the timeline.
func (r *Replayer) sessionRecords() []sessEntry {
	var out []sessEntry
	for _, c := range r.sess.Calls {
		if c.DecisionSeq > 0 {
			out = append(out, sessEntry{seq: c.DecisionSeq, turn: c.Turn, kind: store.EntryDecision, decision: store.Decision{
				Turn: c.Turn, CallID: c.CallID, Name: c.Name, Decision: c.Decision, Arguments: c.Arguments, Edited: c.Edited, Reason: c.Reason}})
		}
		if c.ResultSeq > 0 {
			out = append(out, sessEntry{seq: c.ResultSeq, turn: c.Turn, kind: store.EntryToolResult, result: store.ToolResult{
				Turn: c.Turn, CallID: c.CallID, Name: c.Name, Content: c.Result, IsError: c.IsError}})
		}
	}
	for _, v := range r.sess.Validations { // by seq, then layer order
		if n := len(out); n > 0 && out[n-1].kind == store.EntryValidation && out[n-1].seq == v.Seq {
			out[n-1].verdicts = append(out[n-1].verdicts, v.Validation)
			continue
		}
		out = append(out, sessEntry{seq: v.Seq, turn: v.Turn, kind: store.EntryValidation, vturn: v.Turn, verdicts: []store.Validation{v.Validation}})
	}
	slices.SortStableFunc(out, func(a, b sessEntry) int { return a.seq - b.seq })
	return out
}

// fold folds one group of entries (one step, or one session-level entry)
// up to position p.
func (b *timelineBuilder) fold(es []store.Entry, p int) error {
	if es[0].Attempt == 0 {
		if err := b.sessionEntry(es[0]); err != nil {
			return fmt.Errorf("entry %d: %w", es[0].Seq, err)
		}
		b.pos, b.at = es[0].Seq, b.r.at(es[0])
		return nil
	}
	e := es[0]
	st := adapters.Step{Index: e.RawIndex}
	if e.Raw != nil {
		st.Raw = *e.Raw
	}
	for _, x := range es {
		if x.Seq > p {
			b.partial = true
			b.next, b.hasNext = b.r.at(x), true
			break
		}
		b.at = b.r.at(x)
		ev, ok, err := x.Canonical()
		if err != nil {
			return fmt.Errorf("entry %d: %w", x.Seq, err)
		}
		if !ok {
			continue
		}
		if ev.Type == adapters.EvTerminal {
			evc := ev
			b.terminal = setTurn(b.terminal, e.Turn, &evc) // a later attempt's terminal wins
		}
		st.Events = append(st.Events, ev)
	}
	u := Update{Kind: UpStep, Turn: e.Turn, Attempt: e.Attempt, Step: &st, OffsetMS: float64(e.Offset.Microseconds()) / 1000}
	last := es[len(es)-1].Seq
	if a := b.r.attempt[[2]int{e.Turn, e.Attempt}]; a != nil && !b.partial && a.LastSeq == last {
		u.Timings = timingsOf(a.Timings) // an attempt's timings ride on its last step, as live
	}
	b.emit(u)
	b.pos = min(p, last)
	return nil
}

// flushAttempts folds the attempts (and their turns' regeneration and
// assembly) that come before what is folded next. Unless open, it stops
// at the first attempt of a turn not yet assembled, after the responses
// of the turns before it, and reports that it stopped.
func (b *timelineBuilder) flushAttempts(upto func(store.Attempt) bool, open bool) (stopped bool) {
	atts := b.r.sess.Attempts
	for b.emitted < len(atts) && upto(atts[b.emitted]) {
		a := atts[b.emitted]
		if !turnFlag(b.assembled, a.Turn) {
			b.respond(a.Turn)
			if !open {
				return true
			}
			b.openRegenerations(a.Turn)
			b.assembled = setTurn(b.assembled, a.Turn, true)
			b.emit(Update{Kind: UpAssembled, Turn: a.Turn, Request: b.request(a)})
		}
		b.emitted++
		b.emit(Update{Kind: UpAttempt, Turn: a.Turn, Attempt: a.Attempt, URL: a.URL, HTTPStatus: a.StatusCode,
			Err: a.Error, Header: a.ResponseHeader})
	}
	return false
}

// openRegenerations folds the regenerations waiting for turns up to turn
// (all of them when turn < 0): the engine reports one before its turn's
// assembly.
func (b *timelineBuilder) openRegenerations(turn int) {
	for len(b.regenerate) > 0 && (turn < 0 || b.regenerate[0].Turn <= turn) {
		b.emit(b.regenerate[0])
		b.regenerate = b.regenerate[1:]
	}
}

// respond folds the response of every turn before turn that has not had
// one: the engine reports a turn's response before its proposals.
func (b *timelineBuilder) respond(turn int) {
	for t := 1; t < turn; t++ {
		if turnFlag(b.responded, t) || !turnFlag(b.assembled, t) {
			continue
		}
		b.responded = setTurn(b.responded, t, true)
		sum := &adapters.Summary{Protocol: b.r.sess.Protocol, Terminal: adapters.StatusUnknown, StopReason: adapters.StopUnknown}
		if t <= len(b.terminal) && b.terminal[t-1] != nil {
			ev := b.terminal[t-1]
			sum.Terminal, sum.StopReason, sum.ProviderStopReason = ev.Status, ev.StopReason, ev.ProviderStopReason
		}
		b.emit(Update{Kind: UpResponse, Turn: t, Summary: sum})
	}
}

// request rebuilds a turn's wire request from its first attempt.
func (b *timelineBuilder) request(a store.Attempt) *adapters.HTTPRequest {
	req := &adapters.HTTPRequest{Method: a.Method, Body: json.RawMessage(a.RequestBody), Headers: map[string]string{},
		Map: b.r.fmap, Degradations: b.r.degr}
	req.Path = b.r.urlPath(a.URL)
	for k := range a.RequestHeader {
		req.Headers[strings.ToLower(k)] = a.RequestHeader.Get(k)
	}
	return req
}

// urlPath is the path and query of u ("" when it does not parse). A
// session's attempts mostly share one URL: a jump rebuilds every earlier
// turn's request, and parses it once.
func (r *Replayer) urlPath(u string) string {
	if u == r.lastURL[0] && u != "" {
		return r.lastURL[1]
	}
	p := ""
	if pu, err := url.Parse(u); err == nil {
		p = pu.Path
		if pu.RawQuery != "" {
			p += "?" + pu.RawQuery
		}
	}
	r.lastURL = [2]string{u, p}
	return p
}

func timingsOf(t store.Timings) *Timings {
	f := func(d *time.Duration) float64 {
		if d == nil {
			return 0
		}
		return float64(d.Microseconds()) / 1000
	}
	return &Timings{FirstByte: f(t.FirstByte), FirstEvent: f(t.FirstEvent), FirstText: f(t.FirstText), Terminal: f(t.Terminal)}
}

// sessionEntry folds a decision, a tool result or a validation.
func (b *timelineBuilder) sessionEntry(e store.Entry) error {
	se, err := decodeSession(e)
	if err != nil {
		return err
	}
	b.applySession(se)
	return nil
}

// applySession folds a session-level entry.
func (b *timelineBuilder) applySession(se sessEntry) {
	switch se.kind {
	case store.EntryDecision:
		d := se.decision
		p := b.proposal(d)
		dec := Decision{Kind: d.Decision, Reason: d.Reason, By: "person"}
		switch d.Decision {
		case store.DecisionAuto:
			dec.Kind, dec.By = Approved, "auto"
		case store.DecisionEdited:
			dec.Arguments = d.Edited
		}
		b.emit(Update{Kind: UpDecision, Turn: d.Turn, Proposal: &p, Decision: &dec})
	case store.EntryToolResult:
		r := se.result
		b.emit(Update{Kind: UpResult, Turn: r.Turn, Result: &adapters.ToolResult{CallID: r.CallID, Name: r.Name,
			Content: r.Content, IsError: r.IsError}})
	case store.EntryValidation:
		layers := make([]LayerResult, len(se.verdicts))
		parsed := false
		for i, l := range se.verdicts {
			layers[i] = LayerResult{Layer: l.Layer, Status: l.Status, Detail: l.Detail}
			if l.Layer == LayerParse && l.Status == Pass {
				parsed = true
			}
		}
		if se.vturn > 0 && !b.r.PerTurnVerdicts() {
			// A run's verdict on one turn's answer: the engine asked
			// again. The entry is the verdict on that turn; the
			// regeneration opens the next, with its first entry, and
			// clears the layers for the new answer's (State.Apply).
			b.emit(Update{Kind: UpValidated, Turn: se.vturn, Layers: layers})
			b.regenerate = append(b.regenerate, Update{Kind: UpRegenerate, Turn: se.vturn + 1, Layers: layers})
			return
		}
		u := Update{Kind: UpValidated, Turn: se.vturn, Layers: layers}
		if parsed {
			u.Output = finalAnswer(b.st)
			b.answered = true
			u.Domain = b.r.domain(layers, u.Output, b.st)
		}
		b.emit(u)
	default:
		// An entry of a kind this version does not know: it keeps its
		// position and shows nothing.
		b.emit(Update{Kind: UpdateKind("entry:" + se.kind)})
	}
}

// domain is the domain layer's working for a stored answer: the store
// keeps the verdicts, not the checks' values, so they are computed again
// from the results and the prompt the state holds, as the engine did.
func (r *Replayer) domain(layers []LayerResult, out json.RawMessage, st *State) *Domain {
	if r.sc == nil || len(out) == 0 {
		return nil
	}
	var reqs []*adapters.HTTPRequest
	for _, t := range st.Turns {
		reqs = append(reqs, t.Request)
	}
	obs := &Observations{Results: observedFrom(st),
		Prompt: promptFrom(r.sess.Protocol, reqs, func() *adapters.Request { return r.sc.Request(r.stream, r.history) })}
	return ExplainDomain(r.sc, layers, out, obs)
}

// decisionOf decodes a decision entry; a decision recorded without its
// turn belongs to the entry's.
func decisionOf(e store.Entry) (store.Decision, error) {
	d, ok := e.Decision()
	if !ok {
		return d, errors.New("a decision entry that does not decode")
	}
	if d.Turn == 0 {
		d.Turn = e.Turn
	}
	return d, nil
}

// proposal rebuilds a proposal as the gate saw it.
func (b *timelineBuilder) proposal(d store.Decision) Proposal {
	p := Proposal{Turn: d.Turn, CallID: d.CallID, Name: d.Name, Arguments: d.Arguments, Known: true}
	var calls []store.Call
	for _, c := range b.r.sess.Calls {
		if c.Turn == d.Turn {
			calls = append(calls, c)
		}
	}
	slices.SortStableFunc(calls, func(x, y store.Call) int { return x.ProposedSeq - y.ProposedSeq })
	p.Of = len(calls)
	for i, c := range calls {
		if c.CallID == d.CallID {
			p.Index = i
			if len(c.Arguments) > 0 {
				p.Arguments = c.Arguments
			}
		}
	}
	if b.r.sc != nil {
		s := b.r.sc.ToolSchema(d.Name)
		p.Known = s != nil
		if s != nil {
			p.Violations = s.Validate(p.Arguments)
		}
	}
	return p
}

// finalAnswer is the last turn's message text parsed as JSON (the
// validator's output), or nil.
func finalAnswer(st *State) json.RawMessage {
	t := st.Current()
	if t == nil {
		return nil
	}
	var text strings.Builder
	for _, l := range t.Lanes {
		if l.Kind == adapters.KindMessage {
			text.WriteString(l.Text())
		}
	}
	var out bytes.Buffer
	if json.Compact(&out, []byte(strings.TrimSpace(text.String()))) != nil {
		return nil
	}
	return out.Bytes()
}

// SessionInfo is a stored session's metadata, as lists show it.
type SessionInfo = store.SessionInfo
