package ui

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// Rendering helpers. Highlighting (highlight.go) and markdown
// (markdown.go) are the expensive parts of a frame: callers cache their
// output per (width, version, theme) and call them only when an item has
// finished (see lanes.go).

// prettyJSON indents JSON; text that is not JSON comes back unchanged.
func prettyJSON(raw []byte) string {
	var b bytes.Buffer
	if err := json.Indent(&b, bytes.TrimSpace(raw), "", "  "); err != nil {
		return string(raw)
	}
	return b.String()
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
