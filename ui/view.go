package ui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/lipgloss"

	"github.com/modelwire/modelwire/session"
	"github.com/modelwire/modelwire/themes"
	"github.com/modelwire/modelwire/validate"
)

func nextTheme(name string) string { return themes.Next(name) }

// View renders the screen: header, (replay) timeline, panels or tabs,
// status and help, with the top dialog drawn over the panels.
func (m *Model) View() string {
	if m.quitting {
		return ""
	}
	var rows []string
	rows = append(rows, fit(m.header(), m.w))
	if m.lay.timeline.h > 0 {
		rows = append(rows, m.timeline())
	}
	top := len(rows)
	switch {
	case m.lay.zoom:
		rows = append(rows, m.framePanel(m.focus, m.lay.body))
	case m.lay.tabs:
		rows = append(rows, m.tabBar())
		rows = append(rows, m.framePanel(m.focus, m.lay.body))
	default:
		l := m.lay.panels
		left := lipgloss.JoinVertical(lipgloss.Left, m.framePanel(panelAssembly, l[panelAssembly]), m.framePanel(panelNotes, l[panelNotes]))
		mid := lipgloss.JoinVertical(lipgloss.Left, m.framePanel(panelStream, l[panelStream]), m.framePanel(panelLog, l[panelLog]))
		rows = append(rows, lipgloss.JoinHorizontal(lipgloss.Top, left, mid, m.framePanel(panelValidation, l[panelValidation])))
	}
	if m.teach {
		rows = append(rows, m.teachLines()...)
	}
	rows = append(rows, m.footer()...)
	screen := strings.Join(rows, "\n")
	if d := m.top(); d != nil {
		bodyH := m.lay.body.h + m.lay.tabBar.h
		screen = overlay(screen, d.View(m.w-2, bodyH), m.w, top, bodyH)
	}
	if m.c.ASCII {
		screen = asciiFrame(screen)
	}
	return screen
}

// focusMark marks the focused panel and tab by a glyph as well as by
// colour, so focus reads with NO_COLOR and on a washed-out projector.
const focusMark = "◆ "

// framePanel draws a panel in its rectangle: a title line, then the
// panel's lines cut and padded to the rectangle.
func (m *Model) framePanel(id panelID, r rect) string {
	s := m.c.Styles
	st, ts := s.Panel, s.PanelTitle
	if id == m.focus {
		st, ts = s.PanelFocused, s.PanelTitleFocused
	}
	iw := max(1, r.w-st.GetHorizontalFrameSize())
	ih := max(1, r.h-st.GetVerticalFrameSize())
	lines := make([]string, 0, ih)
	title := m.panelTitle(id)
	if id == m.focus {
		title = focusMark + title
	}
	lines = append(lines, fit(ts.Render(title), iw))
	content := m.panels[id].View()
	blank := strings.Repeat(" ", iw)
	for i := 0; i < ih-1; i++ {
		if i < len(content) {
			lines = append(lines, fit(content[i], iw))
		} else {
			lines = append(lines, blank)
		}
	}
	return st.Render(strings.Join(lines, "\n"))
}

func (m *Model) panelTitle(id panelID) string {
	t := id.String()
	st := m.d.state
	switch id {
	case panelAssembly:
		if m.d.wire {
			t += " · wire request (w: map)"
		} else {
			t += " · " + m.d.rc.Protocol
		}
	case panelStream:
		if cur := st.Current(); cur != nil {
			t += fmt.Sprintf(" · turn %d · %s", cur.N, count(len(cur.Lanes), "lane"))
		}
	case panelLog:
		if st.Current() != nil {
			t += fmt.Sprintf(" · %d raw", len(m.logP.entries()))
		}
	case panelNotes:
		t += " · " + m.panels[panelNotes].(*notesPanel).step()
	case panelValidation:
		if len(st.Layers) > 0 {
			pass, skip := 0, 0
			for _, l := range st.Layers {
				switch l.Status {
				case validate.Pass:
					pass++
				case validate.Skip:
					skip++
				}
			}
			// Layers the session was not judged on (the proxy skips parse
			// and domain) are neither passed nor failed.
			t += fmt.Sprintf(" · %d/%d pass", pass, len(st.Layers)-skip)
			if skip > 0 {
				t += fmt.Sprintf(" · %d skipped", skip)
			}
		}
	}
	return t
}

