package gemini

import (
	"testing"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/adapterstest"
)

// The fast path must decode every chunk exactly as the general path does.
func TestFastPathAgrees(t *testing.T) {
	raws := adapterstest.StreamRaws(t, New(), adapterstest.MixedTurn(3))
	adapterstest.FastShare(t, raws, 0.5, func(data string) bool { _, _, ok := fastHeadEnd(data); return ok })
	adapterstest.SameDecoding(t, func(general bool) adapters.Decoder { return &decoder{general: general} }, raws)
}
