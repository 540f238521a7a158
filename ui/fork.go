package ui

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/session"
)

// Forking from the workbench: F on a replayed turn opens the fork dialog
// — send the session again from this turn with no edit, with the turn's
// request body edited in $EDITOR, or with an earlier tool result edited
// in $EDITOR. The fork is planned by the Library (app.PlanFork, as
// `modelwire fork` plans it) and runs live on the Backend, stored under
// its parent.

// forkChoice is one row of the fork dialog.
type forkChoice struct {
	label string
	// edit is false for "no edit"; body picks the request body, else ref
	// (TURN:CALL_ID) names the tool result.
	edit, body bool
	ref, name  string
	// original is the text the editor opens on; json whether it parsed,
	// so the edited text must too.
	original string
	json     bool
	// compact: original is one line of JSON indented for the editor, so
	// what the editor saves is compacted back before it is sent.
	compact bool
}

// forEditor is a text as the editor opens it: one line of JSON (a tool
// result as it went over the wire) indented two spaces, to read and edit
// by line; compact says so. Anything else is left as it is.
func forEditor(text string) (out string, compact bool) {
	if strings.Contains(strings.TrimSpace(text), "\n") || !json.Valid([]byte(text)) {
		return text, false
	}
	var b bytes.Buffer
	if json.Indent(&b, []byte(text), "", "  ") != nil {
		return text, false
	}
	return b.String(), true
}

// forkDialog chooses what the fork changes. It keeps each edited text,
// valid or not, so an edit that failed is reopened as it was left.
type forkDialog struct {
	c       *Common
	km      *KeyMap
	gen     int
	parent  string
	turn    int
	choices []forkChoice
	drafts  map[int]string
	sel     int
	problem string // the last edit's problem, shown until the next try
}

// actForkEdit opens choice idx in $EDITOR; actFork plans the fork with
// no edit.
type (
	actForkEdit struct{ gen, idx int }
	actFork     struct{ gen int }
)

func (actForkEdit) isAction() {}
func (actFork) isAction()     {}

// forkFileMsg: the text to edit is in path (or could not be written).
type forkFileMsg struct {
	gen, idx int
	path     string
	err      error
}

// forkEditedMsg is the text the editor saved.
type forkEditedMsg struct {
	gen, idx int
	text     string
	err      error
}

// forkPlannedMsg is the fork's setup, planned from the store.
type forkPlannedMsg struct {
	gen   int
	setup session.Setup
	err   error
}

// openFork opens the fork dialog on the replay's current turn, with the
// texts it can edit taken from the replayed state.
func (m *Model) openFork() tea.Cmd {
	if m.opts.Backend == nil || m.opts.Library == nil {
		return m.setStatus(levelWarn, "forking needs live sessions and the session store")
	}
	info := m.rep.Info
	// An application's session (proxied, imported) records no results:
	// the ones it fed back are in the turn's request, where the fork
	// edits them (app.PlanFork re-sends the application's request).
	application := info.Scenario == "" || info.Source == "proxy"
	turn := m.cur.turnOf(m.cur.pos)
	st := m.d.state
	if turn < 1 || turn > len(st.Turns) {
		return m.setStatus(levelInfo, "step into a turn first (→ or ]): F forks from the turn on screen")
	}
	choices := []forkChoice{{label: fmt.Sprintf("no edit: send turn %d again as it was", turn)}}
	if req := st.Turns[turn-1].Request; req != nil && len(req.Body) > 0 {
		var pretty bytes.Buffer
		if json.Indent(&pretty, req.Body, "", "  ") == nil {
			choices = append(choices, forkChoice{label: fmt.Sprintf("edit turn %d's request body in $EDITOR", turn),
				edit: true, body: true, original: pretty.String(), json: true})
		}
	}
	if req := st.Turns[turn-1].Request; application && req != nil {
		for _, r := range adapters.BodyResults(info.Protocol, req.Body) {
			ref := r.CallID
			if ref == "" {
				ref = r.Name // a Gemini result without id names its call by function
			}
			text, compact := forEditor(r.Content)
			choices = append(choices, forkChoice{label: fmt.Sprintf("edit the result of %s (%s) in $EDITOR", r.Name, ref),
				edit: true, ref: ref, name: r.Name + " (" + ref + ")", original: text, json: json.Valid([]byte(r.Content)), compact: compact})
		}
	}
	for _, t := range st.Turns[:turn-1] {
		if application {
			break // its results were listed from the request
		}
		for _, p := range t.Proposals {
			if r := p.Result; r != nil {
				text, compact := forEditor(r.Content)
				choices = append(choices, forkChoice{label: fmt.Sprintf("edit the result of %s (%s, turn %d) in $EDITOR", r.Name, r.CallID, t.N),
					edit: true, ref: fmt.Sprintf("%d:%s", t.N, r.CallID), name: r.Name + " (" + r.CallID + ")", original: text,
					json: json.Valid([]byte(r.Content)), compact: compact})
			}
		}
	}
	m.forkGen++
	m.dialogs = append(m.dialogs, &forkDialog{c: m.c, km: &m.km, gen: m.forkGen, parent: m.rep.Info.ID, turn: turn, choices: choices, drafts: map[int]string{}})
	return nil
}

