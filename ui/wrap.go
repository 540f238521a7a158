package ui

import (
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/rivo/uniseg"
)

// wrapLines wraps text to width display cells. Plain text breaks where
// Unicode line breaking (UAX #14, rivo/uniseg) allows: between words, and
// between CJK characters, so a Chinese paragraph fills each line instead
// of jumping whole to the next one at its first space. Text that already
// holds ANSI codes (highlighted code, glamour's output) is wrapped by
// x/ansi, words first, then hard breaks.
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
	var line strings.Builder
	lw := 0
	flush := func() {
		out = append(out, strings.TrimRight(line.String(), " "))
		line.Reset()
		lw = 0
	}
	state := -1
	for rest := s; rest != ""; {
		var seg string
		seg, rest, _, state = uniseg.FirstLineSegmentInString(rest, state)
		sw := ansi.StringWidth(strings.TrimRight(seg, " "))
		if lw > 0 && lw+sw > width {
			flush()
		}
		if lw == 0 && len(out) > 0 {
			// A continuation line starts at its text; the first line
			// keeps its indentation.
			seg = strings.TrimLeft(seg, " ")
			sw = ansi.StringWidth(strings.TrimRight(seg, " "))
		}
		for sw > width { // a word longer than a line
			g := uniseg.NewGraphemes(seg)
			for g.Next() && lw+g.Width() <= width {
				line.WriteString(g.Str())
				lw += g.Width()
			}
			seg = seg[len(line.String()):]
			flush()
			sw = ansi.StringWidth(strings.TrimRight(seg, " "))
		}
		line.WriteString(seg)
		lw += ansi.StringWidth(seg)
	}
	if line.Len() > 0 || len(out) == 0 {
		flush()
	}
	return out
}

// styleLines styles each line on its own, so no escape code spans a line
// break.
func styleLines(st lipgloss.Style, lines []string) []string {
	for i, l := range lines {
		lines[i] = st.Render(l)
	}
	return lines
}
