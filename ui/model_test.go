package ui

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"

	"github.com/modelwire/modelwire/jsonschema"
	"github.com/modelwire/modelwire/session"
)

func TestMain(m *testing.M) {
	// Goldens and screen assertions are plain text.
	lipgloss.SetColorProfile(termenv.Ascii)
	os.Exit(m.Run())
}

// newLive builds a model whose run has started (its scenario loaded, n
// pressed at the held first request) but whose backend goroutine never
// runs: the test feeds the messages.
func newLive(t testing.TB, w, h int) *Model {
	t.Helper()
	m := newHeld(t, w, h)
	press(m, "n") // the command would start the backend: not run
	if !m.running {
		t.Fatal("n at the held request should start the run")
	}
	return m
}

// newHeld builds a walkthrough model with its scenario loaded, waiting at
// the first assembled request: nothing sent, nothing stored.
func newHeld(t testing.TB, w, h int) *Model {
	t.Helper()
	m := New(Options{Backend: &fakeBackend{}, Getenv: func(string) string { return "" }})
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	cmd := m.Init()
	msg := cmd()
	sm, ok := msg.(scenarioMsg)
	if !ok {
		t.Fatalf("Init gave %T, want scenarioMsg", msg)
	}
	m.Update(sm)
	if m.d.scenario == nil || m.d.preview == nil {
		t.Fatal("the scenario and the preview should be set")
	}
	return m
}

func key1(s string) tea.KeyMsg {
	switch s {
	case "enter":
		return tea.KeyMsg{Type: tea.KeyEnter}
	case "esc":
		return tea.KeyMsg{Type: tea.KeyEsc}
	case "tab":
		return tea.KeyMsg{Type: tea.KeyTab}
	case "ctrl+s":
		return tea.KeyMsg{Type: tea.KeyCtrlS}
	case "right":
		return tea.KeyMsg{Type: tea.KeyRight}
	case "left":
		return tea.KeyMsg{Type: tea.KeyLeft}
	case "space":
		return tea.KeyMsg{Type: tea.KeySpace, Runes: []rune{' '}}
	case "backspace":
		return tea.KeyMsg{Type: tea.KeyBackspace}
	case "down":
		return tea.KeyMsg{Type: tea.KeyDown}
	case "up":
		return tea.KeyMsg{Type: tea.KeyUp}
	case "shift+tab":
		return tea.KeyMsg{Type: tea.KeyShiftTab}
	case "home":
		return tea.KeyMsg{Type: tea.KeyHome}
	case "end":
		return tea.KeyMsg{Type: tea.KeyEnd}
	case "pgdown":
		return tea.KeyMsg{Type: tea.KeyPgDown}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s)}
}

func press(m *Model, keys ...string) tea.Cmd {
	var cmds []tea.Cmd
	for _, k := range keys {
		_, cmd := m.Update(key1(k))
		cmds = append(cmds, cmd)
	}
	return tea.Batch(cmds...)
}

// stillRunning stands for a command that had not returned after a second
// (a status timeout, a playback tick, or I/O that hangs): run does not
// wait it out, but it is not dropped either, so a test that expects a key
// to do nothing fails on it.
type stillRunning struct{}

func (stillRunning) String() string { return "a command still running after a second" }

// run executes a command and any batch inside it, returning the messages;
// a command that does not return within a second (I/O on a loaded CI
// machine can take a few hundred ms) is a stillRunning.
func run(cmd tea.Cmd) []tea.Msg {
	if cmd == nil {
		return nil
	}
	ch := make(chan tea.Msg, 1)
	go func() { ch <- cmd() }()
	var msg tea.Msg
	select {
	case msg = <-ch:
	case <-time.After(time.Second):
		return []tea.Msg{stillRunning{}}
	}
	if b, ok := msg.(tea.BatchMsg); ok {
		var out []tea.Msg
		for _, c := range b {
			out = append(out, run(c)...)
		}
		return out
	}
	if msg == nil {
		return nil
	}
	return []tea.Msg{msg}
}

