package pricing

import (
	"strings"
	"testing"

	"github.com/modelwire/modelwire/adapters"
)

// Cached input is cheaper than uncached by exactly the savings; a dated
// model name is priced as its entry; missing usage is unknown, not zero.
func TestPriceUsage(t *testing.T) {
	u := &adapters.Usage{InputTokens: adapters.Int(1_000_000), CacheReadTokens: adapters.Int(400_000), OutputTokens: adapters.Int(100_000), ReasoningTokens: adapters.Int(20_000)}
	got := PriceUsage("refund-model", u)
	// refund-model: input 1.00, cached 0.10, output 4.00, reasoning 4.00 per million.
	want := 0.6*1.00 + 0.4*0.10 + 0.08*4.00 + 0.02*4.00
	if d := got.Total - want; d > 1e-9 || d < -1e-9 || got.Savings < 0.36-1e-9 || got.Savings > 0.36+1e-9 {
		t.Fatalf("total %v savings %v, want %v and 0.36", got.Total, got.Savings, want)
	}
	if c := PriceUsage("claude-sonnet-4-5-20250929", u); !c.Priced {
		t.Fatalf("a dated model name is not priced: %s", c.Why)
	}
	if c := PriceUsage("refund-model", nil); c.Priced || !strings.Contains(c.Why, "not zero") {
		t.Fatalf("missing usage priced: %+v", c)
	}
}
