package app

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/diff"
	"github.com/modelwire/modelwire/jsonschema"
	"github.com/modelwire/modelwire/samples"
	"github.com/modelwire/modelwire/session"
	"github.com/modelwire/modelwire/store"
	"github.com/modelwire/modelwire/validate"
)

// ForkEdits are what a fork changes, as `modelwire fork` and the
// workbench's fork dialog give them. The messages of a planning error
// name the fork command's flags: they are its words for each edit.
type ForkEdits struct {
	// Sets are body.PATH=JSON edits of every request body the fork sends.
	Sets []string
	// Body is the fork turn's whole request body, edited; BodyName says
	// where it came from (a file name), for the record and messages.
	Body     []byte
	BodyName string
	// Results replace earlier turns' tool results: the ref is
	// [TURN:]CALL_ID, the value the new content.
	Results []ForkResult
	// Provider, Protocol and Model change the parent's ("" keeps it).
	Provider, Protocol, Model string
}

// ForkResult is one edited tool result.
type ForkResult struct{ Ref, Content string }

// ForkPlan is what a fork inherits from its parent and what it changes.
type ForkPlan struct {
	// Parent is the parent session as stored.
	Parent *store.Session
	Turn   int
	// history and observed are the parent's turns before Turn, with the
	// tool-result edits made.
	history  []adapters.Turn
	observed []session.ObservedResult
	// ops edit every request body the fork sends (Sets, Body).
	ops []diff.Op
	// Results are the edited tool results.
	Results map[store.CallRef]string
	edits   ForkEdits
	// Changed are the provider, model and protocol the fork changes.
	Changed map[string]string
	// app is set for a fork of an application's session (forkapp.go).
	app *appFork
}

// PlanFork reads the parent's turns before turn and checks the edits
// against them. Bad input (a turn out of range, a call that is not there,
// a body edit that does not apply) is a *SetupError.
func PlanFork(db *store.DB, parentID string, turn int, e ForkEdits) (*ForkPlan, error) {
	s, turns, err := db.Turns(parentID)
	if err != nil {
		return nil, err
	}
	bad := func(format string, a ...any) error { return &SetupError{fmt.Errorf(format, a...)} }
	last := 0
	if len(turns) > 0 {
		last = turns[len(turns)-1].Turn
	}
	if turn < 1 || turn > last {
		return nil, bad("--turn %d: session %s has turns 1 to %d", turn, parentID, last)
	}
	if IsApplication(s) {
		return planResend(s, turns, turn, e)
	}
	p := &ForkPlan{Parent: s, Turn: turn, Results: map[store.CallRef]string{}, edits: e, Changed: map[string]string{}}
	for _, c := range []struct{ name, v, old string }{{"provider", e.Provider, s.Provider}, {"protocol", e.Protocol, s.Protocol}, {"model", e.Model, s.Model}} {
		if c.v != "" && c.v != c.old {
			p.Changed[c.name] = c.v
		}
	}

	// The inherited turns, with the tool results edited.
	if err := p.resolveResults(turns, e.Results); err != nil {
		return nil, err
	}
	for _, t := range turns {
		if t.Turn >= turn {
			break
		}
		h := t.History()
		h.FollowUp = regenerationAsked(s, t.Turn)
		for i, r := range h.Results {
			if c, ok := p.Results[store.CallRef{Turn: t.Turn, CallID: r.CallID}]; ok {
				h.Results[i].Content = c
			}
		}
		p.history = append(p.history, h)
		for _, c := range t.Calls {
			if !c.HasResult {
				continue
			}
			args := c.Arguments
			if len(c.Edited) > 0 {
				args = c.Edited
			}
			content := c.Result
			if ed, ok := p.Results[store.CallRef{Turn: t.Turn, CallID: c.CallID}]; ok {
				content = ed
			}
			p.observed = append(p.observed, session.ObservedResult{CallID: c.CallID, Name: c.Name, Arguments: args, Content: content, IsError: c.IsError})
		}
	}

	// The body edits, checked against the parent's own request of that
	// turn when the fork speaks the same protocol.
	var original []byte
	for _, t := range turns {
		if t.Turn == turn {
			original = t.Attempt.RequestBody
		}
	}
	if err := p.bodyEdits(original); err != nil {
		return nil, err
	}
	_, reprotocol := p.Changed["protocol"]
	if !reprotocol && len(p.ops) > 0 {
		if _, err := diff.Apply(original, p.ops); err != nil {
			return nil, bad("--set: %v (in turn %d's request)", err, turn)
		}
	}
	return p, nil
}