// runUntil runs a command and everything in its batches at once and
// returns the messages that came before one that want accepts (included),
// or before timeout: for a command whose I/O may take longer than run's
// second on a loaded machine, beside a status timeout in the same batch.
func runUntil(cmd tea.Cmd, want func(tea.Msg) bool, timeout time.Duration) []tea.Msg {
	ch := make(chan tea.Msg, 64)
	var start func(c tea.Cmd)
	start = func(c tea.Cmd) {
		if c == nil {
			return
		}
		go func() {
			msg := c()
			if b, ok := msg.(tea.BatchMsg); ok {
				for _, c := range b {
					start(c)
				}
				return
			}
			if msg != nil {
				select {
				case ch <- msg:
				default: // nobody is reading any more
				}
			}
		}()
	}
	start(cmd)
	deadline := time.After(timeout)
	var out []tea.Msg
	for {
		select {
		case msg := <-ch:
			out = append(out, msg)
			if want(msg) {
				return out
			}
		case <-deadline:
			return out
		}
	}
}

func TestUpdatesFoldIntoState(t *testing.T) {
	m := newLive(t, 120, 40)
	sc := m.d.scenario
	ups := scriptedSession(t, sc, m.d.rc)
	m.Update(updatesMsg{gen: m.gen, ups: ups})
	st := m.d.state
	if len(st.Turns) != 3 {
		t.Fatalf("turns = %d, want 3", len(st.Turns))
	}
	if n := len(st.Turns[1].Lanes); n != 2 {
		t.Errorf("turn 2 lanes = %d, want 2 (the two parallel calls)", n)
	}
	for _, l := range st.Turns[1].Lanes {
		if l.Kind == "tool_call" && l.State != "parsed" {
			t.Errorf("lane %s state %s, want parsed", l.ItemID, l.State)
		}
	}
	if len(st.Layers) != 5 || st.Status != "done" {
		t.Fatalf("layers %d status %s", len(st.Layers), st.Status)
	}
	contains(t, m.View(), "needs_review", "13000", "5/5 pass", "✓ transport", "✓ domain")
}

func TestStaleGenerationIsDropped(t *testing.T) {
	m := newLive(t, 120, 40)
	ups := scriptedSession(t, m.d.scenario, m.d.rc)
	m.Update(updatesMsg{gen: m.gen - 1, ups: ups})
	if m.d.state.Applied != 0 {
		t.Fatalf("a stale batch was folded: %d updates", m.d.state.Applied)
	}
	reply := make(chan session.Decision, 1)
	m.Update(askMsg{gen: m.gen + 5, p: session.Proposal{CallID: "c"}, reply: reply})
	if m.ask != nil || m.top() != nil {
		t.Fatal("a stale ask opened a dialog")
	}
}

// The walkthrough opens at the assembled request without running
// anything; n starts the session, whose own pause at that request is
// passed (the person has seen it), and n moves each later pause on.
func TestPauseAndNext(t *testing.T) {
	m := newHeld(t, 120, 40)
	contains(t, m.View(), "⏸ assembled", "The request is")
	if m.running || m.cancel != nil {
		t.Fatal("the walkthrough started a session before n")
	}
	if cmd := press(m, "n"); cmd == nil || !m.running {
		t.Fatal("n did not start the session")
	}
	first := make(chan struct{}, 1)
	_, cmd := m.Update(pauseMsg{gen: m.gen, step: session.StepAssembled, turn: 1, reply: first})
	run(cmd)
	select {
	case <-first:
	default:
		t.Fatal("the engine's pause at the request already seen waits for a second n")
	}
	reply := make(chan struct{}, 1)
	m.Update(pauseMsg{gen: m.gen, step: session.StepSent, turn: 1, reply: reply})
	contains(t, m.View(), "⏸ sent")
	run(press(m, "n"))
	select {
	case <-reply:
	default:
		t.Fatal("n did not move the walkthrough on")
	}
	if m.pause != nil {
		t.Fatal("the pause is still set")
	}
	// n with nothing paused does nothing.
	if cmd := press(m, "n"); run(cmd) != nil {
		t.Fatal("n without a pause did something")
	}
}

// ask asks as the engine does: the proposal's update first (the
// walkthrough is then at the proposals step), then the question.
func ask(m *Model, p session.Proposal) chan session.Decision {
	m.Update(updatesMsg{gen: m.gen, ups: []session.Update{{Kind: session.UpProposal, Turn: max(p.Turn, 1), Proposal: &p}}})
	reply := make(chan session.Decision, 1)
	m.Update(askMsg{gen: m.gen, p: p, reply: reply})
	return reply
}

