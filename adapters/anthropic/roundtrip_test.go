package anthropic

import (
	"testing"

	"github.com/modelwire/modelwire/adapters/adapterstest"
)

// TestRandomTurnRoundTrip: a generated turn (text, reasoning, parallel
// calls with random arguments, a terminal), rendered by the simulator as
// a stream and as a body, decodes back to exactly that turn.
func TestRandomTurnRoundTrip(t *testing.T) {
	adapterstest.RoundTrip(t, New(), protocol{}, adapterstest.TurnShape{Reasoning: true})
}
