package app

import (
	"strings"
	"testing"

	"github.com/modelwire/modelwire/adapters"
)

// TestParseTarget: each form of a target, and bad ones as one line.
func TestParseTarget(t *testing.T) {
	for _, c := range []struct {
		spec string
		want Target
	}{
		{adapters.OpenAIChat, Target{Protocol: adapters.OpenAIChat}},
		{adapters.AnthropicMessages + "/claude-x", Target{Protocol: adapters.AnthropicMessages, Model: "claude-x"}},
		{adapters.ProviderAnthropic + "/claude-x", Target{Provider: adapters.ProviderAnthropic, Protocol: adapters.AnthropicMessages, Model: "claude-x"}},
		{adapters.ProviderOpenAI + ":" + adapters.OpenAIChat + "/org/gpt-x", Target{Provider: adapters.ProviderOpenAI, Protocol: adapters.OpenAIChat, Model: "org/gpt-x"}},
		{"sim:refund/wrong-cap", Target{Provider: adapters.ProviderSim, Scenario: "refund/wrong-cap"}},
		{"sim:" + adapters.Gemini, Target{Provider: adapters.ProviderSim, Protocol: adapters.Gemini}},
	} {
		got, err := ParseTarget(c.spec)
		c.want.Spec = c.spec
		if err != nil || got != c.want {
			t.Errorf("ParseTarget(%q) = %+v, %v; want %+v", c.spec, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "bogus", "sim:nope", "nobody:" + adapters.OpenAIChat, adapters.OpenAIChat + "/", adapters.ProviderAnthropic + ":" + adapters.Gemini} {
		if _, err := ParseTarget(bad); err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("ParseTarget(%q): %v, want an error of one line", bad, err)
		}
	}
	if ts, err := ParseTargets(adapters.OpenAIChat + ",sim:refund"); err != nil || len(ts) != 2 {
		t.Errorf("ParseTargets: %v %v", ts, err)
	}
	// A protocol alone keeps a provider that speaks it, else goes to its own.
	if got := (Target{Protocol: adapters.AnthropicMessages}).For(adapters.ProviderSim); got.Provider != "" {
		t.Errorf("for sim: %+v", got)
	}
	if got := (Target{Protocol: adapters.AnthropicMessages}).For(adapters.ProviderOpenAI); got.Provider != adapters.ProviderAnthropic {
		t.Errorf("for openai: %+v", got)
	}
}
