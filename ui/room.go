package ui

import (
	"cmp"
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/modelwire/modelwire/themes"
	"github.com/modelwire/modelwire/workshop"
)

// The room view (modelwire room URL, serve --workshop --tui): one row per
// participant of a workshop, polled from the room in a command, sortable;
// enter opens a participant's detail beside the shape the step expects;
// the teacher's summary at the foot.

// RoomFetch reads the room now (over HTTP, or from the serving process).
type RoomFetch func(ctx context.Context) (workshop.View, error)

// roomPoll is how often the room view asks again.
const roomPoll = time.Second

// roomMsg is one reading of the room; gen drops a stale one.
type roomMsg struct {
	gen  int
	view workshop.View
	err  error
}

// roomOpened says the session view opened from the room has ended.
type roomOpened struct{ err error }

// roomTick asks for the next reading.
type roomTick struct{ gen int }

// roomSort is the rows' order.
type roomSort int

const (
	sortArrival roomSort = iota
	sortStep
	sortPassed
	sortOnStep
	numSorts
)

var roomSortNames = [numSorts]string{"arrival", "step", "checks passed", "time on step"}

// RoomKeyMap is the room view's keys.
type RoomKeyMap struct {
	Up, Down, Open, Session, Back, Sort, Theme, Quit key.Binding
}

// DefaultRoomKeyMap is the room view's bindings.
func DefaultRoomKeyMap() RoomKeyMap {
	return RoomKeyMap{
		Up:      key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down:    key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		Open:    key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "open")),
		Session: key.NewBinding(key.WithKeys("o"), key.WithHelp("o", "session")),
		Back:    key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back")),
		Sort:    key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "sort")),
		Theme:   key.NewBinding(key.WithKeys("t"), key.WithHelp("t", "theme")),
		Quit:    key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
	}
}

// RoomModel is the room view.
type RoomModel struct {
	fetch RoomFetch
	note  string // under the title: where participants point their SDKs
	// session, when set, is the command that shows a stored session
	// (modelwire replay ID): o runs it in this terminal.
	session func(id string) *exec.Cmd
	status  string // what the last o came to
	keys    RoomKeyMap
	theme   string
	st      *themes.Styles
	gen     int
	view    workshop.View
	err     error
	loaded  bool
	sort    roomSort
	cursor  int  // index into the sorted rows
	open    bool // the detail of the row at the cursor
	w, h    int
}

// NewRoomModel builds the room view over fetch with a theme by name;
// note is a line under the title (the room's address).
func NewRoomModel(fetch RoomFetch, theme, note string) *RoomModel {
	m := &RoomModel{fetch: fetch, note: note, keys: DefaultRoomKeyMap(), w: 80, h: 24}
	m.setTheme(theme)
	return m
}

func (m *RoomModel) setTheme(name string) {
	p, err := themes.ByName(name)
	if err != nil {
		name = "dark"
		p, _ = themes.ByName(name)
	}
	m.theme, m.st = name, themes.Build(p)
}

// WithSession lets o open the participant's session with cmd.
func (m *RoomModel) WithSession(cmd func(id string) *exec.Cmd) *RoomModel {
	m.session = cmd
	return m
}

// Init reads the room.
func (m *RoomModel) Init() tea.Cmd { return m.read() }

// read copies what the command needs before it runs (never the model).
func (m *RoomModel) read() tea.Cmd {
	fetch, gen := m.fetch, m.gen
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		v, err := fetch(ctx)
		return roomMsg{gen: gen, view: v, err: err}
	}
}

// Update implements tea.Model.
func (m *RoomModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.w, m.h = msg.Width, msg.Height
	case roomMsg:
		if msg.gen != m.gen {
			return m, nil
		}
		m.err = msg.err
		if msg.err == nil {
			m.view, m.loaded = msg.view, true
			m.cursor = min(m.cursor, max(len(m.view.Participants)-1, 0))
		}
		gen := m.gen
		return m, tea.Tick(roomPoll, func(time.Time) tea.Msg { return roomTick{gen: gen} })
	case roomOpened:
		m.status = ""
		if msg.err != nil {
			m.status = "the session did not open: " + msg.err.Error()
		}
	case roomTick:
		if msg.gen == m.gen {
			return m, m.read()
		}
	case tea.KeyMsg:
		return m, m.key(msg)
	}
	return m, nil
}

