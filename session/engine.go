package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/registry"
	"github.com/modelwire/modelwire/jsonschema"
	"github.com/modelwire/modelwire/pricing"
	"github.com/modelwire/modelwire/redact"
	"github.com/modelwire/modelwire/store"
	"github.com/modelwire/modelwire/transport"
)

// Config is one session's setup.
type Config struct {
	Scenario *Scenario
	Protocol string
	Provider transport.Provider
	// Model overrides the scenario's model.
	Model    string
	Stream   bool
	History  adapters.HistoryMode
	Policy   Policy
	Timeouts transport.Timeouts
	Retry    transport.Retry
	// Client is reused for every attempt; nil builds one from Timeouts.
	Client *http.Client
	// Faults are recorded with the session (the simulator applies them).
	Faults []string
	// NoRegeneration turns off the one regeneration the engine makes when
	// the parse, schema or domain layer fails (see regenerate).
	NoRegeneration bool
	// Pause, when set, is called at each protocol step (Step* names) and
	// blocks until the person moves on: the walkthrough's step mode. An
	// error (e.g. the context ending) stops the session.
	Pause func(ctx context.Context, step string, turn int) error
	// Fork, when set, continues another session's conversation from one
	// of its turns instead of starting from the first (modelwire fork).
	Fork *Fork
}

// Fork is what a forked session inherits and how it changes what it sends.
type Fork struct {
	// FromTurn is the first turn this session sends; History holds the
	// turns before it (edits already made) and Observed their results.
	FromTurn int
	History  []adapters.Turn
	Observed []ObservedResult
	// Regenerated: the inherited history already holds the session's one
	// regeneration, so the fork makes none.
	Regenerated bool
	// Edit, when set, changes each wire request from FromTurn on before it
	// is shown, recorded and sent.
	Edit func(turn int, req *adapters.HTTPRequest) error
	// Resend, when set, re-sends an application's requests instead of
	// assembling the scenario's (a fork of a proxied or imported session).
	Resend *Resend
}

// The protocol steps at which a walkthrough pauses; the scenario's notes
// are keyed by these names.
const (
	StepAssembled  = "assembled"   // the request is built, not yet sent
	StepSent       = "sent"        // the response headers arrived
	StepFirstEvent = "first_event" // the first stream event arrived
	StepProposals  = "proposals"   // tool proposals wait for decisions
	StepResults    = "results"     // results are about to go back
	StepFinal      = "final"       // the last response is complete
	StepValidated  = "validated"   // the five layers are judged
)

// Steps lists the steps in order.
var Steps = []string{StepAssembled, StepSent, StepFirstEvent, StepProposals, StepResults, StepFinal, StepValidated}

func (s *Session) pause(ctx context.Context, step string, turn int) error {
	if s.cfg.Pause == nil {
		return nil
	}
	return s.cfg.Pause(ctx, step, turn)
}

// UpdateKind names what happened.
type UpdateKind string

// Update kinds, in the order a turn produces them.
const (
	UpStarted   UpdateKind = "started"     // the session exists (SessionID)
	UpAssembled UpdateKind = "assembled"   // the turn's request is built (Request)
	UpAttempt   UpdateKind = "attempt"     // an HTTP attempt got its response headers or failed
	UpStep      UpdateKind = "step"        // one raw event and its canonical events
	UpResponse  UpdateKind = "response"    // the turn's response is complete (Summary)
	UpProposal  UpdateKind = "proposal"    // a proposal waits for a decision
	UpDecision  UpdateKind = "decision"    // a proposal was decided
	UpResult    UpdateKind = "tool_result" // a tool result will be sent back
	UpValidated UpdateKind = "validated"   // the five layers (Layers, Output)
	// UpRegenerate: the answer of turn Turn-1 failed (Layers) and turn Turn
	// asks again with the error (Message).
	UpRegenerate UpdateKind = "regenerate"
	UpFinished   UpdateKind = "finished" // the session ended (Status)
)

