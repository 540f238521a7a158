package ui

import (
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
)

// Without colour the focused panel and the active tab are marked by a
// glyph, and the marker moves with tab.
func TestFocusMarkedWithoutColour(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {200, 60}} {
		m := newHeld(t, size[0], size[1])
		m.c.NoColor = true
		for i := 0; i < int(numPanels); i++ {
			s := m.View()
			for id := panelID(0); id < numPanels; id++ {
				if marked := strings.Contains(s, focusMark+id.String()); marked != (id == m.focus) {
					t.Fatalf("%v: %s marked %v with focus on %s:\n%s", size, id, marked, m.focus, s)
				}
			}
			press(m, "tab")
		}
	}
}

// ASCII mode draws every border and marker in ASCII; the text (Chinese
// included) is left as it is and every line keeps its width.
func TestASCIIMode(t *testing.T) {
	m := New(Options{Backend: &fakeBackend{}, Getenv: func(string) string { return "" }, ASCII: true})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 36})
	m.Update(m.Init()())
	s := m.View()
	for _, r := range s {
		if r >= 0x2190 && r <= 0x27bf || r == '·' || r == '…' {
			t.Fatalf("ASCII mode drew %q:\n%s", r, s)
		}
	}
	contains(t, s, "+-", "| ", "# assembled", "* Stream")
	for i, l := range strings.Split(s, "\n") {
		if w := displayWidth(l); w > 120 {
			t.Errorf("line %d is %d cells", i, w)
		}
	}
}
