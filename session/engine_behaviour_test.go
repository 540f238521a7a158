package session_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/samples"
	"github.com/modelwire/modelwire/session"
	"github.com/modelwire/modelwire/transport"
	"github.com/modelwire/modelwire/validate"
)

// The engine's public behaviours, each against the simulator on loopback:
// step-mode pauses, the approval gate, retries and their delays,
// cancellation, the turn limit and a failing journal. Wall time is never
// measured: the clock and the wait between retries are injected.

// rig is one session under test with everything it did on record.
type rig struct {
	t   *testing.T
	cfg session.Config
	// journal, when set, records the session (nil: none).
	journal session.Journal
	decider session.Decider
	// ctx is the context Run gets; cancel ends it.
	ctx    context.Context
	cancel context.CancelFunc

	mu      sync.Mutex
	log     []string // "POST /path", "sleep 1s", "tool name args", in order
	sleeps  []time.Duration
	ups     []session.Update
	clockMS atomic.Int64
	// onSleep, when set, runs inside the injected sleep (e.g. to cancel).
	onSleep func(d time.Duration) error
}

// newRig builds a session of scenario on the simulator with faults; every
// HTTP request, wait and tool run is logged.
func newRig(t *testing.T, scenario, faults string) *rig {
	t.Helper()
	sc, err := samples.Lookup(scenario)
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{t: t}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	t.Cleanup(r.cancel)
	own := *sc
	own.Executors = map[string]session.Executor{}
	for _, tool := range sc.Tools {
		name := tool.Name
		inner := sc.Executors[name]
		own.Executors[name] = func(ctx context.Context, args json.RawMessage) (string, bool) {
			r.logf("tool %s %s", name, args)
			if inner != nil {
				return inner(ctx, args)
			}
			return (&session.Scenario{Tools: sc.Tools}).RunTool(ctx, name, args)
		}
	}
	r.cfg = session.Config{Scenario: &own, Protocol: adapters.AnthropicMessages, Stream: true, Policy: session.PolicyAuto,
		Provider: transport.Provider{Name: "sim", BaseURL: simBase(t, scenario, faults), Key: "k"},
		Retry:    transport.Retry{Max: 3, Base: 400 * time.Millisecond, MaxDelay: 8 * time.Second},
		Client:   &http.Client{Transport: loggingTransport{r}}}
	return r
}

func (r *rig) logf(format string, a ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.log = append(r.log, fmt.Sprintf(format, a...))
}

// entries returns the log lines that start with prefix.
func (r *rig) entries(prefix string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, l := range r.log {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return out
}

type loggingTransport struct{ r *rig }

func (l loggingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	// The budget's count_tokens request is not a model request: the log
	// keeps only what the tests order.
	if !strings.HasSuffix(req.URL.Path, "count_tokens") {
		l.r.logf("POST %s", req.URL.Path)
	}
	return http.DefaultTransport.RoundTrip(req)
}

// now is the fake clock: each reading is 1 ms after the last, so the
// order of readings is visible in the timings; advance jumps it.
func (r *rig) now() time.Time {
	return time.Unix(1_800_000_000, 0).Add(time.Duration(r.clockMS.Add(1)) * time.Millisecond)
}

func (r *rig) advance(d time.Duration) { r.clockMS.Add(d.Milliseconds()) }

func (r *rig) sleep(ctx context.Context, d time.Duration) error {
	r.logf("sleep %v", d)
	r.mu.Lock()
	r.sleeps = append(r.sleeps, d)
	r.mu.Unlock()
	if r.onSleep != nil {
		if err := r.onSleep(d); err != nil {
			return err
		}
	}
	r.advance(d)
	return ctx.Err()
}

// run runs the session to its end.
func (r *rig) run() (*session.Result, error) {
	r.t.Helper()
	s, err := session.New(r.cfg, r.journal, func(u session.Update) {
		r.mu.Lock()
		r.ups = append(r.ups, u)
		r.mu.Unlock()
	}, r.decider)
	if err != nil {
		r.t.Fatal(err)
	}
	s.SetClockForTest(r.now, r.sleep)
	return s.Run(r.ctx)
}

func (r *rig) updates(kind session.UpdateKind) []session.Update {
	var out []session.Update
	for _, u := range r.ups {
		if u.Kind == kind {
			out = append(out, u)
		}
	}
	return out
}

func layer(res *session.Result, name validate.Layer) session.LayerResult {
	for _, l := range res.Layers {
		if l.Layer == name {
			return l
		}
	}
	return session.LayerResult{}
}

// ---- step mode -------------------------------------------------------------

// The walkthrough pauses at every protocol step, in order, with the turn
// it belongs to; the refund case is three turns, two of them with tools.
func TestPauseVisitsEveryStepInOrder(t *testing.T) {
	r := newRig(t, "refund", "")
	var steps []string
	r.cfg.Pause = func(ctx context.Context, step string, turn int) error {
		steps = append(steps, fmt.Sprintf("%s/%d", step, turn))
		return nil
	}
	res, err := r.run()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"assembled/1", "sent/1", "first_event/1", "proposals/1", "results/1",
		"assembled/2", "sent/2", "first_event/2", "proposals/2", "results/2",
		"assembled/3", "sent/3", "first_event/3", "final/3",
		"validated/0",
	}
	if !reflect.DeepEqual(steps, want) {
		t.Fatalf("steps\n got %v\nwant %v", steps, want)
	}
	if !res.Passed() {
		t.Fatalf("layers %+v", res.Layers)
	}
}

