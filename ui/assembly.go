package ui

import (
	"net/http"
	"sort"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/registry"
	"github.com/modelwire/modelwire/redact"
	"github.com/modelwire/modelwire/transport"
)

// assemblyPanel shows how the request was assembled: each source with its
// role and trust label and the field it landed in for the current
// protocol; `w` switches to the exact wire request (headers redacted,
// body highlighted).
type assemblyPanel struct {
	scroller
	c     *Common
	d     *viewData
	sel   int
	total int // lines of the last table view, for scrolling
	// reveal: the cursor moved since the last view, which scrolls it
	// into sight (the page keys scroll without moving it).
	reveal bool
	// rows are the lines of each source row in the last table view: the
	// first and one past the last.
	rows [][2]int

	// wire cache: the highlighted request for (request, width, theme).
	wireReq   *adapters.HTTPRequest
	wireW     int
	wireGen   int
	wireLines []string
}

func newAssemblyPanel(c *Common, d *viewData) *assemblyPanel {
	return &assemblyPanel{c: c, d: d}
}

// request is the request shown: the current turn's, or the preview.
func (p *assemblyPanel) request() (*adapters.HTTPRequest, int) {
	if t := p.d.turn(); t != nil && t.Request != nil {
		return t.Request, t.N
	}
	return p.d.preview, 0
}

// selected returns the source id under the cursor ("" when none).
func (p *assemblyPanel) selected() string {
	req, _ := p.request()
	if req == nil || p.sel < 0 || p.sel >= len(req.Map) {
		return ""
	}
	return req.Map[p.sel].Source
}

// HandleKey moves the source cursor (or scrolls the wire view); enter
// asks the root to edit the selected source.
func (p *assemblyPanel) HandleKey(msg tea.KeyMsg, km *KeyMap) (bool, tea.Cmd) {
	if p.d.wire {
		req, _ := p.request()
		return p.scrollKey(msg, km, len(p.wire(req))), nil
	}
	req, _ := p.request()
	n := 0
	if req != nil {
		n = len(req.Map)
	}
	switch {
	case key.Matches(msg, km.Nav.Up):
		p.sel = max(0, p.sel-1)
		p.reveal = true
	case key.Matches(msg, km.Nav.Down):
		p.sel = min(max(0, n-1), p.sel+1)
		p.reveal = true
	case key.Matches(msg, km.Nav.Top):
		p.sel, p.off, p.reveal = 0, 0, true
	case key.Matches(msg, km.Nav.Bottom):
		p.sel, p.reveal = max(0, n-1), true
	case key.Matches(msg, km.Nav.Select):
		if id := p.selected(); id != "" && !p.d.replay {
			return true, func() tea.Msg { return editSourceMsg{id: id} }
		}
		return true, nil
	default:
		return p.scrollKey(msg, km, p.total), nil
	}
	return true, nil
}

// editSourceMsg asks the root to open the source editor.
type editSourceMsg struct{ id string }

func (p *assemblyPanel) View() []string {
	req, turn := p.request()
	if req == nil {
		if p.d.rc.Scenario == RecordingScenario {
			return []string{p.c.Styles.Muted.Render("waiting for the application's first request…")}
		}
		return []string{p.c.Styles.Muted.Render("assembling the request…")}
	}
	if p.d.wire {
		return p.window(p.wire(req))
	}
	lines := p.table(req, turn)
	p.total = len(lines)
	if p.reveal {
		p.reveal = false
		p.follow = false
		p.show(len(req.Map))
	}
	return p.window(lines)
}

// note is a line of prose over the table (a budget, a note on the
// request): whole, wrapped, when the panel has the focus; one line
// otherwise, so that the table keeps its rows in a side column — tab to
// the panel reads the rest.
func (p *assemblyPanel) note(label, text string, w int) []string {
	if p.focused {
		return hang(label, text, 2, w)
	}
	return []string{cut(label+text, w)}
}

// show scrolls the table so the selected row is in sight: its lines
// whole, and with the last row the lines under the table (tools, output,
// the keys) as far as they fit, so the end of the table reads as an end.
func (p *assemblyPanel) show(n int) {
	if p.sel < 0 || p.sel >= len(p.rows) {
		return
	}
	r := p.rows[p.sel]
	end := r[1]
	if p.sel == n-1 {
		end = max(end, min(p.total, r[0]+p.h))
	}
	if p.sel == 0 {
		// The first row: the request line and its notes above it too.
		p.off = 0
	}
	if end > p.off+p.h {
		p.off = end - p.h
	}
	if r[0] < p.off {
		p.off = r[0]
	}
	p.off = max(0, min(p.off, p.total-p.h))
}