// bodyEdits reads the --set and --body edits: ops made on every request
// body the fork sends (--body's as what changed from original, the
// parent's request of the fork's turn).
func (p *ForkPlan) bodyEdits(original []byte) error {
	bad := func(format string, a ...any) error { return &SetupError{fmt.Errorf(format, a...)} }
	e := p.edits
	for _, set := range e.Sets {
		op, err := ParseSet(set)
		if err != nil {
			return &SetupError{err}
		}
		p.ops = append(p.ops, op)
	}
	if e.Body == nil {
		return nil
	}
	if _, reprotocol := p.Changed["protocol"]; reprotocol {
		return bad("--body and --protocol: the edited body is in %s's words; change one or the other", p.Parent.Protocol)
	}
	edited, err := jsonschema.ParseJSON(e.Body)
	if _, isObj := edited.(map[string]any); err != nil || !isObj {
		return bad("--body %s: not a JSON object", e.BodyName)
	}
	orig, err := jsonschema.ParseJSON(original)
	if err != nil {
		return bad("--body: turn %d's recorded request body is not JSON", p.Turn)
	}
	p.ops = append(p.ops, diff.Patch(orig, edited)...)
	return nil
}

// regenerationAsked is the message that followed turn's answer when the
// engine asked again (a regeneration, recorded as the verdict on that
// turn's answer), so the fork sends the history the parent sent.
func regenerationAsked(s *store.Session, turn int) string {
	for _, v := range s.Validations {
		if v.Turn == turn && v.Status == validate.Fail {
			return session.RegenerationMessage(validate.FromStored(v.Validation))
		}
	}
	return ""
}

// resolveResults finds each edited result's call among the turns before
// the fork's: a call_id alone must name one call (Gemini numbers its ids
// afresh each turn: then the turn says which).
func (p *ForkPlan) resolveResults(turns []store.TurnRecord, results []ForkResult) error {
	var known []string
	where := map[string][]int{}
	for _, t := range turns {
		if t.Turn >= p.Turn {
			break
		}
		for _, c := range t.Calls {
			if c.HasResult {
				if len(where[c.CallID]) == 0 {
					known = append(known, c.CallID)
				}
				where[c.CallID] = append(where[c.CallID], t.Turn)
			}
		}
	}
	bad := func(format string, a ...any) error { return &SetupError{fmt.Errorf(format, a...)} }
	for _, r := range results {
		callID, turn := r.Ref, 0
		if t, c, ok := strings.Cut(r.Ref, ":"); ok {
			if n, err := strconv.Atoi(t); err == nil {
				callID, turn = c, n
			}
		}
		turnsOf := where[callID]
		switch {
		case len(known) == 0:
			return bad("--tool-result %s: session %s has no tool results before turn %d", r.Ref, p.Parent.ID, p.Turn)
		case len(turnsOf) == 0:
			return bad("--tool-result %s: no such call before turn %d (there are %s)", callID, p.Turn, strings.Join(known, ", "))
		case turn == 0 && len(turnsOf) > 1:
			return bad("--tool-result %s: that call_id answers calls in turns %v; name one as TURN:%s", callID, turnsOf, callID)
		case turn == 0:
			turn = turnsOf[0]
		case !slices.Contains(turnsOf, turn):
			return bad("--tool-result %s: turn %d has no call %s (it is in turn %v)", r.Ref, turn, callID, turnsOf)
		}
		p.Results[store.CallRef{Turn: turn, CallID: callID}] = strings.TrimRight(r.Content, "\r\n")
	}
	return nil
}

// ParseSet reads a body.PATH=JSON edit.
func ParseSet(set string) (diff.Op, error) {
	path, value, ok := strings.Cut(set, "=")
	rest, isBody := strings.CutPrefix(path, "body.")
	if !isBody {
		rest, isBody = strings.CutPrefix(path, "body/")
	}
	if !ok || !isBody || rest == "" {
		return diff.Op{}, fmt.Errorf("--set %q: want body.PATH=JSON, e.g. body.tools/0/description='\"…\"'", set)
	}
	v, err := jsonschema.ParseJSON([]byte(value))
	if err != nil {
		return diff.Op{}, fmt.Errorf("--set %s: %q is not JSON (a string needs its quotes: '\"text\"')", path, value)
	}
	return diff.Op{Path: diff.SplitPath(rest), Value: v}, nil
}

