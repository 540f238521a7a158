package app

import (
	"fmt"
	"slices"
	"strings"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/registry"
	"github.com/modelwire/modelwire/samples"
)

// Target is where a recorded session is sent again, by `fork --to` and
// `check --to` alike: a provider, a protocol, a model, or a scenario the
// simulator plays instead (a variant stands in for a weaker model). Empty
// fields keep what the recording had; For resolves them against it.
type Target struct {
	// Spec is the target as written (trimmed): its name in a comparison
	// or a check's matrix.
	Spec                      string
	Provider, Protocol, Model string
	// Scenario is the scenario or variant the simulator plays
	// ("refund/wrong-cap"); Provider is then the simulator.
	Scenario string
}

// TargetSyntax is the one grammar ParseTarget reads, for messages and help.
const TargetSyntax = "[PROVIDER:]PROTOCOL[/MODEL], PROVIDER[/MODEL], PROVIDER:/MODEL, sim:SCENARIO[/VARIANT] or SCENARIO/VARIANT"

// ParseTarget reads one target (TargetSyntax):
//
//	openai-chat                  a protocol: the recording's provider when it
//	                             speaks it, else the protocol's own (For)
//	anthropic-messages/claude-x  a protocol and a model
//	openai:openai-chat/gpt-4.1   a provider, a protocol and a model
//	anthropic                    a provider: the recording's protocol when it
//	anthropic/claude-x           speaks it, else its own (For); and a model.
//	anthropic:/claude-x          PROVIDER: is the same, and names a provider
//	gemini:                      that is also a protocol's name
//	sim:refund                   the simulator playing a scenario
//	sim:refund/wrong-cap         ... or one of its variants; sim: may be left
//	refund/wrong-cap             out before SCENARIO/VARIANT
//
// A word that is both a protocol and a provider (gemini) is the protocol.
// A model may itself hold slashes (everything after the first is the
// model). provider is the default provider of a target that names a
// protocol and no provider (check's --provider; "" keeps the recording's).
// Bad input is an error of one line naming the target and the grammar.
func ParseTarget(spec, provider string) (Target, error) {
	s := strings.TrimSpace(spec)
	t := Target{Spec: s}
	bad := func(why string) (Target, error) {
		return Target{}, fmt.Errorf("target %q: %s; want %s (protocols %s; providers %s)", spec, why, TargetSyntax,
			strings.Join(registry.Protocols, ", "), strings.Join(targetProviders, ", "))
	}
	if s == "" {
		return bad("empty")
	}
	rest := s
	if prov, r, ok := strings.Cut(s, ":"); ok {
		if !isProvider(prov) {
			return bad("unknown provider " + prov)
		}
		t.Provider, rest = prov, r
		if rest == "" {
			return t, nil // a provider alone
		}
	}
	head, model, hasModel := strings.Cut(rest, "/")
	if hasModel && model == "" {
		return bad("empty model after /")
	}
	sc, scErr := samples.Lookup(rest)
	switch {
	case head == "" && t.Provider != "":
		t.Model = model // PROVIDER:/MODEL
	case isProtocol(head):
		t.Protocol, t.Model = head, model
	case t.Provider == "" && isProvider(head):
		t.Provider, t.Model = head, model
	case scErr == nil && (t.Provider == adapters.ProviderSim || t.Provider == "" && sc.Variant != ""):
		t.Provider, t.Scenario = adapters.ProviderSim, rest
		return t, nil
	case scErr == nil && t.Provider == "":
		return bad("unknown protocol or provider " + head + " (the scenario is sim:" + rest + ")")
	case scErr == nil:
		what := "scenario"
		if sc.Variant != "" {
			what = "variant"
		}
		return bad("a " + what + " is the simulator's (sim:" + rest + ")")
	case t.Provider == adapters.ProviderSim:
		return bad("unknown scenario " + rest)
	case t.Provider != "":
		return bad("unknown protocol " + head)
	default:
		return bad("unknown protocol or provider " + head)
	}
	if t.Provider == "" {
		t.Provider = provider
	}
	if t.Provider != "" && t.Protocol != "" {
		if _, err := adapters.CapabilitiesFor(t.Provider, t.Protocol); err != nil {
			return bad(err.Error())
		}
	}
	return t, nil
}

// ParseTargets reads a comma-separated list of targets (`--to a,b,c`),
// each with ParseTarget's default provider.
func ParseTargets(list, provider string) ([]Target, error) {
	var out []Target
	for _, spec := range strings.Split(list, ",") {
		t, err := ParseTarget(spec, provider)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// For is the target as sent from a recording made with provider and
// protocol. A protocol alone keeps that provider when it speaks the
// protocol (the simulator speaks them all), else goes to the protocol's
// own provider; a provider alone keeps that protocol when it speaks it,
// else speaks its own. What the target names stays as named.
func (t Target) For(provider, protocol string) Target {
	switch {
	case t.Scenario != "":
	case t.Provider == "" && t.Protocol != "":
		if _, err := adapters.CapabilitiesFor(provider, t.Protocol); err != nil {
			if d, ok := registry.Describe(t.Protocol); ok {
				t.Provider = d.Provider
			}
		}
	case t.Provider != "" && t.Protocol == "":
		if _, err := adapters.CapabilitiesFor(t.Provider, protocol); err != nil {
			t.Protocol = adapters.NativeProtocol(t.Provider)
		}
	}
	return t
}

// targetProviders are the providers a target may name, for messages.
var targetProviders = []string{adapters.ProviderSim, adapters.ProviderOpenAI, adapters.ProviderAnthropic,
	adapters.ProviderDeepSeek, adapters.ProviderGemini, adapters.ProviderCompatible}

func isProtocol(name string) bool {
	return slices.Contains(registry.Protocols, name)
}

func isProvider(name string) bool {
	return slices.Contains(targetProviders, name)
}
