package ui

import (
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/modelwire/modelwire/session"
	"github.com/modelwire/modelwire/store"
)

// matrixLib is a store holding check results: Checks answers cells, Diff
// records the pairs it was asked to compare. The embedded Library is nil:
// the matrix must need nothing else from it.
type matrixLib struct {
	Library
	cells []CheckCell
	mu    sync.Mutex
	diffs [][2]string
}

func (l *matrixLib) List() ([]session.SessionInfo, error)  { return nil, nil }
func (l *matrixLib) Search(string) ([]string, error)       { return nil, nil }
func (l *matrixLib) Checks() ([]CheckCell, error)          { return l.cells, nil }
func (l *matrixLib) Diff(a, b string) (*DiffResult, error) { l.record(a, b); return diffOf(a, b), nil }
func (l *matrixLib) record(a, b string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.diffs = append(l.diffs, [2]string{a, b})
}

func diffOf(a, b string) *DiffResult {
	side := func(id, sc string) *store.Session {
		return &store.Session{SessionInfo: store.SessionInfo{ID: id, Scenario: sc, Protocol: "openai-chat", Status: store.StatusDone}}
	}
	return &DiffResult{A: side(a, "refund"), B: side(b, "refund/wrong-cap")}
}

// matrixCells: two recordings, each re-sent to five targets — a pass, the
// weaker model's regression of the domain layer, an error, a failure the
// recording shared, and a capability lost on a pass.
func matrixCells() []CheckCell {
	var cells []CheckCell
	for _, rec := range []string{"1recordingaa", "1recordingbb"} {
		base := CheckCell{Recording: rec, RecordingProtocol: "openai-responses", RecordingVerdict: "pass", Provider: "sim", Model: "refund-model"}
		add := func(target, child, status, layer string, regs ...string) {
			c := base
			c.Target, c.Status, c.FailedLayer, c.Regressions, c.Protocol = target, status, layer, regs, target
			if child != "" {
				c.Child = child + rec[10:]
			}
			cells = append(cells, c)
		}
		add("openai-chat", "1childchat", "pass", "")
		add("sim:refund/wrong-cap", "1childwcap", "fail", "domain", "layer:domain")
		add("anthropic-messages", "", "error", "", "error")
		add("gemini-interactions", "1childgemi", "fail", "schema")
		add("deepseek-chat", "1childdeep", "pass", "", "capability:usage_present")
	}
	cells[7].RecordingVerdict, cells[8].RecordingVerdict = "pass", "pass"
	cells[8].Status, cells[8].FailedLayer, cells[8].Regressions = "fail", "schema", nil // shared failure
	return cells
}

// openMatrix opens the sessions list, then the matrix with M, at 80×24.
func openMatrix(t *testing.T, lib *matrixLib) *Model {
	t.Helper()
	m := New(Options{Library: lib})
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	deliver(m, press(m, "s"), func(msg tea.Msg) bool { _, ok := msg.(sessionsMsg); return ok })
	deliver(m, press(m, "M"), isMatrix)
	if _, ok := m.top().(*matrixDialog); !ok {
		t.Fatalf("M opened %T, want the check matrix", m.top())
	}
	return m
}

func isMatrix(msg tea.Msg) bool { _, ok := msg.(matrixMsg); return ok }

// deliver runs a command until the message want picks arrives and hands
// the model that message (the status line's timers are not waited out).
func deliver(m *Model, cmd tea.Cmd, want func(tea.Msg) bool) {
	for _, msg := range runUntil(cmd, want, 10*time.Second) {
		if want(msg) {
			m.Update(msg)
		}
	}
}

// fits fails when a line of the screen is wider than 80 cells.
func fits(t *testing.T, screen string) {
	t.Helper()
	for i, l := range strings.Split(screen, "\n") {
		if w := lipgloss.Width(l); w > 80 {
			t.Errorf("line %d is %d cells wide: %q", i, w, ansiStrip(l))
		}
	}
}

