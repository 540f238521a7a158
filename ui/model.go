package ui

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/charmbracelet/bubbles/help"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/registry"
	"github.com/modelwire/modelwire/session"
)

// mode is what the panels show: a live session or a replay.
type mode int

const (
	modeLive mode = iota
	modeReplay
)

// statusLevel is a status message's level.
type statusLevel int

const (
	levelInfo statusLevel = iota
	levelWarn
	levelError
)

// statusTimeout is how long a status message stays.
const statusTimeout = 6 * time.Second

// Options configure the workbench.
type Options struct {
	Theme   string
	NoColor bool
	// ASCII draws with ASCII only: borders and state markers.
	ASCII bool
	// Pace is the simulator's pace for every run the workbench starts
	// (startRun sets RunConfig.Pace from it).
	Pace float64
	// Clipboard receives what the inspector copies; nil writes OSC 52 to
	// the terminal.
	Clipboard func(text string) error
	// Backend runs live sessions; nil disables them (replay only).
	Backend Backend
	// Library is the session store; nil disables the browser.
	Library Library
	// Catalog is what can be run (scenarios, faults); nil falls back to
	// defaultCatalog.
	Catalog Catalog
	// Run is the first live session (DefaultRunConfig when zero).
	Run RunConfig
	// Replay opens this stored session instead of starting a live one.
	Replay string
	// Compare, once Replay has opened, opens the diff view of Compare[0]
	// (a fork's parent) against Compare[1] (its first child) and names the
	// other children in the status line (`fork --to … --tui`).
	Compare []string
	// Matrix opens the check matrix (matrix.go) over the first screen
	// (`check --tui`).
	Matrix bool
	// Stats reads the stored sessions' aggregate (stats.go); nil
	// disables the stats view.
	Stats StatsSource
	// Getenv decides which real providers are offered (os.Getenv if nil).
	Getenv func(string) string
	// ExportDir is where exports go ("." if empty).
	ExportDir string
	Log       *slog.Logger
}

// Model is the root model: it owns the folded state, the panels, the
// dialog stack, the run and replay bookkeeping, and carries out the
// dialogs' actions.
type Model struct {
	c    *Common
	km   KeyMap
	opts Options
	help help.Model

	w, h int
	lay  layoutT

	mode   mode
	focus  panelID
	panels [numPanels]panel
	d      *viewData
	logP   *logPanel

	dialogs []dialog
	br      *bridge

	// Live run bookkeeping. gen names the current run; messages of other
	// runs are dropped.
	gen     int
	cancel  context.CancelFunc
	running bool
	ask     *askMsg
	pause   *pauseMsg
	// passAssembled: the person already moved past the first assembled
	// request (held before the run started), so the engine's own pause
	// there is passed at once.
	passAssembled bool
	approveAll    bool
	// decideOnAsk is a decision key pressed at the proposals pause, where
	// the notes offer a/e/r/A: the walkthrough steps on and the key
	// answers the first proposal when it is asked.
	decideOnAsk *tea.KeyMsg
	// zoom shows the focused panel alone (z).
	zoom bool
	// teach shows the selected element's explanation (E); teachH is the
	// rows the layout gave it.
	teach  bool
	teachH int

	// diffGen numbers comparisons (diff.go); forkGen fork dialogs (fork.go).
	diffGen int
	// matrixGen numbers readings of the check matrix (matrix.go).
	matrixGen int
	// statsGen numbers readings of the stats view (stats.go).
	statsGen int
	// compareAt is the diffGen of the comparison Options.Compare opened
	// (0: none yet).
	compareAt int
	forkGen   int

	// Replay bookkeeping.
	repGen  int
	rep     *Replay
	cur     *cursor
	playing bool
	play    int // play generation: a pause or seek invalidates old ticks
	speed   int // index into replaySpeeds
	listGen int

	status   status
	quitting bool
}

type status struct {
	level statusLevel
	text  string
	id    int
}

// New builds the root model.
func New(opts Options) *Model {
	if opts.Run.Protocol == "" {
		opts.Run = DefaultRunConfig()
	}
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	if opts.ExportDir == "" {
		opts.ExportDir = "."
	}
	if opts.Catalog == nil {
		opts.Catalog = defaultCatalog
	}
	c := newCommon(opts.Theme, opts.NoColor || asciiProfile(), opts.ASCII, opts.Log)
	m := &Model{c: c, km: DefaultKeyMap(), opts: opts, br: newBridge(), speed: speedNormal, focus: panelStream}
	m.d = &viewData{state: session.NewState(), rc: opts.Run}
	m.panels[panelAssembly] = newAssemblyPanel(c, m.d)
	m.panels[panelStream] = newStreamPanel(c, m.d)
	m.panels[panelValidation] = newValidationPanel(c, m.d)
	m.logP = newLogPanel(c, m.d)
	m.panels[panelLog] = m.logP
	m.panels[panelNotes] = newNotesPanel(c, m.d)
	m.panels[m.focus].Focus()
	m.help = help.New()
	m.applyHelpStyles()
	m.resize(80, 24)
	return m
}

