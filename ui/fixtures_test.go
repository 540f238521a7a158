package ui

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/registry"
	"github.com/modelwire/modelwire/app"
	"github.com/modelwire/modelwire/samples"
	"github.com/modelwire/modelwire/session"
)

// The package's models run the embedded scenarios unless a test gives
// another catalog (the program always passes app.Catalog).
func init() { defaultCatalog = app.Catalog{} }

// The fixtures build a refund session as the engine would report it —
// assembled requests, attempts, raw events with their canonical events,
// proposals, decisions, results, validation — without a network, so the
// model, golden, replay and benchmark tests do not depend on the
// simulator.

func refund(t testing.TB) *session.Scenario {
	t.Helper()
	sc, err := samples.Lookup("refund")
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// chunks cuts s into pieces of about n bytes at rune boundaries.
func chunks(s string, n int) []string {
	var out []string
	for len(s) > 0 {
		i := min(n, len(s))
		for i < len(s) && s[i]&0xC0 == 0x80 {
			i++
		}
		out = append(out, s[:i])
		s = s[i:]
	}
	return out
}

// turnSteps is one scripted turn as the engine reports it up to its
// response, plus the calls it proposes.
type turnSteps struct {
	pre   []session.Update // assembled, attempt, steps, response
	calls []adapters.ToolCall
	final string
}

// fixedAt makes every update's time deterministic (goldens).
var fixedAt = time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)

func scriptTurn(sc *session.Scenario, rc RunConfig, k int) turnSteps {
	mt := sc.Script[k-1]
	var ts turnSteps
	req := fixtureRequest(sc, rc, k)
	ts.pre = append(ts.pre,
		session.Update{Kind: session.UpAssembled, Turn: k, Request: req, At: fixedAt},
		session.Update{Kind: session.UpAttempt, Turn: k, Attempt: 1, URL: "http://127.0.0.1:1/v1/responses", HTTPStatus: 200,
			Timings: &session.Timings{Headers: 4}, At: fixedAt})
	seq := 0
	off := 5.0
	index := 0
	firstToken, firstText, terminal := 0.0, 0.0, 0.0
	step := func(name string, data any, evs ...adapters.Event) {
		for i := range evs {
			seq++
			evs[i].Seq = seq
			if adapters.IsOutputToken(&evs[i]) && firstToken == 0 {
				firstToken = off
			}
			if adapters.IsVisibleText(&evs[i]) && firstText == 0 {
				firstText = off
			}
			if evs[i].Type == adapters.EvTerminal {
				terminal = off
			}
		}
		b, _ := json.Marshal(data)
		st := adapters.Step{Index: index, Raw: adapters.RawEvent{Event: name, Data: string(b)}, Events: evs}
		index++
		ts.pre = append(ts.pre, session.Update{Kind: session.UpStep, Turn: k, Attempt: 1, Step: &st, OffsetMS: off, At: fixedAt})
		off += 1.5
	}
	respID := fmt.Sprintf("resp_%d", k)
	step("response.created", map[string]any{"type": "response.created", "id": respID},
		adapters.Event{Type: adapters.EvResponseStarted, ResponseID: respID, Model: "sim-model"})
	for j, it := range mt.Items {
		id := fmt.Sprintf("it_%d_%d", k, j)
		ev := adapters.Event{Type: adapters.EvItemStarted, ItemID: id, Kind: string(it.Kind), Name: it.Name}
		text, dtype := it.Text, adapters.EvTextDelta
		switch it.Kind {
		case adapters.KindToolCall:
			ev.CallID = fmt.Sprintf("call_%d_%d", k, j)
			text, dtype = compactJSON(it.Arguments), adapters.EvToolArgsDelta
		case adapters.KindReasoning:
			dtype = adapters.EvReasoningDelta
		case adapters.KindRefusal:
			dtype = adapters.EvRefusalDelta
		}
		step("response.output_item.added", map[string]any{"type": "response.output_item.added", "item": id}, ev)
		for _, c := range chunks(text, 12) {
			step(string(dtype), map[string]any{"type": string(dtype), "item_id": id, "delta": c},
				adapters.Event{Type: dtype, ItemID: id, CallID: ev.CallID, Delta: c})
		}
		done := []adapters.Event{{Type: adapters.EvItemDone, ItemID: id, CallID: ev.CallID}}
		if it.Kind == adapters.KindToolCall {
			args := json.RawMessage(compactJSON(it.Arguments))
			done = append(done, adapters.Event{Type: adapters.EvToolProposed, CallID: ev.CallID, Name: it.Name, Arguments: args})
			ts.calls = append(ts.calls, adapters.ToolCall{CallID: ev.CallID, Name: it.Name, Arguments: args})
		}
		if it.Kind == adapters.KindMessage {
			ts.final = text
		}
		step("response.output_item.done", map[string]any{"type": "response.output_item.done", "item": id}, done...)
	}
	stop := adapters.StopFinal
	if len(ts.calls) > 0 {
		stop = adapters.StopToolCall
	}
	u := mt.Usage
	step("response.completed", map[string]any{"type": "response.completed"},
		adapters.Event{Type: adapters.EvUsage, Usage: &u},
		adapters.Event{Type: adapters.EvTerminal, Status: adapters.StatusCompleted, StopReason: stop, ProviderStopReason: "completed"})
	end := adapters.Step{Index: -1}
	ts.pre = append(ts.pre, session.Update{Kind: session.UpStep, Turn: k, Attempt: 1, Step: &end, OffsetMS: off, At: fixedAt,
		Timings: &session.Timings{Headers: 4, FirstEvent: 5, FirstToken: firstToken, FirstText: firstText, Terminal: terminal}})
	ts.pre = append(ts.pre, session.Update{Kind: session.UpResponse, Turn: k, At: fixedAt,
		Summary: &adapters.Summary{Protocol: rc.Protocol, Terminal: adapters.StatusCompleted, StopReason: stop, ToolCalls: ts.calls}})
	return ts
}

