package ui

import (
	"time"

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

// loadReplay loads a stored session in a command.
func (m *Model) loadReplay(id string) tea.Cmd {
	if m.opts.Library == nil {
		return m.setStatus(levelWarn, "no session store is open")
	}
	m.repGen++
	return tea.Batch(m.setStatus(levelInfo, "loading session "+id+"…"), loadCmd(m.repGen, m.opts.Library, id))
}

// loadCmd opens session id of lib for replay in a command.
func loadCmd(gen int, lib Library, id string) tea.Cmd {
	return func() tea.Msg {
		rep, err := lib.Load(id)
		if err != nil {
			return replayMsg{gen: gen, err: err}
		}
		return replayMsg{gen: gen, rep: newReplay(rep)}
	}
}

// onReplay switches to replay mode on a loaded session; the live session,
// if any, is stopped.
func (m *Model) onReplay(msg replayMsg) tea.Cmd {
	if msg.gen != m.repGen {
		return nil
	}
	if msg.err != nil {
		return m.setStatus(levelError, "cannot replay: "+msg.err.Error())
	}
	if m.cancel != nil {
		m.cancel()
		m.cancel = nil
	}
	m.gen++ // the live run's late messages no longer apply
	m.running, m.ask, m.pause, m.decideOnAsk = false, nil, nil, nil
	m.mode = modeReplay
	m.rep = msg.rep
	m.cur = newCursor(msg.rep)
	m.playing = false
	m.d.replay, m.d.ended = true, string(msg.rep.Info.Status)
	m.d.scenario = msg.rep.Scenario
	m.d.preview, m.d.paused, m.d.laneHL = nil, "", ""
	m.d.rc = RunConfig{Scenario: msg.rep.Info.Scenario, Variant: msg.rep.Info.Variant, Protocol: msg.rep.Info.Protocol,
		Provider: msg.rep.Info.Provider, Stream: msg.rep.Stream, History: msg.rep.History}
	m.d.state = m.cur.state
	m.resize(m.w, m.h)
	m.logP.sync()
	return tea.Batch(m.setStatus(levelInfo, "replaying "+msg.rep.Info.ID+": → step, ] turn, G end, space play"),
		marksCmd(m.repGen, msg.rep.r))
}

// seek asks for replay position p. One seek runs at a time (seekCmd):
// while one runs, p becomes the target that onSeek seeks next, so the
// latest target wins.
func (m *Model) seek(p int) tea.Cmd {
	c := m.cur
	c.want = max(0, min(p, m.rep.Entries))
	if c.busy || c.want == c.pos {
		return nil
	}
	c.busy = true
	return seekCmd(m.repGen, m.rep.r, c.want)
}

// onSeek shows where a seek landed, and seeks the latest target if it
// moved meanwhile; a playing replay schedules its next step from here.
func (m *Model) onSeek(msg seekMsg) tea.Cmd {
	c := m.cur
	if msg.gen != m.repGen || c == nil {
		return nil
	}
	c.busy, c.err = false, msg.err
	if msg.err != nil {
		c.want = c.pos // go on from what is shown
		m.playing = false
		return m.seekStatus()
	}
	c.pos, c.state, c.gap = msg.pos, msg.state, msg.gap
	m.d.state = c.state
	m.logP.sync()
	if c.want != c.pos {
		return m.seek(c.want)
	}
	if m.playing {
		return m.tick()
	}
	return nil
}

// replayKey handles the replay cursor keys. Steps count from the target
// of the seek running, if any, so that each press moves one step.
func (m *Model) replayKey(msg tea.KeyMsg) (tea.Cmd, bool) {
	km := &m.km
	if m.cur == nil {
		return nil, false
	}
	var to int
	switch {
	case key.Matches(msg, km.Replay.Forward):
		to = m.cur.want + 1
	case key.Matches(msg, km.Replay.Back):
		to = m.cur.want - 1
	case key.Matches(msg, km.Replay.NextTurn):
		to = m.cur.nextTurn()
	case key.Matches(msg, km.Replay.PrevTurn):
		to = m.cur.prevTurn()
	case key.Matches(msg, km.Replay.Start):
		to = 0
	case key.Matches(msg, km.Replay.End):
		to = m.rep.Entries
	case key.Matches(msg, km.Replay.Play):
		m.playing = !m.playing
		m.play++
		if !m.playing {
			return nil, true
		}
		if m.cur.want >= m.rep.Entries {
			if cmd := m.seek(0); cmd != nil {
				return cmd, true // onSeek goes on playing
			}
		}
		if m.cur.busy {
			return nil, true // onSeek goes on playing
		}
		return m.tick(), true
	case key.Matches(msg, km.Replay.Faster):
		m.speed = min(m.speed+1, len(replaySpeeds)-1)
		return nil, true
	case key.Matches(msg, km.Replay.Slower):
		m.speed = max(m.speed-1, 0)
		return nil, true
	case key.Matches(msg, km.Replay.Speed):
		m.speed = (m.speed + 1) % len(replaySpeeds)
		return nil, true
	case key.Matches(msg, km.Replay.Fork):
		return m.openFork(), true
	case key.Matches(msg, km.Global.Live):
		if m.opts.Replay != "" {
			return nil, true // opened on a stored session: there is no live one to go back to
		}
		return m.startRun(m.opts.Run), true
	default:
		return nil, false
	}
	// A manual step pauses playback.
	if m.playing {
		m.playing = false
		m.play++
	}
	return m.seek(to), true
}

// seekStatus reports a seek the store could not serve (the screen keeps
// the last state it had).
func (m *Model) seekStatus() tea.Cmd {
	if m.cur == nil || m.cur.err == nil {
		return nil
	}
	return m.setStatus(levelError, "cannot read the session: "+m.cur.err.Error())
}

// tick schedules the next playback step after the recorded gap.
func (m *Model) tick() tea.Cmd {
	gap := time.Duration(float64(m.cur.gap) / replaySpeeds[m.speed])
	gap = max(tickEvery, min(gap, 2*time.Second))
	gen, play := m.repGen, m.play
	return tea.Tick(gap, func(time.Time) tea.Msg { return playTickMsg{gen: gen, play: play} })
}

func (m *Model) onTick(msg playTickMsg) tea.Cmd {
	if msg.gen != m.repGen || msg.play != m.play || !m.playing || m.cur == nil || m.cur.busy {
		return nil
	}
	if m.cur.pos >= m.rep.Entries {
		m.playing = false
		return nil
	}
	return m.seek(m.cur.pos + 1) // onSeek schedules the next tick
}
