package ui

import (
	"strings"
	"testing"

	"github.com/modelwire/modelwire/session"
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

// TestSourceMapListsCarriedItems: from turn 2 on, the assembly panel's
// source map lists what the request carries of the turns before it —
// each call and its result, named by turn and call_id, where the
// protocol put them (13.6.4: the second request holds the first call and
// its result) — and j reaches them.
func TestSourceMapListsCarriedItems(t *testing.T) {
	m := newLive(t, 120, 36)
	ups := scriptedSession(t, m.d.scenario, m.d.rc)
	want := map[int][]string{
		2: {"history:turn1 call_1_0 → input[4] function_call get_order_line", "history:turn1 call_1_0 → input[5] function_call_output of get_order_line"},
		3: {"history:turn1 call_1_0 → input[4] function_call get_order_line", "history:turn1 call_1_0 → input[5] function_call_output of get_order_line",
			"history:turn2 call_2_0 → input[6] function_call get_refund_ledger", "history:turn2 call_2_1 → input[7] function_call get_refund_policy",
			"history:turn2 call_2_0 → input[8] function_call_output of get_refund_ledger", "history:turn2 call_2_1 → input[9] function_call_output of get_refund_policy"},
	}
	for turn := 2; turn <= 3; turn++ {
		n := 0
		for i, u := range ups {
			if u.Kind == session.UpAssembled && u.Turn == turn {
				n = i + 1
			}
		}
		m.Update(updatesMsg{gen: m.gen, ups: ups[:n]})
		m.Update(pauseMsg{gen: m.gen, step: session.StepAssembled, turn: turn, reply: make(chan struct{}, 1)})
		var got []string
		for _, r := range m.d.turn().Request.Map {
			if strings.HasPrefix(r.Source, "history:turn") {
				got = append(got, r.Source+" → "+r.Field+" "+r.Note)
			}
		}
		if strings.Join(got, "\n") != strings.Join(want[turn], "\n") {
			t.Errorf("turn %d carries:\n%s\nwant:\n%s", turn, strings.Join(got, "\n"), strings.Join(want[turn], "\n"))
		}
		// Each is a row of the panel the cursor reaches.
		p := m.panels[panelAssembly].(*assemblyPanel)
		p.sel = 0
		for i, r := range m.d.turn().Request.Map {
			if i > 0 {
				press(m, "j")
			}
			if strings.HasPrefix(r.Source, "history:turn") {
				line := cursorRow(m.View())
				if !strings.Contains(line, r.Source) || !strings.Contains(line, "history") || !strings.Contains(line, r.Field) {
					t.Fatalf("turn %d, row %s → %s: the cursor's line is %q", turn, r.Source, r.Field, line)
				}
			}
		}
	}
}

// cursorRow is the cursor's line and the one under it: a narrow panel
// writes a row on two lines, the source and then where it landed.
func cursorRow(screen string) string {
	ls := strings.Split(screenText(screen), "\n")
	for i, l := range ls {
		if strings.Contains(l, "▸ ") && i+1 < len(ls) {
			return l + "\n" + ls[i+1]
		}
	}
	return ""
}