// A pause that returns an error (the person quit) stops the session where
// it is: nothing more is sent or run.
func TestPauseErrorStopsTheSession(t *testing.T) {
	r := newRig(t, "refund", "")
	quit := errors.New("the person quit")
	r.cfg.Pause = func(ctx context.Context, step string, turn int) error {
		if step == session.StepProposals {
			return quit
		}
		return nil
	}
	res, err := r.run()
	if !errors.Is(err, quit) || res != nil {
		t.Fatalf("Run: %v, %v; want the pause's error", res, err)
	}
	if n := len(r.entries("POST")); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
	if tools := r.entries("tool"); len(tools) != 0 || len(r.updates(session.UpDecision)) != 0 {
		t.Errorf("tools ran after the pause failed: %v", tools)
	}
}

// The time a person spends on a paused step is left out of the attempt's
// timings: an hour's pause after the headers does not show in them.
func TestPausesAreNotTimed(t *testing.T) {
	r := newRig(t, "refund", "")
	r.cfg.Protocol = adapters.OpenAIChat
	r.cfg.Pause = func(ctx context.Context, step string, turn int) error {
		if step == session.StepSent || step == session.StepFirstEvent {
			r.advance(time.Hour)
		}
		return nil
	}
	if _, err := r.run(); err != nil {
		t.Fatal(err)
	}
	var timed int
	for _, u := range r.ups {
		if u.Kind != session.UpStep || u.Timings == nil {
			continue
		}
		timed++
		tm := *u.Timings
		if tm.Headers <= 0 || tm.FirstEvent <= tm.Headers || tm.Terminal <= tm.FirstEvent {
			t.Errorf("timings out of order: %+v", tm)
		}
		if tm.Terminal >= float64(time.Hour.Milliseconds()) {
			t.Errorf("timings %+v include the hour of pauses", tm)
		}
	}
	if timed != 3 {
		t.Fatalf("%d timed attempts, want 3", timed)
	}
}

// ---- the approval gate -------------------------------------------------------

// An edit that fails the tool's schema is refused and the person is asked
// again with the reason; a rejection without a reason still answers the
// call, as an error; approved calls run with the arguments decided.
func TestGateEditsAndRejections(t *testing.T) {
	r := newRig(t, "refund", "")
	r.cfg.Policy = session.PolicyManual
	var asked []session.Proposal
	r.decider = session.DeciderFunc(func(ctx context.Context, p session.Proposal) (session.Decision, error) {
		asked = append(asked, p)
		switch {
		case p.Name == "get_order_line" && p.EditError == "":
			return session.Decision{Kind: session.Edited, Arguments: json.RawMessage(`{"order_id":"O-2048"}`)}, nil
		case p.Name == "get_order_line":
			return session.Decision{Kind: session.Edited, Arguments: json.RawMessage(` {"line_id":"L1", "order_id":"O-2048"} `)}, nil
		case p.Name == "get_refund_ledger":
			return session.Decision{Kind: session.Rejected}, nil
		}
		return session.Decision{Kind: session.Approved}, nil
	})
	res, err := r.run()
	if err != nil {
		t.Fatal(err)
	}
	if len(asked) != 4 || !strings.Contains(asked[1].EditError, "fail the schema of get_order_line") || asked[1].CallID != asked[0].CallID {
		t.Fatalf("asked %d times; the second ask's edit error %q", len(asked), asked[1].EditError)
	}
	tools := r.entries("tool")
	want := []string{`tool get_order_line {"line_id":"L1","order_id":"O-2048"}`, `tool get_refund_policy {"category":"headphones","received_at":"2026-10-15T12:00:00+08:00","reason":"quality_issue"}`}
	if !reflect.DeepEqual(tools, want) {
		t.Fatalf("tools ran\n got %v\nwant %v", tools, want)
	}
	ledger := res.Obs.Results[1]
	if ledger.Name != "get_refund_ledger" || !ledger.IsError || ledger.Content != "call rejected by the application: rejected" {
		t.Fatalf("the rejected call's result %+v", ledger)
	}
	for _, d := range r.updates(session.UpDecision) {
		if d.Decision.By != "person" {
			t.Errorf("decision %+v not by the person", d.Decision)
		}
	}
}