// Fork is the engine's side of the fork.
func (p *ForkPlan) Fork() *session.Fork {
	fk := &session.Fork{FromTurn: p.Turn, History: p.history, Observed: p.observed}
	if p.app != nil {
		fk.Resend = p.app.resend
	}
	for _, h := range p.history {
		fk.Regenerated = fk.Regenerated || h.FollowUp != ""
	}
	if len(p.ops) > 0 {
		ops := p.ops
		fk.Edit = func(turn int, req *adapters.HTTPRequest) error {
			body, err := diff.Apply(req.Body, ops)
			if err != nil {
				return err
			}
			req.Body = body
			return nil
		}
	}
	return fk
}

// Record is the fork as the session's parameters keep it.
func (p *ForkPlan) Record() map[string]any {
	m := map[string]any{"parent": p.Parent.ID, "turn": p.Turn}
	if len(p.edits.Sets) > 0 {
		m["set"] = p.edits.Sets
	}
	if p.edits.Body != nil {
		m["body"] = p.ops
	}
	if len(p.Results) > 0 {
		rs := map[string]string{}
		for r, c := range p.Results {
			rs[fmt.Sprintf("%d:%s", r.Turn, r.CallID)] = c
		}
		m["tool_results"] = rs
	}
	for k, v := range p.Changed {
		m[k] = v
	}
	if p.app != nil {
		m["as_sent"] = true // the application's request re-sent, not a scenario's assembled
	}
	return m
}

// BodyChanges is how many values the edited body changed.
func (p *ForkPlan) BodyChanges() int { return len(p.ops) - len(p.edits.Sets) }

// Stream is whether the parent streamed (nil when it did not record it).
func (p *ForkPlan) Stream() *bool {
	var params struct {
		Stream *bool `json:"stream"`
	}
	if json.Unmarshal(p.Parent.Manifest.Parameters, &params) != nil {
		return nil
	}
	return params.Stream
}

// Setup is the fork as the workbench runs it: the parent's scenario,
// provider, protocol and model (or the changed ones), every decision
// asked for, the full history sent (a provider's stored chain holds the
// parent's results, not the edited ones).
func (p *ForkPlan) Setup() (session.Setup, error) {
	s := p.Parent
	st := session.Setup{Protocol: s.Protocol, Provider: s.Provider, Model: s.Model, Stream: true,
		History: adapters.HistoryFull, Policy: session.PolicyManual}
	if p.app == nil {
		sc, err := samples.Lookup(s.ScenarioName())
		if err != nil {
			return session.Setup{}, &SetupError{fmt.Errorf("session %s's scenario: %w", s.ID, err)}
		}
		st.Scenario = sc
	}
	if v, ok := p.Changed["provider"]; ok {
		st.Provider = v
	}
	if v, ok := p.Changed["protocol"]; ok {
		st.Protocol = v
	}
	if v, ok := p.Changed["model"]; ok {
		st.Model = v
	}
	if st.Provider == s.Provider && st.Provider != adapters.ProviderSim {
		st.BaseURL = s.BaseURL
	}
	if b := p.Stream(); b != nil {
		st.Stream = *b
	}
	if err := p.Apply(&st); err != nil {
		return session.Setup{}, err
	}
	return st, nil
}

// Apply makes st this fork: its parent, what it inherits and changes, and
// for a fork of an application's session the stand-in for the
// application (its scenario, and the request's own streaming: the body
// decides). st's provider and base URL must be set.
func (p *ForkPlan) Apply(st *session.Setup) error {
	st.Parent, st.Fork, st.ForkResults = p.Parent.ID, p.Fork(), p.Results
	if st.Params == nil {
		st.Params = map[string]any{}
	}
	st.Params["fork"] = p.Record()
	if p.app == nil {
		return nil
	}
	if err := p.appSetup(st); err != nil {
		return &SetupError{err}
	}
	return nil
}

// Application reports whether the fork re-sends an application's
// requests (forkapp.go) rather than a scenario's.
func (p *ForkPlan) Application() bool { return p.app != nil }
