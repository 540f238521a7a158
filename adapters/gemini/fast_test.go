package gemini

import (
	"testing"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/adapterstest"
)

// The fast path must decode every chunk exactly as the general path does.
func TestFastPathAgrees(t *testing.T) {
	raws := adapterstest.StreamRaws(t, New(), adapterstest.MixedTurn(3))
	fast := 0
	for _, raw := range raws {
		if _, _, ok := fastHeadEnd(raw.Data); ok {
			fast++
		}
	}
	if fast < len(raws)/2 {
		t.Fatalf("%d of %d chunks in the fast shape", fast, len(raws))
	}
	adapterstest.SameDecoding(t, func(general bool) adapters.Decoder { return &decoder{general: general} }, raws)
}
