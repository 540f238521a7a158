// Package app is the application layer: it wires the store, the
// simulator, the provider and the session engine once, for every front
// end. `modelwire run` and the workbench describe a session as a
// session.Setup and run it here; the workbench reaches stored sessions
// through Library and the scenarios and faults through Catalog, so the ui
// package imports neither store nor sim nor samples.
//
// Imports run one way: cli → app → {session, store, sim, samples}; cli →
// ui → session. app never imports ui or cli.
package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/proxy"
	"github.com/modelwire/modelwire/samples"
	"github.com/modelwire/modelwire/session"
	"github.com/modelwire/modelwire/sim"
	"github.com/modelwire/modelwire/store"
	"github.com/modelwire/modelwire/timeline"
	"github.com/modelwire/modelwire/transport"
)

// StartSimulator starts the built-in simulator on addr ("127.0.0.1:0"
// for a free loopback port) and returns its base URL; it stops when ctx
// ends. It is the one place the simulator is started: scenarios named in
// a request's scenario header are looked up in the embedded samples
// unless o says otherwise.
func StartSimulator(ctx context.Context, addr string, o sim.Options) (string, error) {
	if o.Lookup == nil {
		o.Lookup = samples.LookupIn("")
	}
	base, err := sim.New(o).Start(ctx, addr)
	if err != nil {
		return "", fmt.Errorf("starting the simulator: %w", err)
	}
	return base, nil
}

// SetupError is a setup that cannot run (an unknown provider, a missing
// key, faults that do not parse, an engine configuration the protocol
// refuses): bad input, not a failed session.
type SetupError struct{ Err error }

func (e *SetupError) Error() string { return e.Err.Error() }
func (e *SetupError) Unwrap() error { return e.Err }

// Engine runs sessions. DB, when set, records each through one
// timeline.StoreJournal.
type Engine struct {
	DB *store.DB
	// Getenv reads provider keys and base URLs (os.Getenv when nil).
	Getenv  func(string) string
	Version string
	// Source names the front end in what is recorded (store.SourceRun,
	// store.SourceTUI).
	Source string
	// Ended, when set, is given each recorded session once it has ended,
	// on the session's goroutine (the live OpenTelemetry export).
	Ended func(ctx context.Context, sessionID string)
}

// Run runs the session s describes to its end: the simulator started for
// it when the provider is sim without a base URL, the provider resolved,
// the session recorded. A session stopped by ctx is stored interrupted,
// never left running.
func (e *Engine) Run(ctx context.Context, s session.Setup, h session.Hooks) (*session.Result, error) {
	base := s.BaseURL
	pause := h.Pause
	if s.Provider == adapters.ProviderSim && base == "" {
		faults, err := sim.ParseFaults(strings.Join(s.Faults, ","))
		if err != nil {
			return nil, &SetupError{err}
		}
		simCtx, cancel := context.WithCancel(ctx)
		defer cancel()
		plays := s.Scenario
		if s.Simulate != nil {
			plays = s.Simulate
		}
		o := sim.Options{Scenario: plays, Faults: faults, Pace: s.Pace}
		if pause != nil && s.Pace > 0 {
			// The simulator is this session's: while the person rests on
			// a step, its paced stream waits too, so what streams after
			// the step streams at the pace (sim.Hold).
			o.Hold = sim.NewHold()
			pause = func(ctx context.Context, step string, turn int) error {
				o.Hold.Hold()
				defer o.Hold.Release()
				return h.Pause(ctx, step, turn)
			}
		}
		if base, err = StartSimulator(simCtx, "127.0.0.1:0", o); err != nil {
			return nil, err
		}
	}
	prov, err := transport.ResolveProvider(s.Provider, base, e.Getenv)
	if err != nil {
		return nil, &SetupError{err}
	}
	var journal session.Journal
	var sj *timeline.StoreJournal
	if e.DB != nil {
		sj = timeline.NewStoreJournal(e.DB, Meta(s, prov, e.Source, e.Version), s.Stream)
		if s.Fork != nil {
			sj.Inherit(s.Parent, s.Fork.FromTurn, s.ForkResults)
		}
		journal = sj
	}
	cfg := session.Config{Scenario: s.Scenario, Protocol: s.Protocol, Provider: prov, Model: s.Model, Stream: s.Stream,
		History: s.History, Policy: s.Policy, Timeouts: s.Timeouts, Faults: s.Faults, NoRegeneration: s.NoRegeneration, Pause: pause, Fork: s.Fork}
	run, err := session.New(cfg, journal, h.Observe, h.Decider)
	if err != nil {
		return nil, &SetupError{err}
	}
	res, err := run.Run(ctx)
	if err != nil && sj != nil && ctx.Err() != nil {
		if ierr := sj.Interrupt(); ierr != nil {
			err = errors.Join(err, ierr)
		}
	}
	if e.Ended != nil && e.DB != nil && res != nil && res.SessionID != "" {
		e.Ended(ctx, res.SessionID)
	}
	return res, err
}

