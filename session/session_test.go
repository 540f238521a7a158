package session_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/samples"
	"github.com/modelwire/modelwire/session"
	"github.com/modelwire/modelwire/sim"
)

func simBase(t *testing.T, scenario, faults string) string {
	t.Helper()
	sc, _ := samples.Lookup(scenario)
	f, err := sim.ParseFaults(faults)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	base, err := sim.New(sim.Options{Scenario: sc, Lookup: samples.Lookup, Faults: f}).Start(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return base
}

type runOpts struct {
	scenario, protocol string
	policy             session.Policy
	decider            session.Decider
	history            adapters.HistoryMode
	journal            session.Journal
	faults             string
}

func run(t *testing.T, o runOpts) (*session.Result, []session.Update, error) {
	t.Helper()
	if o.scenario == "" {
		o.scenario = "refund"
	}
	if o.protocol == "" {
		o.protocol = adapters.AnthropicMessages
	}
	sc, err := samples.Lookup(o.scenario)
	if err != nil {
		t.Fatal(err)
	}
	var ups []session.Update
	cfg := session.Config{Scenario: sc, Protocol: o.protocol, Provider: session.Provider{Name: "sim", BaseURL: simBase(t, o.scenario, o.faults), Key: "k"},
		Stream: true, History: o.history, Policy: o.policy, Retry: session.Retry{Max: 3, Base: time.Millisecond, MaxDelay: 5 * time.Millisecond}}
	s, err := session.New(cfg, o.journal, func(u session.Update) { ups = append(ups, u) }, o.decider)
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Run(context.Background())
	return res, ups, err
}

func decisions(ups []session.Update) []session.Update {
	var out []session.Update
	for _, u := range ups {
		if u.Kind == session.UpDecision {
			out = append(out, u)
		}
	}
	return out
}

// A person edits (first with JSON that does not parse — refused, asked
// again with the reason), rejects one parallel call and approves the other.
// Every call gets exactly one result, by call_id; the rejection goes back
// as an error result; the original arguments stay on record.
func TestManualDecisions(t *testing.T) {
	var asked []session.Proposal
	decider := session.DeciderFunc(func(ctx context.Context, p session.Proposal) (session.Decision, error) {
		asked = append(asked, p)
		switch {
		case p.Name == "get_order_line" && p.EditError == "":
			return session.Decision{Kind: session.Edited, Arguments: json.RawMessage(`{"order_id": "O-2048", `)}, nil
		case p.Name == "get_order_line":
			return session.Decision{Kind: session.Edited, Arguments: json.RawMessage(`{ "line_id": "L1", "order_id": "O-2048" }`)}, nil
		case p.Name == "get_refund_ledger":
			return session.Decision{Kind: session.Rejected, Reason: "not today"}, nil
		}
		return session.Decision{Kind: session.Approved}, nil
	})
	res, ups, err := run(t, runOpts{policy: session.PolicyManual, decider: decider})
	if err != nil {
		t.Fatal(err)
	}
	if len(asked) != 4 || !strings.Contains(asked[1].EditError, "not valid JSON") {
		t.Fatalf("asked %d times; second ask's edit error %q", len(asked), asked[1].EditError)
	}
	ds := decisions(ups)
	if len(ds) != 3 {
		t.Fatalf("%d decisions", len(ds))
	}
	if ds[0].Decision.Kind != session.Edited || string(ds[0].Decision.Arguments) != `{"line_id":"L1","order_id":"O-2048"}` ||
		string(ds[0].Proposal.Arguments) != `{"order_id":"O-2048","line_id":"L1"}` {
		t.Fatalf("edit decision %+v / proposal %s", ds[0].Decision, ds[0].Proposal.Arguments)
	}
	// Results answer calls by id, one each, rejected as an error.
	turn2 := res.History[1]
	if len(turn2.Results) != 2 {
		t.Fatalf("turn 2 results %+v", turn2.Results)
	}
	byID := map[string]adapters.ToolResult{}
	for _, r := range turn2.Results {
		byID[r.CallID] = r
	}
	for _, it := range turn2.Items {
		if it.Kind != adapters.KindToolCall {
			continue
		}
		r, ok := byID[it.CallID]
		if !ok {
			t.Fatalf("call %s has no result", it.CallID)
		}
		if it.Name == "get_refund_ledger" && (!r.IsError || !strings.Contains(r.Content, "not today")) {
			t.Fatalf("rejected call's result %+v", r)
		}
		if it.Name == "get_refund_policy" && r.IsError {
			t.Fatalf("approved call's result %+v", r)
		}
	}
	// The model never saw the ledger, so its cap cannot be trusted.
	if res.Passed() {
		t.Fatal("a session whose ledger call was rejected passed the domain layer")
	}
}

// Arguments that fail their schema never run, even when a person approves.
func TestApprovedInvalidArgumentsNeverRun(t *testing.T) {
	approveAll := session.DeciderFunc(func(ctx context.Context, p session.Proposal) (session.Decision, error) {
		return session.Decision{Kind: session.Approved}, nil
	})
	res, ups, err := run(t, runOpts{scenario: "refund/bad-args", policy: session.PolicyManual, decider: approveAll})
	if err != nil {
		t.Fatal(err)
	}
	first := decisions(ups)[0]
	if first.Decision.Kind != session.Rejected || first.Decision.By != "gate" || len(first.Proposal.Violations) == 0 {
		t.Fatalf("first decision %+v", first.Decision)
	}
	r := res.Obs.Results[0]
	if !r.IsError || !strings.Contains(r.Content, "schema") {
		t.Fatalf("first result %+v", r)
	}
	if !res.Passed() {
		t.Fatalf("after correcting itself the model's answer should pass: %+v", res.Layers)
	}
}

func TestPolicies(t *testing.T) {
	res, ups, err := run(t, runOpts{policy: session.PolicyReject})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range decisions(ups) {
		if d.Decision.Kind != session.Rejected || d.Decision.By != "reject" {
			t.Fatalf("decision %+v", d.Decision)
		}
	}
	if res.Layers[4].Status != session.Fail || !strings.Contains(res.Layers[4].Detail, "never observed") {
		t.Fatalf("domain %+v", res.Layers[4])
	}
	if _, err := session.New(session.Config{Scenario: &session.Scenario{}, Protocol: adapters.OpenAIChat, Provider: session.Provider{Name: "sim"}, Policy: session.PolicyManual}, nil, nil, nil); !errors.Is(err, session.ErrNoDecider) {
		t.Fatalf("manual without a decider: %v", err)
	}
}

func TestPreviousResponseIDHistory(t *testing.T) {
	res, ups, err := run(t, runOpts{protocol: adapters.OpenAIResponses, policy: session.PolicyAuto, history: adapters.HistoryPreviousResponse})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Passed() {
		t.Fatalf("layers %+v", res.Layers)
	}
	var chained int
	for _, u := range ups {
		if u.Kind == session.UpAssembled && strings.Contains(string(u.Request.Body), `"previous_response_id"`) {
			chained++
		}
	}
	if chained != 2 {
		t.Fatalf("%d requests chained by previous_response_id, want 2", chained)
	}
}

type failingJournal struct{ after int }

func (j *failingJournal) Record(u session.Update) error {
	if u.Kind == session.UpStep {
		j.after--
		if j.after < 0 {
			return errors.New("disk full")
		}
	}
	return nil
}

// Nothing may go unrecorded: a journal that fails stops the session.
func TestJournalFailureStopsTheSession(t *testing.T) {
	_, ups, err := run(t, runOpts{policy: session.PolicyAuto, journal: &failingJournal{after: 3}})
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("err %v", err)
	}
	for _, u := range ups {
		if u.Kind == session.UpResult {
			t.Fatal("a tool ran after recording failed")
		}
	}
}

