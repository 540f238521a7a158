package ui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/modelwire/modelwire/timeline"
)

// The check matrix: what `modelwire check` stored, read back from the
// store — a row per recorded session, a column per target, each cell the
// child's verdict by glyph and colour — opened from the sessions list
// with M (or by `check --tui`). Enter on a cell compares the recording
// with its child side by side (the diff view).

// CheckCell is one recording re-sent to one target (Library.Checks).
type CheckCell = timeline.CheckCell

// actOpenMatrix loads the check matrix.
type actOpenMatrix struct{}

func (actOpenMatrix) isAction() {}

// matrixMsg carries the cells back; gen drops an answer no longer wanted.
type matrixMsg struct {
	gen   int
	cells []CheckCell
	err   error
}

// loadMatrix reads the check results in a command.
func (m *Model) loadMatrix() tea.Cmd {
	if m.opts.Library == nil {
		return m.setStatus(levelWarn, "no session store is open")
	}
	m.matrixGen++
	gen, lib := m.matrixGen, m.opts.Library
	return tea.Batch(m.setStatus(levelInfo, "reading check results…"), func() tea.Msg {
		cells, err := lib.Checks()
		return matrixMsg{gen: gen, cells: cells, err: err}
	})
}

// onMatrix opens the view on the cells that arrived (or refreshes the
// one open).
func (m *Model) onMatrix(msg matrixMsg) tea.Cmd {
	if msg.gen != m.matrixGen {
		return nil
	}
	if msg.err != nil {
		return m.setStatus(levelError, "check results: "+msg.err.Error())
	}
	d := newMatrixDialog(m.c, &m.km, msg.cells)
	if t := m.top(); t != nil && t.Kind() == dlgMatrix {
		m.dialogs[len(m.dialogs)-1] = d
	} else {
		m.dialogs = append(m.dialogs, d)
	}
	if len(msg.cells) == 0 {
		return m.setStatus(levelInfo, "no check results stored yet")
	}
	return m.setStatus(levelInfo, fmt.Sprintf("%s × %s, %d regressed", count(len(d.rows), "recording"), count(len(d.cols), "target"), d.regressed))
}

// matrixDialog draws the matrix with a cell cursor; the recording column
// stays put while the target columns scroll sideways.
type matrixDialog struct {
	c  *Common
	km *KeyMap
	// rows are the recordings and cols the targets, in the order check
	// made them; cells are keyed by both.
	rows, cols []string
	rec        map[string]CheckCell // a cell of each row, for the recording's figures
	cells      map[[2]string]CheckCell
	regressed  int
	// row and col are the cursor; top and left the first row and target
	// column drawn.
	row, col, top, left int
	// shown is how many target columns the last frame drew.
	shown int
}

func newMatrixDialog(c *Common, km *KeyMap, cells []CheckCell) *matrixDialog {
	d := &matrixDialog{c: c, km: km, rec: map[string]CheckCell{}, cells: map[[2]string]CheckCell{}}
	seenCol := map[string]bool{}
	for _, x := range cells {
		if _, ok := d.rec[x.Recording]; !ok {
			d.rows = append(d.rows, x.Recording)
			d.rec[x.Recording] = x
		}
		if !seenCol[x.Target] {
			seenCol[x.Target] = true
			d.cols = append(d.cols, x.Target)
		}
		d.cells[[2]string{x.Recording, x.Target}] = x
		if x.Regressed() {
			d.regressed++
		}
	}
	return d
}

func (d *matrixDialog) Kind() dialogKind       { return dlgMatrix }
func (d *matrixDialog) Update(tea.Msg) tea.Cmd { return nil }
func (d *matrixDialog) Bindings(km *KeyMap) []key.Binding {
	// For help, the four arrows as two bindings: rows are recordings,
	// columns targets.
	rows := key.NewBinding(key.WithKeys(append(km.Nav.Up.Keys(), km.Nav.Down.Keys()...)...), key.WithHelp("↑↓", "recording"))
	cols := key.NewBinding(key.WithKeys(append(km.Dialog.Left.Keys(), km.Dialog.Right.Keys()...)...), key.WithHelp("←→", "target"))
	return []key.Binding{rows, cols, km.Dialog.Pair, km.Dialog.Close}
}

