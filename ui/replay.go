package ui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/registry"
	"github.com/modelwire/modelwire/samples"
	"github.com/modelwire/modelwire/session"
	"github.com/modelwire/modelwire/store"
)

// Library is the store as the sessions browser and the replay see it.
type Library interface {
	List() ([]store.SessionInfo, error)
	Delete(id string) error
	// Export writes the session as JSON Lines into dir and returns the path.
	Export(id, dir string) (string, error)
	Load(id string) (*Replay, error)
	// Diff compares two sessions (diff.go).
	Diff(a, b string) (*DiffResult, error)
}

// StoreLibrary is the Library of a store database.
type StoreLibrary struct{ DB *store.DB }

// List lists the stored sessions, newest first.
func (l StoreLibrary) List() ([]store.SessionInfo, error) { return l.DB.ListSessions(store.Filter{}) }

// Delete deletes a session.
func (l StoreLibrary) Delete(id string) error { return l.DB.DeleteSession(id) }

// Export writes modelwire-<id>.jsonl into dir.
func (l StoreLibrary) Export(id, dir string) (string, error) {
	path := filepath.Join(dir, "modelwire-"+id+".jsonl")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return "", err
	}
	if err := l.DB.ExportJSONL(f, id); err != nil {
		f.Close()
		os.Remove(path)
		return "", err
	}
	return path, f.Close()
}

// Load reads a session and its whole timeline.
func (l StoreLibrary) Load(id string) (*Replay, error) {
	s, err := l.DB.GetSession(id)
	if err != nil {
		return nil, err
	}
	entries, err := l.DB.Events(id, 1, 0)
	if err != nil {
		return nil, err
	}
	var sc *session.Scenario
	if s.Scenario != "" {
		sc, _ = samples.Lookup(s.ScenarioName()) // a recording or a moved file has none: replay without notes
	}
	return BuildReplay(s, entries, sc)
}

// Replay is a stored session as the updates a live session would have
// produced, each with the number of timeline entries (canonical events,
// raw events without one, decisions, results, validations) it covers.
// The cursor moves over entries; the state at entry p is every update up
// to p folded into a fresh session.State — the same fold as live.
type Replay struct {
	Info     store.SessionInfo
	Scenario *session.Scenario
	Updates  []session.Update
	Counts   []int // entries each update covers (0 for updates without one)
	before   []int // entries before each update
	Entries  int
	// At is each entry's time from the session's start (At[p-1] for p).
	At []time.Duration
	// TurnStarts are the positions just before each turn's first entry.
	TurnStarts []int
	// Proposals and Errors are the positions of the entries that proposed
	// a tool call, and of those that went wrong (a diagnostic, a failed
	// terminal), for the scrubber.
	Proposals, Errors []int
	Stream            bool
	History           adapters.HistoryMode
}

// decisionEntry is the store's timeline entry of a decision.
type decisionEntry struct {
	Turn              int             `json:"turn"`
	CallID            string          `json:"call_id"`
	Name              string          `json:"name"`
	Decision          string          `json:"decision"`
	Arguments         json.RawMessage `json:"arguments"`
	OriginalArguments json.RawMessage `json:"original_arguments"`
	Reason            string          `json:"reason"`
}

type resultEntry struct {
	Turn    int    `json:"turn"`
	CallID  string `json:"call_id"`
	Name    string `json:"name"`
	IsError bool   `json:"is_error"`
	Content string `json:"content"`
}

type validationEntry struct {
	Turn    int                `json:"turn"`
	Results []store.Validation `json:"results"`
}

// replayBuilder turns a stored timeline into updates.
type replayBuilder struct {
	r        *Replay
	s        *store.Session
	sc       *session.Scenario
	attempts []store.Attempt
	next     int // attempts emitted
	fmap     []adapters.FieldMapping
	degr     []string
	// per turn
	assembled map[int]bool
	responded map[int]bool
	terminal  map[int]*adapters.Event
	proposed  map[string]bool // turn/call_id
	scratch   *session.State  // folds what is emitted, for the final answer
	lastStep  map[[2]int]int  // (turn, attempt) → index of its last UpStep
}

