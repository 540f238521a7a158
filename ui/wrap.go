package ui

import (
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/rivo/uniseg"

	"github.com/modelwire/modelwire/themes"
)

// wrapLines wraps text to width display cells. Plain text breaks where
// Unicode line breaking (UAX #14, rivo/uniseg) allows: between words, and
// between CJK characters, so a Chinese paragraph fills each line instead
// of jumping whole to the next one at its first space. Text that already
// holds ANSI codes is wrapped by x/ansi, words first, then hard breaks;
// styled markdown and JSON wrap their plain text instead (wrapSpans).
func wrapLines(s string, width int) []string {
	if width < 1 {
		width = 1
	}
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\t", "  ")
	if strings.Contains(s, "\x1b") {
		return strings.Split(ansi.Wrap(s, width, ""), "\n")
	}
	var out []string
	for _, para := range strings.Split(s, "\n") {
		out = append(out, wrapParagraph(para, width)...)
	}
	return out
}

// wrapParagraph breaks one line of plain text at its line-break
// opportunities; a segment wider than the line is cut by grapheme.
func wrapParagraph(s string, width int) []string {
	var out []string
	for _, r := range breakLines(s, width) {
		out = append(out, s[r[0]:r[1]])
	}
	return out
}

// breakLines finds where plain text s breaks into lines of at most width
// cells, as byte ranges of s: at line-break opportunities (UAX #14), with
// the spaces at a break dropped; the first line keeps its indentation.
// Markdown wraps its styled spans along the same ranges (markdown.go).
func breakLines(s string, width int) [][2]int {
	state := -1
	return breakAt(s, width, func(rest string) string {
		var seg string
		seg, _, _, state = uniseg.FirstLineSegmentInString(rest, state)
		return seg
	})
}

// breakAt is breakLines with the text's unbreakable pieces given by next
// (the piece at the start of rest, which is never empty): a line breaks
// only between two pieces, and a piece wider than the line is cut by
// grapheme.
func breakAt(s string, width int, next func(rest string) string) [][2]int {
	width = max(width, 1)
	var out [][2]int
	start, end, lw := 0, 0, 0
	empty := true // the current line has nothing yet
	for pos := 0; pos < len(s); {
		seg := next(s[pos:])
		at := pos
		pos += len(seg)
		word := strings.TrimRight(seg, " ")
		sw := ansi.StringWidth(word)
		if !empty && lw+sw > width {
			out = append(out, [2]int{start, end})
			empty, lw = true, 0
		}
		if empty && len(out) > 0 {
			// A continuation line starts at its text.
			t := strings.TrimLeft(seg, " ")
			at += len(seg) - len(t)
			seg, word = t, strings.TrimLeft(word, " ")
		}
		if empty {
			start, end = at, at
		}
		for sw > width { // a word longer than a line: cut by grapheme
			n, gw := 0, lw
			g := uniseg.NewGraphemes(word)
			for g.Next() && (gw+g.Width() <= width || n == 0 && gw == 0) {
				n += len(g.Str())
				gw += g.Width()
			}
			if n == 0 { // nothing fits after what the line holds
				out = append(out, [2]int{start, end})
				start, end, lw = at, at, 0
				continue
			}
			out = append(out, [2]int{start, at + n})
			at += n
			seg, word = seg[n:], word[n:]
			start, end, lw = at, at, 0
			sw = ansi.StringWidth(word)
		}
		if word != "" {
			end = at + len(word)
		}
		lw += ansi.StringWidth(seg)
		empty = false
	}
	if !empty || len(out) == 0 {
		out = append(out, [2]int{start, end})
	}
	return out
}

// wrapJSON wraps JSON text to width display cells — a whole document or
// the part of one a stream has sent so far — breaking between tokens:
// after a comma, a colon or an opening bracket, before a key or a value,
// never before the punctuation that closes one. Inside a string it breaks
// where its text may (UAX #14: between words, between CJK characters),
// so a key or an identifier ("requested_refund_cents") stays whole where
// a line can hold it.
func wrapJSON(s string, width int) []string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\t", "  ")
	var out []string
	for _, para := range strings.Split(s, "\n") {
		for _, r := range breakAt(para, width, jsonPieces(para)) {
			out = append(out, para[r[0]:r[1]])
		}
	}
	return out
}

// jsonPieces cuts a line of JSON into the pieces wrapJSON keeps whole,
// for breakAt: a token with the spaces, colon, comma and closing brackets
// after it; a string's text cut where UAX #14 allows.
func jsonPieces(line string) func(rest string) string {
	var pieces []string
	for _, t := range jsonTokens(line) {
		glue := len(pieces) > 0 && (strings.TrimLeft(t.text, " ") == "" || strings.ContainsAny(t.text[:1], ":,}]"))
		switch {
		case glue:
			pieces[len(pieces)-1] += t.text
		case t.kind == themes.TokenString || t.kind == themes.TokenKey:
			state := -1
			for rest := t.text; rest != ""; {
				var seg string
				seg, rest, _, state = uniseg.FirstLineSegmentInString(rest, state)
				pieces = append(pieces, seg)
			}
		default:
			pieces = append(pieces, t.text)
		}
	}
	i := 0
	return func(rest string) string {
		if i == len(pieces) { // cannot happen: the tokens cover the line
			return rest
		}
		i++
		return pieces[i-1]
	}
}

// widestUnbreakable is the width of the widest piece of plain text s
// between two line-break opportunities (UAX #14, as breakLines breaks):
// the narrowest a column holding s can be without cutting a word.
func widestUnbreakable(s string) int {
	w, state := 0, -1
	for _, para := range strings.Split(s, "\n") {
		for para != "" {
			var seg string
			seg, para, _, state = uniseg.FirstLineSegmentInString(para, state)
			w = max(w, ansi.StringWidth(strings.TrimRight(seg, " ")))
		}
		state = -1
	}
	return w
}

// styleLines styles each line on its own, so no escape code spans a line
// break.
func styleLines(st lipgloss.Style, lines []string) []string {
	for i, l := range lines {
		lines[i] = st.Render(l)
	}
	return lines
}
