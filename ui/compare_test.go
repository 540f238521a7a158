package ui

import (
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/modelwire/modelwire/app"
)

// Opened with Compare (`fork --to … --tui`), the workbench replays the
// parent and opens the diff view of it against the first child, naming
// the other children in the status line.
func TestOpenOnAComparison(t *testing.T) {
	db, parent, ups, sc := recordFixture(t)
	fork := recordEditedOrder(t, db, sc, ups, parent)
	m := New(Options{Library: app.Library{DB: db}, Replay: parent, Compare: []string{parent, fork, "1other"}})
	m.Update(tea.WindowSizeMsg{Width: 140, Height: 40})
	isReplay := func(msg tea.Msg) bool { _, ok := msg.(replayMsg); return ok }
	var next tea.Cmd
	for _, msg := range runUntil(m.Init(), isReplay, 30*time.Second) {
		if isReplay(msg) {
			_, next = m.Update(msg)
		}
	}
	isDiff := func(msg tea.Msg) bool { _, ok := msg.(diffMsg); return ok }
	for _, msg := range runUntil(next, isDiff, 30*time.Second) {
		if isDiff(msg) {
			m.Update(msg)
		}
	}
	d, ok := m.top().(*diffDialog)
	if !ok {
		t.Fatalf("opened %T, want the diff view", m.top())
	}
	if d.res.A.ID != parent || d.res.B.ID != fork {
		t.Errorf("diff of %s → %s, want the parent → the first child", d.res.A.ID, d.res.B.ID)
	}
	contains(t, m.View(), "Diff "+parent+" → "+fork, "the other children: 1other")
}