// Update is one thing that happened in a session. Observers get every
// update in order, on the session's goroutine.
type Update struct {
	Kind      UpdateKind `json:"kind"`
	SessionID string     `json:"session_id,omitempty"`
	Turn      int        `json:"turn,omitempty"`
	Attempt   int        `json:"attempt,omitempty"`
	At        time.Time  `json:"at"`

	Request *adapters.HTTPRequest `json:"request,omitempty"`
	// Budget is the assembled request's token budget.
	Budget *Budget `json:"budget,omitempty"`
	URL    string  `json:"url,omitempty"`
	// Attempt facts.
	HTTPStatus int                `json:"http_status,omitempty"`
	Header     http.Header        `json:"header,omitempty"`
	Err        string             `json:"error,omitempty"`
	APIError   *adapters.APIError `json:"api_error,omitempty"`
	RetryIn    time.Duration      `json:"retry_in,omitempty"`
	// ResponseBody is a non-streaming or error body.
	ResponseBody []byte `json:"response_body,omitempty"`

	Step     *adapters.Step `json:"step,omitempty"`
	OffsetMS float64        `json:"offset_ms,omitempty"`
	Timings  *Timings       `json:"timings,omitempty"`

	Summary  *adapters.Summary    `json:"summary,omitempty"`
	Proposal *Proposal            `json:"proposal,omitempty"`
	Decision *Decision            `json:"decision,omitempty"`
	Result   *adapters.ToolResult `json:"result,omitempty"`
	Layers   []LayerResult        `json:"layers,omitempty"`
	Output   json.RawMessage      `json:"output,omitempty"`
	// Domain is the domain layer's working (every check, every fact),
	// with a validation whose domain layer was judged.
	Domain *Domain      `json:"domain,omitempty"`
	Status store.Status `json:"status,omitempty"`
	// Message is the text a regeneration sends the model.
	Message string `json:"message,omitempty"`
}

// Timings of one attempt: the chapter's six client time points (13.7.1),
// each in ms from the first, the request's start (so that one is always 0
// and is not kept). Zero means the point never came (no text, say). They
// are never mixed: a reasoning model's first token comes long before its
// first visible text, and headers come before either.
type Timings struct {
	// Headers: the response's status line and headers arrived (the first
	// response; not the first byte of the body).
	Headers float64 `json:"headers_ms"`
	// FirstEvent: the first protocol event (or a whole body) was read.
	FirstEvent float64 `json:"first_event_ms"`
	// FirstToken: the first observable output token — a reasoning, text,
	// refusal or tool-argument delta (end-to-end TTFT).
	FirstToken float64 `json:"first_token_ms"`
	// FirstText: the first visible text (or refusal) delta.
	FirstText float64 `json:"first_text_ms"`
	// Terminal: the terminal event.
	Terminal float64 `json:"terminal_ms"`
	// Server is the provider's own figure, from its clock and its own
	// starting point: shown beside the client's, never in place of one.
	Server *ServerTime `json:"server,omitempty"`
}

// ServerTime is a figure the provider reported of its own time on a
// request (OpenAI's processing time, say).
type ServerTime struct {
	MS float64 `json:"ms"`
	// Source names where it came from (the header, and metric); What
	// says what it measures.
	Source string `json:"source"`
	What   string `json:"what,omitempty"`
}

// ServerTimeOf reads a protocol's server-reported figure from response
// headers; nil when its provider reports none or this response lacks it.
func ServerTimeOf(protocol string, h http.Header) *ServerTime {
	d, ok := registry.Describe(protocol)
	if !ok {
		return nil
	}
	ms, ok := d.ServerTiming.Read(h)
	if !ok {
		return nil
	}
	return &ServerTime{MS: ms, Source: d.ServerTiming.Label(), What: d.ServerTiming.What}
}

// Observer receives updates. It must not block for long: the UI's observer
// coalesces and hands off to its own goroutine.
type Observer func(Update)

