package themes

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/lucasb-eyer/go-colorful"
	"github.com/muesli/termenv"
)

// sgrColours reads the foreground and background a rendered string sets,
// as the terminal shows them (nil when the style sets none).
func sgrColours(t *testing.T, out string) (fg, bg *colorful.Color) {
	t.Helper()
	for _, m := range regexp.MustCompile(`\x1b\[([0-9;]*)m`).FindAllStringSubmatch(out, -1) {
		var ps []int
		for _, f := range strings.Split(m[1], ";") {
			n, _ := strconv.Atoi(f)
			ps = append(ps, n)
		}
		for i := 0; i < len(ps); i++ {
			var c colorful.Color
			target := &fg
			switch p := ps[i]; {
			case (p == 38 || p == 48) && i+2 < len(ps) && ps[i+1] == 5:
				c = PaletteRGB(ps[i+2])
				if p == 48 {
					target = &bg
				}
				i += 2
			case (p == 38 || p == 48) && i+4 < len(ps) && ps[i+1] == 2:
				c = colorful.Color{R: float64(ps[i+2]) / 255, G: float64(ps[i+3]) / 255, B: float64(ps[i+4]) / 255}
				if p == 48 {
					target = &bg
				}
				i += 4
			case p >= 30 && p <= 37:
				c = PaletteRGB(p - 30)
			case p >= 90 && p <= 97:
				c = PaletteRGB(p - 90 + 8)
			case p >= 40 && p <= 47:
				c, target = PaletteRGB(p-40), &bg
			case p >= 100 && p <= 107:
				c, target = PaletteRGB(p-100+8), &bg
			default:
				continue
			}
			cc := c
			*target = &cc
		}
	}
	return fg, bg
}

// Every colour of every theme keeps WCAG AA contrast against the theme's
// background — text 4.5:1, borders 3:1 — on truecolor, 256 and 16
// colours, measured on what lipgloss actually writes for that profile.
func TestThemeContrastOnEveryProfile(t *testing.T) {
	defer lipgloss.SetColorProfile(lipgloss.ColorProfile())
	for _, p := range []Palette{Dark, Light, Contrast} {
		s := Build(p)
		text := map[string]lipgloss.Style{
			"Text": s.Text, "Muted": s.Muted, "Subtle": s.Subtle, "Accent": s.Accent, "Good": s.Good, "Warn": s.Warn, "Bad": s.Bad,
			"Info": s.Info, "Highlight": s.Highlight, "Key": s.Key, "KeyDesc": s.KeyDesc, "StatusError": s.StatusError,
			"DialogTitle": s.DialogTitle, "PanelTitle": s.PanelTitle, "PanelTitleFocused": s.PanelTitleFocused, "Marker": s.Marker,
			"TimelineDone": s.TimelineDone, "TimelineCur": s.TimelineCur, "Timeline": s.Timeline,
			"Selected": s.Selected, "TabActive": s.TabActive, "HeaderValue": s.HeaderValue,
		}
		for _, k := range []string{"message", "reasoning", "tool_call", "refusal"} {
			text["kind "+k] = s.Kind(k)
		}
		for tk := TokenText; tk < numTokens; tk++ {
			text["code token "+strconv.Itoa(int(tk))] = s.Token(tk)
		}
		md := s.Markdown
		for name, st := range map[string]lipgloss.Style{"md Text": md.Text, "md H1": md.H1, "md Heading": md.Heading,
			"md Code": md.Code, "md CodeBlock": md.CodeBlock, "md Link": md.Link, "md Dim": md.Dim, "md Bullet": md.Bullet} {
			text[name] = st
		}
		for _, k := range []string{"trusted", "verified", "unverified", "untrusted"} {
			text["trust "+k] = s.Trust(k)
		}
		borders := map[string]lipgloss.Color{"Border": p.Border, "BorderFocus": p.BorderFocus, "dialog": p.Accent2}
		for _, prof := range []termenv.Profile{termenv.TrueColor, termenv.ANSI256, termenv.ANSI} {
			lipgloss.SetColorProfile(prof)
			_, back := sgrColours(t, lipgloss.NewStyle().Background(Degrade(p.Bg, p.Bg, 0)).Render("x"))
			check := func(name string, out string, min float64) {
				fg, bg := sgrColours(t, out)
				if fg == nil {
					t.Errorf("%s %s profile %d: no colour written", p.Name, name, prof)
					return
				}
				if bg == nil {
					bg = back
				}
				if r := ContrastRatio(*fg, *bg); r < min {
					t.Errorf("%s theme, %s, profile %d: %s on %s has contrast %.2f, want ≥ %.1f", p.Name, name, prof, fg.Hex(), bg.Hex(), r, min)
				}
			}
			for name, st := range text {
				check(name, st.Render("x"), TextContrast)
			}
			for name, c := range borders {
				check(name, lipgloss.NewStyle().Foreground(Degrade(c, p.Bg, BorderContrast)).Render("x"), BorderContrast)
			}
		}
	}
}

// The colour the issue named: the dark theme's error red stays red-ish
// and bright on 256 colours, not colour 232.
func TestErrorRedDoesNotTurnBlack(t *testing.T) {
	c := Degrade(Dark.Bad, Dark.Bg, TextContrast)
	if c.ANSI256 == "232" {
		t.Fatal("#e06c75 degrades to colour 232")
	}
	n, _ := strconv.Atoi(c.ANSI256)
	rgb := PaletteRGB(n)
	if h, _, l := rgb.Hsl(); (h > 30 && h < 330) || l < 0.4 {
		t.Errorf("#e06c75 degrades to %d (%s): not a light red", n, rgb.Hex())
	}
}
