package ui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/modelwire/modelwire/session"
)

// The values view (v) is a full-screen dialog with every value the
// session has produced so far, whole (values.go writes them): the tool
// calls with their call_id, arguments and results, turn by turn; the
// final answer in the output schema's order; every domain check with the
// values it used; every fact with its arithmetic and what it read. It
// scrolls; tab and the section's digit jump between the parts, so any
// value is two keys from the workbench. It reads the live state, so a
// result that arrives while it is open appears in it.

type valuesDialog struct {
	c  *Common
	km *KeyMap
	d  *viewData
	// scroll is the first line shown; w the inner width of the last
	// layout and room the lines a page shows.
	scroll, w, room int
	// lines and heads are the last layout (heads: each section's first
	// line; marks: each turn's calls), for the width, state and theme in
	// key.
	lines []string
	heads []int
	names []string
	marks map[int]int
	key   string
}

// newValuesDialog lays the view out for a w-cell dialog and opens it at
// what the focus is about: the answer from the validation panel, else the
// current turn's tool calls (the first part when it has none).
func newValuesDialog(c *Common, km *KeyMap, d *viewData, focus panelID, w int) *valuesDialog {
	v := &valuesDialog{c: c, km: km, d: d, w: max(10, w-c.Styles.Dialog.GetHorizontalFrameSize())}
	v.layout(v.w)
	if t := d.turn(); t != nil {
		if at, ok := v.marks[t.N]; ok {
			v.scroll = at
		}
	}
	for i, n := range v.names {
		if focus == panelValidation && n == "answer" {
			v.scroll = v.heads[i]
		}
	}
	return v
}

func (v *valuesDialog) Kind() dialogKind       { return dlgValues }
func (v *valuesDialog) Update(tea.Msg) tea.Cmd { return nil }

func (v *valuesDialog) Bindings(km *KeyMap) []key.Binding {
	return []key.Binding{km.Nav.Down, km.Nav.PageDown, km.Values.Section, km.Values.NextSection, km.Dialog.Close}
}

func (v *valuesDialog) HandleKey(msg tea.KeyMsg, km *KeyMap) (action, tea.Cmd) {
	v.layout(v.w) // the sections as the state is now
	room := v.room
	if room < 1 {
		room = dialogPage // not drawn yet
	}
	switch {
	case key.Matches(msg, km.Dialog.Close), key.Matches(msg, km.Global.Values):
		return actClose{}, nil
	case dialogScroll(msg, km, &v.scroll, room):
	case key.Matches(msg, km.Nav.Bottom):
		v.scroll = len(v.lines)
	case key.Matches(msg, km.Values.NextSection):
		v.scroll = v.nextHead(1)
	case key.Matches(msg, km.Values.PrevSection):
		v.scroll = v.nextHead(-1)
	case key.Matches(msg, km.Values.Section):
		if i := int(msg.Runes[0] - '1'); i >= 0 && i < len(v.heads) {
			v.scroll = v.heads[i]
		}
	}
	v.scroll = max(0, v.scroll)
	return nil, nil
}

// nextHead is the first line of the next (dir 1) or previous section from
// the one at the top of the view, round the ends.
func (v *valuesDialog) nextHead(dir int) int {
	if len(v.heads) == 0 {
		return v.scroll
	}
	cur := 0
	for i, h := range v.heads {
		if h <= v.scroll {
			cur = i
		}
	}
	return v.heads[(cur+dir+len(v.heads))%len(v.heads)]
}

// layout builds the lines for inner width w, once per width, state
// change and theme.
func (v *valuesDialog) layout(w int) {
	st := v.d.state
	k := fmt.Sprintf("%d/%p/%d/%d", w, st, st.Applied, v.c.Gen)
	if k == v.key {
		return
	}
	v.key = k
	s := v.c.Styles
	v.lines, v.heads, v.names, v.marks = v.lines[:0], nil, nil, map[int]int{}
	for i, sec := range v.c.valueSections(v.d, w, true) {
		if i > 0 {
			v.lines = append(v.lines, "")
		}
		v.heads = append(v.heads, len(v.lines))
		v.names = append(v.names, sec.name)
		for turn, at := range sec.marks {
			v.marks[turn] = len(v.lines) + 1 + at
		}
		v.lines = append(v.lines, s.Key.Render(fmt.Sprint(i+1))+" "+v.c.section(sec.name))
		v.lines = append(v.lines, sec.lines...)
	}
	if len(v.lines) == 0 {
		v.lines = []string{s.Muted.Render("no tool call and no answer yet")}
	}
}

func (v *valuesDialog) View(w, h int) string {
	s := v.c.Styles
	inner := max(10, w-s.Dialog.GetHorizontalFrameSize())
	v.w = inner
	v.layout(inner)
	// The title, the position line and the key line take three rows.
	v.room = max(1, h-s.Dialog.GetVerticalFrameSize()-3)
	v.scroll = min(v.scroll, max(0, len(v.lines)-v.room))
	end := min(len(v.lines), v.scroll+v.room)
	lines := append([]string{}, v.lines[v.scroll:end]...)
	for len(lines) < v.room {
		lines = append(lines, "")
	}
	pos := fmt.Sprintf("lines %d–%d of %d", v.scroll+1, end, len(v.lines))
	var secs []string
	for i, n := range v.names {
		name, _, _ := strings.Cut(n, " ·")
		secs = append(secs, fmt.Sprintf("%d %s", i+1, name))
	}
	if len(secs) > 0 {
		pos += " · " + strings.Join(secs, " · ")
	}
	lines = append(lines, s.Muted.Render(cut(pos, inner)))
	title := "Values"
	if t := v.d.turn(); t != nil {
		title += fmt.Sprintf(" · turn %d", t.N)
	}
	if id := v.d.state.SessionID; id != "" {
		title += " · session " + id
	}
	return v.c.box(title, lines, hintOf(v.Bindings(v.km)...), w, h)
}

// hasValues reports whether the values view has anything to show.
func hasValues(st *session.State) bool {
	if st == nil {
		return false
	}
	if len(st.Output) > 0 {
		return true
	}
	for _, t := range st.Turns {
		if len(t.Proposals) > 0 {
			return true
		}
	}
	return false
}