func (m *Model) tabBar() string {
	s := m.c.Styles
	var parts []string
	for id := panelID(0); id < numPanels; id++ {
		if id == m.focus {
			parts = append(parts, s.TabActive.Render(focusMark+id.String()))
		} else {
			parts = append(parts, s.Tab.Render(id.String()))
		}
	}
	return fit(strings.Join(parts, ""), m.w)
}

// header names what is on screen and what it waits for.
func (m *Model) header() string {
	s := m.c.Styles
	rc := m.d.rc
	var left string
	if m.mode == modeReplay && m.rep != nil {
		left = s.Header.Render("modelwire replay ") + s.HeaderValue.Render(m.rep.Info.ID) + " " +
			s.HeaderKey.Render(m.rep.Info.ScenarioName()+" · "+rc.Protocol+" → "+rc.Provider+" · "+string(m.rep.Info.Status))
	} else {
		mode := "step"
		if !rc.StepMode {
			mode = "free"
		}
		stream := "stream"
		if !rc.Stream {
			stream = "no-stream"
		}
		left = s.Header.Render("modelwire ") + s.HeaderValue.Render(rc.ScenarioName()) + " · " +
			s.HeaderKey.Render(rc.Protocol+" → "+rc.Provider+" · "+stream+" · "+mode)
		if len(rc.Faults) > 0 {
			left += s.Warn.Render(" faults " + strings.Join(rc.Faults, ","))
		}
	}
	right := m.headerState()
	gap := m.w - displayWidth(left) - displayWidth(right) - 1
	if gap < 1 {
		// Narrow: the state (paused where, replay position and speed)
		// matters more than the names, so the names give way.
		return cut(left, max(0, m.w-displayWidth(right)-2)) + "  " + cut(right, m.w-2)
	}
	return left + strings.Repeat(" ", gap) + right
}

func (m *Model) headerState() string {
	s := m.c.Styles
	if m.mode == modeReplay && m.cur != nil {
		play := "⏸"
		if m.playing {
			play = "▶"
		}
		// The turn is the one the panels show, counted from 1 as they
		// count it (before its first entry the replay shows turn 1's
		// request already).
		turn := ""
		if t := m.cur.state.Current(); t != nil {
			turn = fmt.Sprintf(" · turn %d", t.N)
		}
		return s.Accent.Render(fmt.Sprintf("entry %d/%d%s · %s ×%g", m.cur.pos, m.rep.Entries, turn, play, replaySpeeds[m.speed]))
	}
	st := m.d.state
	switch {
	case m.ask != nil:
		keys := "(a/e/r/A)"
		switch {
		case m.whyNotApprove(m.ask.p) != "" && m.ask.p.NoEdit:
			keys = "(r: cannot run as proposed)"
		case m.whyNotApprove(m.ask.p) != "":
			keys = "(e/r: cannot run as proposed)"
		case m.ask.p.NoEdit:
			keys = "(a/r/A)"
		}
		return s.Warn.Render("⏳ decide " + m.ask.p.Name + " " + keys)
	case m.pause != nil:
		next := "n next"
		if m.pause.step == session.StepProposals && m.pause.reply != nil {
			next += " · a/e/r/A decide"
		}
		if m.pause.turn > 0 {
			return s.Accent.Render(fmt.Sprintf("⏸ %s · turn %d · %s", m.pause.step, m.pause.turn, next))
		}
		return s.Accent.Render("⏸ " + m.pause.step + " · " + next)
	case m.running:
		return s.Info.Render("● running")
	case st.Status == session.StatusDone:
		return s.Good.Render("✓ done")
	case st.Status == session.StatusFailed:
		return s.Bad.Render("✗ failed")
	}
	return s.Muted.Render(string(st.Status))
}