func (d *matrixDialog) HandleKey(msg tea.KeyMsg, km *KeyMap) (action, tea.Cmd) {
	switch {
	case key.Matches(msg, km.Dialog.Close), key.Matches(msg, km.Dialog.Matrix):
		return actClose{}, nil
	case key.Matches(msg, km.Nav.Up):
		d.row = max(0, d.row-1)
	case key.Matches(msg, km.Nav.Down):
		d.row = min(max(0, len(d.rows)-1), d.row+1)
	case key.Matches(msg, km.Nav.Top):
		d.row = 0
	case key.Matches(msg, km.Nav.Bottom):
		d.row = max(0, len(d.rows)-1)
	case key.Matches(msg, km.Dialog.Left):
		d.col = max(0, d.col-1)
	case key.Matches(msg, km.Dialog.Right):
		d.col = min(max(0, len(d.cols)-1), d.col+1)
	case key.Matches(msg, km.Dialog.Pair):
		if c, ok := d.cursor(); ok && c.Child != "" {
			return actOpenDiff{a: c.Recording, b: c.Child}, nil
		}
		return actStatus{level: levelWarn, text: "this recording was not checked against this target"}, nil
	}
	return nil, nil
}

// cursor is the cell under the cursor, if that pair was checked.
func (d *matrixDialog) cursor() (CheckCell, bool) {
	if d.row >= len(d.rows) || d.col >= len(d.cols) {
		return CheckCell{}, false
	}
	c, ok := d.cells[[2]string{d.rows[d.row], d.cols[d.col]}]
	return c, ok
}

// verdict is a cell's glyph and words: ✓ pass, ✗ fail and the first
// failing layer, ! error; ↓ where the target regressed.
func verdict(status, layer string, regressed bool) string {
	v := status
	switch status {
	case "pass":
		v = "✓ pass"
	case "fail":
		v = "✗ fail"
		if layer != "" {
			v += " " + layer
		}
	case "error":
		v = "! error"
	}
	if regressed && status != "error" {
		v += " ↓"
	}
	return v
}

// cellText renders a cell in its verdict's semantic style: a regression
// or an error is bad, a failure the recording shared a warning, a pass
// good.
func (d *matrixDialog) cellText(c CheckCell) string {
	s := d.c.Styles
	text := verdict(c.Status, c.FailedLayer, c.Regressed())
	switch {
	case c.Regressed():
		return s.Bad.Render(text)
	case c.Status == "pass":
		return s.Good.Render(text)
	default:
		return s.Warn.Render(text)
	}
}

// recText is the recording column: its id, verdict glyph and protocol.
func (d *matrixDialog) recText(id string) string {
	r := d.rec[id]
	g := d.c.Styles.Good.Render("✓")
	if r.RecordingVerdict != "pass" {
		g = d.c.Styles.Warn.Render("✗")
	}
	return id + " " + g + " " + r.RecordingProtocol
}

// Column widths: the recording column at most recMax cells, a target
// column between colMin and colMax, colGap between columns.
const (
	recMax = 36
	colMin = 8
	colMax = 24
	colGap = 2
)

// widths measures the recording column and each target column.
func (d *matrixDialog) widths() (int, []int) {
	rw := lipgloss.Width("recording")
	for _, id := range d.rows {
		rw = max(rw, lipgloss.Width(d.recText(id)))
	}
	ws := make([]int, len(d.cols))
	for j, t := range d.cols {
		w := max(colMin, lipgloss.Width(t))
		for _, r := range d.rows {
			if c, ok := d.cells[[2]string{r, t}]; ok {
				w = max(w, lipgloss.Width(verdict(c.Status, c.FailedLayer, c.Regressed())))
			}
		}
		ws[j] = min(colMax, w)
	}
	return min(recMax, rw), ws
}

// visibleCols moves the first column drawn so the cursor's is on screen
// and says how many columns fit from there in inner cells.
func (d *matrixDialog) visibleCols(inner, rw int, ws []int) int {
	fits := func(from int) int {
		used, n := rw+colGap, 0
		for j := from; j < len(ws); j++ {
			if used+ws[j] > inner && n > 0 {
				break
			}
			used += ws[j] + colGap
			n++
		}
		return n
	}
	d.left = min(d.left, d.col)
	for d.left < d.col && d.left+fits(d.left) <= d.col {
		d.left++
	}
	return fits(d.left)
}

