package ui

import (
	"strconv"
	"strings"
	"sync"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"

	"github.com/modelwire/modelwire/themes"
)

// A terminal renderer for markdown (model text, teaching notes) on
// goldmark's parser. It replaces glamour, whose dependencies (chroma's
// lexer and style registries, bluemonday) cost most of every command's
// start-up in package initialisation (issue 20). Layout follows glamour's
// standard styles: a two-cell margin, headings as bold lines, tables with
// │ and ─┼─, code blocks indented.

// mdMargin is the left margin of rendered markdown, in cells.
const mdMargin = 2

// mdParser is CommonMark with GFM tables and strikethrough (mdgfm.go),
// built on first use.
var mdParser = sync.OnceValue(func() parser.Parser {
	return parser.NewParser(
		parser.WithBlockParsers(parser.DefaultBlockParsers()...),
		parser.WithInlineParsers(append(parser.DefaultInlineParsers(),
			util.Prioritized(strikeParser{}, 500))...),
		parser.WithParagraphTransformers(append(parser.DefaultParagraphTransformers(),
			util.Prioritized(tableTransformer{}, 200))...),
	)
})

// markdown renders markdown to lines of at most width cells in the
// theme's markdown styles.
func (c *Common) markdown(md string, width int) []string {
	src := []byte(strings.ReplaceAll(md, "\t", "    "))
	doc := mdParser().Parse(text.NewReader(src))
	r := &mdRender{c: c, src: src, st: c.Styles.Markdown}
	// A panel too narrow for the margin and a character gets none.
	margin := mdMargin
	if width <= mdMargin {
		margin = 0
	}
	var out []string
	for _, l := range r.blocks(doc, max(width-margin, 1), false) {
		if l != "" {
			l = strings.Repeat(" ", margin) + l
		}
		if ansi.StringWidth(l) > width {
			// A table's padding or a wide character in a panel of a cell
			// or two: cut at the width, nothing dropped.
			out = append(out, strings.Split(ansi.Hardwrap(l, width, true), "\n")...)
			continue
		}
		out = append(out, l)
	}
	return trimBlank(out)
}

// attrs are the text attributes of a span. They are attributes, not
// colours, so they show with NO_COLOR too; dim marks what colour shows
// as the theme's dimmed text (a link's URL, rules), faint without colour.
type attrs struct{ bold, italic, strike, underline, dim bool }

// span is a run of text in one style; brk is a hard line break.
type span struct {
	text string
	st   lipgloss.Style
	a    attrs
	brk  bool
}

// paint styles one piece of text. With colour the style goes through
// lipgloss (the terminal's profile applies); without, only the
// attributes are written, so emphasis still reads as emphasis.
func (c *Common) paint(s string, st lipgloss.Style, a attrs) string {
	if s == "" {
		return ""
	}
	a.bold = a.bold || st.GetBold()
	a.italic = a.italic || st.GetItalic()
	a.strike = a.strike || st.GetStrikethrough()
	a.underline = a.underline || st.GetUnderline()
	if c.NoColor {
		var x ansi.Style
		if a.bold {
			x = x.Bold()
		}
		if a.dim {
			x = x.Faint()
		}
		if a.italic {
			x = x.Italic(true)
		}
		if a.underline {
			x = x.Underline(true)
		}
		if a.strike {
			x = x.Strikethrough(true)
		}
		if len(x) == 0 {
			return s
		}
		return x.Styled(s)
	}
	return st.Bold(a.bold).Italic(a.italic).Strikethrough(a.strike).Underline(a.underline).Render(s)
}

// wrapSpans wraps styled spans to width, breaking the plain text where
// wrapLines would (breakLines: CJK-aware) and styling each piece of each
// line on its own, so no escape code spans a line break.
func (c *Common) wrapSpans(spans []span, width int) []string {
	var out []string
	for {
		i := 0
		for i < len(spans) && !spans[i].brk {
			i++
		}
		out = append(out, c.wrapLine(spans[:i], width)...)
		if i >= len(spans) {
			return out
		}
		spans = spans[i+1:]
	}
}

