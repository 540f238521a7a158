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
	contains(t, s, "+-", "| ", "# assembled", "* Assembly")
	for i, l := range strings.Split(s, "\n") {
		if w := displayWidth(l); w > 120 {
			t.Errorf("line %d is %d cells", i, w)
		}
	}
}

// The layout follows the step: at the assembled request the assembly
// panel is focused and wide enough at 120×36 that no field path is cut;
// z zooms any panel to the whole body and back.
func TestLayoutFollowsStepAndZooms(t *testing.T) {
	m := newHeld(t, 120, 36)
	if m.focus != panelAssembly {
		t.Fatalf("focus on %s at the assembled request", m.focus)
	}
	r := m.lay.panels[panelAssembly]
	lines := strings.Split(m.framePanel(panelAssembly, r), "\n")
	for _, l := range lines {
		if strings.Contains(l, "→") && strings.Contains(l, "…") {
			t.Errorf("a field path is cut at 120×36: %q", l)
		}
	}
	if r.w <= m.lay.panels[panelStream].w {
		t.Errorf("assembly %d cells wide, stream %d: the step's panel should be the widest", r.w, m.lay.panels[panelStream].w)
	}
	m.Update(pauseMsg{gen: m.gen, step: "validated", reply: make(chan struct{}, 1)})
	if m.focus != panelValidation || m.lay.panels[panelValidation].w <= m.lay.panels[panelAssembly].w {
		t.Errorf("at validated: focus %s, validation %d wide", m.focus, m.lay.panels[panelValidation].w)
	}
	press(m, "z")
	s := m.View()
	if !m.lay.zoom || strings.Contains(s, "Assembly ·") || !strings.Contains(s, focusMark+"Validation") {
		t.Errorf("z did not zoom the validation panel:\n%s", s)
	}
	checkFrame(t, s, 120, 36)
	press(m, "z")
	if m.lay.zoom || !strings.Contains(m.View(), "Assembly ·") {
		t.Error("z again did not restore the panels")
	}
}

// E explains the selected element in two lines from the data file, and
// the frame keeps its size.
func TestTeachingModeExplainsTheSelection(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {200, 60}} {
		m := newHeld(t, size[0], size[1])
		press(m, "E")
		s := m.View()
		contains(t, s, "input[0].content: A message item's content", "why: ")
		checkFrame(t, s, size[0], size[1])
		press(m, "down") // the next source: the developer message
		contains(t, m.View(), "input[1].content: A message item's content")
		press(m, "E")
		if strings.Contains(m.View(), "why: ") {
			t.Error("E again did not close teaching mode")
		}
	}
}
