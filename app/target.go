package app

import (
	"fmt"
	"slices"
	"strings"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/registry"
	"github.com/modelwire/modelwire/samples"
)

// Target is where a recorded turn is sent again: a protocol, a provider,
// a model, or a scenario the simulator plays instead (its variants stand
// in for a weaker model). Empty fields keep what the recording had.
// `fork --to` and `check --to` read targets with ParseTarget.
type Target struct {
	// Spec is the target as written.
	Spec                                string
	Provider, Protocol, Model, Scenario string
}

// TargetSyntax is the grammar ParseTarget reads, for messages and help.
const TargetSyntax = "PROTOCOL[/MODEL], PROVIDER[/MODEL], PROVIDER:PROTOCOL[/MODEL] or sim:SCENARIO"

// ParseTarget reads one target:
//
//	openai-chat                  a protocol (the recording's provider when it
//	                             speaks it, else the protocol's own)
//	anthropic-messages/claude-x  a protocol and a model
//	anthropic/claude-x           a provider (its own protocol) and a model
//	openai:openai-chat/gpt-4.1   a provider, a protocol and a model
//	sim:refund/wrong-cap         the simulator playing a scenario or variant
//
// A model may itself hold slashes (everything after the first is the
// model). Bad input is an error of one line naming the target.
func ParseTarget(spec string) (Target, error) {
	t := Target{Spec: spec}
	bad := func(why string) (Target, error) {
		return Target{}, fmt.Errorf("target %q: %s (want %s)", spec, why, TargetSyntax)
	}
	s := strings.TrimSpace(spec)
	if s == "" {
		return bad("empty")
	}
	if prov, rest, ok := strings.Cut(s, ":"); ok {
		if !isProvider(prov) {
			return bad("unknown provider " + prov)
		}
		t.Provider = prov
		head, _, _ := strings.Cut(rest, "/")
		switch {
		case rest == "":
			return bad("nothing after " + prov + ":")
		case isProtocol(head):
		case prov == adapters.ProviderSim:
			if _, err := samples.Lookup(rest); err != nil {
				return bad("unknown scenario " + rest)
			}
			t.Scenario = rest
			return t, nil
		default:
			return bad("unknown protocol " + head)
		}
		s = rest
	}
	head, model, hasModel := strings.Cut(s, "/")
	if hasModel && model == "" {
		return bad("empty model after /")
	}
	t.Model = model
	switch {
	case isProtocol(head):
		t.Protocol = head
	case t.Provider == "" && isProvider(head):
		t.Provider, t.Protocol = head, adapters.NativeProtocol(head)
	default:
		return bad("unknown protocol or provider " + head)
	}
	if t.Provider != "" {
		if _, err := adapters.CapabilitiesFor(t.Provider, t.Protocol); err != nil {
			return bad(err.Error())
		}
	}
	return t, nil
}

// ParseTargets reads a comma-separated list of targets (`--to a,b,c`).
func ParseTargets(list string) ([]Target, error) {
	var out []Target
	for _, spec := range strings.Split(list, ",") {
		t, err := ParseTarget(spec)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// For is the target as sent from a recording made with provider: a
// protocol alone keeps that provider when it speaks the protocol (the
// simulator speaks them all), else goes to the protocol's own provider.
func (t Target) For(provider string) Target {
	if t.Provider != "" || t.Protocol == "" {
		return t
	}
	if _, err := adapters.CapabilitiesFor(provider, t.Protocol); err == nil {
		return t
	}
	if d, ok := registry.Describe(t.Protocol); ok {
		t.Provider = d.Provider
	}
	return t
}

func isProtocol(name string) bool {
	return slices.Contains(registry.Protocols, name)
}

func isProvider(name string) bool {
	return name != "" && (name == adapters.ProviderSim || adapters.NativeProtocol(name) != "")
}