func (c *Common) wrapLine(spans []span, width int) []string {
	var b strings.Builder
	for _, s := range spans {
		b.WriteString(s.text)
	}
	plain := b.String()
	var out []string
	for _, r := range breakLines(plain, width) {
		var line strings.Builder
		off := 0
		for _, s := range spans {
			if a, z := max(r[0], off), min(r[1], off+len(s.text)); a < z {
				line.WriteString(c.paint(plain[a:z], s.st, s.a))
			}
			off += len(s.text)
		}
		out = append(out, line.String())
	}
	return out
}

// longestWord is the width of the widest piece of spans' text that
// cannot break.
func longestWord(spans []span) int {
	var b strings.Builder
	for _, s := range spans {
		b.WriteString(s.text)
	}
	return widestUnbreakable(b.String())
}

// spansWidth is the display width of spans' text.
func spansWidth(spans []span) int {
	w := 0
	for _, s := range spans {
		w += ansi.StringWidth(s.text)
	}
	return w
}

type mdRender struct {
	c       *Common
	src     []byte
	st      themes.Markdown
	inTable bool // a code span's \| is a pipe (GFM)
}

// blocks renders the block children of n, a blank line between them
// unless tight (the items of a tight list).
func (r *mdRender) blocks(n ast.Node, width int, tight bool) []string {
	var out []string
	for b := n.FirstChild(); b != nil; b = b.NextSibling() {
		lines := r.block(b, width)
		if len(lines) == 0 {
			continue
		}
		if len(out) > 0 && !tight {
			out = append(out, "")
		}
		out = append(out, lines...)
	}
	return out
}

func (r *mdRender) block(n ast.Node, width int) []string {
	switch n := n.(type) {
	case *ast.Heading:
		if n.Level == 1 { // glamour's top heading: a bar of colour with a cell either side
			sp := append([]span{{text: " ", st: r.st.H1}}, r.inlines(n, r.st.H1, attrs{})...)
			return r.c.wrapSpans(append(sp, span{text: " ", st: r.st.H1}), width)
		}
		return r.c.wrapSpans(r.inlines(n, r.st.Heading, attrs{}), width)
	case *ast.Paragraph, *ast.TextBlock:
		return r.c.wrapSpans(r.inlines(n, r.st.Text, attrs{}), width)
	case *ast.ThematicBreak:
		return []string{r.c.paint(strings.Repeat("─", min(width, 8)), r.st.Dim, attrs{dim: true})}
	case *ast.FencedCodeBlock, *ast.CodeBlock:
		return r.code(n, width)
	case *ast.Blockquote:
		bar := r.c.paint("│", r.st.Dim, attrs{dim: true}) + " "
		lines := r.blocks(n, max(width-2, 1), false)
		for i, l := range lines {
			lines[i] = bar + l
		}
		return lines
	case *ast.List:
		return r.list(n, width)
	case *east.Table:
		return r.table(n, width)
	case *ast.HTMLBlock:
		var b strings.Builder
		r.lines(&b, n.Lines())
		if n.HasClosure() {
			b.Write(n.ClosureLine.Value(r.src))
		}
		return styleText(r.c, strings.TrimRight(b.String(), "\n"), r.st.CodeBlock, width)
	}
	return r.blocks(n, width, false)
}

// styleText wraps plain text to width and styles each line.
func styleText(c *Common, s string, st lipgloss.Style, width int) []string {
	lines := wrapLines(s, width)
	for i, l := range lines {
		lines[i] = c.paint(l, st, attrs{})
	}
	return lines
}

func (r *mdRender) lines(b *strings.Builder, segs *text.Segments) {
	for i := 0; i < segs.Len(); i++ {
		seg := segs.At(i)
		b.Write(seg.Value(r.src))
	}
}

// code renders a code block indented by two cells; a json fence is
// highlighted like the wire JSON.
func (r *mdRender) code(n ast.Node, width int) []string {
	var b strings.Builder
	r.lines(&b, n.Lines())
	code := strings.TrimRight(b.String(), "\n")
	w := max(width-2, 1)
	var lines []string
	if f, ok := n.(*ast.FencedCodeBlock); ok && strings.EqualFold(string(f.Language(r.src)), "json") {
		lines = r.c.highlight(code, w)
	} else {
		lines = styleText(r.c, code, r.st.CodeBlock, w)
	}
	for i, l := range lines {
		if l != "" {
			lines[i] = "  " + l
		}
	}
	return lines
}

