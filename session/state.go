package session

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/store"
)

// State is everything a person sees of a session at one moment: each
// turn's request, attempts, lanes, proposals and decisions, and the
// validation. It is built only by folding Updates with Apply — live from
// the engine, and in replay from the stored updates — so the screen at
// step N of a replay is the live screen right after the same update.
type State struct {
	SessionID string          `json:"session_id"`
	Turns     []*TurnState    `json:"turns"`
	Step      string          `json:"step"` // the last protocol step reached
	Layers    []LayerResult   `json:"layers,omitempty"`
	Output    json.RawMessage `json:"output,omitempty"`
	// Domain is the domain layer's working: each check with the values
	// it used, each fact with what it read (nil when not judged).
	Domain *Domain      `json:"domain,omitempty"`
	Status store.Status `json:"status"` // running, done, failed
	// Applied counts the updates folded in; Events the canonical events.
	Applied int `json:"applied"`
	Events  int `json:"events"`
	// own marks the turns this state may change in place (see Clone).
	own *owner
}

// owner is a token: a TurnState whose own is not its State's was shared
// by Clone and is copied before it changes. Not zero-sized, so that two
// tokens never share an address.
type owner struct{ _ byte }

// TurnState is one request and its response.
type TurnState struct {
	N        int                   `json:"n"`
	Request  *adapters.HTTPRequest `json:"request"`
	Attempts []AttemptState        `json:"attempts"`
	Lanes    []*Lane               `json:"lanes"`
	// Log is every raw event with the canonical events derived from it.
	Log       []LogEntry        `json:"log"`
	Summary   *adapters.Summary `json:"summary,omitempty"`
	Terminal  *adapters.Event   `json:"terminal,omitempty"`
	Usage     *adapters.Usage   `json:"usage,omitempty"`
	Proposals []*ProposalState  `json:"proposals"`
	Timings   *Timings          `json:"timings,omitempty"`
	// Budget is the request's token budget, checked before sending.
	Budget *Budget `json:"budget,omitempty"`
	// Continues is set on a turn that continues a paused one (Anthropic
	// pause_turn): the turn before it was not an answer.
	Continues bool `json:"continues,omitempty"`
	// Regenerates is set on a regeneration turn: the verdict on the
	// answer it asks again for, and the message sent.
	Regenerates *Regeneration `json:"regenerates,omitempty"`
	byItem      map[string]*Lane
	own         *owner
	// lastClosed is the lane of the latest item.done: the reducer reports
	// a call's proposal or invalid arguments right after it.
	lastClosed *Lane
}

// AttemptState is one HTTP attempt.
type AttemptState struct {
	N          int           `json:"n"`
	URL        string        `json:"url"`
	HTTPStatus int           `json:"http_status"`
	Err        string        `json:"error,omitempty"`
	RetryIn    time.Duration `json:"retry_in,omitempty"`
	// RateLimits are the response's rate-limit headers, "name: value".
	RateLimits []string `json:"rate_limits,omitempty"`
	// Why are the simulated model's rules that shaped the response
	// (adapters.WhyHeader), one line each.
	Why []string `json:"why,omitempty"`
}

// WhyLines reads the simulator's rule lines from a response's headers,
// its \uXXXX escapes (a header is ASCII) written back as characters.
func WhyLines(h http.Header) []string {
	vs := h.Values(adapters.WhyHeader)
	if len(vs) == 0 {
		return nil
	}
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = unescapeU(v)
	}
	return out
}

