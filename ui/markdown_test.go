package ui

import (
	"regexp"
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"

	"github.com/modelwire/modelwire/themes"
)

// withColour renders with a truecolor profile for the test.
func withColour(t *testing.T) {
	t.Helper()
	prev := lipgloss.ColorProfile()
	lipgloss.SetColorProfile(termenv.TrueColor)
	t.Cleanup(func() { lipgloss.SetColorProfile(prev) })
}

// A Chinese list item wraps between characters with a hanging indent:
// its continuation lines start under its text, not under the bullet.
func TestMarkdownListWrapsCJKWithHangingIndent(t *testing.T) {
	c := newCommon("dark", true, false, nil)
	md := "- 申请金额 150 元超过可退上限 130 元，需要人工复核。\n- 已退 30 元\n\n1. 第一步：核查订单与台账\n2. 第二步"
	lines := c.markdown(md, 20)
	plain := make([]string, len(lines))
	for i, l := range lines {
		plain[i] = ansi.Strip(l)
		if w := ansi.StringWidth(l); w > 20 {
			t.Errorf("line %d is %d cells: %q", i, w, plain[i])
		}
	}
	if !strings.HasPrefix(plain[0], "  • 申请金额") {
		t.Fatalf("first item: %q", plain[0])
	}
	// The item's second line hangs under its text: margin 2 + bullet 2.
	if !strings.HasPrefix(plain[1], "    ") || strings.HasPrefix(plain[1], "     ") || strings.Contains(plain[1], "•") {
		t.Errorf("continuation line not under the text: %q", plain[1])
	}
	all := strings.Join(plain, "\n")
	if got := strings.Join(strings.Fields(all), ""); !strings.Contains(got, "申请金额150元超过可退上限130元，需要人工复核。") ||
		!strings.Contains(got, "1.第一步：核查订单与台账") || !strings.Contains(got, "2.第二步") {
		t.Errorf("text lost or out of order:\n%s", all)
	}
	// A tight list has no blank lines between its items.
	if strings.Contains(all, "复核。\n\n") {
		t.Errorf("blank line inside a tight list:\n%s", all)
	}
}

// A table's columns line up by display width: CJK cells count two cells
// a character, so every row's bars sit in the same columns.
func TestMarkdownTableAlignsCJKCells(t *testing.T) {
	c := newCommon("dark", true, false, nil)
	md := "| 字段 | value | 说明 |\n|---|--:|---|\n| 订单 | 150 | 退款申请 |\n| order_id | 13000 | 可退上限 |\n| 台账 | 3 | ok |"
	lines := c.markdown(md, 60)
	var bars []int // display column of each │ in the first row
	for i, l := range lines {
		p := ansi.Strip(l)
		if strings.Contains(p, "─") {
			if !strings.Contains(p, "┼") {
				t.Errorf("the header rule has no ┼: %q", p)
			}
			continue
		}
		var cols []int
		w := 0
		for _, r := range p {
			if r == '│' {
				cols = append(cols, w)
			}
			w += ansi.StringWidth(string(r))
		}
		if len(cols) != 2 {
			t.Fatalf("row %d has %d bars: %q", i, len(cols), p)
		}
		if bars == nil {
			bars = cols
		} else if cols[0] != bars[0] || cols[1] != bars[1] {
			t.Errorf("row %d bars at %v, header at %v:\n%s", i, cols, bars, ansi.Strip(strings.Join(lines, "\n")))
		}
	}
	all := ansi.Strip(strings.Join(lines, "\n"))
	// The middle column is right-aligned (--:).
	if !strings.Contains(all, "   150 │") || !strings.Contains(all, " 13000 │") {
		t.Errorf("the right-aligned column:\n%s", all)
	}
	if strings.Contains(all, "|") || strings.Contains(all, "---") {
		t.Errorf("raw table markup shows:\n%s", all)
	}
}

// A table wider than the panel keeps within it: the widest column gives
// way and its cells wrap, words whole where they fit.
func TestMarkdownTableFitsWidth(t *testing.T) {
	c := newCommon("dark", true, false, nil)
	md := "| layer | asks |\n|---|---|\n| transport | did the bytes arrive, whole, in order, and all of them? |"
	lines := c.markdown(md, 30)
	for _, l := range lines {
		if w := ansi.StringWidth(l); w > 30 {
			t.Errorf("line of %d cells: %q", w, ansi.Strip(l))
		}
	}
	all := ansi.Strip(strings.Join(lines, "\n"))
	if !strings.Contains(all, "transport │") || !strings.Contains(all, "did the bytes") || !strings.Contains(all, "them?") {
		t.Errorf("the table:\n%s", all)
	}
}

// With NO_COLOR, emphasis, strong and strike are attributes (italic,
// bold, crossed out), never literal *…*; headings are bold lines, not
// "## …"; and no colour is written.
func TestMarkdownNoColorKeepsAttributes(t *testing.T) {
	c := newCommon("dark", true, false, nil)
	out := strings.Join(c.markdown("## Heading\n\nplain *em* **strong** ~~gone~~ `code`", 40), "\n")
	for name, want := range map[string]string{
		"bold heading": "\x1b[1mHeading", "italic": "\x1b[3mem", "bold": "\x1b[1mstrong", "crossed out": "\x1b[9mgone",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("%s: want %q in %q", name, want, out)
		}
	}
	plain := ansi.Strip(out)
	for _, raw := range []string{"*", "~", "#", "`"} {
		if strings.Contains(plain, raw) {
			t.Errorf("markup %q shows: %q", raw, plain)
		}
	}
	if strings.Contains(out, "38;") || strings.Contains(out, "48;") {
		t.Errorf("colour written with NO_COLOR: %q", out)
	}
	if !strings.Contains(plain, "plain em strong gone code") {
		t.Errorf("text: %q", plain)
	}
}