// The sessions list's M opens the matrix: a row per recording, a column
// per target, each verdict by its glyph; at 80 columns the targets that
// do not fit are counted and reached with → (the recording column stays),
// and the cursor's cell is spelled out under the matrix, regressions and
// all.
func TestMatrixView(t *testing.T) {
	lib := &matrixLib{cells: matrixCells()}
	m := openMatrix(t, lib)
	v := m.View()
	fits(t, v)
	contains(t, v, "Check matrix · 2 recordings × 5 targets · 6 regressed",
		"recording", "openai-chat", "sim:refund/wrong-cap", "1recordingaa ✓ openai-responses", "1recordingbb",
		"✓ pass", "✗ fail domain ↓", "targets 1–2 of 5 ›",
		"1recordingaa → openai-chat", "child     1childchataa", "regressed none", "enter pair side by side")
	if strings.Contains(ansiStrip(v), "deepseek-chat") {
		t.Errorf("all five targets drawn at 80 columns; want them scrolled:\n%s", ansiStrip(v))
	}
	// → to the error, the shared failure and the lost capability; the
	// recording column stays on screen.
	press(m, "right", "right")
	v = m.View()
	fits(t, v)
	contains(t, v, "▸ ! error", "1recordingaa ✓", "1recordingaa → anthropic-messages", "regressed error")
	press(m, "l", "l")
	v = m.View()
	fits(t, v)
	contains(t, v, "deepseek-chat", "✓ pass ↓", "of 5 ‹", "regressed capability:usage_present", "1recordingaa ✓")
	press(m, "down", "left")
	contains(t, m.View(), "1recordingbb → gemini-interactions", "✗ fail schema", "regressed none")
	// A cell with no child (it could not run) has no pair to open.
	press(m, "left")
	press(m, "enter") // its command only clears the status line later
	contains(t, m.View(), "was not checked")
	if len(lib.diffs) != 0 {
		t.Errorf("enter on an error cell compared %v", lib.diffs)
	}
}

// Each verdict has its own semantic style and glyph: pass good, a
// regression or an error bad, a failure the recording shared a warning —
// never a raw colour, so every theme (and NO_COLOR, by the glyph) tells
// them apart.
func TestMatrixVerdictStyles(t *testing.T) {
	m := openMatrix(t, &matrixLib{cells: matrixCells()})
	d := m.top().(*matrixDialog)
	s := m.c.Styles
	for _, tc := range []struct {
		cell CheckCell
		want string
	}{
		{CheckCell{Status: "pass"}, s.Good.Render("✓ pass")},
		{CheckCell{Status: "fail", FailedLayer: "domain", Regressions: []string{"layer:domain"}}, s.Bad.Render("✗ fail domain ↓")},
		{CheckCell{Status: "error", Regressions: []string{"error"}}, s.Bad.Render("! error")},
		{CheckCell{Status: "fail", FailedLayer: "schema"}, s.Warn.Render("✗ fail schema")},
		{CheckCell{Status: "pass", Regressions: []string{"capability:usage_present"}}, s.Bad.Render("✓ pass ↓")},
	} {
		if got := d.cellText(tc.cell); got != tc.want {
			t.Errorf("%+v renders %q, want %q", tc.cell, got, tc.want)
		}
	}
}

// Enter on the wrong-cap cell compares the recording with its child side
// by side (the diff view, a over b); esc comes back to the matrix with
// the cursor where it was.
func TestMatrixEnterOpensThePair(t *testing.T) {
	lib := &matrixLib{cells: matrixCells()}
	m := openMatrix(t, lib)
	press(m, "down", "right")
	deliver(m, press(m, "enter"), func(msg tea.Msg) bool { _, ok := msg.(diffMsg); return ok })
	if len(lib.diffs) != 1 || lib.diffs[0] != [2]string{"1recordingbb", "1childwcapbb"} {
		t.Fatalf("enter compared %v, want the recording and its wrong-cap child", lib.diffs)
	}
	if _, ok := m.top().(*diffDialog); !ok {
		t.Fatalf("enter opened %T, want the diff", m.top())
	}
	v := m.View()
	fits(t, v)
	contains(t, v, "Diff 1recordingbb → 1childwcapbb", "a 1recordingbb", "│ b 1childwcapbb", "refund/wrong-cap")
	press(m, "esc")
	contains(t, m.View(), "Check matrix", "1recordingbb → sim:refund/wrong-cap")
}

// With nothing checked the matrix says how to fill it; a reading that
// arrives after a newer one was asked for is dropped.
func TestMatrixEmptyAndStale(t *testing.T) {
	lib := &matrixLib{}
	m := openMatrix(t, lib)
	contains(t, m.View(), "no check results stored yet", "modelwire check")
	lib.cells = matrixCells()
	deliver(m, m.loadMatrix(), isMatrix)
	m.Update(matrixMsg{gen: m.matrixGen - 1}) // an older reading, empty
	contains(t, m.View(), "2 recordings × 5 targets")
	if n := len(m.dialogs); n != 2 {
		t.Errorf("%d dialogs, want the sessions list and one matrix (a refresh replaces it)", n)
	}
}

// check --tui opens the workbench on the matrix.
func TestMatrixOption(t *testing.T) {
	m := New(Options{Library: &matrixLib{cells: matrixCells()}, Matrix: true})
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	deliver(m, m.Init(), isMatrix)
	contains(t, m.View(), "Check matrix · 2 recordings × 5 targets")
}
