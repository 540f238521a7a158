package app

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/registry"
	"github.com/modelwire/modelwire/check"
	"github.com/modelwire/modelwire/samples"
	"github.com/modelwire/modelwire/session"
)

// CheckTarget is one target of `modelwire check`: where a recorded
// session is re-sent. Empty fields keep the recording's.
type CheckTarget struct {
	// Spec is the target as given, its name in the matrix.
	Spec               string
	Provider, Protocol string
	Model              string
	// Variant is a scenario variant the session is re-sent as
	// ("refund/wrong-cap"): the simulator's stand-in for a weaker model.
	Variant string
}

// targetProviders are the providers a target may name.
var targetProviders = []string{adapters.ProviderSim, adapters.ProviderOpenAI, adapters.ProviderAnthropic,
	adapters.ProviderDeepSeek, adapters.ProviderGemini, adapters.ProviderCompatible}

// ParseCheckTarget reads [PROVIDER:]PROTOCOL[/MODEL], PROVIDER:/MODEL
// (the recording's protocol, another model), PROVIDER alone, or
// [sim:]SCENARIO/VARIANT;
// provider is the one a target without a prefix goes to ("" keeps the
// recording's). Bad input is one line naming the syntax.
func ParseCheckTarget(spec, provider string) (CheckTarget, error) {
	t := CheckTarget{Spec: spec, Provider: provider}
	bad := func(why string) (CheckTarget, error) {
		return CheckTarget{}, fmt.Errorf("--to %q: %s; want [PROVIDER:]PROTOCOL[/MODEL] or sim:SCENARIO/VARIANT (protocols %s; providers %s)",
			spec, why, strings.Join(registry.Protocols, ", "), strings.Join(targetProviders, ", "))
	}
	rest := strings.TrimSpace(spec)
	if contains(targetProviders, rest) && !contains(registry.Protocols, rest) {
		rest += ":" // a provider alone (gemini is a protocol first)
	}
	if p, r, ok := strings.Cut(rest, ":"); ok {
		if !contains(targetProviders, p) {
			return bad("unknown provider " + p)
		}
		t.Provider, rest = p, r
	}
	head, model, hasModel := strings.Cut(rest, "/")
	switch {
	case rest == "":
		if t.Provider == "" {
			return bad("empty")
		}
	case head == "" && hasModel && model != "":
		t.Model = model
	case contains(registry.Protocols, head):
		if hasModel && model == "" {
			return bad("empty model")
		}
		t.Protocol, t.Model = head, model
	default:
		sc, err := samples.Lookup(rest)
		if err != nil || sc.Variant == "" || !hasModel {
			return bad("unknown protocol or variant " + rest)
		}
		if t.Provider != "" && t.Provider != adapters.ProviderSim {
			return bad("a variant is the simulator's (sim:" + rest + ")")
		}
		t.Provider, t.Variant = adapters.ProviderSim, rest
	}
	if t.Protocol != "" && t.Provider != "" {
		if _, err := adapters.CapabilitiesFor(t.Provider, t.Protocol); err != nil {
			return bad(err.Error())
		}
	}
	return t, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Check re-sends a recorded session to a target: a fork from turn 1 (the
// fork machinery: the scenario's sources re-assembled for the target's
// protocol, its tools answering as they answered the recording; an
// application's session re-sent as it sent it, calls answered from the
// recording), every call approved as the recording's gate would
// (auto: calls whose arguments pass their schema), judged by the same
// five layers. The child is stored under the recording, with the target
// in its parameters; its id is returned.
func (e *Engine) Check(ctx context.Context, recording string, t CheckTarget) (string, error) {
	plan, err := PlanFork(e.DB, recording, 1, ForkEdits{Provider: t.Provider, Protocol: t.Protocol, Model: t.Model})
	if err != nil {
		return "", err
	}
	if t.Model == "" && t.Provider != "" && t.Provider != adapters.ProviderSim && plan.Parent.Provider == adapters.ProviderSim {
		return "", &SetupError{fmt.Errorf("--to %s: name a model (%s/MODEL): the recording's %s is the simulator's", t.Spec, strings.TrimSuffix(t.Spec, "/"), plan.Parent.Model)}
	}
	st, err := plan.Setup()
	if err != nil {
		return "", err
	}
	if t.Variant != "" {
		if plan.Application() {
			return "", &SetupError{fmt.Errorf("session %s is an application's: it has no scenario for %s to vary", recording, t.Variant)}
		}
		sc, err := samples.Lookup(t.Variant)
		if err != nil {
			return "", &SetupError{err}
		}
		if sc.Name != st.Scenario.Name {
			return "", &SetupError{fmt.Errorf("%s varies scenario %s, and session %s ran %s", t.Variant, sc.Name, recording, st.Scenario.Name)}
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
func (e *Engine) Probe(ctx context.Context, p check.Probe, t CheckTarget) (string, error) {
	name := p.Scenario
	if t.Variant != "" {
		name = t.Variant
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
func (e *Engine) CheckAll(ctx context.Context, recordings []string, targets []CheckTarget, done func(check.Cell)) ([]check.Cell, error) {
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
func (e *Engine) RunSuite(ctx context.Context, probes []check.Probe, targets []CheckTarget, done func(check.Cell)) ([]check.Cell, error) {
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
func probeUnsupported(p check.Probe, t CheckTarget) string {
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
