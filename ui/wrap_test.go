package ui

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/rivo/uniseg"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/session"
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

// Streamed tool-call arguments wrap between JSON tokens: a key or an
// identifier is never cut where a line can hold it, a string's words and
// CJK characters break as text does, lines fit their width in cells, and
// nothing is lost — in the lane of a call still streaming, at 80 and 120
// columns, and at any width from the longest token's up.
func TestStreamedJSONWrapsAtTokens(t *testing.T) {
	args := `{"order_id":"O-2048","line_id":"L1","requested_refund_cents":15000,"evidence_ids":["E-order","E-ledger","E-policy"],` +
		`"quality_evidence_missing":true,"reason":"商品有质量问题，申请退款 please check the quality evidence before any refund"`
	word := regexp.MustCompile(`[A-Za-z_]+`)
	whole := map[string]bool{}
	for _, w := range word.FindAllString(args, -1) {
		whole[w] = true
	}
	check := func(what string, lines []string, width int) {
		t.Helper()
		for _, l := range lines {
			if w := ansi.StringWidth(l); w > width {
				t.Fatalf("%s: a line of %d cells at %d: %q", what, w, width, l)
			}
			for _, w := range word.FindAllString(l, -1) {
				if !whole[w] {
					t.Fatalf("%s at %d: %q is a piece of a word:\n%s", what, width, w, strings.Join(lines, "\n"))
				}
			}
		}
		if got := strings.Join(lines, ""); strings.ReplaceAll(got, " ", "") != strings.ReplaceAll(args, " ", "") {
			t.Fatalf("%s at %d lost text:\n%s", what, width, strings.Join(lines, "\n"))
		}
	}
	for width := len(`"quality_evidence_missing":`); width <= 100; width++ {
		check("wrapJSON", wrapJSON(args, width), width)
	}
	for _, size := range [][2]int{{80, 24}, {120, 36}} {
		m := newLive(t, size[0], size[1])
		var ups []session.Update
		ups = append(ups, step(0, adapters.Event{Type: adapters.EvItemStarted, ItemID: "fc_1", Kind: string(adapters.KindToolCall), CallID: "call_1", Name: "assess"}))
		for i, c := range chunks(args, 9) {
			ups = append(ups, step(i+1, adapters.Event{Type: adapters.EvToolArgsDelta, ItemID: "fc_1", CallID: "call_1", Delta: c}))
		}
		m.Update(updatesMsg{gen: m.gen, ups: ups})
		m.setFocus(panelStream)
		p := m.panels[panelStream].(*streamPanel)
		var body []string
		for _, l := range p.lines() {
			if l := screenText(l); strings.HasPrefix(l, "  ") {
				body = append(body, strings.TrimPrefix(l, "  "))
			}
		}
		check(fmt.Sprintf("the lane at %dx%d", size[0], size[1]), body, p.w-2)
	}
}