// BuildReplay builds a replay from a stored session and its entries. sc,
// when known, gives the source map and the proposals' schema checks.
func BuildReplay(s *store.Session, entries []store.Entry, sc *session.Scenario) (*Replay, error) {
	b := &replayBuilder{r: &Replay{Info: s.SessionInfo, Scenario: sc, History: adapters.HistoryFull}, s: s, sc: sc,
		assembled: map[int]bool{}, responded: map[int]bool{}, terminal: map[int]*adapters.Event{},
		proposed: map[string]bool{}, scratch: session.NewState(), lastStep: map[[2]int]int{}}
	b.attempts = append([]store.Attempt(nil), s.Attempts...)
	sort.SliceStable(b.attempts, func(i, j int) bool {
		if b.attempts[i].Turn != b.attempts[j].Turn {
			return b.attempts[i].Turn < b.attempts[j].Turn
		}
		return b.attempts[i].Attempt < b.attempts[j].Attempt
	})
	if len(b.attempts) > 0 {
		b.r.Stream = b.attempts[0].Stream
	}
	var params struct {
		History adapters.HistoryMode `json:"history"`
	}
	if json.Unmarshal(s.Manifest.Parameters, &params) == nil && params.History != "" {
		b.r.History = params.History
	}
	if sc != nil {
		if p, err := registry.Lookup(s.Protocol); err == nil {
			if w, err := p.Encode(sc.Request(b.r.Stream, b.r.History), s.Provider); err == nil {
				b.fmap, b.degr = w.Map, w.Degradations
			}
		}
	}
	b.emit(session.Update{Kind: session.UpStarted, SessionID: s.ID}, 0, 0)
	for i := 0; i < len(entries); {
		e := entries[i]
		if e.Attempt == 0 {
			if err := b.sessionEntry(e); err != nil {
				return nil, fmt.Errorf("entry %d: %w", e.Seq, err)
			}
			i++
			continue
		}
		// One step: the consecutive entries of one raw event (or of the end
		// of the attempt's input).
		j := i + 1
		for j < len(entries) && entries[j].Attempt == e.Attempt && entries[j].Turn == e.Turn && entries[j].RawIndex == e.RawIndex &&
			(e.RawIndex >= 0 || entries[j].Raw == nil) {
			j++
		}
		if err := b.step(entries[i:j]); err != nil {
			return nil, err
		}
		i = j
	}
	b.flushAttempts(func(store.Attempt) bool { return true })
	b.respond(len(b.r.TurnStarts) + 1)
	status := s.Status
	if status == store.StatusRunning {
		status = "running"
	}
	b.emit(session.Update{Kind: session.UpFinished, Status: status}, 0, 0)
	r := b.r
	// An attempt's timings ride on its last step, as live.
	for _, a := range b.attempts {
		if i, ok := b.lastStep[[2]int{a.Turn, a.Attempt}]; ok {
			r.Updates[i].Timings = timingsOf(a.Timings)
		}
	}
	r.before = make([]int, len(r.Updates))
	n := 0
	for i, c := range r.Counts {
		r.before[i] = n
		n += c
	}
	r.Entries = n
	return r, nil
}

// emit appends an update covering n entries at session time at.
func (b *replayBuilder) emit(u session.Update, n int, at time.Duration) {
	u.SessionID = b.s.ID
	b.r.Updates = append(b.r.Updates, u)
	b.r.Counts = append(b.r.Counts, n)
	for range n {
		b.r.At = append(b.r.At, at)
	}
	b.scratch.Apply(u)
}

// flushAttempts emits the attempts (and their turns' assembly) that come
// before what is emitted next.
func (b *replayBuilder) flushAttempts(upto func(store.Attempt) bool) {
	for b.next < len(b.attempts) && upto(b.attempts[b.next]) {
		a := b.attempts[b.next]
		b.next++
		if !b.assembled[a.Turn] {
			b.respond(a.Turn)
			b.assembled[a.Turn] = true
			b.emit(session.Update{Kind: session.UpAssembled, Turn: a.Turn, Request: b.request(a)}, 0, 0)
		}
		u := session.Update{Kind: session.UpAttempt, Turn: a.Turn, Attempt: a.Attempt, URL: a.URL, HTTPStatus: a.StatusCode,
			Err: a.Error, Header: a.ResponseHeader}
		b.emit(u, 0, a.Start)
	}
}

// respond emits the response of every turn before turn that has not had
// one: the engine reports a turn's response before its proposals.
func (b *replayBuilder) respond(turn int) {
	for t := 1; t < turn; t++ {
		if b.responded[t] || !b.assembled[t] {
			continue
		}
		b.responded[t] = true
		sum := &adapters.Summary{Protocol: b.s.Protocol, Terminal: adapters.StatusUnknown, StopReason: adapters.StopUnknown}
		if ev := b.terminal[t]; ev != nil {
			sum.Terminal, sum.StopReason, sum.ProviderStopReason = ev.Status, ev.StopReason, ev.ProviderStopReason
		}
		b.emit(session.Update{Kind: session.UpResponse, Turn: t, Summary: sum}, 0, 0)
	}
}

