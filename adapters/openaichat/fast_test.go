package openaichat

import (
	"strings"
	"testing"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/adapterstest"
)

// The fast path must decode every chunk exactly as the general path does,
// for OpenAI's chunks and DeepSeek's.
func TestFastPathAgrees(t *testing.T) {
	for _, deepseek := range []bool{false, true} {
		p := protocol{deepseek: deepseek}
		raws := adapterstest.StreamRaws(t, p, adapterstest.MixedTurn(3))
		fast := 0
		d := &decoder{deepseek: deepseek}
		for _, raw := range raws {
			if d.prefix != "" && strings.HasPrefix(raw.Data, d.prefix) {
				if _, ok := readFast(raw.Data, len(d.prefix)); ok {
					fast++
				}
			}
			d.Decode(raw)
		}
		if fast < len(raws)*3/4 {
			t.Fatalf("deepseek %v: %d of %d chunks on the fast path", deepseek, fast, len(raws))
		}
		adapterstest.SameDecoding(t, func(general bool) adapters.Decoder {
			return &decoder{deepseek: deepseek, general: general}
		}, raws)
	}
}
