package ui

import (
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/session"
)

// Update folds messages into the model. It does no I/O: everything slow
// is a command, and every asynchronous result is checked against the
// generation it belongs to.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	defer m.syncTeach()
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.resize(msg.Width, msg.Height)
		return m, nil
	case tea.KeyMsg:
		if msg.Type == tea.KeyRunes && len(msg.Runes) > 1 && !msg.Paste {
			// Keys typed faster than the terminal is read arrive as one
			// message ("En"); each is a key of its own.
			var cmds []tea.Cmd
			for _, r := range msg.Runes {
				cmds = append(cmds, m.handleKey(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}, Alt: msg.Alt}))
			}
			return m, tea.Batch(cmds...)
		}
		return m, m.handleKey(msg)
	case scenarioMsg:
		return m, m.onScenario(msg)
	case updatesMsg:
		return m, m.applyUpdates(msg)
	case askMsg:
		return m, m.onAsk(msg)
	case pauseMsg:
		if msg.gen != m.gen {
			return m, nil
		}
		if m.passAssembled && msg.step == session.StepAssembled && msg.turn == 1 {
			m.passAssembled = false
			return m, resume(msg.reply)
		}
		m.pause = &msg
		m.d.paused = msg.step
		m.followStep(msg.step)
		return m, nil
	case runEndedMsg:
		return m, m.onRunEnded(msg)
	case statusMsg:
		return m, m.setStatus(msg.level, msg.text)
	case clearStatusMsg:
		if msg.id == m.status.id {
			m.status.text = ""
		}
		return m, nil
	case editSourceMsg:
		return m, m.openSourceEditor(msg.id)
	case sessionsMsg:
		if msg.gen == m.listGen {
			for _, d := range m.dialogs {
				if sd, ok := d.(*sessionsDialog); ok {
					sd.setList(msg.list, msg.err)
				}
			}
		}
		return m, nil
	case replayMsg:
		return m, m.onReplay(msg)
	case marksMsg:
		if msg.gen == m.repGen && m.rep != nil {
			if msg.err != nil {
				return m, m.setStatus(levelWarn, "scrubber marks: "+msg.err.Error())
			}
			m.rep.Proposals, m.rep.Errors = msg.proposals, msg.errors
		}
		return m, nil
	case playTickMsg:
		return m, m.onTick(msg)
	case seekMsg:
		return m, m.onSeek(msg)
	case diffMsg:
		return m, m.onDiff(msg)
	case matrixMsg:
		return m, m.onMatrix(msg)
	case statsMsg:
		return m, m.onStats(msg)
	case forkFileMsg:
		return m, m.forkFile(msg)
	case forkEditedMsg:
		return m, m.forkEdited(msg)
	case forkPlannedMsg:
		return m, m.forkPlanned(msg)
	case deletedMsg:
		if msg.err != nil {
			return m, m.setStatus(levelError, "delete "+msg.id+": "+msg.err.Error())
		}
		return m, tea.Batch(m.setStatus(levelInfo, "deleted session "+msg.id), m.loadSessions())
	case exportedMsg:
		if msg.err != nil {
			return m, m.setStatus(levelError, "export "+msg.id+": "+msg.err.Error())
		}
		return m, m.setStatus(levelInfo, "exported "+msg.id+" to "+msg.path)
	}
	if d := m.top(); d != nil {
		return m, d.Update(msg)
	}
	return m, nil
}

// typing reports whether the top dialog is taking text (so letters are
// text, not commands).
func (m *Model) typing() bool {
	switch d := m.top().(type) {
	case *approvalDialog:
		return d.mode != approvalView
	case *sessionsDialog:
		return d.editing
	case *sourceDialog:
		return true
	}
	return false
}

