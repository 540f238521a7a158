package app

import (
	"strings"
	"testing"

	"github.com/modelwire/modelwire/adapters"
)

// TestParseTarget: each form of a target `fork --to` and `check --to`
// read (with check's --provider as the default provider), and bad ones
// as one line naming the target and the grammar.
func TestParseTarget(t *testing.T) {
	const sim, openai, anthropic = adapters.ProviderSim, adapters.ProviderOpenAI, adapters.ProviderAnthropic
	for _, c := range []struct {
		spec, provider string
		want           Target
	}{
		{adapters.OpenAIChat, "", Target{Protocol: adapters.OpenAIChat}},
		{adapters.Gemini, "", Target{Protocol: adapters.Gemini}}, // a protocol first, though also a provider
		{adapters.AnthropicMessages + "/claude-x", "", Target{Protocol: adapters.AnthropicMessages, Model: "claude-x"}},
		{adapters.AnthropicMessages + "/claude-x", sim, Target{Provider: sim, Protocol: adapters.AnthropicMessages, Model: "claude-x"}},
		{openai + ":" + adapters.OpenAIChat + "/gpt-4.1-mini", "", Target{Provider: openai, Protocol: adapters.OpenAIChat, Model: "gpt-4.1-mini"}},
		{openai + ":" + adapters.OpenAIChat + "/org/gpt-x", sim, Target{Provider: openai, Protocol: adapters.OpenAIChat, Model: "org/gpt-x"}},
		// A provider (and model) alone: the protocol is For's to choose.
		{anthropic + "/claude-x", "", Target{Provider: anthropic, Model: "claude-x"}},
		{anthropic + ":/claude-y", "", Target{Provider: anthropic, Model: "claude-y"}},
		{sim, "", Target{Provider: sim}},
		{adapters.ProviderGemini + ":", "", Target{Provider: adapters.ProviderGemini}},
		{"sim:/refund-model", openai, Target{Provider: sim, Model: "refund-model"}},
		{"sim:" + adapters.Gemini, "", Target{Provider: sim, Protocol: adapters.Gemini}},
		// Scenarios and variants are the simulator's.
		{"sim:refund/wrong-cap", "", Target{Provider: sim, Scenario: "refund/wrong-cap"}},
		{"refund/fenced", "", Target{Provider: sim, Scenario: "refund/fenced"}},
		{"refund/fenced", openai, Target{Provider: sim, Scenario: "refund/fenced"}},
		{"sim:refund", "", Target{Provider: sim, Scenario: "refund"}},
		{" " + adapters.OpenAIChat + " ", "", Target{Protocol: adapters.OpenAIChat}},
	} {
		got, err := ParseTarget(c.spec, c.provider)
		c.want.Spec = strings.TrimSpace(c.spec)
		if err != nil || got != c.want {
			t.Errorf("ParseTarget(%q, %q) = %+v, %v; want %+v", c.spec, c.provider, got, err, c.want)
		}
	}
	for _, c := range []struct{ spec, provider, why string }{
		{"", "", "empty"},
		{"bogus", "", "unknown protocol or provider bogus"},
		{"refund", "", "the scenario is sim:refund"},
		{"sim:nope", "", "unknown scenario nope"},
		{"nobody:" + adapters.OpenAIChat, "", "unknown provider nobody"},
		{"nope:" + adapters.OpenAIChat, "", "unknown provider nope"},
		{adapters.OpenAIChat + "/", "", "empty model after /"},
		{anthropic + ":/", "", "empty model after /"},
		{"openai:refund/wrong-cap", "", "a variant is the simulator's"},
		{"openai:bogus", "", "unknown protocol bogus"},
		{adapters.ProviderDeepSeek + ":" + adapters.GeminiInteractions, "", "does not speak"},
		{anthropic + ":" + adapters.Gemini, "", "does not speak"},
		{adapters.Gemini, anthropic, "does not speak"}, // the default provider must speak it too
	} {
		_, err := ParseTarget(c.spec, c.provider)
		if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), c.why) ||
			!strings.HasPrefix(err.Error(), "target \""+c.spec+"\": ") || !strings.Contains(err.Error(), "; want "+TargetSyntax) {
			t.Errorf("ParseTarget(%q, %q): %v, want one line: target %q: %s; want %s", c.spec, c.provider, err, c.spec, c.why, TargetSyntax)
		}
	}
	if ts, err := ParseTargets(adapters.OpenAIChat+",sim:refund", sim); err != nil || len(ts) != 2 || ts[0].Provider != sim {
		t.Errorf("ParseTargets: %v %v", ts, err)
	}
	if _, err := ParseTargets(adapters.OpenAIChat+",", ""); err == nil {
		t.Error("ParseTargets: an empty target, no error")
	}
}

// TestTargetFor: what a target names stays; a protocol alone keeps the
// recording's provider when it speaks it, else goes to the protocol's own;
// a provider alone keeps the recording's protocol when it speaks it, else
// speaks its own.
func TestTargetFor(t *testing.T) {
	const sim, openai, anthropic = adapters.ProviderSim, adapters.ProviderOpenAI, adapters.ProviderAnthropic
	for _, c := range []struct {
		t                  Target
		provider, protocol string
		want               Target
	}{
		{Target{Protocol: adapters.AnthropicMessages}, sim, adapters.OpenAIChat, Target{Protocol: adapters.AnthropicMessages}},
		{Target{Protocol: adapters.AnthropicMessages}, openai, adapters.OpenAIChat, Target{Provider: anthropic, Protocol: adapters.AnthropicMessages}},
		{Target{Protocol: adapters.OpenAIChat}, openai, adapters.OpenAIResponses, Target{Protocol: adapters.OpenAIChat}},
		{Target{Provider: anthropic, Model: "claude-x"}, sim, adapters.OpenAIChat, Target{Provider: anthropic, Protocol: adapters.AnthropicMessages, Model: "claude-x"}},
		{Target{Provider: anthropic}, sim, adapters.AnthropicMessages, Target{Provider: anthropic}},
		{Target{Provider: openai, Model: "gpt-x"}, sim, adapters.OpenAIChat, Target{Provider: openai, Model: "gpt-x"}},
		{Target{Provider: sim}, openai, adapters.Gemini, Target{Provider: sim}},
		{Target{Provider: openai, Protocol: adapters.OpenAIChat}, anthropic, adapters.AnthropicMessages, Target{Provider: openai, Protocol: adapters.OpenAIChat}},
		{Target{Provider: sim, Scenario: "refund/wrong-cap"}, openai, adapters.OpenAIChat, Target{Provider: sim, Scenario: "refund/wrong-cap"}},
	} {
		if got := c.t.For(c.provider, c.protocol); got != c.want {
			t.Errorf("%+v.For(%s, %s) = %+v, want %+v", c.t, c.provider, c.protocol, got, c.want)
		}
	}
}