// A decider that fails ends the session with every call of the turn
// unanswered and nothing run.
func TestGateDeciderErrorStops(t *testing.T) {
	r := newRig(t, "refund", "")
	r.cfg.Policy = session.PolicyManual
	r.decider = session.DeciderFunc(func(ctx context.Context, p session.Proposal) (session.Decision, error) {
		return session.Decision{}, errors.New("the terminal closed")
	})
	res, err := r.run()
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != "failed" || layer(res, session.LayerProtocol).Detail != "no decision: the terminal closed" {
		t.Fatalf("status %s, protocol %+v", res.Status, layer(res, session.LayerProtocol))
	}
	if tools := r.entries("tool"); len(tools) != 0 {
		t.Fatalf("tools ran: %v", tools)
	}
	if n := len(r.entries("POST")); n != 1 {
		t.Fatalf("%d requests after the decider gave up, want 1", n)
	}
}

// ---- cancellation ------------------------------------------------------------

// Cancelling while a proposal waits for a person ends the session as
// cancelled: the tool never runs and the session is still validated and
// finished, so the record is whole.
func TestCancelWhileWaitingForADecision(t *testing.T) {
	r := newRig(t, "refund", "")
	r.cfg.Policy = session.PolicyManual
	r.decider = session.DeciderFunc(func(ctx context.Context, p session.Proposal) (session.Decision, error) {
		r.cancel()
		<-ctx.Done()
		return session.Decision{}, ctx.Err()
	})
	res, err := r.run()
	if err != nil {
		t.Fatal(err)
	}
	if layer(res, session.LayerProtocol).Detail != "cancelled while waiting for a decision" || res.Status != "failed" {
		t.Fatalf("status %s, protocol %+v", res.Status, layer(res, session.LayerProtocol))
	}
	if len(r.entries("tool")) != 0 || len(r.updates(session.UpFinished)) != 1 {
		t.Fatalf("tools %v; finished %d times", r.entries("tool"), len(r.updates(session.UpFinished)))
	}
}

// Cancelling during the wait before a retry stops there: no further
// attempt, the transport layer says cancelled.
func TestCancelDuringRetryWait(t *testing.T) {
	r := newRig(t, "refund", "rate-limit")
	r.onSleep = func(time.Duration) error {
		r.cancel()
		return context.Canceled
	}
	res, err := r.run()
	if err != nil {
		t.Fatal(err)
	}
	if n := len(r.entries("POST")); n != 1 {
		t.Fatalf("%d requests, want 1: a cancelled wait must not retry", n)
	}
	if tr := layer(res, session.LayerTransport); tr.Status != session.Fail || !strings.HasPrefix(tr.Detail, "cancelled after 1 retry (HTTP 429") {
		t.Fatalf("transport %+v", tr)
	}
}

// ---- retries -----------------------------------------------------------------

