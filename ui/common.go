// Package ui is modelwire's terminal workbench (Bubble Tea v1): one root
// model that folds session updates into a session.State and renders it as
// panels — assembly, stream lanes, validation, event log and the step's
// teaching note — with a stack of dialogs on top (tool approval, options,
// compare, sessions, help, confirmations).
//
// The same State drives live sessions and replays, so the screen at step N
// of a replay is the live screen right after the same event. Nothing in
// Update does I/O: sessions, the simulator and the store run in commands
// and goroutines whose results come back as messages tagged with the
// generation they belong to.
package ui

import (
	"log/slog"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/modelwire/modelwire/themes"
)

// Common is what every panel and dialog shares: the styles of the current
// theme and whether colour is off. Panels hold a pointer to it, so a theme
// change reaches all of them at once.
type Common struct {
	Styles *themes.Styles
	Theme  string
	// NoColor is set by NO_COLOR or an ASCII colour profile: markdown then
	// writes its attributes (bold, italic, …) without colours.
	NoColor bool
	// Gen grows with every theme change; render caches key on it.
	Gen int
	Log *slog.Logger
	// ASCII folds every frame to ASCII (ascii.go).
	ASCII bool
}

func newCommon(theme string, noColor, ascii bool, log *slog.Logger) *Common {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &Common{NoColor: noColor, Log: log, ASCII: ascii}
	c.setTheme(theme)
	return c
}

func (c *Common) setTheme(name string) {
	p, err := themes.ByName(name)
	if err != nil {
		p = themes.Dark
	}
	c.Theme = p.Name
	c.Styles = themes.Build(p)
	c.Gen++
}

// asciiProfile reports whether lipgloss renders without colour.
func asciiProfile() bool { return lipgloss.ColorProfile() == termenv.Ascii }