// list renders a list with hanging indents: an item's lines after its
// first start under its text, not under its marker.
func (r *mdRender) list(l *ast.List, width int) []string {
	count := l.ChildCount()
	mw := 2 // "• "
	if l.IsOrdered() {
		mw = len(strconv.Itoa(l.Start+count-1)) + 2
	}
	var out []string
	i := 0
	for it := l.FirstChild(); it != nil; it = it.NextSibling() {
		marker := "• "
		if l.IsOrdered() {
			marker = padRight(strconv.Itoa(l.Start+i)+string(l.Marker), mw)
		}
		body := r.blocks(it, max(width-mw, 1), l.IsTight)
		if len(body) == 0 {
			body = []string{""}
		}
		if i > 0 && !l.IsTight {
			out = append(out, "")
		}
		for j, line := range body {
			if j == 0 {
				out = append(out, r.c.paint(marker, r.st.Bullet, attrs{})+line)
			} else if line != "" {
				out = append(out, strings.Repeat(" ", mw)+line)
			} else {
				out = append(out, "")
			}
		}
		i++
	}
	return out
}

// inlines turns the inline children of n into spans in style st with
// attributes a.
func (r *mdRender) inlines(n ast.Node, st lipgloss.Style, a attrs) []span {
	var out []span
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		switch c := c.(type) {
		case *ast.Text:
			out = append(out, span{text: string(c.Segment.Value(r.src)), st: st, a: a})
			if c.HardLineBreak() {
				out = append(out, span{brk: true})
			} else if c.SoftLineBreak() {
				out = append(out, span{text: " ", st: st, a: a})
			}
		case *ast.String:
			out = append(out, span{text: string(c.Value), st: st, a: a})
		case *ast.CodeSpan:
			code := r.plain(c)
			if r.inTable {
				code = strings.ReplaceAll(code, `\|`, "|")
			}
			out = append(out, span{text: code, st: r.st.Code, a: a})
		case *ast.Emphasis:
			b := a
			if c.Level >= 2 {
				b.bold = true
			} else {
				b.italic = true
			}
			out = append(out, r.inlines(c, st, b)...)
		case *east.Strikethrough:
			b := a
			b.strike = true
			out = append(out, r.inlines(c, st, b)...)
		case *ast.Link:
			b := a
			b.underline = true
			label := r.inlines(c, r.st.Link, b)
			out = append(out, label...)
			if url := string(c.Destination); url != "" && url != r.plain(c) {
				out = append(out, span{text: " ", st: st, a: a}, span{text: url, st: r.st.Dim, a: attrs{dim: true}})
			}
		case *ast.AutoLink:
			b := a
			b.underline = true
			out = append(out, span{text: string(c.URL(r.src)), st: r.st.Link, a: b})
		case *ast.Image:
			out = append(out, r.inlines(c, st, a)...)
			out = append(out, span{text: " ", st: st, a: a}, span{text: string(c.Destination), st: r.st.Dim, a: attrs{dim: true}})
		case *ast.RawHTML:
			var b strings.Builder
			r.lines(&b, c.Segments)
			out = append(out, span{text: b.String(), st: st, a: a})
		default:
			out = append(out, r.inlines(c, st, a)...)
		}
	}
	return out
}

// plain is the text of n's inline children, without markup.
func (r *mdRender) plain(n ast.Node) string {
	var b strings.Builder
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		switch c := c.(type) {
		case *ast.Text:
			b.Write(c.Segment.Value(r.src))
			if c.SoftLineBreak() || c.HardLineBreak() {
				b.WriteByte(' ')
			}
		case *ast.String:
			b.Write(c.Value)
		default:
			b.WriteString(r.plain(c))
		}
	}
	return b.String()
}