// With colour, a heading is the theme's accent and body text its text
// colour; a link shows its text, then its URL in the dimmed colour.
func TestMarkdownColoursAndLinks(t *testing.T) {
	withColour(t)
	c := newCommon("dark", false, false, nil)
	out := strings.Join(c.markdown("## Title\n\nsee [the spec](https://example.com/spec) now", 60), "\n")
	if !strings.Contains(out, c.Styles.Markdown.Heading.Render("Title")) {
		t.Errorf("heading not in the accent style: %q", out)
	}
	if !strings.Contains(out, c.Styles.Markdown.Dim.Render("https://example.com/spec")) {
		t.Errorf("URL not dimmed: %q", out)
	}
	if p := ansi.Strip(out); !strings.Contains(p, "see the spec https://example.com/spec now") {
		t.Errorf("link text then URL: %q", p)
	}
}

// A json fence is highlighted like the wire JSON, in the theme's code
// colours; another fence is plain, indented, its markers gone.
func TestMarkdownCodeFences(t *testing.T) {
	withColour(t)
	c := newCommon("dark", false, false, nil)
	md := "before\n\n```json\n{\"decision\": \"needs_review\", \"cap\": 13000, \"ok\": true}\n```\n\n```sh\nmodelwire version\n```"
	out := strings.Join(c.markdown(md, 60), "\n")
	s := c.Styles
	for name, want := range map[string]string{
		"key":     s.Token(themes.TokenKey).Render(`"decision"`),
		"string":  s.Token(themes.TokenString).Render(`"needs_review"`),
		"number":  s.Token(themes.TokenNumber).Render("13000"),
		"literal": s.Token(themes.TokenLiteral).Render("true"),
	} {
		if !strings.Contains(out, want) {
			t.Errorf("%s not highlighted (%q) in %q", name, want, out)
		}
	}
	plain := ansi.Strip(out)
	if strings.Contains(plain, "```") || strings.Contains(plain, "json\n") {
		t.Errorf("fence markers show:\n%s", plain)
	}
	if !strings.Contains(plain, "\n    modelwire version") || !strings.Contains(plain, "\n    {\"decision\": ") {
		t.Errorf("code blocks are not indented under the margin:\n%s", plain)
	}
}

// The tokenizer covers each line exactly and tells keys from strings;
// what is not JSON (the inspector's folds) is text, not lost.
func TestJSONTokens(t *testing.T) {
	line := `  "a\"b": ["x", -1.5e3, null, {…3}],`
	var b strings.Builder
	kinds := map[string]themes.Token{}
	for _, tk := range jsonTokens(line) {
		b.WriteString(tk.text)
		kinds[tk.text] = tk.kind
	}
	if b.String() != line {
		t.Fatalf("tokens rebuild %q, want %q", b.String(), line)
	}
	for text, want := range map[string]themes.Token{`"a\"b"`: themes.TokenKey, `"x"`: themes.TokenString, "-1.5e3": themes.TokenNumber,
		"null": themes.TokenLiteral, "[": themes.TokenPunct, "…": themes.TokenText, "3": themes.TokenNumber} {
		if kinds[text] != want {
			t.Errorf("%q is token %d, want %d", text, kinds[text], want)
		}
	}
}

// A table never cuts a word: its columns are as wide as their longest
// words, or, where the panel cannot hold that, the table is written a row
// at a time, wrapping between words — the refund notes at every width a
// notes panel takes (their "transport" was cut "transpo" / "rt").
func TestMarkdownTableNeverCutsAWord(t *testing.T) {
	c := newCommon("dark", true, false, nil)
	word := regexp.MustCompile(`[A-Za-z_]+`)
	sc := refund(t)
	// The notes with tables: turn 1's request, the layers with and
	// without the refund case's figures (validated@3 once the three
	// tools have answered).
	for _, step := range []string{"assembled@1", "validated", "validated@3"} {
		md := sc.Notes[step]
		words := map[string]bool{}
		for _, w := range word.FindAllString(md, -1) {
			words[w] = true
		}
		for width := 24; width <= 100; width++ {
			lines := c.markdown(md, width)
			all := ansi.Strip(strings.Join(lines, "\n"))
			for _, w := range word.FindAllString(all, -1) {
				if !words[w] {
					t.Fatalf("%s at %d cells: %q is a piece of a word:\n%s", step, width, w, all)
				}
			}
			for _, l := range lines {
				if w := ansi.StringWidth(l); w > width {
					t.Fatalf("%s at %d cells: a line of %d: %q", step, width, w, ansi.Strip(l))
				}
			}
			// Every cell's text is there, as a table or a row at a time.
			for _, want := range []string{"transport", "arrive", "refund_assessment", "unverified"} {
				if strings.Contains(md, want) && !strings.Contains(strings.Join(strings.Fields(all), " "), want) {
					t.Fatalf("%s at %d cells lacks %q:\n%s", step, width, want, all)
				}
			}
		}
	}
	// Narrow: a row at a time, the first cell then the others under it,
	// each after its column's name.
	all := ansi.Strip(strings.Join(c.markdown(sc.Notes["validated@3"], 24), "\n"))
	for _, want := range []string{"\n  transport\n    asks: did the bytes\n", "\n  domain\n    asks: cap = 18000"} {
		if !strings.Contains(all, want) {
			t.Errorf("the narrow table lacks %q:\n%s", want, all)
		}
	}
}
