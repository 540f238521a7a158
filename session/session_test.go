package session_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/samples"
	"github.com/modelwire/modelwire/session"
	"github.com/modelwire/modelwire/sim"
	"github.com/modelwire/modelwire/transport"
	"github.com/modelwire/modelwire/validate"
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
	noRegeneration     bool
	retryBudget        time.Duration
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
	cfg := session.Config{Scenario: sc, Protocol: o.protocol, Provider: transport.Provider{Name: "sim", BaseURL: simBase(t, o.scenario, o.faults), Key: "k"},
		Stream: true, History: o.history, Policy: o.policy, NoRegeneration: o.noRegeneration,
		Retry: transport.Retry{Max: 3, Base: time.Millisecond, MaxDelay: 5 * time.Millisecond, Budget: o.retryBudget}}
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
	// The model never saw the ledger: it cannot state a cap, and says so.
	var out struct {
		Decision  string `json:"decision"`
		MaxRefund *int64 `json:"max_refund_cents"`
	}
	_ = json.Unmarshal(res.Output, &out)
	if out.Decision != "unable_to_assess" || out.MaxRefund != nil || !res.Passed() {
		t.Fatalf("after a rejected ledger call: decision %q cap %v layers %+v", out.Decision, out.MaxRefund, res.Layers)
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
	// Nothing was observed: the honest answer is unable_to_assess with no
	// amount and no evidence, and the domain layer accepts exactly that.
	if !strings.Contains(string(res.Output), `"decision":"unable_to_assess"`) || !strings.Contains(string(res.Output), `"max_refund_cents":null`) || !res.Passed() {
		t.Fatalf("all calls rejected: %s %+v", res.Output, res.Layers)
	}
	if _, err := session.New(session.Config{Scenario: &session.Scenario{}, Protocol: adapters.OpenAIChat, Provider: transport.Provider{Name: "sim"}, Policy: session.PolicyManual}, nil, nil, nil); !errors.Is(err, session.ErrNoDecider) {
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

// A request bug is not retried.
func TestRequestErrorsAreNotRetried(t *testing.T) {
	sc, _ := samples.Lookup("refund")
	bad := *sc
	bad.Limits.Temperature = new(float64)
	*bad.Limits.Temperature = 7
	s, err := session.New(session.Config{Scenario: &bad, Protocol: adapters.OpenAIChat, Provider: transport.Provider{Name: "sim", BaseURL: simBase(t, "refund", ""), Key: "k"},
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

// A domain failure gets exactly one regeneration that names the failure,
// carries the same tool results and runs no tool; when the new answer
// fails too, the session delivers "cannot complete" with the evidence.
// Without regeneration the session ends at the first verdict.
func TestOneRegenerationWithTheExactError(t *testing.T) {
	cases := []struct {
		protocol string
		history  adapters.HistoryMode
	}{
		{adapters.OpenAIResponses, adapters.HistoryFull},
		{adapters.OpenAIResponses, adapters.HistoryPreviousResponse},
		{adapters.OpenAIChat, ""},
		{adapters.AnthropicMessages, ""},
		{adapters.Gemini, ""},
		{adapters.DeepSeekChat, ""},
	}
	for _, c := range cases {
		t.Run(c.protocol+"/"+string(c.history), func(t *testing.T) {
			res, ups, err := run(t, runOpts{scenario: "refund/wrong-cap", protocol: c.protocol, history: c.history, policy: session.PolicyAuto})
			if err != nil {
				t.Fatal(err)
			}
			g := res.Regeneration
			if g == nil || g.Layer != session.LayerDomain || g.Turn != len(res.Requests) {
				t.Fatalf("regeneration %+v after %d requests", g, len(res.Requests))
			}
			last, before := string(res.Requests[len(res.Requests)-1].Body), string(res.Requests[len(res.Requests)-2].Body)
			if !strings.Contains(last, session.RegenerationLead) || !strings.Contains(g.Message, g.Detail) {
				t.Fatalf("the regeneration request does not carry the error %q", g.Detail)
			}
			for _, r := range res.Obs.Results {
				want, _ := json.Marshal(r.Content)
				if c.history != adapters.HistoryPreviousResponse && c.protocol != adapters.Gemini && !strings.Contains(last, string(want[1:len(want)-1])) {
					t.Fatalf("tool result %s changed or missing in the regeneration request", r.CallID)
				}
			}
			if strings.Contains(before, session.RegenerationLead) {
				t.Fatal("the error was sent before the answer failed")
			}
			results, regens := 0, 0
			for _, u := range ups {
				switch u.Kind {
				case session.UpResult:
					results++
				case session.UpRegenerate:
					regens++
				}
			}
			if results != 3 || regens != 1 {
				t.Fatalf("%d tool results and %d regenerations, want 3 and 1", results, regens)
			}
			if res.Status != "failed" || res.CannotComplete == nil || len(res.CannotComplete.Evidence) != 3 ||
				!strings.Contains(res.CannotComplete.Reason, "domain") {
				t.Fatalf("status %s, cannot complete %+v", res.Status, res.CannotComplete)
			}
		})
	}
	res, _, err := run(t, runOpts{scenario: "refund/wrong-cap", policy: session.PolicyAuto, noRegeneration: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Regeneration != nil || len(res.Requests) != 3 {
		t.Fatalf("regenerated with regeneration off: %d requests", len(res.Requests))
	}
}

// A passing answer and a transport or protocol failure are never
// regenerated: asking again cannot fix them.
func TestNoRegenerationForPassOrProtocolFailure(t *testing.T) {
	for _, o := range []runOpts{{policy: session.PolicyAuto}, {scenario: "refund/refusal", policy: session.PolicyAuto}} {
		res, _, err := run(t, o)
		if err != nil {
			t.Fatal(err)
		}
		if res.Regeneration != nil {
			t.Fatalf("%s: regenerated: %+v", o.scenario, res.Regeneration)
		}
	}
}

// Retry-After is honoured as sent: an HTTP date is waited for, and a wait
// beyond a minute is not shortened — past the retry budget the session
// stops retrying and says why.
func TestRetryAfterAsSent(t *testing.T) {
	res, ups, err := run(t, runOpts{policy: session.PolicyAuto, faults: "rate-limit-date"})
	if err != nil {
		t.Fatal(err)
	}
	var waits []time.Duration
	for _, u := range ups {
		if u.Kind == session.UpAttempt && u.RetryIn > 0 {
			waits = append(waits, u.RetryIn)
		}
	}
	if len(waits) != 1 || waits[0] < 500*time.Millisecond || waits[0] > 2*time.Second || !res.Passed() {
		t.Fatalf("waits %v for an HTTP-date Retry-After two seconds ahead; layers %v", waits, res.Layers)
	}
	res, _, err = run(t, runOpts{policy: session.PolicyAuto, faults: "rate-limit-long", retryBudget: 90 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if d := res.Layers[0].Detail; res.Layers[0].Status != session.Fail || !strings.Contains(d, "wait 2m0s") || !strings.Contains(d, "1m30s left") {
		t.Fatalf("transport %+v", res.Layers[0])
	}
}

// Anthropic's pause_turn is continued, not taken for an answer: the
// paused content goes back unchanged as the last assistant message and the
// session goes on to pass.
func TestPauseTurnIsContinued(t *testing.T) {
	res, ups, err := run(t, runOpts{policy: session.PolicyAuto, faults: "pause-turn"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Passed() || len(res.Requests) != 4 || res.Turns[0].StopReason != adapters.StopPause {
		t.Fatalf("%d requests, first stop %s, layers %v", len(res.Requests), res.Turns[0].StopReason, res.Layers)
	}
	var body struct {
		Messages []struct {
			Role    string            `json:"role"`
			Content []json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(res.Requests[1].Body, &body); err != nil {
		t.Fatal(err)
	}
	last := body.Messages[len(body.Messages)-1]
	if last.Role != "assistant" || !strings.Contains(string(last.Content[0]), res.Turns[0].Text) || res.Turns[0].Text == "" {
		t.Fatalf("the continuation does not send the paused content back: %s", res.Requests[1].Body)
	}
	st := session.NewState()
	for _, u := range ups {
		st.Apply(u)
	}
	if !st.Turns[1].Continues || st.Turns[0].Continues {
		t.Fatal("the state does not show turn 2 as a continuation")
	}
}

// A content filter ends the session at the protocol layer as a refusal on
// every protocol, with advice on what to do next; nothing is regenerated.
func TestContentFilterIsARefusal(t *testing.T) {
	for _, p := range []string{adapters.OpenAIResponses, adapters.OpenAIChat, adapters.AnthropicMessages, adapters.Gemini, adapters.DeepSeekChat} {
		res, _, err := run(t, runOpts{protocol: p, policy: session.PolicyAuto, faults: "content-filter"})
		if err != nil {
			t.Fatal(err)
		}
		f := res.Turns[0]
		if f.Terminal != adapters.StatusRefused || res.Layers[1].Status != session.Fail || res.Regeneration != nil {
			t.Fatalf("%s: terminal %s (%s), protocol %+v", p, f.Terminal, f.ProviderStopReason, res.Layers[1])
		}
		if validate.TerminalAdvice(f.Terminal, f.StopReason) == "" {
			t.Fatalf("%s: no advice for a refusal", p)
		}
	}
}

// The simulator sends each provider's rate-limit headers and the state
// keeps them for the transport panel.
func TestRateLimitHeadersAreShown(t *testing.T) {
	for p, prefix := range map[string]string{adapters.OpenAIChat: "x-ratelimit-remaining-requests", adapters.AnthropicMessages: "anthropic-ratelimit-requests-remaining"} {
		_, ups, err := run(t, runOpts{protocol: p, policy: session.PolicyAuto})
		if err != nil {
			t.Fatal(err)
		}
		st := session.NewState()
		for _, u := range ups {
			st.Apply(u)
		}
		got := strings.Join(st.Turns[0].Attempts[0].RateLimits, "; ")
		if !strings.Contains(got, prefix+": ") {
			t.Fatalf("%s: rate limits %q", p, got)
		}
	}
}

// Cost: every turn is priced from the dated table and the label says it
// is an estimate (pricing's tests check the arithmetic).
func TestCostEstimate(t *testing.T) {
	res, _, err := run(t, runOpts{policy: session.PolicyAuto})
	if err != nil {
		t.Fatal(err)
	}
	c := res.Cost
	if c == nil || !c.Complete || len(c.Turns) != 3 || c.Total <= 0 || !strings.Contains(c.Label, "estimate") || c.Date == "" {
		t.Fatalf("cost %+v", c)
	}
}

// Before sending, each request's input is estimated and, where the
// provider has an endpoint, counted; the estimate's error is shown.
func TestTokenBudgetCountsWhereItCan(t *testing.T) {
	for p, by := range map[string]string{adapters.AnthropicMessages: "count_tokens", adapters.Gemini: "countTokens", adapters.OpenAIChat: ""} {
		_, ups, err := run(t, runOpts{protocol: p, policy: session.PolicyAuto})
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range ups {
			if u.Kind != session.UpAssembled {
				continue
			}
			b := u.Budget
			if b == nil || b.Estimate <= 0 || b.CountedBy != by || (by != "") != (b.Counted > 0) || b.CountError != "" ||
				b.ContextWindow != 32000 || b.Output != 1800 || b.Problem != "" {
				t.Fatalf("%s turn %d: budget %+v", p, u.Turn, b)
			}
			if by != "" && b.ErrorPct != float64(b.Estimate-b.Counted)/float64(b.Counted)*100 {
				t.Fatalf("%s: error %v%%", p, b.ErrorPct)
			}
		}
	}
}

// The chapter's three conditions: the output budget within the model's
// output limit, and input + output + margin within the window.
func TestBudgetThatCannotFit(t *testing.T) {
	b := &session.Budget{Estimate: 30000}
	session.CheckBudget(b, "refund-model", 2048)
	if !strings.Contains(b.Problem, "over the 32000-token window") {
		t.Fatalf("problem %q", b.Problem)
	}
	b = &session.Budget{Estimate: 100}
	session.CheckBudget(b, "refund-model", 9000)
	if !strings.Contains(b.Problem, "output limit 8000") {
		t.Fatalf("problem %q", b.Problem)
	}
	b = &session.Budget{Estimate: 100, Counted: 29000}
	session.CheckBudget(b, "refund-model", 2048)
	if b.Problem == "" {
		t.Fatal("the provider's count was not used over the estimate")
	}
	b = &session.Budget{Estimate: 100}
	session.CheckBudget(b, "refund-model", 0)
	if b.Output != 8000 || b.Problem != "" {
		t.Fatalf("no output limit: budget %+v", b)
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

// A server's x-should-retry decides whether an error is sent again, as it
// does for the official SDKs: false stops a retryable status at its first
// attempt (modelwire serve --session's 409 for a request the recording
// never saw, issue 27); without it the status's class decides.
func TestShouldRetryHeaderIsObeyed(t *testing.T) {
	sc, err := samples.Lookup("refund")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		status      int
		shouldRetry string
		want        int
	}{
		{409, "false", 1},
		{503, "false", 1},
		{409, "", 4},
		{400, "true", 4},
		{400, "", 1},
	} {
		var n atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/v1/messages" { // not count_tokens
				n.Add(1)
			}
			if c.shouldRetry != "" {
				w.Header().Set("x-should-retry", c.shouldRetry)
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(c.status)
			_, _ = w.Write([]byte(`{"type":"error","error":{"type":"invalid_request_error","message":"no"}}`))
		}))
		s, err := session.New(session.Config{Scenario: sc, Protocol: adapters.AnthropicMessages, Provider: transport.Provider{Name: "anthropic", BaseURL: srv.URL, Key: "k"},
			Stream: true, Policy: session.PolicyAuto, Retry: transport.Retry{Max: 3, Base: time.Millisecond, MaxDelay: 5 * time.Millisecond}}, nil, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		res, err := s.Run(context.Background())
		srv.Close()
		if err != nil {
			t.Fatal(err)
		}
		if got := int(n.Load()); got != c.want || res.Passed() {
			t.Errorf("HTTP %d, x-should-retry %q: %d attempts, want %d", c.status, c.shouldRetry, got, c.want)
		}
	}
}