// fixtureRequest is turn k's request as the engine encodes it: the
// sources, then each earlier script turn with its calls (ids as
// scriptTurn names them) and their results, and the tool choice the
// scenario sends after them (none once the evidence is complete).
func fixtureRequest(sc *session.Scenario, rc RunConfig, k int) *adapters.HTTPRequest {
	if k == 1 {
		return preview(sc, rc)
	}
	req := sc.Request(rc.Stream, rc.History)
	if rc.History == adapters.HistoryPreviousResponse {
		yes := true
		req.Store = &yes
	}
	for j := 1; j < k; j++ {
		t := adapters.Turn{ResponseID: fmt.Sprintf("resp_%d", j)}
		for i, it := range sc.Script[j-1].Items {
			it.ID = fmt.Sprintf("it_%d_%d", j, i)
			if it.Kind == adapters.KindToolCall {
				it.CallID = fmt.Sprintf("call_%d_%d", j, i)
				it.Arguments = json.RawMessage(compactJSON(it.Arguments))
				content, isErr := sc.RunTool(context.Background(), it.Name, it.Arguments)
				t.Results = append(t.Results, adapters.ToolResult{CallID: it.CallID, Name: it.Name, Content: content, IsError: isErr})
			}
			t.Items = append(t.Items, it)
		}
		req.Turns = append(req.Turns, t)
	}
	req.Choice = sc.ChoiceFor(req.Turns)
	p, err := registry.Lookup(rc.Protocol)
	if err != nil {
		panic(err)
	}
	w, err := p.Encode(req, rc.Provider)
	if err != nil {
		panic(err)
	}
	return w
}

// passLayers are five passing layers, as the refund case earns them.
func passLayers() []session.LayerResult {
	return []session.LayerResult{
		{Layer: session.LayerTransport, Status: session.Pass, Detail: "HTTP 200, whole stream"},
		{Layer: session.LayerProtocol, Status: session.Pass, Detail: "completed, every call answered"},
		{Layer: session.LayerParse, Status: session.Pass, Detail: "one JSON object"},
		{Layer: session.LayerSchema, Status: session.Pass, Detail: "matches refund_assessment"},
		{Layer: session.LayerDomain, Status: session.Pass, Detail: "cap 13000 = 18000 − 3000 − 2000; needs_review"},
	}
}

// scriptedSession is the whole refund session with every call approved.
func scriptedSession(t testing.TB, sc *session.Scenario, rc RunConfig) []session.Update {
	ups := []session.Update{{Kind: session.UpStarted, SessionID: "fixture", At: fixedAt}}
	final := ""
	for k := 1; k <= len(sc.Script); k++ {
		ts := scriptTurn(sc, rc, k)
		ups = append(ups, ts.pre...)
		for i, c := range ts.calls {
			p := session.Proposal{Turn: k, Index: i, Of: len(ts.calls), CallID: c.CallID, Name: c.Name, Arguments: c.Arguments, Known: true}
			ups = append(ups, session.Update{Kind: session.UpProposal, Turn: k, Proposal: &p, At: fixedAt})
			d := session.Decision{Kind: session.Approved, By: "person"}
			ups = append(ups, session.Update{Kind: session.UpDecision, Turn: k, Proposal: &p, Decision: &d, At: fixedAt})
			content, isErr := sc.RunTool(context.Background(), c.Name, c.Arguments)
			ups = append(ups, session.Update{Kind: session.UpResult, Turn: k, At: fixedAt,
				Result: &adapters.ToolResult{CallID: c.CallID, Name: c.Name, Content: content, IsError: isErr}})
		}
		if ts.final != "" {
			final = ts.final
		}
	}
	out := json.RawMessage(compactJSON([]byte(final)))
	ups = append(ups, session.Update{Kind: session.UpValidated, Layers: passLayers(), Output: out, Domain: domainOf(sc, rc, ups, out), At: fixedAt},
		session.Update{Kind: session.UpFinished, Status: "done", At: fixedAt})
	for i := range ups {
		ups[i].SessionID = "fixture"
	}
	return ups
}