// timeline is the replay's position bar with turn boundaries.
func (m *Model) timeline() string {
	s := m.c.Styles
	n := m.rep.Entries
	w := max(4, m.w-2)
	cells := make([]string, w)
	at := func(p int) int {
		if n == 0 {
			return 0
		}
		return min(w-1, p*(w-1)/n)
	}
	pos := at(m.cur.pos)
	// Marks by priority: an error outranks a proposal, which outranks a
	// turn boundary, where they share a cell.
	// Each mark is rendered once: a session has thousands of turns.
	marks := map[int]string{}
	for _, l := range []struct {
		at   []int
		mark string
	}{{m.rep.TurnStarts, s.TimelineDone.Render("┃")}, {m.rep.Proposals, s.Warn.Render("◆")}, {m.rep.Errors, s.Bad.Render("✗")}} {
		for _, p := range l.at {
			marks[at(p)] = l.mark
		}
	}
	for i := range cells {
		switch {
		case i == pos:
			cells[i] = s.TimelineCur.Render("●")
		case marks[i] != "":
			cells[i] = marks[i]
		case i < pos:
			cells[i] = s.TimelineDone.Render("━")
		default:
			cells[i] = s.Timeline.Render("─")
		}
	}
	return " " + strings.Join(cells, "") + " "
}

// footer is the status line and the short help of the active bindings.
func (m *Model) footer() []string {
	s := m.c.Styles
	var status string
	if m.status.text != "" {
		st := s.StatusInfo
		switch m.status.level {
		case levelWarn:
			st = s.StatusWarn
		case levelError:
			st = s.StatusError
		}
		status = st.Render(m.status.text)
	} else if m.d.state.SessionID != "" {
		status = s.Muted.Render("session " + m.d.state.SessionID)
	}
	short, _ := m.bindings()
	return []string{fit(status, m.w), fit(m.help.ShortHelpView(short), m.w)}
}

// bindings computes the active bindings from the state: the top dialog's,
// or the decision keys while a proposal waits, the step key while paused,
// the replay keys in replay, the globals and the focused panel's.
func (m *Model) bindings() (short []key.Binding, groups []helpGroup) {
	km := &m.km
	if d := m.top(); d != nil {
		bs := d.Bindings(km)
		return bs, []helpGroup{{"This dialog", bs}}
	}
	var ctx []key.Binding
	if m.mode == modeLive {
		if m.ask != nil {
			ctx = append(ctx, km.Approval.Approve)
			if !m.ask.p.NoEdit {
				ctx = append(ctx, km.Approval.Edit)
			}
			ctx = append(ctx, km.Approval.Reject, km.Approval.ApproveAll)
		}
		if m.pause != nil {
			ctx = append(ctx, km.Global.Step)
		}
	} else {
		ctx = append(ctx, km.Replay.Forward, km.Replay.Back, km.Replay.NextTurn, km.Replay.PrevTurn,
			km.Replay.Start, km.Replay.End, km.Replay.Play, km.Replay.Faster, km.Replay.Slower)
		if m.opts.Backend != nil && m.opts.Library != nil {
			ctx = append(ctx, km.Replay.Fork)
		}
		if m.opts.Replay == "" {
			ctx = append(ctx, km.Global.Live)
		}
	}
	glob := []key.Binding{km.Global.NextPanel, km.Global.PrevPanel, km.Global.Zoom, km.Global.Inspect, km.Global.Values, km.Global.Teach,
		km.Global.Wire, km.Global.Changes, km.Global.Compare}
	if m.opts.Library != nil {
		glob = append(glob, km.Global.Sessions)
	}
	if m.opts.Backend != nil {
		glob = append(glob, km.Global.Options)
	}
	glob = append(glob, km.Global.Theme, km.Global.Help, km.Global.Quit)
	nav := []key.Binding{km.Nav.Up, km.Nav.Down, km.Nav.PageUp, km.Nav.PageDown, km.Nav.Top, km.Nav.Bottom}
	if m.focus == panelAssembly && m.mode == modeLive && !m.d.wire {
		nav = append(nav, km.Nav.Select)
	}
	short = append([]key.Binding{}, ctx...)
	if m.ask == nil && hasValues(m.d.state) {
		// The values cut short in the panels are one key away.
		short = append(short, km.Global.Values)
	}
	short = append(short, km.Global.NextPanel, km.Global.Help, km.Global.Quit)
	title := "Session"
	if m.mode == modeReplay {
		title = "Replay"
	}
	groups = []helpGroup{{title, ctx}, {"Everywhere", glob}, {m.focus.String() + " panel", nav}}
	return short, groups
}

func (m *Model) helpGroups() []helpGroup {
	_, g := m.bindings()
	return g
}