func (m *Model) handleKey(msg tea.KeyMsg) tea.Cmd {
	km := &m.km
	if key.Matches(msg, km.Global.ForceQuit) {
		return m.quit()
	}
	if d := m.top(); d != nil {
		if key.Matches(msg, km.Global.Help) && !m.typing() && d.Kind() != dlgHelp {
			m.openHelp()
			return nil
		}
		act, cmd := d.HandleKey(msg, km)
		return tea.Batch(cmd, m.do(act))
	}
	switch {
	case key.Matches(msg, km.Global.Quit):
		if m.running {
			msg := "A session is running. Quit and stop it? (it stays in the store as interrupted)"
			if _, rec := m.opts.Backend.(*Recording); rec {
				msg = "The proxy is recording. Quit and stop it? (every exchange so far is stored)"
			}
			m.dialogs = append(m.dialogs, &confirmDialog{c: m.c, title: "Quit?", msg: msg, yes: actQuit{}})
			return nil
		}
		return m.quit()
	case key.Matches(msg, km.Global.Help):
		m.openHelp()
		return nil
	case key.Matches(msg, km.Global.NextPanel):
		m.setFocus((m.focus + 1) % numPanels)
		return nil
	case key.Matches(msg, km.Global.PrevPanel):
		m.setFocus((m.focus + numPanels - 1) % numPanels)
		return nil
	case key.Matches(msg, km.Global.Inspect):
		it, ok := m.inspectFocused()
		if !ok {
			return m.setStatus(levelInfo, "nothing to inspect in "+m.focus.String()+" yet")
		}
		m.dialogs = append(m.dialogs, newInspector(m.c, &m.km, it))
		return nil
	case key.Matches(msg, km.Global.Values):
		if !hasValues(m.d.state) {
			return m.setStatus(levelInfo, "no tool call and no answer yet")
		}
		m.dialogs = append(m.dialogs, newValuesDialog(m.c, &m.km, m.d, m.focus, m.w-2))
		return nil
	case key.Matches(msg, km.Global.Teach):
		m.teach = !m.teach
		m.resize(m.w, m.h)
		return nil
	case key.Matches(msg, km.Global.Zoom):
		m.zoom = !m.zoom
		m.resize(m.w, m.h)
		return nil
	case key.Matches(msg, km.Global.Theme):
		m.c.setTheme(nextTheme(m.c.Theme))
		m.applyHelpStyles()
		m.resize(m.w, m.h)
		return m.setStatus(levelInfo, "theme "+m.c.Theme)
	case key.Matches(msg, km.Global.Wire):
		m.d.wire = !m.d.wire
		if m.d.wire {
			m.setFocus(panelAssembly)
		}
		return nil
	case key.Matches(msg, km.Global.Changes):
		turn := 0
		if t := m.d.turn(); t != nil {
			turn = t.N
		}
		m.dialogs = append(m.dialogs, newChangesDialog(m.c, &m.km, m.d.state, turn))
		return nil
	case key.Matches(msg, km.Global.Compare):
		if m.d.scenario == nil {
			return m.setStatus(levelWarn, "compare needs the scenario (not known for this session)")
		}
		m.dialogs = append(m.dialogs, newCompareDialog(m.c, m.d.scenario, m.d.rc))
		return nil
	case key.Matches(msg, km.Global.Sessions):
		if m.opts.Library == nil {
			return m.setStatus(levelWarn, "no session store is open")
		}
		d := newSessionsDialog(m.c, &m.km)
		d.search = m.opts.Library.Search
		m.dialogs = append(m.dialogs, d)
		return m.loadSessions()
	case key.Matches(msg, km.Global.Options):
		if m.opts.Backend == nil {
			return m.setStatus(levelWarn, "live sessions are not available here")
		}
		m.dialogs = append(m.dialogs, newOptionsDialog(m.c, m.opts.Catalog, m.d.rc, m.opts.Getenv))
		return nil
	}
	if m.mode == modeLive {
		if cmd, ok := m.liveKey(msg); ok {
			return cmd
		}
	} else if cmd, ok := m.replayKey(msg); ok {
		return cmd
	}
	_, cmd := m.panels[m.focus].HandleKey(msg, km)
	return cmd
}

// stepOn moves the paused walkthrough on.
func (m *Model) stepOn() tea.Cmd {
	reply := m.pause.reply
	m.pause, m.d.paused = nil, ""
	if reply == nil {
		// Held before the start: now the session begins.
		m.passAssembled = true
		return m.launch()
	}
	return resume(reply)
}

// liveKey handles the keys of a live session: next step and the
// decisions (which reopen the dialog when it was put away).
func (m *Model) liveKey(msg tea.KeyMsg) (tea.Cmd, bool) {
	km := &m.km
	switch {
	case key.Matches(msg, km.Global.Step):
		if m.pause == nil {
			return nil, true
		}
		return m.stepOn(), true
	case m.ask == nil && m.pause != nil && m.pause.step == session.StepProposals && m.pause.reply != nil &&
		(key.Matches(msg, km.Approval.Approve) || key.Matches(msg, km.Approval.ApproveAll) ||
			key.Matches(msg, km.Approval.Edit) || key.Matches(msg, km.Approval.Reject)):
		m.decideOnAsk = &msg
		return m.stepOn(), true
	case key.Matches(msg, km.Approval.Approve):
		if m.ask == nil {
			return nil, false
		}
		return m.do(actDecide{d: session.Decision{Kind: session.Approved}}), true
	case key.Matches(msg, km.Approval.ApproveAll):
		if m.ask == nil {
			return nil, false
		}
		return m.do(actDecide{d: session.Decision{Kind: session.Approved}, all: true}), true
	case key.Matches(msg, km.Approval.Edit), key.Matches(msg, km.Approval.Reject):
		if m.ask == nil {
			return nil, false
		}
		d := newApprovalDialog(m.c, m.d.scenario, m.ask.p)
		m.dialogs = append(m.dialogs, d)
		act, cmd := d.HandleKey(msg, km)
		return tea.Batch(cmd, m.do(act)), true
	}
	return nil, false
}

