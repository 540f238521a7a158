package sim

import "testing"

// The simulator's token count: one token per CJK character, one per four
// bytes of other text; input counts the keys and strings of the JSON.
func TestTokens(t *testing.T) {
	for s, want := range map[string]int{"": 0, "退款": 2, "hello world": 3, "O-2048 退款": 4, "可退上限为130元": 7} {
		if got := Tokens(s); got != want {
			t.Errorf("Tokens(%q) = %d, want %d", s, got, want)
		}
	}
	if got := inputTokens([]byte(`{"a":"退款","b":["x\"y"],"n":12}`)); got != 1+2+1+1+1 {
		t.Errorf("inputTokens = %d, want 6", got)
	}
	if got := prefixTokens("可退上限为130元", 6); got != "可退上限为130" {
		t.Errorf("prefixTokens = %q", got)
	}
}
