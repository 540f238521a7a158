package ui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/session"
)

// logPanel lists the current turn's raw events (SSE event name and data)
// beside the canonical events and diagnostics derived from each. Moving
// the selection highlights the selected event's lane in the stream panel.
//
// Only the visible rows are rendered: a stream of thousands of events
// costs one screenful per frame.
type logPanel struct {
	scroller
	c *Common
	d *viewData
	// sel is the selected entry; -1 follows the newest.
	sel  int
	turn *session.TurnState
}

func newLogPanel(c *Common, d *viewData) *logPanel {
	p := &logPanel{c: c, d: d, sel: -1}
	p.follow = true
	return p
}

func (p *logPanel) entries() []session.LogEntry {
	t := p.d.turn()
	if t == nil {
		return nil
	}
	log := t.Log
	// The end of a stream that produced nothing is not an event: the
	// store keeps no entry for it, and the replay must look the same.
	if n := len(log); n > 0 && log[n-1].Index < 0 && len(log[n-1].Events) == 0 {
		log = log[:n-1]
	}
	return log
}

// sync follows a change of state: a new turn (or a replay's refold)
// drops the selection and its highlight.
func (p *logPanel) sync() {
	t := p.d.turn()
	if t != p.turn {
		p.turn, p.sel = t, -1
		p.d.laneHL = ""
	}
	if p.sel >= len(p.entries()) {
		p.sel, p.d.laneHL = -1, ""
	}
}

func (p *logPanel) HandleKey(msg tea.KeyMsg, km *KeyMap) (bool, tea.Cmd) {
	n := len(p.entries())
	if n == 0 {
		return false, nil
	}
	cur := p.sel
	if cur < 0 {
		cur = n - 1
	}
	switch {
	case key.Matches(msg, km.Nav.Up):
		cur--
	case key.Matches(msg, km.Nav.Down):
		cur++
	case key.Matches(msg, km.Nav.PageUp):
		cur -= max(1, p.h-2)
	case key.Matches(msg, km.Nav.PageDown):
		cur += max(1, p.h-2)
	case key.Matches(msg, km.Nav.Top):
		cur = 0
	case key.Matches(msg, km.Nav.Bottom):
		cur = n - 1
	default:
		return false, nil
	}
	cur = max(0, min(n-1, cur))
	p.sel = cur
	if cur == n-1 && key.Matches(msg, km.Nav.Bottom) {
		p.sel = -1 // back to following
	}
	p.d.laneHL = laneOf(p.entries()[cur])
	return true, nil
}

// laneOf is the item id a log entry's canonical events touch.
func laneOf(e session.LogEntry) string {
	for _, ev := range e.Events {
		if ev.ItemID != "" {
			return ev.ItemID
		}
	}
	return ""
}

func (p *logPanel) View() []string {
	s := p.c.Styles
	es := p.entries()
	if len(es) == 0 {
		return []string{s.Muted.Render("no events yet")}
	}
	rows := max(1, p.h-1)
	sel := p.sel
	if sel < 0 {
		sel = len(es) - 1
	}
	// Keep the selection in view.
	if p.sel < 0 {
		p.off = max(0, len(es)-rows)
	} else if sel < p.off {
		p.off = sel
	} else if sel >= p.off+rows {
		p.off = sel - rows + 1
	}
	p.off = max(0, min(p.off, max(0, len(es)-rows)))
	rawW := max(10, (p.w-3)*11/20)
	canW := max(6, p.w-3-rawW)
	out := []string{s.Muted.Render(fit("RAW ("+count(len(es), "event")+")", rawW) + " │ " + "CANONICAL")}
	for i := p.off; i < min(len(es), p.off+rows); i++ {
		e := es[i]
		raw := p.raw(e, rawW)
		can := p.canonical(e, canW)
		line := fit(raw, rawW) + s.Subtle.Render(" │ ") + can
		if p.sel >= 0 && i == sel && p.focused {
			line = s.Selected.Render(fit(ansiStrip(raw), rawW) + " │ " + fit(ansiStrip(can), canW))
		}
		out = append(out, cut(line, p.w))
	}
	return out
}

func (p *logPanel) raw(e session.LogEntry, w int) string {
	s := p.c.Styles
	if e.Index < 0 {
		return s.Subtle.Render("(end of stream)")
	}
	off := s.Subtle.Render(fmt.Sprintf("%6s ", msText(e.OffsetMS)))
	name := e.Raw.Event
	data := oneLine(e.Raw.Data)
	if name != "" {
		return off + s.Info.Render(name) + " " + cut(data, max(1, w-9-displayWidth(name)))
	}
	return off + cut(data, max(1, w-8))
}

func (p *logPanel) canonical(e session.LogEntry, w int) string {
	s := p.c.Styles
	if len(e.Events) == 0 {
		return s.Subtle.Render("—")
	}
	parts := make([]string, 0, len(e.Events))
	for _, ev := range e.Events {
		switch ev.Type {
		case adapters.EvDiagnostic:
			parts = append(parts, s.Warn.Render("! "+ev.Kind))
		case adapters.EvUnknown:
			parts = append(parts, s.Warn.Render("? "+ev.RawType))
		case adapters.EvTerminal:
			parts = append(parts, s.Accent.Render(string(ev.Type)+" "+string(ev.Status)))
		case adapters.EvToolProposed:
			parts = append(parts, s.Good.Render(string(ev.Type)+" "+ev.Name))
		default:
			parts = append(parts, fmt.Sprintf("%d %s", ev.Seq, ev.Type))
		}
	}
	return cut(strings.Join(parts, ", "), w)
}
