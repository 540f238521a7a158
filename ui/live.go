package ui

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"runtime/debug"
	"slices"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/registry"
	"github.com/modelwire/modelwire/session"
)

// RunConfig is what the options dialog chooses: one live session's setup.
type RunConfig struct {
	Scenario string // "refund" or a scenario file
	Variant  string // "" for the base script
	Protocol string
	Provider string
	Stream   bool
	History  adapters.HistoryMode
	Faults   []string
	// StepMode pauses at every protocol step (the walkthrough).
	StepMode bool
	// Edits replace sources' text by id (the assembly panel's edits).
	Edits map[string]string
	// Parent is the session this run was edited from (edit-and-resend);
	// the new session is stored linked to it.
	Parent string
	// Pace is the built-in simulator's words a second, so a person can
	// follow the lanes fill (0: as fast as it can): the workbench's
	// --pace (30 by default), set by startRun for every run alike.
	Pace float64
	// Fork, when set, is a fork planned from the store (fork.go): the
	// session it runs, as Library.Fork set it up.
	Fork *session.Setup
}

// DefaultRunConfig is the refund walkthrough on the simulator.
func DefaultRunConfig() RunConfig {
	return RunConfig{Scenario: "refund", Protocol: registry.Default, Provider: adapters.ProviderSim,
		Stream: true, History: adapters.HistoryFull, StepMode: true}
}

// ScenarioName is "refund" or "refund/<variant>".
func (rc RunConfig) ScenarioName() string {
	if rc.Variant == "" {
		return rc.Scenario
	}
	return rc.Scenario + "/" + rc.Variant
}

// Hooks connect a running session to the UI.
type Hooks = session.Hooks

// Backend runs live sessions. The engine backend runs them on the
// application's Engine (the simulator or a real provider, recorded in the
// store); tests use fakes that emit scripted updates through the same
// hooks.
type Backend interface {
	Run(ctx context.Context, sc *session.Scenario, rc RunConfig, h Hooks) error
}

// Engine runs one session as a front end set it up (app.Engine).
type Engine interface {
	Run(ctx context.Context, s session.Setup, h session.Hooks) (*session.Result, error)
}

// EngineBackend is the real backend: the workbench's options as a
// session.Setup, run on Engine.
type EngineBackend struct{ Engine Engine }

// Run runs one session to its end.
func (b *EngineBackend) Run(ctx context.Context, sc *session.Scenario, rc RunConfig, h Hooks) error {
	_, err := b.Engine.Run(ctx, rc.setup(sc), h)
	return err
}

// setup is the session the options describe: every decision is asked
// for, and what the person chose is recorded with it.
func (rc RunConfig) setup(sc *session.Scenario) session.Setup {
	if rc.Fork != nil {
		s := *rc.Fork
		s.Pace = rc.Pace
		return s
	}
	return session.Setup{Scenario: sc, Protocol: rc.Protocol, Provider: rc.Provider, Stream: rc.Stream, History: rc.History,
		Faults: rc.Faults, Pace: rc.Pace, Policy: session.PolicyManual, Parent: rc.Parent,
		Params: map[string]any{"step_mode": rc.StepMode, "edited_sources": keys(rc.Edits)}}
}

// keys are a map's keys, sorted.
func keys(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }

// loadScenario loads the scenario a run config names, with the assembly
// panel's source edits applied.
func loadScenario(cat Catalog, rc RunConfig) (*session.Scenario, error) {
	if rc.Fork != nil {
		return rc.Fork.Scenario, nil // the parent's, loaded when the fork was planned
	}
	if rc.Scenario == RecordingScenario {
		return nil, nil // a recording has no scenario
	}
	if cat == nil {
		return nil, errors.New("no scenarios to run: the workbench was opened without a catalog")
	}
	sc, err := cat.Lookup(rc.ScenarioName())
	if err != nil {
		return nil, err
	}
	return withEdits(sc, rc.Edits), nil
}

// withEdits returns a copy of sc whose sources carry the edited texts.
func withEdits(sc *session.Scenario, edits map[string]string) *session.Scenario {
	if len(edits) == 0 {
		return sc
	}
	cp := *sc
	cp.Sources = append([]adapters.Source(nil), sc.Sources...)
	for i, s := range cp.Sources {
		if t, ok := edits[s.ID]; ok {
			cp.Sources[i].Text = t
		}
	}
	return &cp
}

// scenarioMsg is a run's scenario, loaded.
type scenarioMsg struct {
	gen int
	sc  *session.Scenario
	err error
}

// loadScenarioCmd loads the scenario in a command (a scenario file is I/O).
func loadScenarioCmd(gen int, cat Catalog, rc RunConfig) tea.Cmd {
	return func() tea.Msg {
		sc, err := loadScenario(cat, rc)
		return scenarioMsg{gen: gen, sc: sc, err: err}
	}
}

// uiDecider asks the UI for each decision and waits for the answer.
type uiDecider struct {
	gen int
	c   *coalescer
}

// Decide implements session.Decider.
func (d *uiDecider) Decide(ctx context.Context, p session.Proposal) (session.Decision, error) {
	reply := make(chan session.Decision, 1)
	d.c.push(askMsg{gen: d.gen, p: p, reply: reply})
	select {
	case dec := <-reply:
		return dec, nil
	case <-ctx.Done():
		return session.Decision{}, ctx.Err()
	}
}

// runCmd runs a session on the command's goroutine; everything it has to
// say goes through the coalescer and the bridge, in order, ending with
// runEndedMsg.
func runCmd(ctx context.Context, gen int, be Backend, sc *session.Scenario, rc RunConfig, out chan<- tea.Msg) tea.Cmd {
	return func() tea.Msg {
		c := newCoalescer(gen, out, ctx.Done())
		h := Hooks{Observe: c.observe, Decider: &uiDecider{gen: gen, c: c}}
		if rc.StepMode {
			h.Pause = func(ctx context.Context, step string, turn int) error {
				reply := make(chan struct{}, 1)
				c.push(pauseMsg{gen: gen, step: step, turn: turn, reply: reply})
				select {
				case <-reply:
					return nil
				case <-ctx.Done():
					return ctx.Err()
				}
			}
		}
		err := safely(func() error { return be.Run(ctx, sc, rc, h) })
		c.stopTimer()
		c.push(runEndedMsg{gen: gen, err: err})
		return nil
	}
}

// safely turns a panic into an error, so a bug in a run ends up in the
// status line instead of killing the program with the terminal raw.
func safely(fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("internal error: %v", r)
			slog.Error("panic in a session", "panic", r, "stack", string(debug.Stack()))
		}
	}()
	return fn()
}

// answer sends a decision to the waiting session.
func answer(reply chan session.Decision, d session.Decision) tea.Cmd {
	return func() tea.Msg {
		select {
		case reply <- d:
		default: // already answered
		}
		return nil
	}
}

// resume moves a paused walkthrough on.
func resume(reply chan struct{}) tea.Cmd {
	return func() tea.Msg {
		select {
		case reply <- struct{}{}:
		default:
		}
		return nil
	}
}

// isCancel reports whether a run ended because it was cancelled.
func isCancel(err error) bool {
	return errors.Is(err, context.Canceled)
}