func (m *RoomModel) key(msg tea.KeyMsg) tea.Cmd {
	n := len(m.view.Participants)
	switch {
	case key.Matches(msg, m.keys.Quit):
		return tea.Quit
	case key.Matches(msg, m.keys.Back):
		m.open = false
	case key.Matches(msg, m.keys.Open):
		m.open = n > 0 && !m.open
	case key.Matches(msg, m.keys.Up):
		m.cursor = max(m.cursor-1, 0)
	case key.Matches(msg, m.keys.Down):
		m.cursor = min(m.cursor+1, max(n-1, 0))
	case key.Matches(msg, m.keys.Session):
		return m.openSession()
	case key.Matches(msg, m.keys.Sort):
		m.sort = (m.sort + 1) % numSorts
	case key.Matches(msg, m.keys.Theme):
		m.setTheme(themes.Next(m.theme))
	}
	return nil
}

// openSession runs the session view on the participant at the cursor;
// the room view comes back when it ends.
func (m *RoomModel) openSession() tea.Cmd {
	rows := m.rows()
	if m.session == nil || m.cursor >= len(rows) || rows[m.cursor].SessionID == "" {
		m.status = "no session to open here"
		return nil
	}
	return tea.ExecProcess(m.session(rows[m.cursor].SessionID), func(err error) tea.Msg { return roomOpened{err: err} })
}

// rows are the participants in the chosen order (arrival breaks ties).
func (m *RoomModel) rows() []workshop.Row {
	rows := slices.Clone(m.view.Participants)
	slices.SortStableFunc(rows, func(a, b workshop.Row) int {
		switch m.sort {
		case sortStep:
			return cmp.Compare(a.Step, b.Step)
		case sortPassed:
			return cmp.Compare(a.Passed*b.Total, b.Passed*a.Total) // a fraction each, without dividing by 0
		case sortOnStep:
			return cmp.Compare(b.OnStep, a.OnStep)
		}
		return 0
	})
	return rows
}

// View implements tea.Model.
func (m *RoomModel) View() string {
	w, h := max(m.w, 20), max(m.h, 5)
	st := m.st
	var lines []string
	title := "workshop " + m.view.Exercise
	if m.view.Title.EN != "" {
		title += " — " + m.view.Title.ZH + " / " + m.view.Title.EN
	}
	lines = append(lines, st.Header.Render(fit(title, w)))
	if m.note != "" {
		lines = append(lines, st.Muted.Render(fit(m.note, w)))
	}
	switch {
	case m.err != nil && !m.loaded:
		lines = append(lines, st.Bad.Render(fit("cannot read the room: "+m.err.Error(), w)))
	case !m.loaded:
		lines = append(lines, st.Muted.Render("reading the room…"))
	case m.open:
		lines = append(lines, m.detail(w)...)
	default:
		lines = append(lines, m.table(w, h-len(lines)-2)...)
	}
	for len(lines) < h-2 {
		lines = append(lines, "")
	}
	lines = lines[:h-2]
	lines = append(lines, st.Info.Render(fit(m.summary(), w)))
	help := fmt.Sprintf("↑↓ move · enter open · s sort (%s) · t theme · q quit", roomSortNames[m.sort])
	if m.session != nil {
		help = fmt.Sprintf("↑↓ move · enter open · o session · s sort (%s) · t theme · q quit", roomSortNames[m.sort])
	}
	switch {
	case m.err != nil && m.loaded:
		help = "stale: " + m.err.Error()
	case m.status != "":
		help = m.status
	}
	lines = append(lines, st.Muted.Render(fit(help, w)))
	return strings.Join(lines, "\n")
}