// forkDlg is the open fork dialog of generation gen, or nil.
func (m *Model) forkDlg(gen int) *forkDialog {
	for _, d := range m.dialogs {
		if fd, ok := d.(*forkDialog); ok && fd.gen == gen {
			return fd
		}
	}
	return nil
}

// editFork writes the text to edit to a temporary file (a command: file
// I/O), then forkFile opens $EDITOR on it.
func (m *Model) editFork(a actForkEdit) tea.Cmd {
	d := m.forkDlg(a.gen)
	if d == nil {
		return nil
	}
	text, ok := d.drafts[a.idx]
	if !ok {
		text = d.choices[a.idx].original
	}
	return func() tea.Msg {
		f, err := os.CreateTemp("", "modelwire-fork-*.json")
		if err != nil {
			return forkFileMsg{gen: a.gen, idx: a.idx, err: err}
		}
		_, err = f.WriteString(text + "\n")
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return forkFileMsg{gen: a.gen, idx: a.idx, path: f.Name(), err: err}
	}
}

// forkFile hands the terminal to $VISUAL or $EDITOR (vi if neither), run
// through the shell as git does so "code --wait" works, and reads back
// what was saved.
func (m *Model) forkFile(msg forkFileMsg) tea.Cmd {
	if msg.err != nil {
		if msg.path != "" {
			os.Remove(msg.path)
		}
		return m.setStatus(levelError, "fork: cannot write the text to edit: "+msg.err.Error())
	}
	editor := m.opts.Getenv("VISUAL")
	if editor == "" {
		editor = m.opts.Getenv("EDITOR")
	}
	if editor == "" {
		editor = "vi"
	}
	c := exec.Command("sh", "-c", editor+` "$1"`, "editor", msg.path)
	return tea.ExecProcess(c, func(err error) tea.Msg {
		defer os.Remove(msg.path)
		if err != nil {
			return forkEditedMsg{gen: msg.gen, idx: msg.idx, err: fmt.Errorf("the editor %s failed: %v", editor, err)}
		}
		b, err := os.ReadFile(msg.path)
		return forkEditedMsg{gen: msg.gen, idx: msg.idx, text: strings.TrimRight(string(b), "\r\n"), err: err}
	})
}

// forkEdited checks the edited text and, when it is sound, plans the
// fork with it. A text that is not JSON stays in the dialog as a draft
// with the problem named; nothing else happens.
func (m *Model) forkEdited(msg forkEditedMsg) tea.Cmd {
	d := m.forkDlg(msg.gen)
	if d == nil {
		return nil
	}
	if msg.err != nil {
		d.problem = msg.err.Error()
		return m.setStatus(levelError, "fork: "+d.problem)
	}
	ch := d.choices[msg.idx]
	d.drafts[msg.idx] = msg.text
	if ch.json {
		what := "the edited request body"
		if !ch.body {
			what = "the edited result of " + ch.name
		}
		if p := jsonProblem(msg.text, ch.body); p != "" {
			d.problem = what + " " + p + " — enter edits it again, esc drops it"
			return m.setStatus(levelError, "fork: "+what+" "+p)
		}
	}
	d.problem = ""
	text := msg.text
	if ch.compact {
		// Sent as it came: one line (the draft keeps the indented text).
		var b bytes.Buffer
		if json.Compact(&b, []byte(text)) == nil {
			text = b.String()
		}
	}
	var body []byte
	var results map[string]string
	if ch.body {
		body = []byte(text)
	} else {
		results = map[string]string{ch.ref: text}
	}
	return m.planFork(d, body, results)
}

