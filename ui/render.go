package ui

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/alecthomas/chroma/v2"
	"github.com/alecthomas/chroma/v2/lexers"
	"github.com/charmbracelet/glamour"
	"github.com/charmbracelet/x/ansi"
)

// Rendering helpers. Highlighting and markdown are the expensive parts of a
// frame: callers cache their output per (width, version, theme) and call
// them only when an item has finished (see lanes.go).

// prettyJSON indents JSON; text that is not JSON comes back unchanged.
func prettyJSON(raw []byte) string {
	var b bytes.Buffer
	if err := json.Indent(&b, bytes.TrimSpace(raw), "", "  "); err != nil {
		return string(raw)
	}
	return b.String()
}

// highlightJSON pretty-prints and highlights JSON with the theme's chroma
// style, then wraps it to width. Colours go through lipgloss, so NO_COLOR
// and the ASCII profile give plain text.
func (c *Common) highlightJSON(raw []byte, width int) []string {
	return c.highlight("json", prettyJSON(raw), width)
}

// highlight highlights code of a chroma language and wraps it to width.
func (c *Common) highlight(lang, code string, width int) []string {
	lexer := lexers.Get(lang)
	if lexer == nil {
		return wrapLines(code, width)
	}
	lexer = chroma.Coalesce(lexer)
	it, err := lexer.Tokenise(nil, code)
	if err != nil {
		return wrapLines(code, width)
	}
	var b strings.Builder
	for _, tok := range it.Tokens() {
		st := c.Styles.Token(tok.Type)
		// Style each line of a token separately: a style must not span a
		// newline, or wrapping would carry its escape codes across lines.
		parts := strings.Split(tok.Value, "\n")
		for i, p := range parts {
			if i > 0 {
				b.WriteByte('\n')
			}
			if p != "" {
				b.WriteString(st.Render(p))
			}
		}
	}
	return wrapLines(b.String(), width)
}

// wrapLines wraps text (which may hold ANSI codes) to width by display
// cells: words first, then hard breaks for long words and CJK runs.
func wrapLines(s string, width int) []string {
	if width < 1 {
		width = 1
	}
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\t", "  ")
	return strings.Split(ansi.Wrap(s, width, ""), "\n")
}

// markdown renders markdown with glamour in the theme's style.
func (c *Common) markdown(md string, width int) []string {
	style := c.Styles.GlamourStyle()
	if c.NoColor {
		style = "notty"
	}
	r, err := glamour.NewTermRenderer(glamour.WithStandardStyle(style), glamour.WithWordWrap(max(width, 10)))
	if err != nil {
		return wrapLines(md, width)
	}
	out, err := r.Render(md)
	if err != nil {
		return wrapLines(md, width)
	}
	out = strings.Trim(out, "\n")
	lines := strings.Split(out, "\n")
	// glamour pads lines with spaces to its wrap width and indents by its
	// margin; trim the right side so narrow panels do not overflow.
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
		if ansi.StringWidth(lines[i]) > width {
			lines[i] = ansi.Truncate(lines[i], width, "")
		}
	}
	return trimBlank(lines)
}

// trimBlank drops leading and trailing blank lines.
func trimBlank(lines []string) []string {
	for len(lines) > 0 && strings.TrimSpace(ansi.Strip(lines[0])) == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && strings.TrimSpace(ansi.Strip(lines[len(lines)-1])) == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// fit cuts or pads a line to exactly width cells.
func fit(s string, width int) string {
	if width <= 0 {
		return ""
	}
	w := ansi.StringWidth(s)
	if w > width {
		return ansi.Truncate(s, width, "…")
	}
	return s + strings.Repeat(" ", width-w)
}

// cut truncates a line to width cells with an ellipsis.
func cut(s string, width int) string {
	if width <= 0 {
		return ""
	}
	if ansi.StringWidth(s) <= width {
		return s
	}
	return ansi.Truncate(s, width, "…")
}

// oneLine collapses whitespace so a value fits on one line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// padRight pads s to width cells (never cuts).
func padRight(s string, width int) string {
	if w := ansi.StringWidth(s); w < width {
		return s + strings.Repeat(" ", width-w)
	}
	return s
}

// compactJSON compacts JSON, or returns it unchanged.
func compactJSON(raw []byte) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// displayWidth is the number of terminal cells s takes.
func displayWidth(s string) int { return ansi.StringWidth(s) }

// itoa formats an int.
func itoa(n int) string { return strconv.Itoa(n) }

// ansiStrip removes escape codes.
func ansiStrip(s string) string { return ansi.Strip(s) }