func TestRetryHonoursRetryAfterAndBacksOff(t *testing.T) {
	res, ups, err := run(t, runOpts{policy: session.PolicyAuto, faults: "rate-limit,server-error"})
	if err != nil {
		t.Fatal(err)
	}
	var retries []time.Duration
	for _, u := range ups {
		if u.Kind == session.UpAttempt && u.RetryIn > 0 {
			retries = append(retries, u.RetryIn)
		}
	}
	if len(retries) != 2 || retries[0] != time.Second {
		t.Fatalf("retries %v: the 429 asked for Retry-After 1", retries)
	}
	if !res.Passed() || !strings.Contains(res.Layers[0].Detail, "2 retries") {
		t.Fatalf("transport %+v", res.Layers[0])
	}
}

func TestProviderResolution(t *testing.T) {
	env := map[string]string{"OPENAI_API_KEY": "sk-x", "ANTHROPIC_BASE_URL": "http://127.0.0.1:9/"}
	get := func(k string) string { return env[k] }
	p, err := session.ResolveProvider("openai", "", get)
	if err != nil || p.URL("/v1/responses") != "https://api.openai.com/v1/responses" {
		t.Fatalf("%v %s", err, p.URL("/v1/responses"))
	}
	if _, err := session.ResolveProvider("anthropic", "", get); err == nil || !strings.Contains(err.Error(), "ANTHROPIC_API_KEY") {
		t.Fatalf("missing key: %v", err)
	}
	env["ANTHROPIC_API_KEY"] = "k"
	p, _ = session.ResolveProvider("anthropic", "", get)
	if p.URL("/v1/messages") != "http://127.0.0.1:9/v1/messages" {
		t.Fatalf("anthropic URL %s", p.URL("/v1/messages"))
	}
	p = session.Provider{BaseURL: "http://127.0.0.1:8787/v1"}
	if p.URL("/v1/chat/completions") != "http://127.0.0.1:8787/v1/chat/completions" {
		t.Fatalf("OpenAI-style base: %s", p.URL("/v1/chat/completions"))
	}
	if _, err := session.ResolveProvider("compatible", "", get); err == nil {
		t.Fatal("compatible without a base URL accepted")
	}
	h := http.Header{}
	session.Provider{Key: "g"}.Authorize(h, adapters.Gemini)
	if h.Get("x-goog-api-key") != "g" || h.Get("Authorization") != "" {
		t.Fatalf("gemini auth %v", h)
	}
}