// Init starts the first session (or loads the replay).
func (m *Model) Init() tea.Cmd {
	var matrix tea.Cmd
	if m.opts.Matrix {
		matrix = m.loadMatrix()
	}
	if m.opts.Replay != "" {
		return tea.Batch(m.loadReplay(m.opts.Replay), matrix)
	}
	return tea.Batch(m.startRun(m.opts.Run), matrix)
}

func (m *Model) applyHelpStyles() {
	s := m.c.Styles
	m.help.Styles.ShortKey = s.Key
	m.help.Styles.ShortDesc = s.KeyDesc
	m.help.Styles.ShortSeparator = s.Subtle
	m.help.Styles.FullKey = s.Key
	m.help.Styles.FullDesc = s.KeyDesc
	m.help.Styles.FullSeparator = s.Subtle
	m.help.Styles.Ellipsis = s.Subtle
}

// resize lays the screen out again and sizes every panel.
func (m *Model) resize(w, h int) {
	m.w, m.h = max(20, w), max(8, h)
	bodyH := m.h
	m.teachH = 0
	if m.teach {
		m.teachH = len(m.teachLines())
		bodyH -= m.teachH
	}
	m.lay = layout(m.w, bodyH, m.mode == modeReplay, m.focus, m.zoom)
	for id, r := range m.lay.panels {
		st := m.c.Styles.Panel
		m.panels[id].SetSize(max(1, r.w-st.GetHorizontalFrameSize()), max(1, r.h-st.GetVerticalFrameSize()-1))
	}
	m.help.Width = m.w
}

// setStatus shows a message and schedules its removal.
func (m *Model) setStatus(level statusLevel, text string) tea.Cmd {
	m.status.id++
	m.status.level, m.status.text = level, text
	switch level {
	case levelError:
		m.c.Log.Error(text)
	case levelWarn:
		m.c.Log.Warn(text)
	}
	id := m.status.id
	return tea.Tick(statusTimeout, func(time.Time) tea.Msg { return clearStatusMsg{id: id} })
}

// setFocus moves the focus to panel id; the layout gives it the room.
func (m *Model) setFocus(id panelID) {
	m.panels[m.focus].Blur()
	m.focus = id
	m.panels[id].Focus()
	m.resize(m.w, m.h)
}

// stepPanel is the panel a protocol step is about: the request while it
// is assembled, the lanes while the response streams and its proposals
// wait, the verdict at the end.
func stepPanel(step string) (panelID, bool) {
	switch step {
	case session.StepAssembled:
		return panelAssembly, true
	case session.StepSent, session.StepFirstEvent, session.StepProposals, session.StepResults, session.StepFinal:
		return panelStream, true
	case session.StepValidated:
		return panelValidation, true
	}
	return 0, false
}

// followStep moves the focus to the panel the step is about.
func (m *Model) followStep(step string) {
	if id, ok := stepPanel(step); ok && id != m.focus {
		m.setFocus(id)
	}
}

// startRun replaces the live session with a new one: the old one is
// cancelled, its late messages are dropped by generation.
func (m *Model) startRun(rc RunConfig) tea.Cmd {
	if m.cancel != nil {
		m.cancel()
		m.cancel = nil
	}
	m.gen++
	m.mode = modeLive
	m.rep, m.cur, m.playing = nil, nil, false
	m.d.replay = false
	// Every run the workbench starts — the walkthrough, a free run, an
	// edited re-send, a fork, a run chosen after a replay — streams at the
	// one pace the workbench was opened with (--pace), whatever the run
	// config it came from carried (a replay's has none).
	rc.Pace = m.opts.Pace
	m.d.rc = rc
	m.d.state = session.NewState()
	m.d.scenario, m.d.preview, m.d.paused, m.d.laneHL = nil, nil, "", ""
	m.ask, m.pause, m.approveAll, m.passAssembled = nil, nil, false, false
	m.running = false
	m.dropDialog(dlgApproval)
	m.resize(m.w, m.h)
	m.logP.sync()
	if m.opts.Backend == nil {
		return m.setStatus(levelWarn, "live sessions are not available here")
	}
	m.running = true
	return loadScenarioCmd(m.gen, m.opts.Catalog, rc)
}

