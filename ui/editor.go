package ui

import (
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
)

// editor is a small text editor for the dialogs: a multi-line one for
// tool arguments and sources, a single-line one for a reason or a filter.
//
// Why not bubbles' textarea and textinput: both import
// github.com/atotto/clipboard, which is not in go.sum (see the report);
// this one needs nothing beyond bubbletea. Widths are display cells, so
// CJK text places the cursor correctly.
type editor struct {
	lines  [][]rune
	row    int
	col    int // rune index in lines[row]
	single bool
	focus  bool
	off    int // first visual row shown
	prompt string
	holder string // placeholder shown when empty
}

func newEditor(single bool) *editor {
	return &editor{lines: [][]rune{nil}, single: single}
}

func (e *editor) SetValue(s string) {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	if e.single {
		s = strings.ReplaceAll(s, "\n", " ")
	}
	parts := strings.Split(s, "\n")
	e.lines = make([][]rune, len(parts))
	for i, p := range parts {
		e.lines[i] = []rune(strings.ReplaceAll(p, "\t", "  "))
	}
	e.row = len(e.lines) - 1
	e.col = len(e.lines[e.row])
	e.off = 0
}

func (e *editor) Value() string {
	parts := make([]string, len(e.lines))
	for i, l := range e.lines {
		parts[i] = string(l)
	}
	return strings.Join(parts, "\n")
}

func (e *editor) Focus()           { e.focus = true }
func (e *editor) Blur()            { e.focus = false }
func (e *editor) LineCount() int   { return len(e.lines) }
func (e *editor) Focused() bool    { return e.focus }
func (e *editor) line() []rune     { return e.lines[e.row] }
func (e *editor) setLine(l []rune) { e.lines[e.row] = l }

// Update handles a key; it reports whether the text changed.
func (e *editor) Update(msg tea.Msg) bool {
	k, ok := msg.(tea.KeyMsg)
	if !ok || !e.focus {
		return false
	}
	switch k.Type {
	case tea.KeyRunes, tea.KeySpace:
		r := k.Runes
		if k.Type == tea.KeySpace {
			r = []rune{' '}
		}
		e.insert(r)
		return true
	case tea.KeyTab:
		if !e.single {
			e.insert([]rune("  "))
			return true
		}
	case tea.KeyEnter:
		if !e.single {
			l := e.line()
			rest := append([]rune(nil), l[e.col:]...)
			e.setLine(l[:e.col])
			e.lines = append(e.lines[:e.row+1], append([][]rune{rest}, e.lines[e.row+1:]...)...)
			e.row++
			e.col = 0
			return true
		}
	case tea.KeyBackspace:
		switch {
		case e.col > 0:
			l := e.line()
			e.setLine(append(l[:e.col-1:e.col-1], l[e.col:]...))
			e.col--
			return true
		case e.row > 0:
			prev := e.lines[e.row-1]
			e.col = len(prev)
			e.lines[e.row-1] = append(prev, e.line()...)
			e.lines = append(e.lines[:e.row], e.lines[e.row+1:]...)
			e.row--
			return true
		}
	case tea.KeyDelete:
		l := e.line()
		switch {
		case e.col < len(l):
			e.setLine(append(l[:e.col:e.col], l[e.col+1:]...))
			return true
		case e.row < len(e.lines)-1:
			e.setLine(append(l, e.lines[e.row+1]...))
			e.lines = append(e.lines[:e.row+1], e.lines[e.row+2:]...)
			return true
		}
	case tea.KeyLeft:
		if e.col > 0 {
			e.col--
		} else if e.row > 0 {
			e.row--
			e.col = len(e.line())
		}
	case tea.KeyRight:
		if e.col < len(e.line()) {
			e.col++
		} else if e.row < len(e.lines)-1 {
			e.row++
			e.col = 0
		}
	case tea.KeyUp:
		if e.row > 0 {
			e.row--
			e.col = min(e.col, len(e.line()))
		}
	case tea.KeyDown:
		if e.row < len(e.lines)-1 {
			e.row++
			e.col = min(e.col, len(e.line()))
		}
	case tea.KeyHome, tea.KeyCtrlA:
		e.col = 0
	case tea.KeyEnd, tea.KeyCtrlE:
		e.col = len(e.line())
	case tea.KeyCtrlK:
		e.setLine(e.line()[:e.col])
		return true
	case tea.KeyCtrlU:
		e.setLine(append([]rune(nil), e.line()[e.col:]...))
		e.col = 0
		return true
	}
	return false
}

func (e *editor) insert(r []rune) {
	var clean []rune
	for _, c := range r {
		switch {
		case c == '\n' || c == '\r':
			if e.single {
				clean = append(clean, ' ')
				continue
			}
			// A paste with newlines: insert line by line.
			e.insert(clean)
			clean = nil
			e.Update(tea.KeyMsg{Type: tea.KeyEnter})
		case c == '\t':
			clean = append(clean, ' ', ' ')
		case c >= ' ':
			clean = append(clean, c)
		}
	}
	l := e.line()
	nl := make([]rune, 0, len(l)+len(clean))
	nl = append(nl, l[:e.col]...)
	nl = append(nl, clean...)
	nl = append(nl, l[e.col:]...)
	e.setLine(nl)
	e.col += len(clean)
}

// View renders the text in w×h cells (h 1 for a single line), the cursor
// shown with cursor style, scrolled to keep the cursor in view.
func (e *editor) View(w, h int, c *Common) string {
	s := c.Styles
	pw := displayWidth(e.prompt)
	tw := max(1, w-pw)
	if e.single {
		h = 1
	}
	type vrow struct {
		text   string
		cursor int // cell of the cursor on this row, -1 when not here
	}
	var rows []vrow
	curRow := 0
	for i, l := range e.lines {
		// Cut the logical line into visual rows of at most tw cells.
		start, width := 0, 0
		emit := func(end int, last bool) {
			cur := -1
			if i == e.row && e.col >= start && (e.col < end || (last && e.col == end)) {
				cur = ansi.StringWidth(string(l[start:e.col]))
				curRow = len(rows)
			}
			rows = append(rows, vrow{text: string(l[start:end]), cursor: cur})
		}
		for j, r := range l {
			rw := ansi.StringWidth(string(r))
			if width+rw > tw-1 && j > start {
				emit(j, false)
				start, width = j, 0
			}
			width += rw
		}
		emit(len(l), true)
	}
	if curRow < e.off {
		e.off = curRow
	}
	if curRow >= e.off+h {
		e.off = curRow - h + 1
	}
	if e.off > max(0, len(rows)-h) {
		e.off = max(0, len(rows)-h)
	}
	var out []string
	for i := e.off; i < min(len(rows), e.off+h); i++ {
		r := rows[i]
		prompt := e.prompt
		if i != e.off && e.single {
			prompt = ""
		}
		text := r.text
		if e.Value() == "" && e.holder != "" && !e.focus {
			text = s.Subtle.Render(e.holder)
		}
		if e.focus && r.cursor >= 0 {
			before := ansi.Truncate(r.text, r.cursor, "")
			rest := []rune(r.text[len(before):])
			under := " "
			after := ""
			if len(rest) > 0 {
				under, after = string(rest[0]), string(rest[1:])
			}
			text = before + s.Selected.Render(under) + after
		}
		out = append(out, s.Muted.Render(prompt)+text)
	}
	for len(out) < h {
		out = append(out, s.Muted.Render(e.prompt))
	}
	return strings.Join(out, "\n")
}
