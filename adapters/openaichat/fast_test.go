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
		d := &decoder{deepseek: deepseek} // learns each chunk's envelope, as a stream's decoder does
		adapterstest.FastShare(t, raws, 0.75, func(data string) bool {
			ok := d.prefix != "" && strings.HasPrefix(data, d.prefix)
			if ok {
				_, ok = readFast(data, len(d.prefix))
			}
			d.Decode(adapters.RawEvent{Data: data})
			return ok
		})
		adapterstest.SameDecoding(t, func(general bool) adapters.Decoder {
			return &decoder{deepseek: deepseek, general: general}
		}, raws)
	}
}