// Journal records a session (the store implements it through
// timeline.StoreJournal). A journal error stops the session: nothing may go
// unrecorded.
type Journal interface {
	Record(u Update) error
}

// Result is how a session ended.
type Result struct {
	SessionID string          `json:"session_id"`
	Status    store.Status    `json:"status"` // done or failed
	Layers    []LayerResult   `json:"validation"`
	Output    json.RawMessage `json:"output"`
	// Cost estimates each response's price from the model table.
	Cost *pricing.SessionCost `json:"cost"`
	// Regeneration is set when the engine asked the model once more.
	Regeneration *Regeneration `json:"regeneration,omitempty"`
	// CannotComplete is what a failed session delivers instead of an
	// answer: why, and the evidence observed so far.
	CannotComplete *CannotComplete `json:"cannot_complete,omitempty"`
	// AsSent: the session re-sent an application's requests (Resend), so
	// the layers modelwire cannot judge (how the application parses the
	// answer, its business rules) are skipped, and pass is that none failed.
	AsSent   bool                    `json:"as_sent,omitempty"`
	Turns    []adapters.Summary      `json:"-"`
	Obs      *Observations           `json:"-"`
	History  []adapters.Turn         `json:"-"`
	Requests []*adapters.HTTPRequest `json:"-"`
}

// Passed reports whether every layer passed.
func (r *Result) Passed() bool {
	if len(r.Layers) == 0 {
		return false
	}
	for _, l := range r.Layers {
		if l.Status == Fail || l.Status != Pass && !r.AsSent {
			return false
		}
	}
	return true
}

// Session runs one scenario against one protocol and provider.
type Session struct {
	cfg      Config
	protocol adapters.Protocol
	journal  Journal
	observe  Observer
	decider  Decider
	// seal holds the secrets this session sends (its key, its base URL's
	// userinfo and key parameters), removed from every update it emits.
	seal *redact.Known
	id   string
	now  func() time.Time
	// sleep waits between retries; tests replace it (and now) to check
	// the delays without waiting them out.
	sleep func(ctx context.Context, d time.Duration) error
}

// New prepares a session. The journal and the observer may be nil.
func New(cfg Config, journal Journal, observe Observer, decider Decider) (*Session, error) {
	if cfg.Scenario == nil {
		return nil, errors.New("no scenario")
	}
	p, err := registry.Lookup(cfg.Protocol)
	if err != nil {
		return nil, err
	}
	if cfg.Protocol == adapters.ClaudeCode {
		return nil, errors.New("claude-code can only be decoded, not run")
	}
	if _, err := adapters.CapabilitiesFor(cfg.Provider.Name, cfg.Protocol); err != nil {
		return nil, err
	}
	if cfg.Policy == "" {
		cfg.Policy = PolicyManual
	}
	if cfg.Policy == PolicyManual && decider == nil {
		return nil, ErrNoDecider
	}
	if cfg.History == "" {
		cfg.History = adapters.HistoryFull
	}
	if cfg.Timeouts == (transport.Timeouts{}) {
		cfg.Timeouts = transport.DefaultTimeouts
	}
	if cfg.Retry == (transport.Retry{}) {
		cfg.Retry = transport.DefaultRetry
	}
	if cfg.Client == nil {
		cfg.Client = transport.NewHTTPClient(cfg.Timeouts)
	}
	if observe == nil {
		observe = func(Update) {}
	}
	return &Session{cfg: cfg, protocol: p, journal: journal, observe: observe, decider: decider, now: time.Now, sleep: transport.Sleep,
		seal: sealFor(cfg.Provider)}, nil
}