// detail is the cursor's cell in full: the pair, both verdicts, every
// regression, wrapped to inner cells.
func (d *matrixDialog) detail(inner int) []string {
	s := d.c.Styles
	if len(d.rows) == 0 {
		return nil
	}
	r := d.rec[d.rows[d.row]]
	c, ok := d.cursor()
	// Long names wrap rather than cut: every value is readable here.
	var out []string
	for _, l := range wrapLines(r.Recording+" → "+d.cols[d.col], inner) {
		out = append(out, s.Accent.Render(l))
	}
	if !ok {
		return append(out, s.Muted.Render("not checked against this target"))
	}
	recV := verdict(r.RecordingVerdict, r.RecordingLayer, false)
	out = append(out, wrapLines(fmt.Sprintf("child     %s  %s · %s · %s", c.Child, c.Protocol, c.Provider, c.Model), inner)...)
	out = append(out, "target    "+d.cellText(c))
	out = append(out, wrapLines("recording "+recV+" · "+r.RecordingProtocol, inner)...)
	regs := "none"
	if len(c.Regressions) > 0 {
		regs = strings.Join(c.Regressions, ", ")
	}
	for i, l := range wrapLines("regressed "+regs, inner) {
		if i == 0 && len(c.Regressions) > 0 {
			l = s.Bad.Render(l)
		}
		out = append(out, l)
	}
	return out
}

// lines renders the matrix within inner×room cells.
func (d *matrixDialog) lines(inner, room int) []string {
	s := d.c.Styles
	if len(d.rows) == 0 {
		return []string{s.Muted.Render("no check results stored yet"), "",
			cut("modelwire check --scenario refund --to openai-chat --to sim:refund/wrong-cap", inner),
			cut("stores each re-sent session under its recording; they show here.", inner)}
	}
	rw, ws := d.widths()
	n := d.visibleCols(inner-2, rw, ws)
	pad := strings.Repeat(" ", colGap)
	head := "  " + fit("recording", rw)
	for j := d.left; j < d.left+n; j++ {
		head += pad + fit(d.cols[j], ws[j])
	}
	d.shown = n
	out := []string{s.Muted.Render(head)}
	det := d.detail(inner)
	rowsRoom := max(1, room-len(out)-1-len(det))
	d.top = min(d.top, d.row)
	if d.row >= d.top+rowsRoom {
		d.top = d.row - rowsRoom + 1
	}
	for i := d.top; i < min(len(d.rows), d.top+rowsRoom); i++ {
		id := d.rows[i]
		gut := "  "
		if i == d.row {
			gut = "▸ "
		}
		line := gut + fit(d.recText(id), rw)
		for j := d.left; j < d.left+n; j++ {
			c, ok := d.cells[[2]string{id, d.cols[j]}]
			text := s.Subtle.Render("·")
			if ok {
				text = d.cellText(c)
			}
			gap := pad
			if i == d.row && j == d.col {
				// The cursor's cell: highlighted, and marked by a glyph
				// too, so it shows with NO_COLOR.
				text = s.Selected.Render(ansiStrip(fit(text, ws[j])))
				gap = "▸ "
			}
			line += gap + fit(text, ws[j])
		}
		out = append(out, line)
	}
	return append(append(out, ""), det...)
}

func (d *matrixDialog) View(w, h int) string {
	st := d.c.Styles.Dialog
	inner := w - st.GetHorizontalFrameSize()
	room := max(3, h-st.GetVerticalFrameSize()-2)
	lines := d.lines(inner, room)
	title := fmt.Sprintf("Check matrix · %s × %s · %d regressed", count(len(d.rows), "recording"), count(len(d.cols), "target"), d.regressed)
	if d.shown > 0 && d.shown < len(d.cols) {
		// Which targets are on screen, and on which side the others are.
		more := fmt.Sprintf(" · targets %d–%d of %d", d.left+1, d.left+d.shown, len(d.cols))
		if d.shown == 1 {
			more = fmt.Sprintf(" · target %d of %d", d.left+1, len(d.cols))
		}
		if d.left > 0 {
			more += " ‹"
		}
		if d.left+d.shown < len(d.cols) {
			more += " ›"
		}
		title += more
	}
	return d.c.box(title, lines, hintOf(d.Bindings(d.km)...), w, h)
}