// Meta describes the session a setup records, for source: its title (the scenario's,
// with the variant), the model asked for, the provider's base URL, the
// tools and output schema sent, and the front end's parameters with the
// stream, history and faults.
func Meta(s session.Setup, prov transport.Provider, source, version string) store.SessionMeta {
	sc := s.Scenario
	faults := slices.DeleteFunc(slices.Clone(s.Faults), func(f string) bool { return strings.TrimSpace(f) == "" })
	params := map[string]any{"stream": s.Stream, "history": s.History, "faults": faults}
	maps.Copy(params, s.Params)
	pj, _ := json.Marshal(params)
	defs := sc.Request(s.Stream, s.History).Tools
	tools, _ := json.Marshal(defs)
	title := sc.Title
	if title == "" {
		title = sc.FullName()
	} else if sc.Variant != "" {
		title += " [" + sc.Variant + "]"
	}
	model := s.Model
	if model == "" {
		model = sc.Model
	}
	man := store.Manifest{Parameters: pj, Tools: tools, OutputSchema: sc.Output.Schema, AdapterVersion: adapters.Version,
		Client: "modelwire/" + version, Prompt: sc.Sources, ToolDefs: append([]adapters.Tool{}, defs...)}
	if f := s.Fork; f != nil && f.Resend != nil && f.Resend.First != nil {
		man = resendManifest(s, pj)
	}
	return store.SessionMeta{Title: title, Scenario: sc.Name, Variant: sc.Variant, Protocol: s.Protocol, Provider: s.Provider,
		Model: model, BaseURL: prov.BaseURL, Source: source, Version: version, ParentID: s.Parent, Manifest: man}
}

// resendManifest is the manifest of a fork of an application's session:
// what its first request, as the fork sends it (edits made), declares —
// as the proxy read the parent's (proxy.Manifest), so a fork that changes
// nothing has the parent's hashes.
func resendManifest(s session.Setup, params json.RawMessage) store.Manifest {
	first := *s.Fork.Resend.First
	if s.Fork.Edit != nil {
		_ = s.Fork.Edit(s.Fork.FromTurn, &first) // an edit that fails stops the fork before it sends
	}
	h := http.Header{}
	for k, v := range first.Headers {
		h.Set(k, v)
	}
	m := proxy.Manifest(s.Protocol, first.Method, first.Path, h, first.Body)
	m.Parameters = params
	return m
}

// Catalog is what can be run: the embedded scenarios (and scenario
// files) and the simulator's faults.
type Catalog struct{}

// Scenarios names the embedded scenarios and their variants ("refund",
// "refund/wrong-cap").
func (Catalog) Scenarios() []string { return samples.Names() }

// Lookup loads a scenario by name or file path.
func (Catalog) Lookup(name string) (*session.Scenario, error) { return samples.Lookup(name) }

// Faults names the simulator's faults, sorted.
func (Catalog) Faults() []string { return sim.FaultNames() }

// FaultHelp describes a fault.
func (Catalog) FaultHelp(name string) string { return sim.FaultHelp(name) }
