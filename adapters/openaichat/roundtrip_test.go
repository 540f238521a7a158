package openaichat

import (
	"testing"

	"github.com/modelwire/modelwire/adapters/adapterstest"
)

// TestRandomTurnRoundTrip: a generated turn (text, reasoning, parallel
// calls with random arguments, a terminal), rendered by the simulator as
// a stream and as a body, decodes back to exactly that turn.
// OpenAI Chat carries no reasoning text; DeepSeek sends reasoning_content.
func TestRandomTurnRoundTrip(t *testing.T) {
	t.Run("openai", func(t *testing.T) {
		adapterstest.RoundTrip(t, New(), protocol{}, adapterstest.TurnShape{})
	})
	t.Run("deepseek", func(t *testing.T) {
		adapterstest.RoundTrip(t, NewDeepSeek(), protocol{deepseek: true}, adapterstest.TurnShape{Reasoning: true})
	})
}
