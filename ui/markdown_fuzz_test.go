package ui

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// Whatever the markdown and the width, rendering never panics and no
// line is wider than the panel — except a line of one wide character in a
// panel one cell wide, which nothing narrower can hold without losing it.
func FuzzMarkdownFitsWidth(f *testing.F) {
	for _, s := range []string{
		"## 结论\n\n申请金额 **150 元**超过可退上限。",
		"| a | 说明 |\n|:-:|--:|\n| `x\\|y` | 退款申请 |\n| 1 |",
		"- one\n  - 二级列表项，很长很长很长很长\n1) x\n\n> quote *em* ~~s~~ [l](http://x) <http://y>",
		"```json\n{\"a\": [1, true, null, \"s\"]}\n```\n\n---\n\n    indented code\n\n<div>html</div>",
		"|||\n|-|-|\n||\n",
		"a  \nhard break\\\nagain",
	} {
		f.Add(s, 20)
	}
	c := newCommon("dark", true, false, nil)
	f.Fuzz(func(t *testing.T, md string, width int) {
		width = (width%80+80)%80 + 1 // 1 to 80, whatever the sign
		for _, l := range c.markdown(md, width) {
			plain := ansi.Strip(l)
			oneWide := width == 1 && utf8.RuneCountInString(plain) == 1
			if w := ansi.StringWidth(l); w > width && !strings.ContainsRune(plain, '\ufffd') && !oneWide {
				t.Fatalf("width %d: line of %d cells: %q", width, w, plain)
			}
		}
	})
}

// The JSON tokenizer covers any line exactly, JSON or not, so
// highlighting never drops or repeats text.
func FuzzJSONTokensCoverLine(f *testing.F) {
	for _, s := range []string{`  "k": "v\"", `, `[1, -2.5e+3, true, null, {…3}]`, `"unterminated \`, "中文 \"键\": 值"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		var b strings.Builder
		for _, tk := range jsonTokens(line) {
			if tk.text == "" {
				t.Fatalf("empty token in %q", line)
			}
			b.WriteString(tk.text)
		}
		if b.String() != line {
			t.Fatalf("tokens rebuild %q, want %q", b.String(), line)
		}
	})
}