func refundProposal() session.Proposal {
	return session.Proposal{Turn: 1, Of: 1, CallID: "call_1", Name: "get_order_line", Arguments: []byte(`{"order_id":"O-2048","line_id":"L1"}`), Known: true}
}

func got(t *testing.T, reply chan session.Decision) session.Decision {
	t.Helper()
	select {
	case d := <-reply:
		return d
	default:
		t.Fatal("no decision was sent")
	}
	return session.Decision{}
}

func TestApproveOpensDialogAndAnswers(t *testing.T) {
	m := newLive(t, 120, 40)
	reply := ask(m, refundProposal())
	if d, ok := m.top().(*approvalDialog); !ok || d.p.CallID != "call_1" {
		t.Fatalf("top dialog %T, want the approval dialog", m.top())
	}
	contains(t, m.View(), "Tool proposal 1 of 1", "get_order_line", "call_1", "arguments pass the tool's schema")
	run(press(m, "a"))
	if d := got(t, reply); d.Kind != session.Approved {
		t.Fatalf("decision %+v", d)
	}
	if m.top() != nil || m.ask != nil {
		t.Fatal("the dialog should close after a decision")
	}
}

// At the proposals pause the notes offer a/e/r/A: each steps the
// walkthrough on and answers the first proposal when it is asked (they
// used to do nothing until n had been pressed).
func TestDecisionKeyAtTheProposalsPause(t *testing.T) {
	for _, c := range []struct {
		key  string
		want func(*Model, chan session.Decision) string
	}{
		{"a", func(m *Model, reply chan session.Decision) string {
			if d := got(t, reply); d.Kind != session.Approved || m.top() != nil {
				return fmt.Sprintf("decision %+v, dialog %T", d, m.top())
			}
			return ""
		}},
		{"A", func(m *Model, reply chan session.Decision) string {
			if d := got(t, reply); d.Kind != session.Approved || !m.approveAll {
				return fmt.Sprintf("decision %+v, approve all %v", d, m.approveAll)
			}
			return ""
		}},
		{"e", func(m *Model, reply chan session.Decision) string {
			if d, ok := m.top().(*approvalDialog); !ok || d.mode != approvalEdit || len(reply) > 0 {
				return fmt.Sprintf("dialog %T, want the approval dialog editing, nothing decided", m.top())
			}
			return ""
		}},
		{"r", func(m *Model, reply chan session.Decision) string {
			if d, ok := m.top().(*approvalDialog); !ok || d.mode != approvalReject || len(reply) > 0 {
				return fmt.Sprintf("dialog %T, want the approval dialog asking for a reason", m.top())
			}
			return ""
		}},
	} {
		m := newLive(t, 120, 40)
		p := refundProposal()
		m.Update(updatesMsg{gen: m.gen, ups: []session.Update{{Kind: session.UpProposal, Turn: 1, Proposal: &p}}})
		pause := make(chan struct{}, 1)
		m.Update(pauseMsg{gen: m.gen, step: session.StepProposals, turn: 1, reply: pause})
		contains(t, m.View(), "⏸ proposals · turn 1 · n next · a/e/r/A decide")
		run(press(m, c.key))
		select {
		case <-pause:
		default:
			t.Fatalf("%s at the proposals pause did not step on", c.key)
		}
		reply := make(chan session.Decision, 1)
		_, cmd := m.Update(askMsg{gen: m.gen, p: p, reply: reply})
		run(cmd)
		if msg := c.want(m, reply); msg != "" {
			t.Errorf("%s at the proposals pause: %s", c.key, msg)
		}
	}
}

