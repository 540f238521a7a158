package timeline

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
	"github.com/modelwire/modelwire/session"
	"github.com/modelwire/modelwire/store"
	"github.com/modelwire/modelwire/validate"
)

// Folding stored entries into the State a person sees: the builder a
// replay advances entry by entry, and how each stored record becomes the
// updates a live session emitted.

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
	st *session.State

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
	regenerate []session.Update
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
	b := &timelineBuilder{r: r, st: session.NewState()}
	b.emit(session.Update{Kind: session.UpStarted})
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
	return turn >= 1 && turn <= len(b.st.Turns) && b.st.Turns[turn-1].Proposal(id) != nil
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
	b.emit(session.Update{Kind: session.UpFinished, Status: b.r.sess.Status})
}

func (b *timelineBuilder) emit(u session.Update) {
	u.SessionID = b.r.sess.ID
	if u.Kind == session.UpStep && u.Turn <= b.settled {
		// A step of a settled turn (attempts that interleave): settle
		// took what the turn keeps from the records, and a skeleton
		// never sees it, so it is not folded either way.
		return
	}
	b.st.Apply(u)
	if u.Kind == session.UpAssembled && b.r.long() {
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
			b.emit(session.Update{Kind: session.UpProposal, Turn: d.Turn, Proposal: &p})
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
	u := session.Update{Kind: session.UpStep, Turn: e.Turn, Attempt: e.Attempt, Step: &st, OffsetMS: float64(e.Offset.Microseconds()) / 1000}
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
			b.emit(session.Update{Kind: session.UpAssembled, Turn: a.Turn, Request: b.request(a)})
		}
		b.emitted++
		b.emit(session.Update{Kind: session.UpAttempt, Turn: a.Turn, Attempt: a.Attempt, URL: a.URL, HTTPStatus: a.StatusCode,
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
		b.emit(session.Update{Kind: session.UpResponse, Turn: t, Summary: sum})
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

func timingsOf(t store.Timings) *session.Timings {
	f := func(d *time.Duration) float64 {
		if d == nil {
			return 0
		}
		return float64(d.Microseconds()) / 1000
	}
	tm := &session.Timings{Headers: f(t.FirstByte), FirstEvent: f(t.FirstEvent), FirstToken: f(t.FirstToken), FirstText: f(t.FirstText), Terminal: f(t.Terminal)}
	if t.Server != nil {
		tm.Server = &session.ServerTime{MS: f(t.Server), Source: t.ServerSource}
	}
	return tm
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
		dec := session.Decision{Kind: d.Decision, Reason: d.Reason, By: "person"}
		switch d.Decision {
		case store.DecisionAuto:
			dec.Kind, dec.By = session.Approved, "auto"
		case store.DecisionEdited:
			dec.Arguments = d.Edited
		}
		b.emit(session.Update{Kind: session.UpDecision, Turn: d.Turn, Proposal: &p, Decision: &dec})
	case store.EntryToolResult:
		r := se.result
		b.emit(session.Update{Kind: session.UpResult, Turn: r.Turn, Result: &adapters.ToolResult{CallID: r.CallID, Name: r.Name,
			Content: r.Content, IsError: r.IsError}})
	case store.EntryValidation:
		layers := make([]session.LayerResult, len(se.verdicts))
		parsed := false
		for i, l := range se.verdicts {
			layers[i] = validate.FromStored(l)
			if layers[i].Layer == session.LayerParse && l.Status == session.Pass {
				parsed = true
			}
		}
		if se.vturn > 0 && !b.r.PerTurnVerdicts() {
			// A run's verdict on one turn's answer: the engine asked
			// again. The entry is the verdict on that turn; the
			// regeneration opens the next, with its first entry, and
			// clears the layers for the new answer's (State.Apply).
			b.emit(session.Update{Kind: session.UpValidated, Turn: se.vturn, Layers: layers})
			b.regenerate = append(b.regenerate, session.Update{Kind: session.UpRegenerate, Turn: se.vturn + 1, Layers: layers})
			return
		}
		u := session.Update{Kind: session.UpValidated, Turn: se.vturn, Layers: layers}
		if parsed {
			u.Output = finalAnswer(b.st)
			b.answered = true
			u.Domain = b.r.domain(layers, u.Output, b.st)
		}
		b.emit(u)
	default:
		// An entry of a kind this version does not know: it keeps its
		// position and shows nothing.
		b.emit(session.Update{Kind: session.UpdateKind("entry:" + se.kind)})
	}
}

// domain is the domain layer's working for a stored answer: the store
// keeps the verdicts, not the checks' values, so they are computed again
// from the results and the prompt the state holds, as the engine did.
func (r *Replayer) domain(layers []session.LayerResult, out json.RawMessage, st *session.State) *session.Domain {
	if r.sc == nil || len(out) == 0 {
		return nil
	}
	var reqs []*adapters.HTTPRequest
	for _, t := range st.Turns {
		reqs = append(reqs, t.Request)
	}
	obs := &session.Observations{Results: observedFrom(st),
		Prompt: session.PromptFrom(r.sess.Protocol, reqs, func() *adapters.Request { return r.sc.Request(r.stream, r.history) })}
	return session.ExplainDomain(r.sc, layers, out, obs)
}

// observedFrom are the tool results a state holds, in the order they were
// sent back, as the engine observed them.
func observedFrom(st *session.State) []session.ObservedResult {
	var out []session.ObservedResult
	for _, t := range st.Turns {
		for _, p := range t.Proposals {
			if r := p.Result; r != nil {
				args := p.Proposal.Arguments
				if d := p.Decision; d != nil && d.Kind == session.Edited {
					args = d.Arguments
				}
				out = append(out, session.ObservedResult{CallID: r.CallID, Name: r.Name, Arguments: args, Content: r.Content, IsError: r.IsError})
			}
		}
	}
	return out
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
func (b *timelineBuilder) proposal(d store.Decision) session.Proposal {
	p := session.Proposal{Turn: d.Turn, CallID: d.CallID, Name: d.Name, Arguments: d.Arguments, Known: true}
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
func finalAnswer(st *session.State) json.RawMessage {
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
