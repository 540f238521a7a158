package ui

import (
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"
)

// TestTeatestFreeRunning drives the workbench through teatest: free-running
// mode stops only for the first proposal; approve all runs the rest of the
// refund case to five passing layers; q then quits.
func TestTeatestFreeRunning(t *testing.T) {
	rc := DefaultRunConfig()
	rc.StepMode = false
	m := New(Options{Backend: &fakeBackend{}, Run: rc})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(120, 40))
	m.br.start(tm.Send)
	t.Cleanup(m.Close)
	screenHas := func(want ...string) func([]byte) bool {
		return func(b []byte) bool {
			s := ansiStrip(string(b))
			for _, w := range want {
				if !strings.Contains(s, w) {
					return false
				}
			}
			return true
		}
	}
	opts := []teatest.WaitForOption{teatest.WithDuration(20 * time.Second), teatest.WithCheckInterval(10 * time.Millisecond)}
	teatest.WaitFor(t, tm.Output(), screenHas("Tool proposal", "get_order_line"), opts...)
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("A")})
	teatest.WaitFor(t, tm.Output(), screenHas("5/5 pass"), opts...)
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("q")})
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
}