func TestEditCannotConfirmWhileInvalid(t *testing.T) {
	m := newLive(t, 120, 40)
	reply := ask(m, refundProposal())
	press(m, "e")
	d := m.top().(*approvalDialog)
	if d.mode != approvalEdit {
		t.Fatal("e should open the editor")
	}
	d.ta.SetValue(`{"order_id":"O-2048"}`) // no line_id: fails the schema
	d.check()
	contains(t, m.View(), "✗", "diff against the model's proposal", `-   "line_id": "L1"`)
	run(press(m, "ctrl+s"))
	select {
	case dd := <-reply:
		t.Fatalf("an invalid edit was confirmed: %+v", dd)
	default:
	}
	if !strings.Contains(m.status.text, "cannot confirm") {
		t.Fatalf("status %q", m.status.text)
	}
	// Typing fixes it: backspace the closing brace and retype it, then a
	// valid value.
	d.ta.SetValue(`{"order_id":"O-2049","line_id":"L1"`)
	press(m, "}")
	if d.editErr != "" {
		t.Fatalf("valid edit judged invalid: %s", d.editErr)
	}
	run(press(m, "ctrl+s"))
	dec := got(t, reply)
	if dec.Kind != session.Edited || !strings.Contains(string(dec.Arguments), "O-2049") {
		t.Fatalf("decision %+v", dec)
	}
}

func TestRejectAsksReason(t *testing.T) {
	m := newLive(t, 120, 40)
	reply := ask(m, refundProposal())
	press(m, "r", "n", "o", "space", "n", "e", "e", "d")
	run(press(m, "enter"))
	d := got(t, reply)
	if d.Kind != session.Rejected || d.Reason != "no need" {
		t.Fatalf("decision %+v", d)
	}
}

func TestApproveAllAnswersLaterCalls(t *testing.T) {
	m := newLive(t, 120, 40)
	reply := ask(m, refundProposal())
	run(press(m, "A"))
	if got(t, reply).Kind != session.Approved {
		t.Fatal("A should approve")
	}
	p := refundProposal()
	p.CallID = "call_2"
	reply = make(chan session.Decision, 1)
	_, cmd := m.Update(askMsg{gen: m.gen, p: p, reply: reply})
	run(cmd)
	if got(t, reply).Kind != session.Approved || m.top() != nil {
		t.Fatal("approve all should answer a valid proposal without a dialog")
	}
	// An invalid one still asks.
	p.CallID, p.Violations = "call_3", []jsonschema.Violation{{Pointer: "/order_id", Message: "bad"}}
	ask(m, p)
	if _, ok := m.top().(*approvalDialog); !ok {
		t.Fatal("an invalid proposal must still ask")
	}
	select {
	case d := <-reply:
		t.Fatalf("an invalid proposal was answered without the person: %+v", d)
	default:
	}
	contains(t, m.View(), "fail the tool's schema")
}

func TestEscHidesDialogAndKeysStillDecide(t *testing.T) {
	m := newLive(t, 120, 40)
	reply := ask(m, refundProposal())
	press(m, "esc")
	if m.top() != nil {
		t.Fatal("esc should put the dialog away")
	}
	contains(t, m.View(), "decide get_order_line")
	run(press(m, "a"))
	if got(t, reply).Kind != session.Approved {
		t.Fatal("a on the main screen should approve the waiting call")
	}
}

func TestQuitAsksWhileRunning(t *testing.T) {
	m := newLive(t, 120, 40)
	if !m.running {
		t.Fatal("the run should be running")
	}
	if cmd := press(m, "q"); cmd != nil {
		if msgs := run(cmd); len(msgs) > 0 {
			t.Fatalf("q quit at once: %v", msgs)
		}
	}
	if _, ok := m.top().(*confirmDialog); !ok {
		t.Fatal("q should ask while a session runs")
	}
	press(m, "n") // no
	if m.top() != nil || m.quitting {
		t.Fatal("n should cancel the question")
	}
	press(m, "q")
	msgs := run(press(m, "y"))
	if len(msgs) != 1 {
		t.Fatalf("y gave %v", msgs)
	}
	if _, ok := msgs[0].(tea.QuitMsg); !ok {
		t.Fatalf("y gave %T, want tea.QuitMsg", msgs[0])
	}
	// Held at the first request, nothing runs: q quits at once.
	held := newHeld(t, 120, 40)
	if msgs := run(press(held, "q")); len(msgs) != 1 {
		t.Fatalf("q before the start gave %v", msgs)
	}
	// Once ended, q quits without asking.
	m2 := newLive(t, 120, 40)
	m2.Update(runEndedMsg{gen: m2.gen})
	msgs = run(press(m2, "q"))
	if len(msgs) != 1 {
		t.Fatalf("q after the end gave %v", msgs)
	}
}