// domainOf is the domain layer's working for an answer after the results
// among ups, as the engine reports it with the validation.
func domainOf(sc *session.Scenario, rc RunConfig, ups []session.Update, out json.RawMessage) *session.Domain {
	obs := &session.Observations{Prompt: session.PromptOf(sc.Request(rc.Stream, rc.History))}
	for _, u := range ups {
		if u.Kind == session.UpResult {
			r := u.Result
			obs.Results = append(obs.Results, session.ObservedResult{CallID: r.CallID, Name: r.Name, Content: r.Content, IsError: r.IsError})
		}
	}
	return session.ExplainDomain(sc, passLayers(), out, obs)
}

// fakeBackend plays the scripted refund session through the hooks, as the
// engine does: observing every update, pausing at each step, and asking
// the decider for each proposal.
type fakeBackend struct {
	started chan RunConfig
}

func (b *fakeBackend) Run(ctx context.Context, sc *session.Scenario, rc RunConfig, h Hooks) error {
	if b.started != nil {
		b.started <- rc
	}
	pause := func(step string, turn int) error {
		if h.Pause == nil {
			return nil
		}
		return h.Pause(ctx, step, turn)
	}
	h.Observe(session.Update{Kind: session.UpStarted, SessionID: "fake"})
	final := ""
	var results []session.Update // the results sent back, for the checks
	for k := 1; k <= len(sc.Script); k++ {
		ts := scriptTurn(sc, rc, k)
		first := true
		for _, u := range ts.pre {
			u.SessionID = "fake"
			h.Observe(u)
			var err error
			switch {
			case u.Kind == session.UpAssembled:
				err = pause(session.StepAssembled, k)
			case u.Kind == session.UpAttempt:
				err = pause(session.StepSent, k)
			case u.Kind == session.UpStep && first:
				first = false
				err = pause(session.StepFirstEvent, k)
			}
			if err != nil {
				return err
			}
		}
		if len(ts.calls) == 0 {
			final = ts.final
			if err := pause(session.StepFinal, k); err != nil {
				return err
			}
			break
		}
		if err := pause(session.StepProposals, k); err != nil {
			return err
		}
		for i, c := range ts.calls {
			p := session.Proposal{Turn: k, Index: i, Of: len(ts.calls), CallID: c.CallID, Name: c.Name, Arguments: c.Arguments, Known: true}
			h.Observe(session.Update{Kind: session.UpProposal, SessionID: "fake", Turn: k, Proposal: &p})
			var d session.Decision
			for {
				var err error
				if d, err = h.Decider.Decide(ctx, p); err != nil {
					return err
				}
				if d.Kind != session.Edited {
					break
				}
				args, err := sc.CheckEdit(c.Name, d.Arguments)
				if err == nil {
					d.Arguments = args
					break
				}
				p.EditError = err.Error()
			}
			d.By = "person"
			h.Observe(session.Update{Kind: session.UpDecision, SessionID: "fake", Turn: k, Proposal: &p, Decision: &d})
			args := c.Arguments
			if d.Kind == session.Edited {
				args = d.Arguments
			}
			r := adapters.ToolResult{CallID: c.CallID, Name: c.Name}
			if d.Kind == session.Rejected {
				r.Content, r.IsError = "call rejected by the application: "+d.Reason, true
			} else {
				r.Content, r.IsError = sc.RunTool(ctx, c.Name, args)
			}
			h.Observe(session.Update{Kind: session.UpResult, SessionID: "fake", Turn: k, Result: &r})
			results = append(results, session.Update{Kind: session.UpResult, Result: &r})
		}
		if err := pause(session.StepResults, k); err != nil {
			return err
		}
	}
	out := json.RawMessage(compactJSON([]byte(final)))
	h.Observe(session.Update{Kind: session.UpValidated, SessionID: "fake", Layers: passLayers(), Output: out, Domain: domainOf(sc, rc, results, out)})
	if err := pause(session.StepValidated, 0); err != nil {
		return err
	}
	h.Observe(session.Update{Kind: session.UpFinished, SessionID: "fake", Status: "done"})
	return nil
}

// screenText strips a view to plain text.
func screenText(s string) string { return ansiStrip(s) }

func contains(t *testing.T, screen string, want ...string) {
	t.Helper()
	plain := screenText(screen)
	for _, w := range want {
		if !strings.Contains(plain, w) {
			t.Errorf("screen lacks %q:\n%s", w, plain)
		}
	}
}