// unescapeU turns \uXXXX back into the character it names.
func unescapeU(s string) string {
	if !strings.Contains(s, `\u`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+6 <= len(s) && s[i+1] == 'u' {
			if n, err := strconv.ParseUint(s[i+2:i+6], 16, 32); err == nil {
				r := rune(n)
				if utf16.IsSurrogate(r) && i+12 <= len(s) && s[i+6:i+8] == `\u` {
					if lo, err := strconv.ParseUint(s[i+8:i+12], 16, 32); err == nil {
						b.WriteRune(utf16.DecodeRune(r, rune(lo)))
						i += 11
						continue
					}
				}
				b.WriteRune(r)
				i += 5
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// LogEntry is one raw event and what it became.
type LogEntry struct {
	Attempt  int               `json:"attempt"`
	OffsetMS float64           `json:"offset_ms"`
	Index    int               `json:"index"` // -1 for the end of the stream
	Raw      adapters.RawEvent `json:"raw"`
	Events   []adapters.Event  `json:"events"`
}

// Lane is one output item: a message, reasoning, refusal or one tool call.
type Lane struct {
	ItemID string             `json:"item_id"`
	Kind   adapters.ItemKind  `json:"kind"`
	CallID string             `json:"call_id,omitempty"`
	Name   string             `json:"name,omitempty"`
	State  adapters.ItemState `json:"state"`
	// text is the text, reasoning, refusal, or raw argument text so far;
	// a builder, so a long stream appends in amortised constant time.
	text strings.Builder
	// Arguments are the parsed arguments once a call is proposed.
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Deltas    int             `json:"deltas"`
	StartMS   float64         `json:"start_ms"`
	DoneMS    float64         `json:"done_ms,omitempty"`
	// FirstSeq and LastSeq are the canonical seqs that touched the lane
	// (the event log highlights a lane by them).
	FirstSeq int `json:"first_seq"`
	LastSeq  int `json:"last_seq"`
	// Version grows with every change, for render caches.
	Version int `json:"version"`
}

// Text is the lane's text so far (no copy is made).
func (l *Lane) Text() string { return l.text.String() }

// Len is the text's length in bytes.
func (l *Lane) Len() int { return l.text.Len() }

// Finished reports whether the lane will not change again.
func (l *Lane) Finished() bool { return l.State != adapters.ItemStreaming }

// ProposalState is a proposal and what became of it.
type ProposalState struct {
	Proposal Proposal             `json:"proposal"`
	Decision *Decision            `json:"decision,omitempty"`
	Result   *adapters.ToolResult `json:"result,omitempty"`
}

// Waiting reports whether the proposal still waits for a decision.
func (p *ProposalState) Waiting() bool { return p.Decision == nil }

// Status is a session's run status, as the store keeps it; the front ends
// that do not see the store name statuses here.
type Status = store.Status

// The run statuses (the store's).
const (
	StatusRunning     = store.StatusRunning
	StatusDone        = store.StatusDone
	StatusFailed      = store.StatusFailed
	StatusInterrupted = store.StatusInterrupted
)

// NewState starts an empty state.
func NewState() *State { return &State{Status: StatusRunning} }

// Turn returns turn n (1-based) for changing, creating it (and any before
// it); a turn shared with a clone is copied first.
func (s *State) Turn(n int) *TurnState {
	for len(s.Turns) < n {
		s.Turns = append(s.Turns, &TurnState{N: len(s.Turns) + 1, byItem: map[string]*Lane{}, own: s.own})
	}
	t := s.Turns[n-1]
	if t.own != s.own {
		t = t.copyFor(s.own)
		s.Turns[n-1] = t
	}
	return t
}

// Clone returns a copy that later updates to either state do not change,
// for a replay's checkpoints and for handing a state to another goroutine.
// It copies only the list of turns: the turns are shared until one side
// changes one (Turn copies it then), so a clone costs a pointer per turn
// and a step after it copies the one turn it changes.
func (s *State) Clone() *State {
	c := *s
	c.Turns = slices.Clone(s.Turns)
	c.own, s.own = new(owner), new(owner)
	return &c
}

// copyFor copies a shared turn for the state that owns own: what Apply
// changes in place (lanes, attempts, proposals) is copied; the log is
// shared with its capacity clipped, so that an append copies it rather
// than write where the other state could see.
func (t *TurnState) copyFor(own *owner) *TurnState {
	c := *t
	c.own = own
	c.Attempts = slices.Clone(t.Attempts)
	c.Log = slices.Clip(t.Log)
	c.byItem = make(map[string]*Lane, len(t.byItem))
	c.lastClosed = nil
	if t.Lanes != nil {
		c.Lanes = make([]*Lane, len(t.Lanes))
	}
	for i, l := range t.Lanes {
		nl := l.clone()
		c.Lanes[i] = nl
		if t.byItem[l.ItemID] == l {
			c.byItem[l.ItemID] = nl
		}
		if t.lastClosed == l {
			c.lastClosed = nl
		}
	}
	if t.Proposals != nil {
		c.Proposals = make([]*ProposalState, len(t.Proposals))
	}
	for i, p := range t.Proposals {
		np := *p
		c.Proposals[i] = &np
	}
	return &c
}

// clone copies a lane with its text.
func (l *Lane) clone() *Lane {
	c := *l
	c.text = strings.Builder{} // a Builder copied by value must not be written to
	c.text.WriteString(l.Text())
	return &c
}

// Current is the latest turn, or nil.
func (s *State) Current() *TurnState {
	if len(s.Turns) == 0 {
		return nil
	}
	return s.Turns[len(s.Turns)-1]
}

// Waiting returns the first proposal still waiting for a decision.
func (s *State) Waiting() *ProposalState {
	if t := s.Current(); t != nil {
		for _, p := range t.Proposals {
			if p.Waiting() {
				return p
			}
		}
	}
	return nil
}

// Apply folds one update into the state.
func (s *State) Apply(u Update) {
	s.Applied++
	if u.SessionID != "" {
		s.SessionID = u.SessionID
	}
	switch u.Kind {
	case UpAssembled:
		t := s.Turn(u.Turn)
		t.Request, t.Budget = u.Request, u.Budget
		if u.Turn > 1 {
			prev := s.Turns[u.Turn-2].Summary
			t.Continues = prev != nil && prev.StopReason == adapters.StopPause
		}
		s.Step = StepAssembled
	case UpAttempt:
		t := s.Turn(u.Turn)
		a := AttemptState{N: u.Attempt, URL: u.URL, HTTPStatus: u.HTTPStatus, Err: u.Err, RetryIn: u.RetryIn}
		if u.HTTPStatus != 0 {
			a.RateLimits = adapters.RateLimitHeaders(u.Header)
			a.Why = WhyLines(u.Header)
		}
		if n := len(t.Attempts); n > 0 && t.Attempts[n-1].N == u.Attempt {
			if a.URL == "" {
				a.URL = t.Attempts[n-1].URL
			}
			if a.RateLimits == nil {
				a.RateLimits = t.Attempts[n-1].RateLimits
			}
			if a.Why == nil {
				a.Why = t.Attempts[n-1].Why
			}
			t.Attempts[n-1] = a
		} else {
			t.Attempts = append(t.Attempts, a)
		}
		if u.Err == "" && u.HTTPStatus >= 200 && u.HTTPStatus < 300 {
			s.Step = StepSent
		}
	case UpStep:
		t := s.Turn(u.Turn)
		if u.Step.Index == 0 {
			s.Step = StepFirstEvent
		}
		t.Log = append(t.Log, LogEntry{Attempt: u.Attempt, OffsetMS: u.OffsetMS, Index: u.Step.Index, Raw: u.Step.Raw, Events: u.Step.Events})
		for _, ev := range u.Step.Events {
			t.apply(ev, u.OffsetMS)
			s.Events++
		}
		if u.Timings != nil {
			t.Timings = u.Timings
		}
	case UpResponse:
		t := s.Turn(u.Turn)
		t.Summary = u.Summary
		if u.Summary != nil && u.Summary.StopReason != adapters.StopToolCall {
			s.Step = StepFinal
		}
	case UpProposal:
		t := s.Turn(u.Turn)
		p := *u.Proposal
		t.Proposals = append(t.Proposals, &ProposalState{Proposal: p})
		s.Step = StepProposals
	case UpDecision:
		t := s.Turn(u.Turn)
		p := t.Proposal(u.Proposal.CallID)
		if p == nil {
			// Decided with no question asked: a proxy's rule edits and
			// its pseudo-calls (edits.go) come as decisions alone.
			p = &ProposalState{}
			t.Proposals = append(t.Proposals, p)
		}
		d := *u.Decision
		p.Decision = &d
		p.Proposal = *u.Proposal
	case UpResult:
		if p := s.Turn(u.Turn).Proposal(u.Result.CallID); p != nil {
			r := *u.Result
			p.Result = &r
		}
		s.Step = StepResults
	case UpValidated:
		s.Layers, s.Output, s.Domain = u.Layers, u.Output, u.Domain
		s.Step = StepValidated
	case UpRegenerate:
		// The verdict that asked again is the regeneration's first; the
		// layers wait for the new answer's (a replay shows the first at
		// its entry: timeline.Replayer).
		s.Layers, s.Output = nil, nil
		failed, _ := regenerable(u.Layers)
		s.Turn(u.Turn).Regenerates = &Regeneration{Turn: u.Turn, Layer: failed.Layer, Detail: failed.Detail, Message: u.Message, FirstValidation: u.Layers}
	case UpFinished:
		s.Status = u.Status
	}
}

// Proposal is the turn's latest proposal of call callID, nil when it has
// none.
func (t *TurnState) Proposal(callID string) *ProposalState {
	for i := len(t.Proposals) - 1; i >= 0; i-- {
		if t.Proposals[i].Proposal.CallID == callID {
			return t.Proposals[i]
		}
	}
	return nil
}

// DropDetail forgets the turn's lanes and event log: a replay of a long
// session keeps them only for the turn it shows.
func (t *TurnState) DropDetail() { t.Lanes, t.Log, t.byItem, t.lastClosed = nil, nil, nil, nil }

// apply folds one canonical event into the turn's lanes.
func (t *TurnState) apply(ev adapters.Event, offset float64) {
	if t.byItem == nil {
		t.byItem = map[string]*Lane{}
	}
	lane := t.byItem[ev.ItemID]
	touch := func(l *Lane) {
		l.LastSeq = ev.Seq
		l.Version++
	}
	switch ev.Type {
	case adapters.EvItemStarted:
		if lane != nil {
			return
		}
		l := &Lane{ItemID: ev.ItemID, Kind: adapters.ItemKind(ev.Kind), CallID: ev.CallID, Name: ev.Name,
			State: adapters.ItemStreaming, StartMS: offset, FirstSeq: ev.Seq}
		touch(l)
		t.Lanes = append(t.Lanes, l)
		t.byItem[ev.ItemID] = l
	case adapters.EvTextDelta, adapters.EvReasoningDelta, adapters.EvRefusalDelta, adapters.EvToolArgsDelta:
		if lane == nil {
			return
		}
		lane.text.WriteString(ev.Delta)
		lane.Deltas++
		touch(lane)
	case adapters.EvItemDone:
		if lane == nil {
			return
		}
		if ev.Final != nil && *ev.Final != lane.text.String() {
			lane.text.Reset()
			lane.text.WriteString(*ev.Final)
		}
		if ev.CallID != "" && lane.CallID == "" {
			lane.CallID = ev.CallID
		}
		lane.State = adapters.ItemClosed
		lane.DoneMS = offset
		t.lastClosed = lane
		touch(lane)
	case adapters.EvToolProposed:
		if l := t.lastClosed; l != nil && l.Kind == adapters.KindToolCall {
			l.State = adapters.ItemParsed
			l.Arguments = ev.Arguments
			touch(l)
		}
	case adapters.EvDiagnostic:
		if l := t.lastClosed; ev.Kind == adapters.DiagToolArgsInvalid && l != nil && l.Kind == adapters.KindToolCall {
			l.State = adapters.ItemInvalid
			touch(l)
		}
	case adapters.EvUsage:
		t.Usage = ev.Usage
	case adapters.EvTerminal:
		e := ev
		t.Terminal = &e
		for _, l := range t.Lanes {
			if l.State == adapters.ItemStreaming {
				l.State = adapters.ItemIncomplete
				touch(l)
			}
		}
	}
}

// SessionInfo is a stored session's metadata, as lists show it.
type SessionInfo = store.SessionInfo