// A 429 waits exactly its Retry-After (1 s); a 500 then waits the backoff
// of the second retry, within [Base, 2·Base) with jitter; each wait comes
// between the two attempts it separates and is the delay the update
// announced.
func TestRetryHonoursRetryAfterAndBacksOff(t *testing.T) {
	r := newRig(t, "refund", "rate-limit,server-error")
	res, err := r.run()
	if err != nil {
		t.Fatal(err)
	}
	if len(r.sleeps) != 2 || r.sleeps[0] != time.Second {
		t.Fatalf("waits %v: the 429 asked for Retry-After: 1", r.sleeps)
	}
	if b := r.cfg.Retry.Base; r.sleeps[1] < b || r.sleeps[1] > 2*b {
		t.Fatalf("second wait %v, want the backoff of retry 2 in [%v, %v]", r.sleeps[1], b, 2*b)
	}
	var announced []time.Duration
	for _, u := range r.updates(session.UpAttempt) {
		if u.RetryIn > 0 {
			announced = append(announced, u.RetryIn)
		}
	}
	if !reflect.DeepEqual(announced, r.sleeps) {
		t.Fatalf("announced %v, waited %v", announced, r.sleeps)
	}
	r.mu.Lock()
	order := strings.Join(r.log[:5], " | ")
	r.mu.Unlock()
	if want := fmt.Sprintf("POST /v1/messages | sleep 1s | POST /v1/messages | sleep %v | POST /v1/messages", r.sleeps[1]); order != want {
		t.Fatalf("order\n got %s\nwant %s", order, want)
	}
	if !res.Passed() || !strings.Contains(layer(res, session.LayerTransport).Detail, "after 2 retries (HTTP 429 rate_limit_error, HTTP 500 api_error)") {
		t.Fatalf("transport %+v", layer(res, session.LayerTransport))
	}
}

// A server that keeps failing is retried Retry.Max times, each wait the
// exponential backoff with full jitter capped at MaxDelay, then the
// session fails at the transport layer naming the retries.
func TestRetryBudgetAndBackoffCap(t *testing.T) {
	r := newRig(t, "refund", "server-error:always")
	r.cfg.Retry = transport.Retry{Max: 3, Base: 400 * time.Millisecond, MaxDelay: 500 * time.Millisecond}
	res, err := r.run()
	if err != nil {
		t.Fatal(err)
	}
	if n := len(r.entries("POST")); n != 4 {
		t.Fatalf("%d attempts, want 1 + 3 retries", n)
	}
	bounds := [][2]time.Duration{{200 * time.Millisecond, 400 * time.Millisecond}, {250 * time.Millisecond, 500 * time.Millisecond}, {250 * time.Millisecond, 500 * time.Millisecond}}
	if len(r.sleeps) != len(bounds) {
		t.Fatalf("waits %v, want 3", r.sleeps)
	}
	for i, b := range bounds {
		if r.sleeps[i] < b[0] || r.sleeps[i] > b[1] {
			t.Errorf("wait %d: %v, want within [%v, %v]", i+1, r.sleeps[i], b[0], b[1])
		}
	}
	tr := layer(res, session.LayerTransport)
	if res.Status != "failed" || tr.Status != session.Fail || !strings.HasPrefix(tr.Detail, "HTTP 500 after 3 retries") {
		t.Fatalf("transport %+v", tr)
	}
}

// ---- the turn limit and the journal ----------------------------------------

// At the scenario's turn limit the loop stops even though the model still
// asks for tools, and the protocol layer says so.
func TestTurnLimitStopsTheLoop(t *testing.T) {
	r := newRig(t, "refund", "")
	r.cfg.Scenario.TurnLimit = 2
	res, err := r.run()
	if err != nil {
		t.Fatal(err)
	}
	if n := len(r.entries("POST")); n != 2 {
		t.Fatalf("%d requests at a limit of 2 turns", n)
	}
	if p := layer(res, session.LayerProtocol); p.Status != session.Fail || !strings.Contains(p.Detail, "turn limit") {
		t.Fatalf("protocol %+v", p)
	}
}

// journalFailing fails the first update of kind.
type journalFailing struct{ kind session.UpdateKind }

func (j journalFailing) Record(u session.Update) error {
	if u.Kind == j.kind {
		return errors.New("disk full")
	}
	return nil
}

// Nothing may go unrecorded: a session that cannot record its start sends
// nothing; one that cannot record a decision does not carry it out.
func TestJournalFailureBeforeActing(t *testing.T) {
	for _, c := range []struct {
		kind     session.UpdateKind
		requests int
	}{{session.UpStarted, 0}, {session.UpDecision, 1}} {
		t.Run(string(c.kind), func(t *testing.T) {
			r := newRig(t, "refund", "")
			r.journal = journalFailing{c.kind}
			res, err := r.run()
			if err == nil || !strings.Contains(err.Error(), "recording the session: disk full") || res != nil {
				t.Fatalf("Run: %v, %v", res, err)
			}
			if n := len(r.entries("POST")); n != c.requests {
				t.Errorf("%d requests, want %d", n, c.requests)
			}
			if tools := r.entries("tool"); len(tools) != 0 {
				t.Errorf("tools ran: %v", tools)
			}
		})
	}
}