func TestClassify(t *testing.T) {
	cases := map[int]session.ErrorClass{400: session.ClassRequest, 422: session.ClassRequest, 401: session.ClassConfig, 403: session.ClassConfig,
		404: session.ClassNotFound, 429: session.ClassRetryable, 500: session.ClassRetryable, 529: session.ClassRetryable, 408: session.ClassRetryable}
	for status, want := range cases {
		if got := session.Classify(status); got != want {
			t.Errorf("%d: %s, want %s", status, got, want)
		}
	}
}

// A request bug is not retried.
func TestRequestErrorsAreNotRetried(t *testing.T) {
	sc, _ := samples.Lookup("refund")
	bad := *sc
	bad.Limits.Temperature = new(float64)
	*bad.Limits.Temperature = 7
	s, err := session.New(session.Config{Scenario: &bad, Protocol: adapters.OpenAIChat, Provider: session.Provider{Name: "sim", BaseURL: simBase(t, "refund", ""), Key: "k"},
		Stream: true, Policy: session.PolicyAuto}, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Layers[0].Status != session.Fail || !strings.Contains(res.Layers[0].Detail, "HTTP 400") || strings.Contains(res.Layers[0].Detail, "retr") {
		t.Fatalf("transport %+v", res.Layers[0])
	}
}

// In step mode the time a person spends on a paused step is not counted in
// the attempt's timings.
func TestPausesAreNotTimed(t *testing.T) {
	sc, _ := samples.Lookup("refund")
	pause := func(ctx context.Context, step string, turn int) error {
		if step == session.StepSent {
			time.Sleep(time.Second)
		}
		return nil
	}
	var timings []*session.Timings
	s, err := session.New(session.Config{Scenario: sc, Protocol: adapters.OpenAIChat, Provider: session.Provider{Name: "sim", BaseURL: simBase(t, "refund", ""), Key: "k"},
		Stream: true, Policy: session.PolicyAuto, Pause: pause}, nil, func(u session.Update) {
		if u.Kind == session.UpStep && u.Timings != nil {
			timings = append(timings, u.Timings)
		}
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(timings) != 3 {
		t.Fatalf("%d timed attempts", len(timings))
	}
	for _, tm := range timings {
		// Ordering, not wall time: the terminal came after the first
		// event, and the 1 s pause before the first event is not in it.
		if tm.FirstEvent < tm.FirstByte || tm.Terminal < tm.FirstEvent || tm.FirstEvent >= 1000 {
			t.Fatalf("timings %+v include the pause", *tm)
		}
	}
}

// FuzzParseScenario checks scenario files of arbitrary bytes: a scenario
// or a ScenarioError, never a panic.
func FuzzParseScenario(f *testing.F) {
	if b, err := os.ReadFile("../samples/refund.json"); err == nil {
		f.Add(b, "")
		f.Add(b, "wrong-cap")
	}
	f.Add([]byte(`{}`), "")
	f.Add([]byte(`{"name":"x","title":"t","sources":[],"script":[]}`), "v")
	f.Fuzz(func(t *testing.T, b []byte, variant string) {
		sc, err := session.ParseScenario("fuzz.json", b, variant)
		if err == nil && sc == nil {
			t.Fatal("no scenario and no error")
		}
	})
}
