// Command grid puts every character of a freeze SVG on the terminal's cell
// grid, for the README's screenshots (docs/screens/capture.sh).
//
// freeze lays a line out as flowing text and widens each double-width
// character by a fixed dx. With a CJK fallback font the text shaper gives
// the spaces and punctuation after Chinese text the CJK font's widths, so
// panel borders after a Chinese line drift. grid replaces the flow by
// absolute positions: each character in its own tspan at x = left +
// column × cell width, columns counted with the display widths the
// workbench itself uses.
//
// Usage: grid < freeze.svg > gridded.svg
package main

import (
	"fmt"
	"html"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// freeze's cell: a font size's height over this ratio is a cell's width
// (its fontHeightToWidthRatio, which sizes the background rectangles).
const heightToWidth = 1.68

var (
	fontSize = regexp.MustCompile(`font-size="([0-9.]+)px"`)
	textEl   = regexp.MustCompile(`(?s)<text x="([0-9.]+)px"([^>]*)>(.*?)</text>`)
	tspan    = regexp.MustCompile(`(?s)<tspan([^>]*?)(/>|>(.*?)</tspan>)`)
	dx       = regexp.MustCompile(` dx="[^"]*"`)
)

func main() {
	in, err := io.ReadAll(os.Stdin)
	if err != nil {
		fail(err)
	}
	svg := string(in)
	m := fontSize.FindStringSubmatch(svg)
	if m == nil {
		fail(fmt.Errorf("no font-size in the SVG: not freeze's output?"))
	}
	size, _ := strconv.ParseFloat(m[1], 64)
	cell := size / heightToWidth
	out := textEl.ReplaceAllStringFunc(svg, func(t string) string {
		p := textEl.FindStringSubmatch(t)
		left, _ := strconv.ParseFloat(p[1], 64)
		col := 0
		body := tspan.ReplaceAllStringFunc(p[3], func(s string) string {
			q := tspan.FindStringSubmatch(s)
			if q[2] == "/>" || q[3] == "" {
				return s
			}
			// One tspan a character: librsvg places a tspan's first
			// character at its x and flows the rest.
			attrs := dx.ReplaceAllString(q[1], "")
			var b strings.Builder
			for _, r := range html.UnescapeString(q[3]) {
				x := strconv.FormatFloat(left+float64(col)*cell, 'f', 2, 64)
				fmt.Fprintf(&b, `<tspan%s x="%s">%s</tspan>`, attrs, x, html.EscapeString(string(r)))
				col += ansi.StringWidth(string(r))
			}
			return b.String()
		})
		return `<text x="` + p[1] + `px"` + p[2] + ">" + body + "</text>"
	})
	if _, err := io.WriteString(os.Stdout, out); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "grid:", err)
	os.Exit(1)
}
