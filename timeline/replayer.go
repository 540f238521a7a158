package timeline

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/registry"
	"github.com/modelwire/modelwire/session"
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
	sc   *session.Scenario

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
func NewReplayer(db *store.DB, id string, sc *session.Scenario) (*Replayer, error) {
	s, err := db.GetSession(id)
	if err != nil {
		return nil, err
	}
	return ReplayerOf(db, s, sc)
}

// ReplayerOf is NewReplayer for a session already read (db.GetSession),
// which it keeps and sorts: reading a long session's records is most of
// what opening it costs.
func ReplayerOf(db *store.DB, s *store.Session, sc *session.Scenario) (*Replayer, error) {
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
func (r *Replayer) Scenario() *session.Scenario { return r.sc }

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
func (r *Replayer) State() *session.State {
	if r.b == nil {
		return session.NewState() // the last Seek failed
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
func (r *Replayer) PerTurnVerdicts() bool { return store.PerExchange(r.sess.Source) }