// emit records an update, then shows it.
func (s *Session) emit(u Update) error {
	if u.At.IsZero() {
		u.At = s.now()
	}
	u.SessionID = s.id
	SealUpdate(&u, s.seal)
	if s.journal != nil {
		if err := s.journal.Record(u); err != nil {
			return fmt.Errorf("recording the session: %w", err)
		}
		if u.Kind == UpStarted && s.id == "" {
			// The journal names the session.
			if n, ok := s.journal.(interface{ SessionID() string }); ok {
				s.id = n.SessionID()
				u.SessionID = s.id
			}
		}
	}
	s.observe(u)
	return nil
}

// Request builds the canonical request of the next turn, given the
// history so far.
func (s *Session) Request(history []adapters.Turn) *adapters.Request {
	req := s.cfg.Scenario.Request(s.cfg.Stream, s.cfg.History)
	if s.cfg.Model != "" {
		req.Model = s.cfg.Model
	}
	if s.cfg.History == adapters.HistoryPreviousResponse {
		yes := true
		req.Store = &yes
	}
	req.Turns = history
	req.Choice = s.cfg.Scenario.ChoiceFor(history)
	return req
}

// Run runs the session to its end: turns until a final answer, a failure
// or the turn limit; then validation. An error means the session could not
// be run or recorded at all; a session that ran and failed is a Result
// with Status "failed".
func (s *Session) Run(ctx context.Context) (*Result, error) {
	res := &Result{Obs: &Observations{}, AsSent: s.cfg.Fork != nil && s.cfg.Fork.Resend != nil}
	if err := s.emit(Update{Kind: UpStarted}); err != nil {
		return nil, err
	}
	res.SessionID = s.id
	var outcome Outcome
	var answer adapters.Turn // the last response, when it was an answer
	sc := s.cfg.Scenario
	first := s.firstTurn()
	if f := s.cfg.Fork; f != nil {
		res.History = append([]adapters.Turn(nil), f.History...)
		res.Obs.Results = append(res.Obs.Results, f.Observed...)
	}
	for turn := first; ; turn++ {
		if turn > sc.TurnLimit {
			outcome.TurnLimitHit = true
			break
		}
		red, err := s.exchange(ctx, res, &outcome, turn, res.History)
		if err != nil {
			return nil, err
		}
		if red == nil {
			break
		}
		sum := *outcome.Final
		if sum.StopReason == adapters.StopPause {
			// Anthropic's pause_turn: the turn is not over. The paused
			// content goes back unchanged as the assistant turn, and the
			// next request lets the model continue it.
			res.History = append(res.History, red.Turn())
			continue
		}
		// Only a completed response that stopped for tools may run them;
		// anything else ends the loop with nothing executed.
		if sum.Terminal != adapters.StatusCompleted || sum.StopReason != adapters.StopToolCall || len(sum.ToolCalls) == 0 {
			if err := s.pause(ctx, StepFinal, turn); err != nil {
				return nil, err
			}
			answer = red.Turn()
			break
		}
		mt := red.Turn()
		if f := s.cfg.Fork; f != nil && f.Resend != nil {
			if unran := f.Resend.unran(sum.ToolCalls); len(unran) > 0 {
				// The application's tools are not modelwire's: a call the
				// parent never ran has no result to send, so the fork ends
				// here with the proposals recorded.
				if err := s.propose(turn, sum.ToolCalls); err != nil {
					return nil, err
				}
				outcome.Stopped = fmt.Sprintf("turn %d proposes %s, which the parent never ran; the fork stops here with the proposal recorded. "+
					"To go on, run the application against `modelwire serve --session %s` (it replays this fork up to the proposal) and let it run the call",
					turn, strings.Join(unran, ", "), s.id)
				outcome.Unanswered = callIDs(sum.ToolCalls)
				break
			}
		}
		if err := s.pause(ctx, StepProposals, turn); err != nil {
			return nil, err
		}
		results, stopped, err := s.decideAndRun(ctx, turn, sum.ToolCalls, res.Obs)
		if err != nil {
			return nil, err
		}
		if stopped == "" {
			if err := s.pause(ctx, StepResults, turn); err != nil {
				return nil, err
			}
		}
		if stopped != "" {
			outcome.Stopped = stopped
			outcome.Unanswered = callIDs(sum.ToolCalls)
			break
		}
		mt.Results = results
		res.History = append(res.History, mt)
	}
	res.Obs.Prompt = s.promptSent(res.Requests)
	res.Obs.Stop = ctx.Done()
	layers, output := Validate(sc, outcome, res.Obs)
	// A fork that re-sends an application's requests never regenerates:
	// asking again is the application's choice, not modelwire's.
	if failed, ok := regenerable(layers); ok && !s.cfg.NoRegeneration && (s.cfg.Fork == nil || !s.cfg.Fork.Regenerated && s.cfg.Fork.Resend == nil) {
		if err := s.regenerate(ctx, res, &outcome, answer, layers, failed); err != nil {
			return nil, err
		}
		layers, output = Validate(sc, outcome, res.Obs)
	}
	if f := s.cfg.Fork; f != nil && f.Resend != nil && f.Resend.Judge != nil && outcome.Stopped == "" && !outcome.TurnLimitHit && len(res.Requests) > 0 {
		layers = f.Resend.Judge(res.Requests[len(res.Requests)-1], outcome)
	}
	res.Layers, res.Output = layers, output
	res.Cost = pricing.PriceSession(s.Request(nil).Model, res.Turns)
	domain := ExplainDomain(sc, layers, output, res.Obs)
	if err := s.emit(Update{Kind: UpValidated, Layers: layers, Output: output, Domain: domain}); err != nil {
		return nil, err
	}
	if err := s.pause(ctx, StepValidated, 0); err != nil {
		return nil, err
	}
	res.Status = StatusDone
	if !res.Passed() {
		res.Status = StatusFailed
		res.CannotComplete = &CannotComplete{Reason: FirstFailure(layers), Evidence: append([]ObservedResult{}, res.Obs.Results...)}
	}
	if err := s.emit(Update{Kind: UpFinished, Status: res.Status}); err != nil {
		return nil, err
	}
	return res, nil
}

