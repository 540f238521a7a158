package ui

import (
	"strings"
	"testing"
)

// TestAssemblyCursorReachesEveryRow: j walks the source map from its
// first row to its last (the tools and the output schema included) and
// the panel scrolls with it, so the row under the cursor is always on
// screen, at 80×24 and at 120×36; k walks back to the top.
func TestAssemblyCursorReachesEveryRow(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 36}} {
		m := newHeld(t, size[0], size[1])
		if m.focus != panelAssembly {
			t.Fatalf("%dx%d: the held request should focus the assembly panel", size[0], size[1])
		}
		rows := m.d.preview.Map
		if rows[len(rows)-1].Source != "output_schema" {
			t.Fatalf("the last row is %q, want output_schema", rows[len(rows)-1].Source)
		}
		check := func(i int) {
			t.Helper()
			line := cursorLine(m.View())
			want := rows[i].Source
			if len(want) > 10 {
				want = want[:10]
			}
			if !strings.Contains(line, want) {
				t.Fatalf("%dx%d, row %d (%s): the cursor is not on screen (its line: %q):\n%s", size[0], size[1], i, rows[i].Source, line, screenText(m.View()))
			}
		}
		check(0)
		for i := 1; i < len(rows); i++ {
			press(m, "j")
			check(i)
		}
		press(m, "j") // past the end: stays on the last row
		check(len(rows) - 1)
		for i := len(rows) - 2; i >= 0; i-- {
			press(m, "k")
			check(i)
		}
	}
}

// cursorLine is the screen line that holds the assembly cursor ("▸ ").
func cursorLine(screen string) string {
	for _, l := range strings.Split(screenText(screen), "\n") {
		if strings.Contains(l, "▸ ") {
			return l
		}
	}
	return ""
}
