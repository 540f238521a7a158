package session

import (
	"context"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/store"
	"github.com/modelwire/modelwire/transport"
)

// Setup is one session as a front end chooses it — `modelwire run`'s
// flags, the workbench's options — before anything is started: the
// application layer (package app) turns it into a running engine (the
// simulator started for it when the provider is sim, the provider's key,
// the journal).
type Setup struct {
	Scenario *Scenario
	Protocol string
	Provider string // sim, openai, anthropic, deepseek, gemini, compatible
	// BaseURL overrides the provider's; for sim, "" starts a simulator.
	BaseURL string
	Model   string // "" for the scenario's
	Stream  bool
	History adapters.HistoryMode
	// Faults are the simulator's faults (by name, NAME or NAME:always).
	Faults []string
	// Pace is the simulator's words a second (0: as fast as it goes).
	Pace float64
	// Simulate, when set, is what a simulator started for the session
	// plays instead of Scenario (which then stands in for an application:
	// ResendScenario).
	Simulate *Scenario

	Policy         Policy
	Timeouts       transport.Timeouts
	NoRegeneration bool

	// Parent is the session this one was edited or forked from ("" for none).
	Parent string
	// Fork, when set, makes the session a fork of Parent: the engine sends
	// from Fork.FromTurn on, and the journal first copies the parent's
	// earlier turns in, with ForkResults' tool results replaced.
	Fork        *Fork
	ForkResults map[store.CallRef]string
	// Params are the front end's own choices (approval policy, step
	// mode, edited sources…), recorded with the session.
	Params map[string]any
}

// Hooks connect a running session to its front end.
type Hooks struct {
	Observe Observer
	Decider Decider
	// Pause is nil when the session runs freely (see Config.Pause).
	Pause func(ctx context.Context, step string, turn int) error
}
