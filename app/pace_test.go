package app

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/session"
)

// argsSpan runs the refund case's scripted first turn (one call to
// get_order_line) on the simulator at pace, pausing at the response's
// headers for rest when pausing (a person reading the step's note), and
// returns the offsets of the call's argument deltas as the session
// recorded them (the time spent paused left out, as it is on screen).
func argsSpan(t *testing.T, pace float64, rest time.Duration) []float64 {
	t.Helper()
	sc, err := session.LoadScenarioFile("../samples/refund.json", "")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	var offsets []float64
	h := session.Hooks{Observe: func(u session.Update) {
		if u.Turn != 1 {
			return
		}
		switch u.Kind {
		case session.UpStep:
			for _, ev := range u.Step.Events {
				if ev.Type == adapters.EvToolArgsDelta {
					mu.Lock()
					offsets = append(offsets, u.OffsetMS)
					mu.Unlock()
				}
			}
		case session.UpResponse:
			cancel() // turn 1 is all this test reads
		}
	}}
	if rest > 0 {
		h.Pause = func(ctx context.Context, step string, turn int) error {
			if step == session.StepSent && turn == 1 {
				select {
				case <-time.After(rest):
				case <-ctx.Done():
				}
			}
			return nil
		}
	}
	eng := &Engine{Getenv: func(string) string { return "" }}
	_, _ = eng.Run(ctx, session.Setup{Scenario: sc, Protocol: adapters.OpenAIResponses, Provider: adapters.ProviderSim,
		Stream: true, History: adapters.HistoryFull, Policy: session.PolicyAuto, Pace: pace}, h)
	mu.Lock()
	defer mu.Unlock()
	if len(offsets) < 3 {
		t.Fatalf("%d argument deltas, want a stream of pieces", len(offsets))
	}
	return offsets
}

// TestPacedArgumentsStreamAfterAPause: the tool-call arguments of a paced
// stream take time to arrive, and as much of it after the walkthrough
// rested on a step as when it runs freely: the simulator's clock stops
// while the session is paused (sim.Hold), so a person who steps on sees
// the lane fill at the pace instead of the whole call arriving at once
// (it came in 1–4 ms before). Compared as a ratio of the two runs'
// spans, which a loaded machine stretches alike.
func TestPacedArgumentsStreamAfterAPause(t *testing.T) {
	const pace = 20 // words a second: turn 1's 7 argument words take ~350 ms
	free := argsSpan(t, pace, 0)
	stepped := argsSpan(t, pace, 1200*time.Millisecond)
	span := func(o []float64) float64 { return o[len(o)-1] - o[0] }
	for i := 1; i < len(stepped); i++ {
		if stepped[i] < stepped[i-1] {
			t.Fatalf("argument deltas out of order: %v", stepped)
		}
	}
	if span(free) <= 0 {
		t.Fatalf("free run: the argument deltas arrived at once (%v): the pace did not reach the simulator", free)
	}
	if r := span(stepped) / span(free); r < 0.5 {
		t.Fatalf("after a pause the arguments arrived in %.1f ms, %.2f of the %.1f ms they take running freely: "+
			"the stream went on while the session was paused", span(stepped), r, span(free))
	}
}
