package ui

import (
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
)

// Two keys typed faster than the terminal is read reach the program as one
// message; each still does what it does alone: E opens teaching mode and
// z zooms the focused panel.
func TestKeysInOneReadEachAct(t *testing.T) {
	m := newHeld(t, 120, 36)
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("Ez")})
	if !m.lay.zoom || !strings.Contains(m.View(), "why: ") {
		t.Fatalf("E and z in one read: zoom %v, teaching shown %v", m.lay.zoom, strings.Contains(m.View(), "why: "))
	}
}
