package ui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/modelwire/modelwire/diff"
	"github.com/modelwire/modelwire/session"
)

// The diff view: two stored sessions side by side (package diff), opened
// from the sessions list with D — on two sessions marked with m, or on a
// fork and the session it came from.

// DiffResult is what the view shows: two sessions compared.
type DiffResult = diff.Result

// actOpenDiff compares session a with b.
type actOpenDiff struct{ a, b string }

func (actOpenDiff) isAction() {}

// diffMsg carries a comparison back; gen drops one that is no longer
// wanted.
type diffMsg struct {
	gen int
	res *DiffResult
	err error
}

// loadDiff compares two sessions in a command.
func (m *Model) loadDiff(a, b string) tea.Cmd {
	if m.opts.Library == nil {
		return m.setStatus(levelWarn, "no session store is open")
	}
	m.diffGen++
	gen, lib := m.diffGen, m.opts.Library
	return tea.Batch(m.setStatus(levelInfo, "comparing "+a+" with "+b+"…"), func() tea.Msg {
		res, err := lib.Diff(a, b)
		return diffMsg{gen: gen, res: res, err: err}
	})
}

// onDiff opens the view on a comparison that arrived.
func (m *Model) onDiff(msg diffMsg) tea.Cmd {
	if msg.gen != m.diffGen {
		return nil
	}
	if msg.err != nil {
		return m.setStatus(levelError, "diff: "+msg.err.Error())
	}
	m.dialogs = append(m.dialogs, &diffDialog{c: m.c, km: &m.km, res: msg.res})
	status := count(len(msg.res.Changes), "difference")
	if msg.gen == m.compareAt && len(m.opts.Compare) > 2 {
		status += " · the other children: " + strings.Join(m.opts.Compare[2:], ", ") + " (s, then D on each ↳ row)"
	}
	return m.setStatus(levelInfo, status)
}

// openCompare opens the comparison Options.Compare asks for, once.
func (m *Model) openCompare() tea.Cmd {
	if len(m.opts.Compare) < 2 || m.compareAt != 0 {
		return nil
	}
	cmd := m.loadDiff(m.opts.Compare[0], m.opts.Compare[1])
	m.compareAt = m.diffGen
	return cmd
}

// diffDialog shows the differences of two sessions: grouped by turn, each
// as its path with a's value on the left and b's on the right.
type diffDialog struct {
	c      *Common
	km     *KeyMap
	res    *DiffResult
	scroll int
}

func (d *diffDialog) Kind() dialogKind       { return dlgDiff }
func (d *diffDialog) Update(tea.Msg) tea.Cmd { return nil }
func (d *diffDialog) Bindings(km *KeyMap) []key.Binding {
	return []key.Binding{km.Nav.Up, km.Nav.Down, km.Nav.PageUp, km.Nav.PageDown, km.Dialog.Close}
}

func (d *diffDialog) HandleKey(msg tea.KeyMsg, km *KeyMap) (action, tea.Cmd) {
	switch {
	case key.Matches(msg, km.Dialog.Close):
		return actClose{}, nil
	case dialogScroll(msg, km, &d.scroll, dialogPage):
	}
	return nil, nil
}

// lines renders the comparison for an inner width.
func (d *diffDialog) lines(inner int) []string {
	s := d.c.Styles
	half := max(8, (inner-3)/2)
	side := func(tag string, x session.SessionInfo) string {
		return fmt.Sprintf("%s %s  %s · %s · %s · %s", tag, x.ID, x.Origin(), x.Protocol, x.ModelShown(), x.Status)
	}
	out := []string{cut(side("a", d.res.A.SessionInfo), half) + " │ " + cut(side("b", d.res.B.SessionInfo), half)}
	if len(d.res.Changes) == 0 {
		return append(out, "", s.Good.Render("no differences"))
	}
	group := ""
	for _, c := range d.res.Changes {
		if g := c.Group(); g != group {
			out = append(out, "", s.Accent.Render(g))
			group = g
		}
		path := c.LocalPath()
		out = append(out, s.Muted.Render(cut(c.Kind+"  "+path, inner)))
		left, right := valueLines(c.A, c.Op == diff.OpAdded, half), valueLines(c.B, c.Op == diff.OpRemoved, half)
		for i := range max(len(left), len(right)) {
			l, r := "", ""
			if i < len(left) {
				l = s.Bad.Render(left[i])
			}
			if i < len(right) {
				r = s.Good.Render(right[i])
			}
			out = append(out, fit(l, half)+" │ "+r)
		}
	}
	return append(out, "", s.Muted.Render(count(len(d.res.Changes), "difference")))
}

// valueLines wraps a value to width, at most four lines; absent says
// the side has no such value.
func valueLines(v any, absent bool, width int) []string {
	if absent {
		return []string{"(none)"}
	}
	ls := wrapLines(diff.Text(v), width)
	if len(ls) > 4 {
		ls = append(ls[:3], cut(ls[3], width-1)+"…")
	}
	return ls
}

func (d *diffDialog) View(w, h int) string {
	inner := w - d.c.Styles.Dialog.GetHorizontalFrameSize()
	all := d.lines(inner)
	room := max(1, h-d.c.Styles.Dialog.GetVerticalFrameSize()-2)
	d.scroll = min(d.scroll, max(0, len(all)-room))
	return d.c.box(fmt.Sprintf("Diff %s → %s", d.res.A.ID, d.res.B.ID), all[d.scroll:], hintOf(d.Bindings(d.km)...), w, h)
}

// count is n with its noun, plural unless one: "1 lane", "2 lanes".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
