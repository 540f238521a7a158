package telemetry

import (
	"testing"

	"github.com/modelwire/modelwire/adapters"
)

// TestTraceNamesFromTheDescriptors: gen_ai.provider.name and
// gen_ai.operation.name are the descriptor's Trace, as they were.
func TestTraceNamesFromTheDescriptors(t *testing.T) {
	for _, c := range []struct{ protocol, provider, op string }{
		{adapters.OpenAIResponses, "openai", "chat"},
		{adapters.OpenAIChat, "openai", "chat"},
		{adapters.DeepSeekChat, "deepseek", "chat"},
		{adapters.AnthropicMessages, "anthropic", "chat"},
		{adapters.Gemini, "gcp.gemini", "generate_content"},
		{adapters.GeminiInteractions, "gcp.gemini", "generate_content"},
		{"other", "other", "chat"},
	} {
		if p, o := providerName(c.protocol).Value.AsString(), operationName(c.protocol).Value.AsString(); p != c.provider || o != c.op {
			t.Errorf("%s: %s %s, want %s %s", c.protocol, p, o, c.provider, c.op)
		}
	}
}
