package ui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/modelwire/modelwire/themes"
)

// TestTeachingLinesWrap: at 80 columns the explanation wraps onto the
// rows it needs instead of being cut.
func TestTeachingLinesWrap(t *testing.T) {
	m := newLive(t, 80, 24)
	m.Update(updatesMsg{gen: m.gen, ups: scriptedSession(t, m.d.scenario, m.d.rc)})
	m.setFocus(panelValidation)
	press(m, "E")
	view := screenText(m.View())
	if strings.Contains(view, "why:") && strings.Contains(strings.Join(m.teachLines(), ""), "…") {
		t.Errorf("the explanation is cut:\n%s", view)
	}
	lines := strings.Split(view, "\n")
	if len(lines) != 24 {
		t.Fatalf("the screen has %d rows, want 24", len(lines))
	}
	for _, l := range m.teachLines() {
		if w := ansi.StringWidth(l); w != 80 {
			t.Errorf("a teaching row is %d cells wide", w)
		}
	}
	_, why, _ := themes.Explain(m.teachKey())
	if !strings.Contains(squash(view), squash(why)) {
		t.Errorf("the screen lacks the whole explanation %q:\n%s", why, view)
	}
}
