package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
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
// entry recorded with turn t or later.
//
// Memory does not grow with the timeline: opening reads the entries once,
// a chunk at a time, to count them and keep the positions of turn starts,
// proposals and errors; the state is folded from the entries as they are
// read. Stepping forward reads only the new entries; stepping back, or on
// from inside an entry group (one raw event's entries), folds again from
// the start. The state keeps every turn's lanes and event log, as live,
// up to detailedUpTo entries; beyond, only the current turn's.
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

	n                 int
	turnStarts        []int // turnStarts[t-1] is turn t's first entry
	proposals, errors []int

	pos int
	b   *timelineBuilder // nil: fold again from the start
}

// NewReplayer opens a replayer on a stored session, before its first
// entry. sc, when known, gives the source map and the proposals' schema
// checks.
func NewReplayer(db *store.DB, id string, sc *Scenario) (*Replayer, error) {
	s, err := db.GetSession(id)
	if err != nil {
		return nil, err
	}
	r := &Replayer{db: db, sess: s, sc: sc, history: adapters.HistoryFull, attempt: map[[2]int]*store.Attempt{}}
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

// index counts the entries and keeps the positions of turn starts,
// proposals and errors, reading the timeline a chunk at a time.
func (r *Replayer) index() error {
	return r.db.EachEntry(r.sess.ID, 1, 0, func(e store.Entry) error {
		r.n = e.Seq
		for len(r.turnStarts) < e.Turn {
			r.turnStarts = append(r.turnStarts, e.Seq)
		}
		switch adapters.EventType(e.Type) {
		case adapters.EvToolProposed:
			r.proposals = append(r.proposals, e.Seq)
		case adapters.EvDiagnostic:
			r.errors = append(r.errors, e.Seq)
		case adapters.EvTerminal:
			if ev, ok, _ := e.Canonical(); ok && ev.Status == adapters.StatusFailed {
				r.errors = append(r.errors, e.Seq)
			}
		}
		return nil
	})
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

// Proposals are the entries that proposed a tool call.
func (r *Replayer) Proposals() []int { return slices.Clone(r.proposals) }

// Errors are the entries that went wrong: a diagnostic, a failed terminal.
func (r *Replayer) Errors() []int { return slices.Clone(r.errors) }

// TurnOf is the turn entry p belongs to (0 for position 0, before any).
func (r *Replayer) TurnOf(p int) int {
	t, _ := slices.BinarySearch(r.turnStarts, p+1)
	return t
}

// NextTurn is the first entry of the turn after the current one, or the
// end.
func (r *Replayer) NextTurn() int {
	for _, s := range r.turnStarts {
		if s > r.pos {
			return s
		}
	}
	return r.n
}

// PrevTurn is the first entry of the current turn, or of the one before
// when already there; 0 before the first turn.
func (r *Replayer) PrevTurn() int {
	best := 0
	for _, s := range r.turnStarts {
		if s < r.pos {
			best = s
		}
	}
	return best
}

// State is the session right after the current entry. It is the
// replayer's own: it changes on the next Seek.
func (r *Replayer) State() *State {
	if r.b == nil {
		return NewState() // the last Seek failed
	}
	return r.b.st
}

// Seek moves to position p (clamped to 0…Len).
func (r *Replayer) Seek(p int) error {
	p = max(0, min(p, r.n))
	if r.b == nil || p < r.pos || r.b.partial {
		r.b = r.newBuilder()
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
func (r *Replayer) PerTurnVerdicts() bool { return r.sess.Source == store.SourceProxy }

// timelineBuilder folds a stored timeline into a State, producing the
// updates a live session would have produced. Updates that cover no entry
// (an assembly, an attempt, a turn's response) are folded as soon as the
// entries before them are: the state at position p includes those that
// come before entry p+1.
type timelineBuilder struct {
	r  *Replayer
	st *State

	emitted   int // attempts emitted
	assembled map[int]bool
	responded map[int]bool
	terminal  map[int]*adapters.Event
	proposed  map[string]bool // turn/call_id

	pos     int // entries folded
	prelude int // the entry whose prelude (updates before it) is folded
	// at is the time of entry pos from the session's start, next that
	// of the entry after it (hasNext: there is one), seen while folding
	// so that playback needs no read of its own.
	at, next time.Duration
	hasNext  bool
	partial  bool // pos is inside an entry group: the builder cannot go on
	ended    bool
}

func (r *Replayer) newBuilder() *timelineBuilder {
	b := &timelineBuilder{r: r, st: NewState(), assembled: map[int]bool{}, responded: map[int]bool{},
		terminal: map[int]*adapters.Event{}, proposed: map[string]bool{}}
	b.emit(Update{Kind: UpStarted})
	return b
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
		}
		if b.prelude != e.Seq {
			if err := b.before(e); err != nil {
				return fmt.Errorf("entry %d: %w", e.Seq, err)
			}
			b.prelude = e.Seq
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
	b.flushAttempts(func(store.Attempt) bool { return true })
	b.respond(len(b.st.Turns) + 1)
	b.emit(Update{Kind: UpFinished, Status: b.r.sess.Status})
}

func (b *timelineBuilder) emit(u Update) {
	u.SessionID = b.r.sess.ID
	b.st.Apply(u)
	if u.Kind == UpAssembled && b.r.n > detailedUpTo {
		// A long session keeps the lanes and the event log of the turn
		// being shown only, so the replay's memory stays bounded by a
		// turn, not the session; earlier turns keep their request,
		// attempts, summary, usage and proposals.
		for _, t := range b.st.Turns[:len(b.st.Turns)-1] {
			t.Lanes, t.Log, t.byItem, t.lastClosed = nil, nil, map[string]*Lane{}, nil
		}
	}
}

// detailedUpTo is the length of timeline up to which a replay keeps every
// turn's lanes and event log, as the live session does.
const detailedUpTo = 100_000

// before folds the updates that come before entry e and cover no entry.
func (b *timelineBuilder) before(e store.Entry) error {
	if e.Attempt != 0 {
		b.flushAttempts(func(a store.Attempt) bool {
			return a.Turn < e.Turn || (a.Turn == e.Turn && a.Attempt <= e.Attempt)
		})
		return nil
	}
	switch e.Type {
	case store.EntryDecision:
		d, err := decisionOf(e)
		if err != nil {
			return err
		}
		b.flushAttempts(func(a store.Attempt) bool { return a.Turn <= d.Turn })
		b.respond(d.Turn + 1)
		if key := fmt.Sprint(d.Turn, "/", d.CallID); !b.proposed[key] {
			b.proposed[key] = true
			p := b.proposal(d)
			b.emit(Update{Kind: UpProposal, Turn: d.Turn, Proposal: &p})
		}
	case store.EntryValidation:
		b.flushAttempts(func(store.Attempt) bool { return true })
		b.respond(len(b.st.Turns) + 1)
	}
	return nil
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
			b.terminal[e.Turn] = &evc // a later attempt's terminal wins
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

// flushAttempts folds the attempts (and their turns' assembly) that come
// before what is folded next.
func (b *timelineBuilder) flushAttempts(upto func(store.Attempt) bool) {
	atts := b.r.sess.Attempts
	for b.emitted < len(atts) && upto(atts[b.emitted]) {
		a := atts[b.emitted]
		b.emitted++
		if !b.assembled[a.Turn] {
			b.respond(a.Turn)
			b.assembled[a.Turn] = true
			b.emit(Update{Kind: UpAssembled, Turn: a.Turn, Request: b.request(a)})
		}
		b.emit(Update{Kind: UpAttempt, Turn: a.Turn, Attempt: a.Attempt, URL: a.URL, HTTPStatus: a.StatusCode,
			Err: a.Error, Header: a.ResponseHeader})
	}
}

// respond folds the response of every turn before turn that has not had
// one: the engine reports a turn's response before its proposals.
func (b *timelineBuilder) respond(turn int) {
	for t := 1; t < turn; t++ {
		if b.responded[t] || !b.assembled[t] {
			continue
		}
		b.responded[t] = true
		sum := &adapters.Summary{Protocol: b.r.sess.Protocol, Terminal: adapters.StatusUnknown, StopReason: adapters.StopUnknown}
		if ev := b.terminal[t]; ev != nil {
			sum.Terminal, sum.StopReason, sum.ProviderStopReason = ev.Status, ev.StopReason, ev.ProviderStopReason
		}
		b.emit(Update{Kind: UpResponse, Turn: t, Summary: sum})
	}
}

// request rebuilds a turn's wire request from its first attempt.
func (b *timelineBuilder) request(a store.Attempt) *adapters.HTTPRequest {
	req := &adapters.HTTPRequest{Method: a.Method, Body: json.RawMessage(a.RequestBody), Headers: map[string]string{},
		Map: b.r.fmap, Degradations: b.r.degr}
	if u, err := url.Parse(a.URL); err == nil {
		req.Path = u.Path
		if u.RawQuery != "" {
			req.Path += "?" + u.RawQuery
		}
	}
	for k := range a.RequestHeader {
		req.Headers[strings.ToLower(k)] = a.RequestHeader.Get(k)
	}
	return req
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
	switch e.Type {
	case store.EntryDecision:
		d, err := decisionOf(e)
		if err != nil {
			return err
		}
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
		r, ok := e.ToolResult()
		if !ok {
			return errors.New("a tool result entry that does not decode")
		}
		if r.Turn == 0 {
			r.Turn = e.Turn
		}
		b.emit(Update{Kind: UpResult, Turn: r.Turn, Result: &adapters.ToolResult{CallID: r.CallID, Name: r.Name,
			Content: r.Content, IsError: r.IsError}})
	case store.EntryValidation:
		turn, results, ok := e.Validation()
		if !ok {
			return errors.New("a validation entry that does not decode")
		}
		layers := make([]LayerResult, len(results))
		parsed := false
		for i, l := range results {
			layers[i] = LayerResult{Layer: l.Layer, Status: l.Status, Detail: l.Detail}
			if l.Layer == LayerParse && l.Status == Pass {
				parsed = true
			}
		}
		if turn > 0 && !b.r.PerTurnVerdicts() {
			// A run's verdict on one turn's answer: the engine asked again.
			b.emit(Update{Kind: UpRegenerate, Turn: turn + 1, Layers: layers})
			return nil
		}
		u := Update{Kind: UpValidated, Turn: turn, Layers: layers}
		if parsed {
			u.Output = finalAnswer(b.st)
		}
		b.emit(u)
	default:
		// An entry of a kind this version does not know: it keeps its
		// position and shows nothing.
		b.emit(Update{Kind: UpdateKind("entry:" + e.Type)})
	}
	return nil
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
