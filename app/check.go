package app

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/check"
	"github.com/modelwire/modelwire/samples"
	"github.com/modelwire/modelwire/session"
)

// Check re-sends a recorded session to a target: a fork from turn 1 (the
// fork machinery: the scenario's sources re-assembled for the target's
// protocol, its tools answering as they answered the recording; an
// application's session re-sent as it sent it, calls answered from the
// recording), every call approved as the recording's gate would
// (auto: calls whose arguments pass their schema), judged by the same
// five layers. The target is resolved against the recording (Target.For):
// a protocol alone keeps the recording's provider when it speaks it, a
// provider alone the recording's protocol; a real provider other than the
// recording's needs a model named. The child is stored under the
// recording, with the target in its parameters; its id is returned.
func (e *Engine) Check(ctx context.Context, recording string, t Target) (string, error) {
	rec, err := e.DB.GetSession(recording)
	if err != nil {
		return "", err
	}
	t = t.For(rec.Provider, rec.Protocol)
	plan, err := PlanFork(e.DB, recording, 1, ForkEdits{Provider: t.Provider, Protocol: t.Protocol, Model: t.Model})
	if err != nil {
		return "", err
	}
	if t.Model == "" && t.Provider != "" && t.Provider != adapters.ProviderSim && t.Provider != plan.Parent.Provider {
		who := plan.Parent.Provider
		if who == adapters.ProviderSim {
			who = "the simulator"
		}
		return "", &SetupError{fmt.Errorf("target %q: name a model (%s/MODEL): the recording's %s is %s's", t.Spec, strings.TrimSuffix(t.Spec, "/"), plan.Parent.Model, who)}
	}
	st, err := plan.Setup()
	if err != nil {
		return "", err
	}
	if t.Scenario != "" {
		if plan.Application() {
			return "", &SetupError{fmt.Errorf("session %s is an application's: it has no scenario for %s to vary", recording, t.Scenario)}
		}
		sc, err := samples.Lookup(t.Scenario)
		if err != nil {
			return "", &SetupError{err}
		}
		if sc.Name != st.Scenario.Name {
			return "", &SetupError{fmt.Errorf("%s varies scenario %s, and session %s ran %s", t.Scenario, sc.Name, recording, st.Scenario.Name)}
		}
		st.Scenario = sc
	}
	st.Policy = session.PolicyAuto
	st.Params["check"] = map[string]any{"target": t.Spec, "recording": recording}
	res, err := e.Run(ctx, st, session.Hooks{})
	if res != nil && res.SessionID != "" {
		return res.SessionID, err
	}
	return "", err
}

// Probe runs one probe of the capability suite against a target: the
// probe's scenario (asking for reasoning when the probe does) with its
// faults, on the target's provider and protocol (the provider's own when
// the target names none; the simulator by default), every call
// auto-approved; it returns the session's id.
func (e *Engine) Probe(ctx context.Context, p check.Probe, t Target) (string, error) {
	name := p.Scenario
	if t.Scenario != "" {
		name = t.Scenario
	}
	sc, err := samples.Lookup(name)
	if err != nil {
		return "", &SetupError{err}
	}
	if p.Reasoning != "" || p.MaxOutputTokens > 0 {
		c := *sc
		if p.Reasoning != "" {
			c.Limits.Reasoning = p.Reasoning
		}
		if p.MaxOutputTokens > 0 {
			c.Limits.MaxOutputTokens = p.MaxOutputTokens
		}
		sc = &c
	}
	prov := t.Provider
	if prov == "" {
		prov = adapters.ProviderSim
	}
	protocol := t.Protocol
	if protocol == "" {
		protocol = adapters.NativeProtocol(prov)
	}
	faults := p.Faults
	st := session.Setup{Scenario: sc, Protocol: protocol, Provider: prov, Model: t.Model, Stream: true, History: adapters.HistoryFull,
		Faults: faults, Policy: session.PolicyAuto, NoRegeneration: !p.Regenerate,
		Params: map[string]any{"check": map[string]any{"target": t.Spec, "probe": p.Name, "faults": faults}}}
	res, err := e.Run(ctx, st, session.Hooks{})
	if res != nil && res.SessionID != "" {
		return res.SessionID, err
	}
	return "", err
}

// CheckAll re-sends each recording to each target (Check) and compares
// what each stored with its recording; done, when set, is told each cell
// as it is made. A target that cannot run is an error cell; an error of
// the database ends it.
func (e *Engine) CheckAll(ctx context.Context, recordings []string, targets []Target, done func(check.Cell)) ([]check.Cell, error) {
	var cells []check.Cell
	for _, id := range recordings {
		rec, err := check.Read(e.DB, id)
		if err != nil {
			return cells, err
		}
		for _, t := range targets {
			if ctx.Err() != nil {
				return cells, ctx.Err()
			}
			var c check.Cell
			child, err := e.Check(ctx, id, t)
			var got *check.Profile
			if child != "" {
				got, err = check.Read(e.DB, child)
			}
			var bad *SetupError
			switch {
			case got != nil:
				c = check.Compare(rec, got, t.Spec)
			case errors.As(err, &bad) || err != nil:
				c = check.Failed(rec, id, t.Spec, err)
			}
			cells = append(cells, c)
			if done != nil {
				done(c)
			}
		}
	}
	return cells, nil
}

// RunSuite runs every probe of the capability suite against each target
// (Probe) and judges each (check.Prove).
func (e *Engine) RunSuite(ctx context.Context, probes []check.Probe, targets []Target, done func(check.Cell)) ([]check.Cell, error) {
	var cells []check.Cell
	for _, t := range targets {
		for _, p := range probes {
			if ctx.Err() != nil {
				return cells, ctx.Err()
			}
			if why := probeUnsupported(p, t); why != "" {
				c := check.Skipped(p, t.Spec, why)
				cells = append(cells, c)
				if done != nil {
					done(c)
				}
				continue
			}
			id, err := e.Probe(ctx, p, t)
			var c check.Cell
			if id == "" {
				if err == nil {
					err = fmt.Errorf("the probe recorded nothing")
				}
				c = check.Failed(nil, p.Name, t.Spec, err)
			} else {
				got, err := check.Read(e.DB, id)
				if err != nil {
					return cells, err
				}
				c = check.Prove(p, t.Spec, got)
			}
			cells = append(cells, c)
			if done != nil {
				done(c)
			}
		}
	}
	return cells, nil
}

// probeUnsupported says why a probe cannot be shown on a target ("" when
// it can): a simulator's fault asked of a real provider (which cannot be
// told to fail), reasoning asked of a protocol whose answers never carry
// it (its capabilities say so).
func probeUnsupported(p check.Probe, t Target) string {
	if len(p.Faults) > 0 && t.Provider != "" && t.Provider != adapters.ProviderSim {
		return "it needs the simulator's " + strings.Join(p.Faults, ",") + "; a real provider cannot be told to fail"
	}
	if p.Reasoning == "" {
		return ""
	}
	prov, protocol := t.Provider, t.Protocol
	if prov == "" {
		prov = adapters.ProviderSim
	}
	if protocol == "" {
		protocol = adapters.NativeProtocol(prov)
	}
	if c, err := adapters.CapabilitiesFor(prov, protocol); err == nil && !c.ReasoningItems {
		return protocol + "'s answers carry no reasoning"
	}
	return ""
}