func TestKeysThatDoNothingDoNothing(t *testing.T) {
	m := newLive(t, 120, 40)
	before := m.View()
	for _, k := range []string{"a", "e", "r", "A", "ctrl+s", "esc", "right", "left", "]", "[", "g", "G", "space", "l", "h", "x"} {
		if msgs := run(press(m, k)); len(msgs) != 0 {
			t.Errorf("%s did something: %v", k, msgs)
		}
	}
	if m.View() != before {
		t.Error("the screen changed")
	}
}

func TestHelpFollowsState(t *testing.T) {
	m := newLive(t, 120, 40)
	helpHas := func(k string) bool {
		for _, g := range m.helpGroups() {
			for _, b := range g.keys {
				if b.Help().Key == k {
					return true
				}
			}
		}
		return false
	}
	if helpHas("a") || helpHas("n") {
		t.Fatal("decision and step keys shown with nothing to decide")
	}
	m.Update(pauseMsg{gen: m.gen, step: "sent", turn: 1, reply: make(chan struct{}, 1)})
	if !helpHas("n") {
		t.Fatal("n not shown while paused")
	}
	ask(m, refundProposal())
	press(m, "esc")
	if !helpHas("a") || !helpHas("A") {
		t.Fatal("decision keys not shown while a proposal waits")
	}
	press(m, "?")
	contains(t, m.View(), "Keys active now", "approve all", "next step")
}

func TestThemeCycles(t *testing.T) {
	m := newLive(t, 120, 40)
	for _, want := range []string{"light", "contrast", "dark"} {
		press(m, "t")
		if m.c.Theme != want {
			t.Fatalf("theme %s, want %s", m.c.Theme, want)
		}
	}
}

func TestTabsAt80x24(t *testing.T) {
	m := newLive(t, 80, 24)
	m.Update(updatesMsg{gen: m.gen, ups: scriptedSession(t, m.d.scenario, m.d.rc)})
	if !m.lay.tabs {
		t.Fatal("80×24 should use tabs")
	}
	start := m.focus
	for i := 0; i < int(numPanels); i++ {
		checkFrame(t, m.View(), 80, 24)
		press(m, "tab")
	}
	if m.focus != start {
		t.Fatalf("tab cycled to %v", m.focus)
	}
	press(m, "w")
	if m.focus != panelAssembly || !m.d.wire {
		t.Fatal("w should show the wire request")
	}
	contains(t, m.View(), `"model"`, "[redacted]")
}

// checkFrame asserts a screen is exactly w×h cells: every line the same
// display width, so borders line up (CJK included).
func checkFrame(t *testing.T, screen string, w, h int) {
	t.Helper()
	lines := strings.Split(screen, "\n")
	if len(lines) != h {
		t.Fatalf("%d lines, want %d", len(lines), h)
	}
	for i, l := range lines {
		if got := ansi.StringWidth(l); got != w {
			t.Fatalf("line %d is %d cells, want %d: %q", i, got, w, ansi.Strip(l))
		}
	}
}

func TestFramesAlignAtSizes(t *testing.T) {
	for _, sz := range [][2]int{{80, 24}, {100, 30}, {120, 40}, {200, 60}} {
		m := newLive(t, sz[0], sz[1])
		ups := scriptedSession(t, m.d.scenario, m.d.rc)
		// Mid-stream (CJK reasoning streaming) and at the end.
		m.Update(updatesMsg{gen: m.gen, ups: ups[:12]})
		checkFrame(t, m.View(), sz[0], sz[1])
		m.Update(updatesMsg{gen: m.gen, ups: ups[12:]})
		checkFrame(t, m.View(), sz[0], sz[1])
		ask(m, refundProposal())
		checkFrame(t, m.View(), sz[0], sz[1])
	}
}

func TestEventLogSelectionHighlightsLane(t *testing.T) {
	m := newLive(t, 120, 40)
	m.Update(updatesMsg{gen: m.gen, ups: scriptedSession(t, m.d.scenario, m.d.rc)})
	m.setFocus(panelLog)
	press(m, "k", "k", "k")
	if m.d.laneHL == "" {
		t.Fatal("moving in the log should select a lane")
	}
	contains(t, m.View(), "◆")
}