// The table's columns: participant, step, passed, time on step, last
// failing check and its hint (the rest of the width).
func (m *RoomModel) table(w, rows int) []string {
	st := m.st
	head := fmt.Sprintf("  %-12s %4s %6s %6s  %s", "participant", "step", "pass", "time", "last failing check · hint")
	out := []string{st.Bold.Render(fit(head, w))}
	all := m.rows()
	if len(all) == 0 {
		return append(out, st.Muted.Render(fit("no participant yet: they point their SDK's base URL at this server", w)))
	}
	first := max(0, m.cursor-rows+2)
	for i, r := range all {
		if i < first || len(out) >= rows {
			continue
		}
		fail := "✓ all pass"
		style := st.Good
		if r.LastFail != "" {
			fail, style = r.LastFail+" · §"+r.Section+" "+r.Hint.ZH, st.Bad
		}
		if r.Step == 0 {
			fail, style = "—", st.Muted
		}
		mark := "  "
		if i == m.cursor {
			mark = "› " // visible without colour too
		}
		line := fmt.Sprintf("%s%s %4s %6s %6s  %s", mark, fit(r.Participant, 12), stepText(r), fmt.Sprintf("%d/%d", r.Passed, r.Total), roomDur(r.OnStep), fail)
		line = fit(line, w)
		if i == m.cursor {
			out = append(out, st.Selected.Render(line))
		} else {
			out = append(out, style.Render(line))
		}
	}
	return out
}

// detail is one participant: the failing check, its hints, the provider's
// words, and the shape the step expects.
func (m *RoomModel) detail(w int) []string {
	rows := m.rows()
	if m.cursor >= len(rows) {
		return nil
	}
	r, st := rows[m.cursor], m.st
	out := []string{st.Bold.Render(fit(fmt.Sprintf("%s · step %s · %d/%d checks · %d requests · %s on the step", r.Participant, stepText(r), r.Passed, r.Total, r.Requests, roomDur(r.OnStep)), w))}
	if r.LastFail == "" {
		out = append(out, st.Good.Render("the latest request passes every check of its step"))
	} else {
		out = append(out, st.Bad.Render(fit("✗ "+r.LastFail+"  §"+r.Section, w)))
		out = append(out, roomWrap(r.Hint.ZH, w)...)
		out = append(out, roomWrap(r.Hint.EN, w)...)
		if r.Detail != "" {
			out = append(out, st.Warn.Render(fit(r.Detail, w)))
		}
	}
	if r.Request != "" {
		out = append(out, "", st.Accent.Render("the latest request:"))
		out = append(out, roomWrap(r.Request, w)...)
	}
	if r.Step > 0 && r.Step <= len(m.view.Steps) {
		out = append(out, st.Accent.Render("expected shape ("+m.view.Steps[r.Step-1].ID+"):"))
		out = append(out, roomWrap(m.view.Steps[r.Step-1].Expect, w)...)
	}
	if r.SessionID != "" {
		open := "modelwire replay " + r.SessionID
		if m.session != nil {
			open = "o opens it"
		}
		out = append(out, "", st.Muted.Render(fit("session "+r.SessionID+": "+open, w)))
	}
	return out
}

func (m *RoomModel) summary() string {
	s := m.view.Summary
	n := len(m.view.Participants)
	out := fmt.Sprintf("%d participants", n)
	if s.StuckStep > 0 {
		out += fmt.Sprintf(" · most on step %d (%d)", s.StuckStep, s.StuckCount)
	}
	if s.MostFailed != "" {
		out += fmt.Sprintf(" · failed most: %s (%d)", s.MostFailed, s.MostFailedCount)
	}
	return out
}

func stepText(r workshop.Row) string {
	if r.Step == 0 {
		return "—"
	}
	return fmt.Sprint(r.Step)
}

func roomDur(s float64) string {
	d := time.Duration(s) * time.Second
	if d < time.Minute {
		return fmt.Sprintf("%ds", int(d.Seconds()))
	}
	return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
}

// wrap breaks s into lines of at most w cells.
func roomWrap(s string, w int) []string {
	return strings.Split(ansi.Wrap(s, w, " "), "\n")
}

// RunRoom runs the room view until q or ctx ends.
func RunRoom(ctx context.Context, fetch RoomFetch, theme, note string, session func(id string) *exec.Cmd) error {
	_, err := tea.NewProgram(NewRoomModel(fetch, theme, note).WithSession(session), tea.WithAltScreen(), tea.WithContext(ctx)).Run()
	if ctx.Err() != nil {
		return nil
	}
	return err
}