// firstTurn is the number of the first turn this session sends.
func (s *Session) firstTurn() int {
	if s.cfg.Fork != nil {
		return s.cfg.Fork.FromTurn
	}
	return 1
}

// exchange makes one turn's request for the given history — encode, show,
// send — and records what came back in res and the outcome. It returns the
// reducer of the response, or nil when none was decoded.
func (s *Session) exchange(ctx context.Context, res *Result, outcome *Outcome, turn int, history []adapters.Turn) (*adapters.Reducer, error) {
	req := s.Request(history)
	var wire *adapters.HTTPRequest
	var err error
	if f := s.cfg.Fork; f != nil && f.Resend != nil {
		wire, err = f.Resend.next(s.cfg.Protocol, s.cfg.Provider.Name, turn, res.Requests, history)
	} else {
		wire, err = s.protocol.Encode(req, s.cfg.Provider.Name)
	}
	if err != nil {
		return nil, fmt.Errorf("encoding turn %d: %w", turn, err)
	}
	if f := s.cfg.Fork; f != nil && f.Edit != nil {
		if err := f.Edit(turn, wire); err != nil {
			return nil, fmt.Errorf("editing turn %d: %w", turn, err)
		}
	}
	res.Requests = append(res.Requests, wire)
	if err := s.emit(Update{Kind: UpAssembled, Turn: turn, Request: wire, Budget: s.budget(ctx, req, wire)}); err != nil {
		return nil, err
	}
	if err := s.pause(ctx, StepAssembled, turn); err != nil {
		return nil, err
	}
	red, tr, err := s.send(ctx, turn, wire)
	if err != nil {
		return nil, err
	}
	outcome.HTTPStatus, outcome.TransportErr, outcome.Retries = tr.status, tr.err, append(outcome.Retries, tr.retries...)
	outcome.RetryNote = tr.note
	if red == nil {
		outcome.Final = tr.errSummary
		return nil, nil
	}
	sum := red.Summary()
	res.Turns = append(res.Turns, sum)
	outcome.Final = &sum
	return red, s.emit(Update{Kind: UpResponse, Turn: turn, Summary: &sum})
}