func (p *assemblyPanel) table(req *adapters.HTTPRequest, turn int) []string {
	s := p.c.Styles
	w := p.w
	var lines []string
	where := "preview, not sent yet"
	if turn > 0 {
		where = "turn " + itoa(turn)
	}
	lines = append(lines, cut(s.Bold.Render(req.Method+" "+req.Path)+"  "+s.Muted.Render(where+" · "+p.d.rc.Protocol), w))
	if t := p.d.turn(); t != nil && t.Budget != nil && turn > 0 {
		st := s.Muted
		if t.Budget.Problem != "" {
			st = s.Bad
		}
		lines = append(lines, p.note(st.Render("budget: "), st.Render(t.Budget.String()), w)...)
	}
	for _, n := range req.Warnings {
		lines = append(lines, p.note(s.Warn.Render("note: "), n, w)...)
	}
	roles := map[string]adapters.SourceRole{}
	if p.d.scenario != nil {
		for _, src := range p.d.scenario.Sources {
			roles[src.ID] = src.Role
		}
	}
	roleOf := func(id string) string {
		if r, ok := roles[id]; ok {
			return string(r)
		}
		if strings.HasPrefix(id, "tool:") {
			return "tool"
		}
		if strings.HasPrefix(id, "history:turn") {
			return "history" // a carried call or its result
		}
		return "contract"
	}
	// Column widths by display width (CJK labels are double width).
	srcW, roleW, trustW := len("SOURCE"), len("ROLE"), len("TRUST")
	for _, m := range req.Map {
		srcW = max(srcW, displayWidth(m.Source))
		roleW = max(roleW, displayWidth(roleOf(m.Source)))
		trustW = max(trustW, displayWidth(m.Trust))
	}
	srcW = min(srcW, max(12, w*2/5))
	fieldW := w - 2 - srcW - roleW - trustW - 3
	// Narrow panels give each source two lines: the source and its trust,
	// then where it landed.
	narrow := fieldW < 16
	if !narrow {
		head := "  " + padRight("SOURCE", srcW) + " " + padRight("ROLE", roleW) + " " + padRight("TRUST", trustW) + " FIELD"
		lines = append(lines, cut(s.Muted.Render(head), w))
	}
	p.rows = p.rows[:0]
	for i, m := range req.Map {
		start := len(lines)
		sel := i == p.sel && p.focused
		marker := "  "
		if sel {
			marker = s.Accent.Render("▸ ")
		}
		field := m.Field
		if m.Note != "" {
			field += " (" + m.Note + ")"
		}
		if narrow {
			src := m.Source
			if sel {
				src = s.Selected.Render(src)
			}
			lines = append(lines, cut(marker+src+" "+s.Trust(m.Trust).Render(m.Trust), w))
			lines = append(lines, cut("    "+s.Muted.Render("→ ")+s.Accent.Render(field)+s.Muted.Render(" · "+roleOf(m.Source)), w))
			p.rows = append(p.rows, [2]int{start, len(lines)})
			continue
		}
		src := fit(m.Source, srcW)
		if sel {
			src = s.Selected.Render(src)
		}
		row := marker + src + " " + fit(roleOf(m.Source), roleW) + " " +
			s.Trust(m.Trust).Render(fit(m.Trust, trustW)) + " " + s.Accent.Render(cut(field, fieldW))
		lines = append(lines, row)
		p.rows = append(p.rows, [2]int{start, len(lines)})
	}
	if p.d.scenario != nil {
		sc := p.d.scenario
		lines = append(lines, "")
		names := make([]string, len(sc.Tools))
		for i, t := range sc.Tools {
			names[i] = t.Name
		}
		if len(names) > 0 {
			lines = append(lines, wrapLines(s.Muted.Render("tools ")+strings.Join(names, ", "), w)...)
		}
		out := string(sc.Output.Mode)
		if sc.Output.Name != "" {
			out += " " + sc.Output.Name
		}
		lines = append(lines, cut(s.Muted.Render("output ")+out+s.Muted.Render(" · stream ")+onOff(p.d.rc.Stream)+
			s.Muted.Render(" · history ")+string(p.d.rc.History), w))
		if len(p.d.rc.Edits) > 0 {
			ids := keys(p.d.rc.Edits)
			sort.Strings(ids)
			lines = append(lines, p.note(s.Warn.Render("edited: "), strings.Join(ids, ", "), w)...)
		}
	}
	for _, dg := range req.Degradations {
		lines = append(lines, wrapLines(s.Warn.Render("degraded: ")+dg, w)...)
	}
	switch {
	case len(req.Map) == 0:
		// A proxied or imported request: the application assembled it, so
		// there are no sources to map, edit or re-assemble.
		lines = append(lines, wrapLines(s.Muted.Render("the application's own request, as sent: no sources to map")+s.Subtle.Render(" · w wire"), w)...)
	case !p.d.replay:
		lines = append(lines, s.Subtle.Render(cut("↑↓ source · enter edit & re-send · w wire · c compare", w)))
	}
	return lines
}

// wire renders the exact request: method, path, redacted headers, and the
// highlighted JSON body. It is cached per request, width and theme.
func (p *assemblyPanel) wire(req *adapters.HTTPRequest) []string {
	if req == nil {
		return nil
	}
	if p.wireReq == req && p.wireW == p.w && p.wireGen == p.c.Gen {
		return p.wireLines
	}
	s := p.c.Styles
	lines := []string{s.Bold.Render(req.Method + " " + req.Path)}
	hs := displayHeaders(req, p.d.rc.Protocol)
	names := make([]string, 0, len(hs))
	for k := range hs {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		lines = append(lines, cut(s.Muted.Render(k+": ")+hs[k], p.w))
	}
	lines = append(lines, "")
	lines = append(lines, p.c.highlightJSON(req.Body, p.w)...)
	p.wireReq, p.wireW, p.wireGen, p.wireLines = req, p.w, p.c.Gen, lines
	return lines
}

// displayHeaders are the request's headers plus the key header the
// session adds, with every secret redacted (as `modelwire assemble`).
func displayHeaders(w *adapters.HTTPRequest, protocol string) map[string]string {
	h := http.Header{}
	for k, v := range w.Headers {
		h.Set(k, v)
	}
	if d, ok := registry.Describe(protocol); ok {
		if name, _ := d.Auth.SendHeader(""); h.Get(name) == "" {
			transport.Provider{Key: "[redacted]"}.Authorize(h, protocol)
		}
	}
	out := map[string]string{}
	for k := range h {
		v := redact.HeaderValue(k, h.Get(k))
		if strings.EqualFold(k, "authorization") && !strings.Contains(v, " ") {
			v = "Bearer " + redact.Redacted
		}
		out[strings.ToLower(k)] = v
	}
	return out
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}