// whyNotApprove says why the waiting proposal cannot be approved as it
// stands ("" when it can). Approving means running the call on exactly
// these arguments, so they must have closed and parsed (the screen shows
// the call's lane parsed), name a tool the scenario has and pass its
// schema; in the walkthrough, the session must be at the proposals step,
// the state in which the call is closed. Edit and reject stay open.
func (m *Model) whyNotApprove(p session.Proposal) string {
	switch {
	case !p.Known:
		return "there is no tool " + p.Name
	case len(p.Violations) > 0:
		return "its arguments fail the tool's schema"
	}
	if l := m.laneOf(p.CallID); l != nil && l.State != adapters.ItemParsed {
		if l.State == adapters.ItemStreaming || l.State == adapters.ItemIncomplete {
			return "its arguments have not closed"
		}
		return "its arguments are not a JSON object"
	}
	if m.d.rc.StepMode && m.d.state.Step != session.StepProposals {
		return "the walkthrough is not at the proposals step"
	}
	return ""
}

// laneOf finds the tool call lane of a call_id, latest turn first (a
// recording numbers its turns apart from the proxy's).
func (m *Model) laneOf(callID string) *session.Lane {
	ts := m.d.state.Turns
	for i := len(ts) - 1; i >= 0; i-- {
		for _, l := range ts[i].Lanes {
			if l.Kind == adapters.KindToolCall && l.CallID == callID {
				return l
			}
		}
	}
	return nil
}

// do carries out a dialog's action.
func (m *Model) do(act action) tea.Cmd {
	switch a := act.(type) {
	case nil:
		return nil
	case actCopy:
		clip, what := m.opts.Clipboard, a.what
		if clip == nil {
			clip = copyToClipboard
		}
		text := a.text
		return func() tea.Msg {
			if err := clip(text); err != nil {
				return statusMsg{level: levelError, text: "copy: " + err.Error()}
			}
			return statusMsg{level: levelInfo, text: "copied " + what + " (OSC 52)"}
		}
	case actClose:
		m.pop()
	case actStatus:
		return m.setStatus(a.level, a.text)
	case actDecide:
		if m.ask == nil {
			m.dropDialog(dlgApproval)
			return nil
		}
		if a.d.Kind == session.Approved {
			if why := m.whyNotApprove(m.ask.p); why != "" {
				return m.setStatus(levelWarn, "cannot approve "+m.ask.p.Name+": "+why+" — e edit · r reject")
			}
		}
		m.dropDialog(dlgApproval)
		reply := m.ask.reply
		m.ask = nil
		if a.all {
			m.approveAll = true
		}
		return answer(reply, a.d)
	case actRun:
		m.dialogs = nil
		return m.startRun(a.rc)
	case actOpenReplay:
		m.dialogs = nil
		return m.loadReplay(a.id)
	case actQuit:
		m.dialogs = nil
		return m.quit()
	case actEditSource:
		m.dialogs = nil
		rc := m.d.rc
		edits := map[string]string{}
		for k, v := range rc.Edits {
			edits[k] = v
		}
		edits[a.id] = a.text
		rc.Edits = edits
		// The edited run is a new session linked to the one it was made
		// from; the old one is stopped and stored as interrupted.
		rc.Parent = m.d.state.SessionID
		return tea.Batch(m.startRun(rc), m.setStatus(levelInfo, "source "+a.id+" edited: the session starts again with it"))
	case actAskDelete:
		m.dialogs = append(m.dialogs, &confirmDialog{c: m.c, title: "Delete session?",
			msg: "Delete session " + a.id + " and everything recorded for it?", yes: actDelete(a)})
	case actDelete:
		m.pop()
		lib, id := m.opts.Library, a.id
		return func() tea.Msg { return deletedMsg{id: id, err: lib.Delete(id)} }
	case actOpenDiff:
		return m.loadDiff(a.a, a.b)
	case actOpenMatrix:
		return m.loadMatrix()
	case actOpenStats:
		return m.loadStats(a.by)
	case actForkEdit:
		return m.editFork(a)
	case actFork:
		if d := m.forkDlg(a.gen); d != nil {
			return m.planFork(d, nil, nil)
		}
	case actExport:
		lib, id, dir := m.opts.Library, a.id, m.opts.ExportDir
		return func() tea.Msg {
			path, err := lib.Export(id, dir)
			return exportedMsg{id: id, path: path, err: err}
		}
	}
	return nil
}

// openHelp shows the bindings active now.
func (m *Model) openHelp() {
	m.dialogs = append(m.dialogs, &helpDialog{c: m.c, groups: m.helpGroups()})
}

// openSourceEditor opens the editor for a source of the scenario.
func (m *Model) openSourceEditor(id string) tea.Cmd {
	if m.d.scenario == nil || m.mode != modeLive {
		return nil
	}
	for _, s := range m.d.scenario.Sources {
		if s.ID == id {
			d, cmd := newSourceDialog(m.c, id, s.Text)
			m.dialogs = append(m.dialogs, d)
			return cmd
		}
	}
	return nil
}

// loadSessions lists the stored sessions in a command.
func (m *Model) loadSessions() tea.Cmd {
	if m.opts.Library == nil {
		return nil
	}
	m.listGen++
	gen, lib := m.listGen, m.opts.Library
	return func() tea.Msg {
		list, err := lib.List()
		return sessionsMsg{gen: gen, list: list, err: err}
	}
}
