package session_test

import (
	"context"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/registry"
	"github.com/modelwire/modelwire/samples"
	"github.com/modelwire/modelwire/session"
	"github.com/modelwire/modelwire/sim"
	"github.com/modelwire/modelwire/store"
	"github.com/modelwire/modelwire/timeline"
	"github.com/modelwire/modelwire/transport"
)

// pacedRun runs the refund case against a simulator that pauses delay
// between stream events, recorded in a fresh store; it returns each
// attempt's last timings as the engine reported them, and the stored
// session. reasoning, when set, asks for that reasoning effort.
func pacedRun(t *testing.T, protocol, reasoning string, delay time.Duration) ([]session.Timings, *store.Session) {
	t.Helper()
	sc, _ := samples.Lookup("refund")
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	base, err := sim.New(sim.Options{Scenario: sc, Lookup: samples.Lookup, Delay: delay}).Start(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(filepath.Join(t.TempDir(), "mw.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	j := timeline.NewStoreJournal(db, store.SessionMeta{Title: "time points", Protocol: protocol, Provider: "sim"}, true)
	asked := *sc
	asked.Limits.Reasoning = reasoning
	var last []session.Timings
	cfg := session.Config{Scenario: &asked, Protocol: protocol, Stream: true, Policy: session.PolicyAuto,
		Provider: transport.Provider{Name: "sim", BaseURL: base, Key: "k"}}
	s, err := session.New(cfg, j, func(u session.Update) {
		if u.Kind == session.UpStep && u.Step.Index < 0 && u.Timings != nil {
			last = append(last, *u.Timings)
		}
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := db.GetSession(j.SessionID())
	if err != nil {
		t.Fatal(err)
	}
	return last, got
}

// On a paced stream the six time points come in their order, each as
// late as the pacing makes it: headers, then the first event, then (a
// pause later) the first output token, then the first visible text, then
// the terminal; the store keeps the same points, and the provider's own
// figure (OpenAI's processing time) apart from them.
func TestSixTimePointsOnAPacedStream(t *testing.T) {
	const delay = 5 * time.Millisecond
	for _, c := range []struct {
		protocol string
		// opens: the stream's first event is a start event carrying no
		// token (Gemini's first chunk already carries content).
		opens bool
	}{{adapters.OpenAIResponses, true}, {adapters.OpenAIChat, true}, {adapters.AnthropicMessages, true}, {adapters.Gemini, false}} {
		protocol := c.protocol
		t.Run(protocol, func(t *testing.T) {
			timings, stored := pacedRun(t, protocol, "", delay)
			if len(timings) != 3 || len(stored.Attempts) != 3 {
				t.Fatalf("%d timed attempts, %d stored; want 3", len(timings), len(stored.Attempts))
			}
			d := float64(delay.Milliseconds())
			for i, tm := range timings {
				if !(tm.Headers > 0 && tm.FirstEvent >= tm.Headers && tm.FirstToken >= tm.FirstEvent && tm.Terminal > tm.FirstToken) {
					t.Errorf("attempt %d: points out of order: %+v", i+1, tm)
				}
				// After a start event, the token is a later event.
				if c.opens && tm.FirstToken <= tm.FirstEvent {
					t.Errorf("attempt %d: first token %.1f ms, not after the start event at %.1f ms", i+1, tm.FirstToken, tm.FirstEvent)
				}
				// The simulator paused between its events: the terminal
				// cannot come sooner after the headers than the pauses.
				if n := stored.Attempts[i].RawEvents; tm.Terminal-tm.Headers < d*float64(n-1)*0.9 {
					t.Errorf("attempt %d: %d events paced at %v ended %.1f ms after the headers", i+1, n, delay, tm.Terminal-tm.Headers)
				}
				if tm.FirstText != 0 && (tm.FirstText < tm.FirstToken || tm.FirstText > tm.Terminal) {
					t.Errorf("attempt %d: first text %.1f outside [first token, terminal]: %+v", i+1, tm.FirstText, tm)
				}
				a := stored.Attempts[i].Timings
				for _, p := range []struct {
					name   string
					stored *time.Duration
					live   float64
				}{{"headers", a.FirstByte, tm.Headers}, {"first event", a.FirstEvent, tm.FirstEvent}, {"first token", a.FirstToken, tm.FirstToken}, {"terminal", a.Terminal, tm.Terminal}} {
					if p.stored == nil || *p.stored <= 0 {
						t.Errorf("attempt %d: %s not stored", i+1, p.name)
						continue
					}
					// The store keeps the point the engine measured.
					if got := float64(p.stored.Microseconds()) / 1000; got < p.live-0.01 || got > p.live+0.01 {
						t.Errorf("attempt %d: %s stored at %.3f ms, measured at %.3f ms", i+1, p.name, got, p.live)
					}
				}
				if a.Sent == nil || *a.Sent != 0 {
					t.Errorf("attempt %d: the request's start is not stored as the origin: %v", i+1, a.Sent)
				}
				if (tm.FirstText == 0) != (a.FirstText == nil) {
					t.Errorf("attempt %d: first text live %.1f, stored %v", i+1, tm.FirstText, a.FirstText)
				}
			}
			// The last turn answers in text.
			if timings[2].FirstText == 0 {
				t.Errorf("the final answer has no first text: %+v", timings[2])
			}
			// The server's figure: OpenAI's and Gemini's are stored apart,
			// named by their header; Anthropic reports none.
			d0, ok := registryServer(protocol)
			for i, a := range stored.Attempts {
				sv := timings[i].Server
				if !ok {
					if sv != nil || a.Timings.Server != nil {
						t.Errorf("attempt %d: a server figure where the provider reports none: %+v", i+1, sv)
					}
					continue
				}
				if sv == nil || sv.MS <= 0 || sv.Source != d0 || a.Timings.Server == nil || a.Timings.ServerSource != d0 {
					t.Errorf("attempt %d: server figure live %+v, stored %v %q; want one from %s", i+1, sv, a.Timings.Server, a.Timings.ServerSource, d0)
					continue
				}
				// Never one of the client's points: the simulator's
				// figure is its made-up processing time, not a mark.
				if got := float64(a.Timings.Server.Microseconds()) / 1000; got != sv.MS {
					t.Errorf("attempt %d: stored server figure %v ms, reported %v ms", i+1, got, sv.MS)
				}
			}
		})
	}
}

// On a reasoning stream (DeepSeek's thinking mode) the first observable
// output token is reasoning, strictly before the first visible text.
func TestReasoningComesBeforeVisibleText(t *testing.T) {
	timings, stored := pacedRun(t, adapters.DeepSeekChat, "high", 10*time.Millisecond)
	final := timings[len(timings)-1]
	if final.FirstToken <= 0 || final.FirstText <= final.FirstToken {
		t.Fatalf("first token %.1f ms, first text %.1f ms: the reasoning should come first", final.FirstToken, final.FirstText)
	}
	a := stored.Attempts[len(stored.Attempts)-1].Timings
	if a.FirstToken == nil || a.FirstText == nil || *a.FirstText <= *a.FirstToken {
		t.Fatalf("stored first token %v, first text %v", a.FirstToken, a.FirstText)
	}
	// A turn that reasons, then calls tools, has a first token and no text.
	if first := timings[0]; first.FirstToken <= 0 || first.FirstText != 0 {
		t.Errorf("turn 1 (reasoning, then calls): %+v", first)
	}
	// The first token is reasoning: it comes as early on a turn whose
	// answer is text as on one whose answer is calls, long before the text.
	if final.FirstText-final.FirstToken < 10 {
		t.Errorf("the first text came %.1f ms after the first token; the reasoning before it was paced at 10 ms an event", final.FirstText-final.FirstToken)
	}
}

// registryServer is the label of a protocol's server figure, if its
// provider reports one.
func registryServer(protocol string) (string, bool) {
	d, _ := registry.Describe(protocol)
	return d.ServerTiming.Label(), d.ServerTiming.Header != ""
}

// A stored session's cost counts every attempt: the rate-limited one that
// was retried (no tokens), and the ones that answered, bucket by bucket.
func TestCostOfStoredAttempts(t *testing.T) {
	sc, _ := samples.Lookup("refund")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f, _ := sim.ParseFaults("rate-limit")
	base, err := sim.New(sim.Options{Scenario: sc, Lookup: samples.Lookup, Faults: f}).Start(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(filepath.Join(t.TempDir(), "mw.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	j := timeline.NewStoreJournal(db, store.SessionMeta{Title: "cost", Protocol: adapters.OpenAIResponses, Provider: "sim"}, true)
	s, err := session.New(session.Config{Scenario: sc, Protocol: adapters.OpenAIResponses, Stream: true, Policy: session.PolicyAuto,
		Provider: transport.Provider{Name: "sim", BaseURL: base, Key: "k"}, Retry: transport.Retry{Max: 2, Base: time.Millisecond, MaxDelay: time.Millisecond}}, j, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	stored, err := db.GetSession(j.SessionID())
	if err != nil {
		t.Fatal(err)
	}
	c := session.CostOfAttempts(sc.Model, stored.Attempts)
	if len(c.Attempts) != 4 || stored.Attempts[0].StatusCode != 429 {
		t.Fatalf("%d attempts priced; the first %d", len(c.Attempts), stored.Attempts[0].StatusCode)
	}
	if a := c.Attempts[0]; !a.Priced || a.Total != 0 || a.ToReconcile {
		t.Errorf("the retried 429: %+v", a)
	}
	// The answered attempts are what the run's own cost priced by turn.
	if !c.Complete || c.ToReconcile != 0 || c.Total <= 0 || math.Abs(c.Total-res.Cost.Total) > 1e-12 {
		t.Errorf("attempts cost %.8f (complete %v), the run's %.8f", c.Total, c.Complete, res.Cost.Total)
	}
}
