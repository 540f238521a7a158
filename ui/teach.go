package ui

import (
	"strings"

	"github.com/modelwire/modelwire/themes"
	"github.com/modelwire/modelwire/validate"
)

// Teaching mode (E) shows, above the footer, two lines on the focused
// panel's selected element: what the protocol field, event, lane or layer
// is, and why it matters. The texts are data (themes/teaching.json).

// The explanation is wrapped to the width, never cut: it takes the rows
// it needs, up to teachMax of the screen; the layout gives the panels
// what is left (resize, syncTeach).

// teachMax is the most rows the explanation may take on an h-row screen.
func teachMax(h int) int { return max(2, h/4) }

// teachKey names the element the focused panel has selected.
func (m *Model) teachKey() string {
	t := m.d.turn()
	switch m.focus {
	case panelAssembly:
		p := m.panels[panelAssembly].(*assemblyPanel)
		if req, _ := p.request(); req != nil && p.sel >= 0 && p.sel < len(req.Map) {
			return req.Map[p.sel].Field
		}
	case panelLog:
		es := m.logP.entries()
		i := m.logP.sel
		if i < 0 {
			i = len(es) - 1
		}
		if i >= 0 && i < len(es) {
			if _, _, ok := themes.Explain(es[i].Raw.Event); ok {
				return es[i].Raw.Event
			}
			if len(es[i].Events) > 0 {
				return string(es[i].Events[0].Type)
			}
		}
	case panelStream:
		if t != nil && len(t.Lanes) > 0 {
			l := t.Lanes[len(t.Lanes)-1]
			for _, x := range t.Lanes {
				if x.ItemID == m.d.laneHL {
					l = x
				}
			}
			return string(l.Kind)
		}
	case panelValidation:
		for _, l := range m.d.state.Layers {
			if l.Status == validate.Fail {
				return string(l.Layer)
			}
		}
		if len(m.d.state.Layers) > 0 {
			return string(m.d.state.Layers[len(m.d.state.Layers)-1].Layer)
		}
	}
	return ""
}

// teachLines are the lines of teaching mode, wrapped to the width: what
// the selected element is, why it matters, and beside the answer the
// simulated model's rule that shaped it. They fit in teachMax rows;
// only text longer than that is cut, with an ellipsis.
func (m *Model) teachLines() []string {
	s := m.c.Styles
	k := m.teachKey()
	what, why, ok := themes.Explain(k)
	var lines []string
	switch {
	case !ok:
		lines = styleLines(s.Muted, hang("  ", "teach: select a field, an event, a lane or a layer (E closes)", 4, m.w))
	default:
		lines = hang("  "+s.Accent.Render(k+": "), what, 4, m.w)
		lines = append(lines, hang("  "+s.Muted.Render("why: "), why, 4, m.w)...)
		if m.focus == panelStream || m.focus == panelValidation {
			// Beside the answer, the rule of the simulated model that shaped
			// it (the whole list is in the notes panel).
			if rule := notableWhy(m.d.modelWhy()); rule != "" {
				lines = append(lines, hang("  "+s.Warn.Render("model: "), rule, 4, m.w)...)
			}
		}
	}
	if n := teachMax(m.h); len(lines) > n {
		lines = lines[:n]
		lines[n-1] = cut(lines[n-1]+" …", m.w)
	}
	for len(lines) < 2 {
		lines = append(lines, "")
	}
	for i := range lines {
		lines[i] = fit(lines[i], m.w)
	}
	return lines
}

// syncTeach lays the screen out again when the explanation needs another
// number of rows (the selection or the state changed what it says).
func (m *Model) syncTeach() {
	if m.teach && len(m.teachLines()) != m.teachH {
		m.resize(m.w, m.h)
	}
}

// modelWhy are the simulated model's rule lines for the current turn's
// response (its last attempt's X-Modelwire-Why).
func (d *viewData) modelWhy() []string {
	t := d.turn()
	if t == nil || len(t.Attempts) == 0 {
		return nil
	}
	return t.Attempts[len(t.Attempts)-1].Why
}

// notableWhy is the first rule that changed the answer, past what the
// model only read ("task-facts: …"): the line a teacher points at; what
// it read when no rule changed anything.
func notableWhy(lines []string) string {
	for _, l := range lines {
		rule, text, _ := strings.Cut(l, ": ")
		switch rule {
		case "task-facts", "history-unverified", "no-history-claim", "prompt-fact":
			continue
		}
		return text
	}
	if len(lines) > 0 {
		_, text, _ := strings.Cut(lines[0], ": ")
		return text
	}
	return ""
}