func callIDs(calls []adapters.ToolCall) []string {
	ids := make([]string, len(calls))
	for i, c := range calls {
		ids[i] = c.CallID
	}
	return ids
}

// propose records a turn's proposals without deciding them (a fork that
// cannot run them).
func (s *Session) propose(turn int, calls []adapters.ToolCall) error {
	for i, c := range calls {
		p := Proposal{Turn: turn, Index: i, Of: len(calls), CallID: c.CallID, Name: c.Name, Arguments: c.Arguments}
		s.cfg.Scenario.check(&p)
		if err := s.emit(Update{Kind: UpProposal, Turn: turn, Proposal: &p}); err != nil {
			return err
		}
	}
	return nil
}

// decideAndRun passes each proposal through the gate, in call order, and
// runs the approved ones. Every proposed call gets exactly one result, by
// call_id. A non-empty stopped means the session ends here (the decider
// gave up, e.g. the person quit).
func (s *Session) decideAndRun(ctx context.Context, turn int, calls []adapters.ToolCall, obs *Observations) ([]adapters.ToolResult, string, error) {
	sc := s.cfg.Scenario
	results := make([]adapters.ToolResult, 0, len(calls))
	for i, c := range calls {
		p := Proposal{Turn: turn, Index: i, Of: len(calls), CallID: c.CallID, Name: c.Name, Arguments: c.Arguments}
		sc.check(&p)
		if err := s.emit(Update{Kind: UpProposal, Turn: turn, Proposal: &p}); err != nil {
			return nil, "", err
		}
		d, ok := policyDecision(s.cfg.Policy, p)
		for !ok {
			var err error
			d, err = s.decider.Decide(ctx, p)
			if err != nil {
				if ctx.Err() != nil {
					return nil, "cancelled while waiting for a decision", nil
				}
				return nil, "no decision: " + err.Error(), nil
			}
			d.By = "person"
			ok = true
			if d.Kind == Edited {
				args, err := sc.CheckEdit(c.Name, d.Arguments)
				if err != nil {
					p.EditError = err.Error()
					ok = false
					continue
				}
				d.Arguments = args
			}
			if d.Kind == Approved && !p.Valid() {
				// A person may approve a call that fails its schema; the
				// tool still never runs on invalid arguments.
				d = Decision{Kind: Rejected, Reason: "approved, but the arguments fail the tool's schema: " + jsonschema.Joined(p.Violations), By: "gate"}
			}
		}
		if err := s.emit(Update{Kind: UpDecision, Turn: turn, Proposal: &p, Decision: &d}); err != nil {
			return nil, "", err
		}
		r := adapters.ToolResult{CallID: c.CallID, Name: c.Name}
		args := c.Arguments
		switch d.Kind {
		case Approved, Edited:
			if d.Kind == Edited {
				args = d.Arguments
			}
			r.Content, r.IsError = sc.RunTool(ctx, c.Name, args)
		default:
			reason := d.Reason
			if reason == "" {
				reason = "rejected"
			}
			if !p.Valid() && !strings.Contains(reason, "schema") {
				// The model is told what was wrong, so it can correct
				// the call: the gate's words, not only the person's.
				reason += "; the arguments fail the tool's schema: " + jsonschema.Joined(p.Violations)
			}
			r.Content, r.IsError = "call rejected by the application: "+reason, true
		}
		obs.Results = append(obs.Results, ObservedResult{CallID: c.CallID, Name: c.Name, Arguments: args, Content: r.Content, IsError: r.IsError})
		if err := s.emit(Update{Kind: UpResult, Turn: turn, Result: &r}); err != nil {
			return nil, "", err
		}
		results = append(results, r)
	}
	return results, "", nil
}
