package ui

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/alecthomas/chroma/v2"
	"github.com/alecthomas/chroma/v2/lexers"
	"github.com/charmbracelet/glamour"
	gansi "github.com/charmbracelet/glamour/ansi"
	"github.com/charmbracelet/glamour/styles"
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

// markdown renders markdown with glamour in the theme's style.
func (c *Common) markdown(md string, width int) []string {
	r, err := glamour.NewTermRenderer(glamour.WithStyles(markdownStyle(c.Styles.GlamourStyle(), c.NoColor)),
		glamour.WithWordWrap(max(width, 10)))
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
	// margin; trim the right side. Its word wrap never breaks a CJK run:
	// a line still too wide is wrapped again rather than cut, so no text
	// is lost.
	var wrapped []string
	for _, l := range lines {
		l = strings.TrimRight(l, " ")
		if ansi.StringWidth(l) > width {
			wrapped = append(wrapped, wrapLines(l, width)...)
			continue
		}
		wrapped = append(wrapped, l)
	}
	return trimBlank(wrapped)
}

// markdownStyle is glamour's standard style (notty without colour) with
// the markup dropped: a heading reads as a bold line, not as "## Heading";
// without colour, emphasis is italic and bold type (attributes, not
// colours, so NO_COLOR allows them), not notty's literal *…*, **…**, ~~…~~.
func markdownStyle(name string, noColor bool) gansi.StyleConfig {
	cfg := styles.DarkStyleConfig
	switch {
	case noColor:
		cfg = styles.NoTTYStyleConfig
	case name == "light":
		cfg = styles.LightStyleConfig
	}
	yes := true
	if noColor {
		cfg.Emph.BlockPrefix, cfg.Emph.BlockSuffix, cfg.Emph.Prefix, cfg.Emph.Suffix = "", "", "", ""
		cfg.Strong.BlockPrefix, cfg.Strong.BlockSuffix, cfg.Strong.Prefix, cfg.Strong.Suffix = "", "", "", ""
		cfg.Strikethrough.BlockPrefix, cfg.Strikethrough.BlockSuffix = "", ""
		cfg.Emph.Italic, cfg.Strong.Bold, cfg.Strikethrough.CrossedOut = &yes, &yes, &yes
	}
	for _, h := range []*gansi.StyleBlock{&cfg.H1, &cfg.H2, &cfg.H3, &cfg.H4, &cfg.H5, &cfg.H6} {
		if strings.Trim(h.Prefix, "# ") == "" {
			h.Prefix = ""
		}
		h.Bold = &yes
	}
	return cfg
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