// onScenario starts the run once its scenario is loaded.
func (m *Model) onScenario(msg scenarioMsg) tea.Cmd {
	if msg.gen != m.gen || m.mode != modeLive {
		return nil
	}
	if msg.err != nil {
		m.running = false
		return m.setStatus(levelError, msg.err.Error())
	}
	m.d.scenario = msg.sc
	m.d.preview = preview(msg.sc, m.d.rc)
	if m.d.rc.StepMode && msg.sc != nil && m.d.rc.Parent == "" {
		// The walkthrough waits at the assembled request before anything
		// is sent or stored: a session exists once the person starts it
		// (n), and opening and closing the workbench leaves none behind.
		// An edited re-send was started by the person: it runs at once.
		m.running = false
		m.pause = &pauseMsg{gen: m.gen, step: session.StepAssembled, turn: 1}
		m.d.paused = session.StepAssembled
		m.followStep(session.StepAssembled)
		return nil
	}
	return m.launch()
}

// launch starts the loaded run on its own goroutine.
func (m *Model) launch() tea.Cmd {
	ctx, cancel := context.WithCancel(context.Background())
	m.cancel = cancel
	m.running = true
	return runCmd(ctx, m.gen, m.opts.Backend, m.d.scenario, m.d.rc, m.br.ch)
}

// preview encodes the first request before it is sent (pure: no I/O).
func preview(sc *session.Scenario, rc RunConfig) *adapters.HTTPRequest {
	if sc == nil || rc.Fork != nil {
		return nil // a recording, or a fork from a later turn: the requests come as they are sent
	}
	p, err := registry.Lookup(rc.Protocol)
	if err != nil {
		return nil
	}
	req := sc.Request(rc.Stream, rc.History)
	if rc.History == adapters.HistoryPreviousResponse {
		yes := true
		req.Store = &yes
	}
	w, err := p.Encode(req, rc.Provider)
	if err != nil {
		return nil
	}
	return w
}

// applyUpdates folds a batch of live updates.
func (m *Model) applyUpdates(msg updatesMsg) tea.Cmd {
	if msg.gen != m.gen || m.mode != modeLive {
		return nil
	}
	var cmds []tea.Cmd
	for _, u := range msg.ups {
		m.d.state.Apply(u)
		if u.Kind == session.UpAttempt && u.Err != "" {
			cmds = append(cmds, m.setStatus(levelWarn, fmt.Sprintf("turn %d attempt %d: %s", u.Turn, u.Attempt, u.Err)))
		}
	}
	m.logP.sync()
	return tea.Batch(cmds...)
}

// onAsk opens the approval dialog for a proposal (or answers at once when
// the person chose approve all and the call may be approved).
func (m *Model) onAsk(msg askMsg) tea.Cmd {
	if msg.gen != m.gen {
		return nil
	}
	if m.approveAll && m.whyNotApprove(msg.p) == "" && msg.p.EditError == "" {
		return answer(msg.reply, session.Decision{Kind: session.Approved})
	}
	m.ask = &msg
	m.dropDialog(dlgApproval)
	d := newApprovalDialog(m.c, m.d.scenario, msg.p)
	m.dialogs = append(m.dialogs, d)
	if msg.p.EditError != "" {
		m.decideOnAsk = nil
		return m.setStatus(levelWarn, "the edit was refused: "+msg.p.EditError)
	}
	if k := m.decideOnAsk; k != nil {
		m.decideOnAsk = nil
		m.dropDialog(dlgApproval)
		cmd, _ := m.liveKey(*k)
		return cmd
	}
	return nil
}

// onRunEnded clears the run.
func (m *Model) onRunEnded(msg runEndedMsg) tea.Cmd {
	if msg.gen != m.gen {
		return nil
	}
	m.running = false
	m.ask, m.pause, m.d.paused, m.decideOnAsk = nil, nil, "", nil
	m.dropDialog(dlgApproval)
	if m.cancel != nil {
		m.cancel()
		m.cancel = nil
	}
	if msg.err != nil && !isCancel(msg.err) {
		return m.setStatus(levelError, "the session stopped: "+msg.err.Error())
	}
	st := m.d.state.Status
	return m.setStatus(levelInfo, "session "+m.d.state.SessionID+" "+string(st))
}

// dropDialog removes every dialog of a kind from the stack.
func (m *Model) dropDialog(k dialogKind) {
	out := m.dialogs[:0]
	for _, d := range m.dialogs {
		if d.Kind() != k {
			out = append(out, d)
		}
	}
	m.dialogs = out
}

// top is the top dialog, or nil.
func (m *Model) top() dialog {
	if len(m.dialogs) == 0 {
		return nil
	}
	return m.dialogs[len(m.dialogs)-1]
}

func (m *Model) pop() {
	if len(m.dialogs) > 0 {
		m.dialogs = m.dialogs[:len(m.dialogs)-1]
	}
}

// quit cancels the session and ends the program.
func (m *Model) quit() tea.Cmd {
	m.quitting = true
	if m.cancel != nil {
		m.cancel()
		m.cancel = nil
	}
	return tea.Quit
}

// Close releases what the model started (the run, the bridge).
func (m *Model) Close() {
	if m.cancel != nil {
		m.cancel()
	}
	m.br.close()
}
