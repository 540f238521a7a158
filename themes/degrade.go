package themes

import (
	"math"
	"strconv"

	"github.com/charmbracelet/lipgloss"
	"github.com/lucasb-eyer/go-colorful"
	"github.com/muesli/termenv"
)

// Colour degradation. lipgloss hands a plain hex colour to termenv, whose
// 256-colour conversion compares against a grey computed from cube
// indices instead of values: #e06c75, the dark theme's error red, comes out
// as colour 232, near black, invisible on a dark terminal. So every colour
// the styles use is a CompleteColor: the hex as it is for truecolor, and
// for 256 and 16 colours the palette entry nearest to it (CIEDE2000) among
// those that keep the contrast it needs against the theme's background,
// degraded the same way. The 16 colours are taken as xterm shows them
// (termenv's table); a terminal with its own palette may differ.

// Minimum contrast ratios (WCAG 2.1): text, and non-text marks such as
// borders.
const (
	TextContrast   = 4.5
	BorderContrast = 3.0
)

// Degrade is c as a CompleteColor whose 256- and 16-colour forms keep at
// least min contrast against bg degraded the same way (min 0: simply the
// nearest).
func Degrade(c, bg lipgloss.Color, min float64) lipgloss.CompleteColor {
	return lipgloss.CompleteColor{
		TrueColor: string(c),
		ANSI256:   strconv.Itoa(nearest(string(c), string(bg), min, 16, 256)),
		ANSI:      strconv.Itoa(nearest(string(c), string(bg), min, 0, 16)),
	}
}

// nearest is the index in [from, to) of the terminal colour closest to
// hex among those with at least min contrast against bg's own nearest
// colour in that range. Without any (min too high), the one with the most
// contrast.
func nearest(hex, bg string, min float64, from, to int) int {
	c, err := colorful.Hex(hex)
	if err != nil {
		return 7 // not a hex colour: the terminal's ordinary text
	}
	back := -1
	if min > 0 {
		back = nearest(bg, "", 0, from, to)
	}
	best, bestDist, most, mostRatio := -1, math.Inf(1), from, -1.0
	for i := from; i < to; i++ {
		p := PaletteRGB(i)
		if back >= 0 {
			r := ContrastRatio(p, PaletteRGB(back))
			if r > mostRatio {
				most, mostRatio = i, r
			}
			if r < min {
				continue
			}
		}
		if d := c.DistanceCIEDE2000(p); d < bestDist {
			best, bestDist = i, d
		}
	}
	if best < 0 {
		return most
	}
	return best
}

// PaletteRGB is the colour a terminal shows for palette index i (0–255),
// as termenv converts it.
func PaletteRGB(i int) colorful.Color {
	if i < 16 {
		return termenv.ConvertToRGB(termenv.ANSIColor(i))
	}
	return termenv.ConvertToRGB(termenv.ANSI256Color(i))
}

// ContrastRatio is the WCAG contrast ratio of two colours (1 to 21).
func ContrastRatio(a, b colorful.Color) float64 {
	la, lb := luminance(a), luminance(b)
	if la < lb {
		la, lb = lb, la
	}
	return (la + 0.05) / (lb + 0.05)
}

// luminance is the WCAG relative luminance.
func luminance(c colorful.Color) float64 {
	lin := func(v float64) float64 {
		if v <= 0.03928 {
			return v / 12.92
		}
		return math.Pow((v+0.055)/1.055, 2.4)
	}
	return 0.2126*lin(c.R) + 0.7152*lin(c.G) + 0.0722*lin(c.B)
}
