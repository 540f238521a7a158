package ui

import (
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/app"
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

// atStep folds the scripted session up to where the engine pauses at step
// of turn and pauses there.
func atStep(t *testing.T, m *Model, ups []session.Update, step string, turn int) {
	t.Helper()
	n := -1
	for i, u := range ups {
		switch step {
		case session.StepAssembled:
			if u.Kind == session.UpAssembled && u.Turn == turn {
				n = i + 1
			}
		case session.StepProposals, session.StepFinal:
			if u.Kind == session.UpResponse && u.Turn == turn {
				n = i + 1
			}
		case session.StepResults:
			if u.Kind == session.UpResult && u.Turn == turn {
				n = i + 1
			}
		case session.StepValidated:
			if u.Kind == session.UpValidated {
				n = i + 1
			}
		}
	}
	if n < 0 {
		t.Fatalf("the script has no %s at turn %d", step, turn)
	}
	m.Update(updatesMsg{gen: m.gen, ups: ups[:n]})
	m.Update(pauseMsg{gen: m.gen, step: step, turn: turn, reply: make(chan struct{}, 1)})
}

// notesText is the notes panel's whole text.
func notesText(m *Model) string {
	return screenText(strings.Join(m.panels[panelNotes].(*notesPanel).render(), "\n"))
}

// TestNotesFollowTheTurn: the notes panel shows the note of the step and
// the turn the walkthrough is at, citing the chapter's section, and never
// a fact before it exists — turn 1's results name the order line's facts
// only; the ledger's appear at turn 2; turn 2's request explains the
// carried call (13.6.4), turn 2's lookups the parallel ledger and policy
// (13.6.5), turn 3's request tool_choice none (13.6.6).
func TestNotesFollowTheTurn(t *testing.T) {
	m := newLive(t, 120, 36)
	ups := scriptedSession(t, m.d.scenario, m.d.rc)
	seen := map[string]string{}
	for _, c := range []struct {
		step    string
		turn    int
		want    []string
		notWant []string
	}{
		{session.StepAssembled, 1, []string{"13.6.3", "unverified"}, nil},
		{session.StepProposals, 1, []string{"13.6.4", "get_order_line", "call_order"}, []string{"3000", "ledger"}},
		{session.StepResults, 1, []string{"13.6.4", "18000", "missing", "not known yet"}, []string{"3000", "2000", "13000"}},
		{session.StepAssembled, 2, []string{"13.6.4", "function_call_output", "history:turn1"}, []string{"3000"}},
		{session.StepProposals, 2, []string{"13.6.5", "get_refund_ledger", "get_refund_policy", "parallel_tool_calls"}, []string{"3000"}},
		{session.StepResults, 2, []string{"13.6.5", "3000", "2000", "13000", "conflicts"}, nil},
		{session.StepAssembled, 3, []string{"13.6.6", "tool_choice: none", "history:turn2"}, nil},
		{session.StepFinal, 3, []string{"13.6.6", "needs_review"}, nil},
		{session.StepValidated, 3, []string{"13.6.6", "13000"}, nil},
	} {
		atStep(t, m, ups, c.step, c.turn)
		text := notesText(m)
		flat := strings.Join(strings.Fields(text), " ")
		for _, w := range c.want {
			if !strings.Contains(flat, w) {
				t.Errorf("%s@%d: the note lacks %q:\n%s", c.step, c.turn, w, text)
			}
		}
		for _, w := range c.notWant {
			if strings.Contains(flat, w) {
				t.Errorf("%s@%d: the note names %q before it exists:\n%s", c.step, c.turn, w, text)
			}
		}
		seen[c.step+"@"+itoa(c.turn)] = flat
	}
	if seen["results@1"] == seen["results@2"] || seen["proposals@1"] == seen["proposals@2"] || seen["assembled@2"] == seen["assembled@3"] {
		t.Error("a later turn repeats an earlier turn's note")
	}
}

// TestChangesViewShowsWhatEachTurnAdds: d opens what the request on
// screen adds to the one before it, from the two wire bodies: on turn 2
// the first call and its result, appended with their call_id (13.6.4);
// on turn 3 the two calls and two results and tool_choice auto → none
// (13.6.5, 13.6.6) — on screen at 80×24 without scrolling; [ goes back a
// turn, on every protocol the same way.
func TestChangesViewShowsWhatEachTurnAdds(t *testing.T) {
	m := newLive(t, 80, 24)
	ups := scriptedSession(t, m.d.scenario, m.d.rc)
	atStep(t, m, ups, session.StepAssembled, 3)
	press(m, "d")
	if _, ok := m.top().(*changesDialog); !ok {
		t.Fatalf("d opened %T", m.top())
	}
	screen := screenText(m.View())
	for _, want := range []string{"What turn 3's request adds", "tool_choice", `"auto" -> "none"`, "input[6]", "function_call", "call_2_0"} {
		if !strings.Contains(screen, want) {
			t.Errorf("turn 3 at 80x24 lacks %q:\n%s", want, screen)
		}
	}
	all := strings.Join(m.top().(*changesDialog).lines(76), "\n")
	for _, want := range []string{"input[7]", "input[8]", "input[9]", "function_call_output", "call_2_1", "successful_refund_cents", "get_refund_policy"} {
		if !strings.Contains(screenText(all), want) {
			t.Errorf("turn 3's changes lack %q:\n%s", want, screenText(all))
		}
	}
	press(m, "[")
	screen = screenText(m.View())
	for _, want := range []string{"What turn 2's request adds", "input[4]", "function_call get_order_line call_1_0", "input[5]", "function_call_output call_1_0", "paid_cents"} {
		if !strings.Contains(screen, want) {
			t.Errorf("turn 2 lacks %q:\n%s", want, screen)
		}
	}
	if strings.Contains(screen, "tool_choice") {
		t.Errorf("turn 2 keeps tool_choice auto, yet the view says it changed:\n%s", screen)
	}
	press(m, "esc")
	if m.top() != nil {
		t.Fatal("esc should close the view")
	}
	// Another protocol: the same comparison, in its own fields.
	m.d.rc.Protocol = adapters.AnthropicMessages
	m.d.state = session.NewState()
	m.Update(updatesMsg{gen: m.gen, ups: scriptedSession(t, m.d.scenario, m.d.rc)})
	press(m, "d")
	screen = screenText(m.View())
	for _, want := range []string{"tool_choice.type", `"auto" -> "none"`, "tool_use", "tool_result"} {
		if !strings.Contains(screen, want) {
			t.Errorf("anthropic, turn 3 lacks %q:\n%s", want, screen)
		}
	}
}

// TestEveryRunGetsTheWorkbenchPace: the pace the workbench was opened
// with (--pace) reaches the simulator's setup for every kind of run it
// starts — the walkthrough in step mode, a free run, an edited re-send, a
// fork from a replay, and a run chosen in the options after a replay
// (whose run config, read from the store, carries no pace).
func TestEveryRunGetsTheWorkbenchPace(t *testing.T) {
	const pace = 12
	db, parent, _, _ := recordFixture(t)
	eng := &setupEngine{got: make(chan session.Setup, 1)}
	m := New(Options{Pace: pace, Library: app.Library{DB: db}, Backend: &EngineBackend{Engine: eng}, Getenv: func(string) string { return "" }})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 36})
	// start runs what a command returns until the run reports its setup.
	start := func(what string, cmd tea.Cmd) {
		t.Helper()
		for i := 0; i < 4 && cmd != nil; i++ {
			var next []tea.Cmd
			for _, msg := range run(cmd) {
				switch msg := msg.(type) {
				case scenarioMsg, forkPlannedMsg:
					_, c := m.Update(msg)
					next = append(next, c)
				}
			}
			cmd = tea.Batch(next...)
			if m.d.paused == session.StepAssembled && m.pause != nil && m.pause.reply == nil {
				cmd = press(m, "n") // the walkthrough holds its first request
			}
			select {
			case s := <-eng.got:
				if s.Pace != pace {
					t.Errorf("%s: the simulator's pace is %v, want the workbench's %v", what, s.Pace, float64(pace))
				}
				return
			default:
			}
		}
		t.Fatalf("%s: the run never started", what)
	}
	start("the walkthrough", m.Init())
	rc := m.d.rc
	rc.StepMode = false
	start("a free run", m.do(actRun{rc: rc}))
	start("an edited re-send", m.do(actEditSource{id: "task", text: "帮我核查订单 O-2048 中商品 L1 的 120 元退款申请。"}))
	for _, msg := range run(m.loadReplay(parent)) {
		m.Update(msg)
	}
	settle(m, press(m, "G"))
	press(m, "F")
	if _, ok := m.top().(*forkDialog); !ok {
		t.Fatalf("F opened %T", m.top())
	}
	start("a fork", press(m, "enter"))
	for _, msg := range run(m.loadReplay(parent)) {
		m.Update(msg)
	}
	press(m, "o")
	start("a run from the options after a replay", press(m, "enter"))
}
