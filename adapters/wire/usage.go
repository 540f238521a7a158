package wire

import "github.com/modelwire/modelwire/adapters"

// Counts are a turn's usage as every protocol's simulator reports it: each
// count 0 when the turn leaves it unset, never negative. When the turn
// gives no output count, Output is estimated from the visible characters
// written (half a token a character, plus one) and OutputGiven is false;
// each protocol then adds what it counts beside them (Gemini's thoughts).
type Counts struct {
	Input, Output, CacheRead, CacheWrite, Reasoning int64
	OutputGiven                                     bool
}

// UsageCounts reads u for a turn that wrote visibleChars characters.
func UsageCounts(u adapters.Usage, visibleChars int) Counts {
	val := func(p *int64) int64 {
		if p == nil {
			return 0
		}
		return max(0, *p)
	}
	c := Counts{Input: val(u.InputTokens), Output: val(u.OutputTokens), CacheRead: val(u.CacheReadTokens),
		CacheWrite: val(u.CacheWriteTokens), Reasoning: val(u.ReasoningTokens), OutputGiven: u.OutputTokens != nil}
	if !c.OutputGiven {
		c.Output = int64(visibleChars/2 + 1)
	}
	return c
}