func TestOptionsStartNewRun(t *testing.T) {
	m := newLive(t, 120, 40)
	old := m.gen
	press(m, "o")
	d, ok := m.top().(*optionsDialog)
	if !ok {
		t.Fatal("o should open the options")
	}
	press(m, "j", "l") // variant → first variant
	press(m, "j", "l") // protocol → next
	if d.rc.Variant == "" || d.rc.Protocol == "openai-responses" {
		t.Fatalf("options did not change: %+v", d.rc)
	}
	msgs := run(press(m, "enter"))
	if m.gen == old || m.top() != nil {
		t.Fatal("enter should start a new run")
	}
	if len(msgs) != 1 {
		t.Fatalf("enter gave %v", msgs)
	}
	sm := msgs[0].(scenarioMsg)
	if sm.err != nil || sm.sc.Variant == "" {
		t.Fatalf("scenario %+v", sm)
	}
	// Only providers with a key are offered.
	if got := availableProviders(func(k string) string {
		if k == "ANTHROPIC_API_KEY" {
			return "x"
		}
		return ""
	}); strings.Join(got, ",") != "sim,anthropic" {
		t.Fatalf("providers %v", got)
	}
}

func TestCompareMarksDifferences(t *testing.T) {
	m := newLive(t, 160, 50)
	press(m, "c")
	if _, ok := m.top().(*compareDialog); !ok {
		t.Fatal("c should open compare")
	}
	v := screenText(m.View())
	for _, p := range []string{"openai-responses", "openai-chat", "anthropic-messages", "gemini", "deepseek-chat"} {
		if !strings.Contains(v, p) {
			t.Errorf("compare lacks %s", p)
		}
	}
	contains(t, m.View(), "system-rules", "≠", "tool result", "+   \"input\"", "top-level field only some protocols have")
	press(m, "right")
	contains(t, m.View(), "/v1/chat/completions")
}

func TestSourceEditRestarts(t *testing.T) {
	m := newLive(t, 120, 40)
	m.setFocus(panelAssembly)
	msgs := run(press(m, "enter"))
	if len(msgs) != 1 {
		t.Fatalf("enter gave %v", msgs)
	}
	m.Update(msgs[0])
	if _, ok := m.top().(*sourceDialog); !ok {
		t.Fatalf("top %T, want the source editor", m.top())
	}
	press(m, "!")
	old := m.gen
	msgs = run(press(m, "ctrl+s"))
	if m.gen == old {
		t.Fatal("confirming an edit should restart the session")
	}
	var sm scenarioMsg
	for _, x := range msgs {
		if s, ok := x.(scenarioMsg); ok {
			sm = s
		}
	}
	if sm.sc == nil || !strings.HasSuffix(sm.sc.Sources[0].Text, "!") {
		t.Fatal("the new run should carry the edited source")
	}
}

// The stream panel waits for the first event only until one arrives: a
// response.created (which opens no lane) ends the wait, as the event log
// beside it shows that event.
func TestStreamWaitsOnlyForTheFirstEvent(t *testing.T) {
	m := newLive(t, 120, 36)
	ups := scriptedSession(t, m.d.scenario, m.d.rc)
	at := -1 // the first event's update
	for i, u := range ups {
		if u.Kind == session.UpStep {
			at = i
			break
		}
	}
	if at < 0 || ups[at].Step.Raw.Event != "response.created" {
		t.Fatalf("the fixture's first event is not response.created")
	}
	m.Update(updatesMsg{gen: m.gen, ups: ups[:at]})
	contains(t, m.framePanel(panelStream, m.lay.panels[panelStream]), "waiting for the first event…")
	m.Update(updatesMsg{gen: m.gen, ups: ups[at : at+1]})
	stream, log := screenText(m.framePanel(panelStream, m.lay.panels[panelStream])), screenText(m.framePanel(panelLog, m.lay.panels[panelLog]))
	if !strings.Contains(log, "Events · 1 raw") || !strings.Contains(log, "1 response.s") {
		t.Fatalf("the event log does not show the event:\n%s", log)
	}
	if strings.Contains(stream, "waiting for the first event") {
		t.Errorf("the stream panel still waits for the first event the log shows:\n%s\n%s", stream, log)
	}
	contains(t, stream, "no output item yet")
}
