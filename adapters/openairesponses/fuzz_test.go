package openairesponses

import (
	"testing"

	"github.com/modelwire/modelwire/adapters/adapterstest"
)

// FuzzDecode feeds arbitrary bytes through the decoder as a stream and as a
// body; it must never panic and must keep the canonical invariants. The
// seeds are the captures under 8 KB: the refund captures echo the tools and
// the schema in every Response object, and minimising a 50 KB input takes
// the whole fuzzing time.
func FuzzDecode(f *testing.F) {
	var seeds [][]byte
	for _, s := range adapterstest.SeedsFromTestdata(f, ".sse") {
		if len(s) <= 8<<10 {
			seeds = append(seeds, s)
		}
	}
	for _, name := range []string{"refusal.json", "incomplete.json", "error_429.json"} {
		seeds = append(seeds, adapterstest.ReadCapture(f, name))
	}
	adapterstest.Fuzz(f, New(), seeds...)
}
