package ui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/rivo/uniseg"
)

// A Chinese paragraph with a few spaces fills each line: it breaks between
// CJK characters, never overflows, and loses nothing.
func TestWrapBreaksBetweenCJK(t *testing.T) {
	text := "退款核查：订单 O-2048 第 L1 行申请退款 150 元，可退上限 = 实付 − 已退 − 待处理冻结，申请金额超过上限时需要人工复核。"
	for _, w := range []int{10, 17, 24, 40} {
		lines := wrapLines(text, w)
		for i, l := range lines {
			if lw := ansi.StringWidth(l); lw > w {
				t.Errorf("width %d: line %d is %d cells: %q", w, i, lw, l)
			}
			// Filled: a line ends early only where the next unbreakable
			// piece (a character with the punctuation bound to it) would
			// not fit.
			if i < len(lines)-1 {
				next, _, _, _ := uniseg.FirstLineSegmentInString(lines[i+1], -1)
				next = strings.TrimRight(next, " ")
				gap := 0
				if strings.Contains(text, l+" "+next) {
					gap = 1
				}
				if ansi.StringWidth(l)+gap+ansi.StringWidth(next) <= w {
					t.Errorf("width %d: line %d %q ends early; %q would fit", w, i, l, next)
				}
			}
		}
		if got := strings.Join(lines, ""); strings.ReplaceAll(got, " ", "") != strings.ReplaceAll(text, " ", "") {
			t.Errorf("width %d lost text:\n%q", w, got)
		}
	}
	// Latin text still breaks at spaces, not inside words.
	if got := wrapLines("approve the refund request", 12); strings.Join(got, "|") != "approve the|refund|request" {
		t.Errorf("latin: %q", got)
	}
}

// Markdown in a narrow panel: headings render (no raw ##) and Chinese
// lines are wrapped, not cut.
func TestMarkdownWrapsCJK(t *testing.T) {
	c := newCommon("dark", true, false, nil)
	md := "## 结论\n\n申请金额 150 元超过可退上限 130 元，需要人工复核；已退 30 元与待处理冻结 20 元都来自台账。"
	lines := c.markdown(md, 20)
	all := ansi.Strip(strings.Join(lines, "\n"))
	if strings.Contains(all, "## ") {
		t.Errorf("the heading shows raw:\n%s", all)
	}
	for _, l := range lines {
		if w := ansi.StringWidth(l); w > 20 {
			t.Errorf("line of %d cells: %q", w, l)
		}
	}
	// Joined without the margin and the line breaks, nothing is lost.
	for _, want := range []string{"结论", "人工复核", "台账"} {
		if !strings.Contains(strings.Join(strings.Fields(all), ""), want) {
			t.Errorf("lost %q:\n%s", want, all)
		}
	}
}