// request rebuilds a turn's wire request from its first attempt.
func (b *replayBuilder) request(a store.Attempt) *adapters.HTTPRequest {
	req := &adapters.HTTPRequest{Method: a.Method, Body: json.RawMessage(a.RequestBody), Headers: map[string]string{},
		Map: b.fmap, Degradations: b.degr}
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

func (b *replayBuilder) step(es []store.Entry) error {
	e := es[0]
	key := [2]int{e.Turn, e.Attempt}
	b.flushAttempts(func(a store.Attempt) bool {
		return a.Turn < e.Turn || (a.Turn == e.Turn && a.Attempt <= e.Attempt)
	})
	if len(b.r.TurnStarts) < e.Turn {
		for len(b.r.TurnStarts) < e.Turn {
			b.r.TurnStarts = append(b.r.TurnStarts, len(b.r.At))
		}
	}
	st := adapters.Step{Index: e.RawIndex}
	if e.Raw != nil {
		st.Raw = *e.Raw
	}
	for _, x := range es {
		ev, ok, err := x.Canonical()
		if err != nil {
			return fmt.Errorf("entry %d: %w", x.Seq, err)
		}
		if !ok {
			continue
		}
		st.Events = append(st.Events, ev)
		pos := len(b.r.At) + 1 // this step's position once appended
		switch {
		case ev.Type == adapters.EvToolProposed:
			b.r.Proposals = append(b.r.Proposals, pos)
		case ev.Type == adapters.EvDiagnostic, ev.Type == adapters.EvTerminal && ev.Status == adapters.StatusFailed:
			b.r.Errors = append(b.r.Errors, pos)
		}
		if ev.Type == adapters.EvTerminal {
			evc := ev
			b.terminal[e.Turn] = &evc // a later attempt's terminal wins
		}
	}
	var start time.Duration
	for _, a := range b.attempts {
		if a.Turn == e.Turn && a.Attempt == e.Attempt {
			start = a.Start
		}
	}
	b.lastStep[key] = len(b.r.Updates)
	b.emit(session.Update{Kind: session.UpStep, Turn: e.Turn, Attempt: e.Attempt, Step: &st,
		OffsetMS: float64(e.Offset.Microseconds()) / 1000}, len(es), start+e.Offset)
	return nil
}

func timingsOf(t store.Timings) *session.Timings {
	f := func(d *time.Duration) float64 {
		if d == nil {
			return 0
		}
		return float64(d.Microseconds()) / 1000
	}
	return &session.Timings{FirstByte: f(t.FirstByte), FirstEvent: f(t.FirstEvent), FirstText: f(t.FirstText), Terminal: f(t.Terminal)}
}

func (b *replayBuilder) sessionEntry(e store.Entry) error {
	switch e.Type {
	case store.EntryDecision:
		var d decisionEntry
		if err := json.Unmarshal(e.Event, &d); err != nil {
			return err
		}
		if d.Turn == 0 {
			d.Turn = e.Turn
		}
		b.flushAttempts(func(a store.Attempt) bool { return a.Turn <= d.Turn })
		b.respond(d.Turn + 1)
		p := b.proposal(d.Turn, d.CallID, d.Name, d.Arguments, d.OriginalArguments)
		if !b.proposed[fmt.Sprint(d.Turn, "/", d.CallID)] {
			b.proposed[fmt.Sprint(d.Turn, "/", d.CallID)] = true
			b.emit(session.Update{Kind: session.UpProposal, Turn: d.Turn, Proposal: &p}, 0, 0)
		}
		dec := session.Decision{Kind: d.Decision, Reason: d.Reason, By: "person"}
		switch d.Decision {
		case store.DecisionAuto:
			dec.Kind, dec.By = session.Approved, "auto"
		case store.DecisionEdited:
			dec.Arguments = d.Arguments
		}
		b.emit(session.Update{Kind: session.UpDecision, Turn: d.Turn, Proposal: &p, Decision: &dec}, 1, e.Offset)
	case store.EntryToolResult:
		var r resultEntry
		if err := json.Unmarshal(e.Event, &r); err != nil {
			return err
		}
		if r.Turn == 0 {
			r.Turn = e.Turn
		}
		b.emit(session.Update{Kind: session.UpResult, Turn: r.Turn, Result: &adapters.ToolResult{CallID: r.CallID, Name: r.Name,
			Content: r.Content, IsError: r.IsError}}, 1, e.Offset)
	case store.EntryValidation:
		var v validationEntry
		if err := json.Unmarshal(e.Event, &v); err != nil {
			return err
		}
		b.flushAttempts(func(store.Attempt) bool { return true })
		b.respond(len(b.scratch.Turns) + 1)
		layers := make([]session.LayerResult, len(v.Results))
		parsed := false
		for i, l := range v.Results {
			layers[i] = session.LayerResult{Layer: l.Layer, Status: l.Status, Detail: l.Detail}
			if l.Layer == session.LayerParse && l.Status == session.Pass {
				parsed = true
			}
		}
		if v.Turn > 0 {
			// A verdict on one turn's answer: the engine asked again.
			b.emit(session.Update{Kind: session.UpRegenerate, Turn: v.Turn + 1, Layers: layers}, 1, e.Offset)
			return nil
		}
		u := session.Update{Kind: session.UpValidated, Layers: layers}
		if parsed {
			u.Output = finalAnswer(b.scratch)
		}
		b.emit(u, 1, e.Offset)
	default:
		// An entry of a kind this version does not know: keep the cursor
		// position, show nothing.
		b.emit(session.Update{Kind: session.UpdateKind("entry:" + e.Type)}, 1, e.Offset)
	}
	return nil
}

// proposal rebuilds a proposal as the gate saw it.
func (b *replayBuilder) proposal(turn int, callID, name string, args, original json.RawMessage) session.Proposal {
	if len(original) > 0 {
		args = original
	}
	p := session.Proposal{Turn: turn, CallID: callID, Name: name, Arguments: args, Known: true}
	var calls []store.Call
	for _, c := range b.s.Calls {
		if c.Turn == turn {
			calls = append(calls, c)
		}
	}
	sort.SliceStable(calls, func(i, j int) bool { return calls[i].ProposedSeq < calls[j].ProposedSeq })
	p.Of = len(calls)
	for i, c := range calls {
		if c.CallID == callID {
			p.Index = i
			if len(c.Arguments) > 0 {
				p.Arguments = c.Arguments
			}
		}
	}
	if b.sc != nil {
		s := b.sc.ToolSchema(name)
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
	var b bytes.Buffer
	if json.Compact(&b, []byte(strings.TrimSpace(text.String()))) != nil {
		return nil
	}
	return b.Bytes()
}

// StateAt folds the updates up to entry p (0 ≤ p ≤ Entries).
func (r *Replay) StateAt(p int) *session.State {
	st := session.NewState()
	r.foldInto(st, 0, p)
	return st
}

// foldInto applies updates from index i on, up to entry p, and returns
// the index of the first update not (fully) applied and whether the last
// one applied was partial.
func (r *Replay) foldInto(st *session.State, i, p int) (next int, partial bool) {
	for ; i < len(r.Updates); i++ {
		b, n := r.before[i], r.Counts[i]
		if b+n <= p {
			st.Apply(r.Updates[i])
			continue
		}
		if b < p && r.Updates[i].Kind == session.UpStep {
			u := r.Updates[i]
			part := *u.Step
			part.Events = u.Step.Events[:min(p-b, len(u.Step.Events))]
			u.Step, u.Timings = &part, nil
			st.Apply(u)
			return i, true
		}
		return i, false
	}
	return i, false
}

// cursor is a replay's position with the state there. Stepping forward
// from a clean state applies only the new updates; anything else refolds
// from the start (cheap: a fold is a few µs per event).
type cursor struct {
	rep     *Replay
	pos     int
	state   *session.State
	next    int
	partial bool
}

func newCursor(rep *Replay) *cursor {
	c := &cursor{rep: rep}
	c.seek(0)
	return c
}

func (c *cursor) seek(p int) {
	p = max(0, min(p, c.rep.Entries))
	if c.state == nil || p < c.pos || c.partial {
		c.state = session.NewState()
		c.next, c.partial = c.rep.foldInto(c.state, 0, p)
	} else {
		c.next, c.partial = c.rep.foldInto(c.state, c.next, p)
	}
	c.pos = p
}

// turnOf is the turn whose entries contain position p (0 before any).
func (c *cursor) turnOf(p int) int {
	t := 0
	for i, s := range c.rep.TurnStarts {
		if p > s {
			t = i + 1
		}
	}
	return t
}

// nextTurn is the position after the first entry of the next turn.
func (c *cursor) nextTurn() int {
	for _, s := range c.rep.TurnStarts {
		if s+1 > c.pos {
			return s + 1
		}
	}
	return c.rep.Entries
}

// prevTurn is the start of the current turn, or of the one before when
// already there.
func (c *cursor) prevTurn() int {
	best := 0
	for _, s := range c.rep.TurnStarts {
		if s+1 < c.pos {
			best = s + 1
		}
	}
	return best
}

// gap is the recorded time between the cursor's entry and the next.
func (c *cursor) gap() time.Duration {
	at := c.rep.At
	if c.pos <= 0 || c.pos >= len(at) {
		return 0
	}
	d := at[c.pos] - at[c.pos-1]
	if d < 0 {
		return 0
	}
	return d
}

// replaySpeeds are the playback speeds + and - step through.
var replaySpeeds = []float64{0.25, 0.5, 1, 2, 4, 8, 16}

// speedNormal is the index of ×1.
const speedNormal = 2
