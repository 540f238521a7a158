package adapters

import (
	"encoding/json"
	"strings"
	"testing"
)

// JSONString writes what the encoder (HTML escaping off) writes, whether
// or not it takes the quick path.
func TestJSONString(t *testing.T) {
	for _, s := range []string{"", "plain", "中文 arrives as 中文", `a "quote"`, `back\slash`, "tab\tnew\nline", "\x00\x1f",
		"<b>&amp;</b>", "line\u2028sep\u2029", "bad \xff utf-8", "emoji 😀", "\x7f", "“还能退150元”——", "—\u2028", "\u2029", "{\n  \"a\": \"b\\\\c\"\r\n\t}", "\b\f\n"} {
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(s)
		if got, want := JSONString(s), strings.TrimSuffix(b.String(), "\n"); got != want {
			t.Errorf("JSONString(%q) = %s, want %s", s, got, want)
		}
	}
}