// table renders a GFM table as glamour did: cells padded by a cell each
// side, columns split by │, the header underlined by ─┼─. Columns are
// as wide as their widest cell in display cells (CJK counts two); when
// the table is wider than width the widest columns give way and their
// cells wrap.
func (r *mdRender) table(t *east.Table, width int) []string {
	r.inTable = true
	defer func() { r.inTable = false }()
	var rows [][][]span
	head := -1
	ncols := len(t.Alignments)
	for row := t.FirstChild(); row != nil; row = row.NextSibling() {
		a := attrs{}
		if _, ok := row.(*east.TableHeader); ok {
			a.bold, head = true, len(rows)
		}
		var cells [][]span
		for cell := row.FirstChild(); cell != nil; cell = cell.NextSibling() {
			cells = append(cells, r.inlines(cell, r.st.Text, a))
		}
		ncols = max(ncols, len(cells))
		rows = append(rows, cells)
	}
	if ncols == 0 {
		return nil
	}
	widths, words := make([]int, ncols), make([]int, ncols)
	for _, cells := range rows {
		for i, c := range cells {
			widths[i] = max(widths[i], spansWidth(c))
			words[i] = max(words[i], longestWord(c))
		}
	}
	need := 3*ncols - 1
	for _, w := range words {
		need += max(w, 1)
	}
	if need > width {
		// Columns narrower than their words would cut them ("transpo"
		// over "rt"): the table is written a row at a time instead,
		// wrapping between words.
		return r.records(rows, head, width)
	}
	fitColumns(widths, words, width-3*ncols+1)
	bar := r.c.paint("│", r.st.Dim, attrs{dim: true})
	var out []string
	for k, cells := range rows {
		cols := make([][]string, ncols)
		h := 1
		for i := range ncols {
			if i < len(cells) && len(cells[i]) > 0 {
				cols[i] = r.c.wrapSpans(cells[i], widths[i])
			}
			h = max(h, len(cols[i]))
		}
		for y := range h {
			var line strings.Builder
			for i := range ncols {
				if i > 0 {
					line.WriteString(bar)
				}
				s := ""
				if y < len(cols[i]) {
					s = cols[i][y]
				}
				gap := max(widths[i]-ansi.StringWidth(s), 0)
				left := 0
				switch alignment(t, i) {
				case east.AlignRight:
					left = gap
				case east.AlignCenter:
					left = gap / 2
				}
				line.WriteString(strings.Repeat(" ", left+1) + s + strings.Repeat(" ", gap-left+1))
			}
			out = append(out, strings.TrimRight(line.String(), " "))
		}
		if k == head {
			seps := make([]string, ncols)
			for i, w := range widths {
				seps[i] = strings.Repeat("─", w+2)
			}
			out = append(out, r.c.paint(strings.Join(seps, "┼"), r.st.Dim, attrs{dim: true}))
		}
	}
	return out
}

// records writes a table too narrow for its words a row at a time: the
// row's first cell in bold on a line of its own, then each other cell
// indented under it after its column's name, wrapped between words.
func (r *mdRender) records(rows [][][]span, head, width int) []string {
	var names [][]span
	if head >= 0 {
		names = rows[head]
	}
	var out []string
	for k, cells := range rows {
		if k == head {
			continue
		}
		for i, c := range cells {
			if len(c) == 0 || spansWidth(c) == 0 && i > 0 {
				continue
			}
			if i == 0 {
				bold := make([]span, len(c))
				for j, sp := range c {
					sp.a.bold = true
					bold[j] = sp
				}
				out = append(out, r.c.wrapSpans(bold, width)...)
				continue
			}
			var line []span
			if i < len(names) && spansWidth(names[i]) > 0 {
				for _, sp := range names[i] {
					sp.a.bold, sp.a.dim = false, true
					line = append(line, sp)
				}
				line = append(line, span{text: ": ", st: r.st.Dim, a: attrs{dim: true}})
			}
			for _, l := range r.c.wrapSpans(append(line, c...), max(width-2, 1)) {
				out = append(out, "  "+l)
			}
		}
	}
	return out
}

func alignment(t *east.Table, i int) east.Alignment {
	if i < len(t.Alignments) {
		return t.Alignments[i]
	}
	return east.AlignNone
}

// fitColumns narrows the widest columns, a cell at a time, until they fit
// in avail cells: first down to their longest word (so words wrap whole),
// then, if that is not enough, below it (at least one cell each).
func fitColumns(widths, words []int, avail int) {
	sum := 0
	for i, w := range widths {
		widths[i] = max(w, 1)
		sum += widths[i]
	}
	avail = max(avail, len(widths))
	for _, floor := range [][]int{words, nil} {
		for ; sum > avail; sum-- {
			widest := -1
			for i, w := range widths {
				if (floor == nil || w > floor[i]) && w > 1 && (widest < 0 || w > widths[widest]) {
					widest = i
				}
			}
			if widest < 0 {
				break
			}
			widths[widest]--
		}
	}
}