// jsonProblem names what is wrong with text as JSON ("" when nothing),
// with the line of a syntax error; object asks for a JSON object.
func jsonProblem(text string, object bool) string {
	var v any
	err := json.Unmarshal([]byte(text), &v)
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		line := 1 + strings.Count(text[:min(int(se.Offset), len(text))], "\n")
		return fmt.Sprintf("is not JSON: %v (line %d)", se, line)
	case err != nil:
		return "is not JSON: " + err.Error()
	}
	if _, ok := v.(map[string]any); object && !ok {
		return "is not a JSON object"
	}
	return ""
}

// planFork plans the fork in a command (it reads the store).
func (m *Model) planFork(d *forkDialog, body []byte, results map[string]string) tea.Cmd {
	lib, gen, id, turn := m.opts.Library, d.gen, d.parent, d.turn
	return tea.Batch(m.setStatus(levelInfo, fmt.Sprintf("forking %s from turn %d…", id, turn)), func() tea.Msg {
		s, err := lib.Fork(id, turn, body, results)
		return forkPlannedMsg{gen: gen, setup: s, err: err}
	})
}

// forkPlanned starts the planned fork live, or shows why it cannot run
// (the dialog stays).
func (m *Model) forkPlanned(msg forkPlannedMsg) tea.Cmd {
	d := m.forkDlg(msg.gen)
	if d == nil {
		return nil
	}
	if msg.err != nil {
		d.problem = msg.err.Error()
		return m.setStatus(levelError, "fork: "+d.problem)
	}
	s := msg.setup
	rc := RunConfig{Scenario: s.Scenario.Name, Variant: s.Scenario.Variant, Protocol: s.Protocol, Provider: s.Provider,
		Stream: s.Stream, History: s.History, Parent: s.Parent, Fork: &s}
	m.dialogs = nil
	return tea.Batch(m.startRun(rc), m.setStatus(levelInfo, fmt.Sprintf("fork of %s from turn %d: running live", d.parent, d.turn)))
}

func (d *forkDialog) Kind() dialogKind       { return dlgFork }
func (d *forkDialog) Update(tea.Msg) tea.Cmd { return nil }
func (d *forkDialog) Bindings(km *KeyMap) []key.Binding {
	return []key.Binding{km.Nav.Up, km.Nav.Down, km.Dialog.Accept, km.Dialog.Close}
}

func (d *forkDialog) HandleKey(msg tea.KeyMsg, km *KeyMap) (action, tea.Cmd) {
	switch {
	case key.Matches(msg, km.Dialog.Close):
		return actClose{}, nil
	case key.Matches(msg, km.Nav.Up):
		d.sel = max(0, d.sel-1)
	case key.Matches(msg, km.Nav.Down):
		d.sel = min(len(d.choices)-1, d.sel+1)
	case key.Matches(msg, km.Dialog.Accept):
		if d.choices[d.sel].edit {
			return actForkEdit{gen: d.gen, idx: d.sel}, nil
		}
		return actFork{gen: d.gen}, nil
	}
	return nil, nil
}

func (d *forkDialog) View(w, h int) string {
	s := d.c.Styles
	inner := w - s.Dialog.GetHorizontalFrameSize()
	var lines []string
	for _, l := range wrapLines(fmt.Sprintf("A new session under %s: turns before %d are its own, turn %d is sent again and the session runs on live.", d.parent, d.turn, d.turn), inner) {
		lines = append(lines, s.Muted.Render(l))
	}
	lines = append(lines, "")
	for i, c := range d.choices {
		label := c.label
		if _, ok := d.drafts[i]; ok {
			label += " (edited)"
		}
		if i == d.sel {
			lines = append(lines, s.Accent.Render("▸ ")+s.Selected.Render(cut(label, inner-2)))
		} else {
			lines = append(lines, "  "+cut(label, inner-2))
		}
	}
	if d.problem != "" {
		lines = append(lines, "")
		for _, l := range wrapLines(d.problem, inner) {
			lines = append(lines, s.Bad.Render(l))
		}
	}
	return d.c.box(fmt.Sprintf("Fork %s from turn %d", d.parent, d.turn), lines, hintOf(d.Bindings(d.km)...), w, h)
}
