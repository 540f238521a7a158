package wire

import (
	"strings"
	"testing"

	"github.com/modelwire/modelwire/adapters"
)

func TestUsageCounts(t *testing.T) {
	got := UsageCounts(adapters.Usage{InputTokens: adapters.Int(-3), ReasoningTokens: adapters.Int(4)}, 10)
	if want := (Counts{Input: 0, Output: 6, Reasoning: 4}); got != want {
		t.Errorf("unset output: %+v, want %+v (estimated from 10 characters, negatives read as 0)", got, want)
	}
	got = UsageCounts(adapters.Usage{InputTokens: adapters.Int(7), OutputTokens: adapters.Int(9), CacheReadTokens: adapters.Int(2)}, 10)
	if want := (Counts{Input: 7, Output: 9, CacheRead: 2, OutputGiven: true}); got != want {
		t.Errorf("given output: %+v, want %+v", got, want)
	}
}

func TestDigits(t *testing.T) {
	for _, c := range []struct {
		w    uint64
		n    int
		want string
	}{{61, 2, "0z"}, {62, 2, "10"}, {0, 3, "000"}, {62*62 + 1, 2, "01"}} {
		var b strings.Builder
		Digits(&b, Base62, c.w, c.n)
		if b.String() != c.want {
			t.Errorf("Digits(%d, %d) = %q, want %q", c.w, c.n, b.String(), c.want)
		}
	}
}
