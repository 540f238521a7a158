package ui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/aymanbagabas/go-osc52/v2"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/tidwall/gjson"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/copyout"
	"github.com/modelwire/modelwire/session"
)

// The inspector (i) opens the thing the focused panel has selected — the
// request, an event, a lane, the verdict — over the whole screen: the raw
// wire JSON on the left, modelwire's canonical form on the right, both
// highlighted, nothing cut. / searches (n, N move between matches), f
// folds nested values level by level, y copies the raw JSON and, for a
// request, Y a ready-to-run curl (the key as an environment variable) to
// the clipboard with OSC 52, which works over ssh and inside tmux.

// inspectee is what the inspector shows.
type inspectee struct {
	title          string
	raw, canonical []byte // JSON (raw may be any text)
	curl           string // for a request: the curl command
}

type inspectorDialog struct {
	c      *Common
	km     *KeyMap
	it     inspectee
	scroll int
	fold   int // 0: everything open; n: values deeper than n folded
	search *editor
	typing bool
	match  int // index into matches of the current one
	// lines are the rendered rows (cached per width, fold and query).
	lines   []string
	matches []int
	key     string
	colW    int // the column width of the last frame
}

func newInspector(c *Common, km *KeyMap, it inspectee) *inspectorDialog {
	d := &inspectorDialog{c: c, km: km, it: it, search: newEditor(true), match: -1}
	d.search.prompt = "/"
	d.search.holder = "search"
	return d
}

func (d *inspectorDialog) Kind() dialogKind { return dlgInspector }

func (d *inspectorDialog) Bindings(km *KeyMap) []key.Binding {
	if d.typing {
		return []key.Binding{km.Dialog.Accept, km.Dialog.Close}
	}
	b := []key.Binding{km.Nav.Up, km.Nav.Down, km.Nav.PageDown, km.Dialog.Filter, km.Inspect.Next, km.Inspect.Fold, km.Inspect.Copy}
	if d.it.curl != "" {
		b = append(b, km.Inspect.CopyCurl)
	}
	return append(b, km.Dialog.Close)
}

func (d *inspectorDialog) HandleKey(msg tea.KeyMsg, km *KeyMap) (action, tea.Cmd) {
	if d.typing {
		switch {
		case key.Matches(msg, km.Dialog.Accept), key.Matches(msg, km.Dialog.Close):
			d.typing = false
			d.search.Blur()
			d.match = -1
			if d.colW > 0 {
				d.render(d.colW) // find the matches now, to jump to the first
			}
			return d.jump(1), nil
		}
		d.search.Update(msg)
		return nil, nil
	}
	switch {
	case key.Matches(msg, km.Dialog.Close), key.Matches(msg, km.Global.Inspect):
		return actClose{}, nil
	case dialogScroll(msg, km, &d.scroll, dialogPage):
	case key.Matches(msg, km.Dialog.Filter):
		d.typing = true
		d.search.Focus()
	case key.Matches(msg, km.Inspect.Next):
		return d.jump(1), nil
	case key.Matches(msg, km.Inspect.Prev):
		return d.jump(-1), nil
	case key.Matches(msg, km.Inspect.Fold):
		d.fold = (d.fold + 1) % 4 // open, then folded below depth 1, 2, 3
		d.key, d.scroll = "", 0
	case key.Matches(msg, km.Inspect.Copy):
		return actCopy{what: "the raw JSON", text: string(d.it.raw)}, nil
	case key.Matches(msg, km.Inspect.CopyCurl):
		if d.it.curl != "" {
			return actCopy{what: "the request as curl", text: d.it.curl}, nil
		}
	}
	return nil, nil
}

// jump moves to the next (dir 1) or previous match.
func (d *inspectorDialog) jump(dir int) action {
	if len(d.matches) == 0 {
		if strings.TrimSpace(d.search.Value()) != "" && d.lines != nil {
			return actStatus{level: levelWarn, text: fmt.Sprintf("%q is not in %s", d.search.Value(), d.it.title)}
		}
		return nil
	}
	d.match = (d.match + dir + len(d.matches)) % len(d.matches)
	d.scroll = max(0, d.matches[d.match]-2)
	return nil
}

func (d *inspectorDialog) Update(tea.Msg) tea.Cmd { return nil }

// render lays the two sides out in columns of w cells each.
func (d *inspectorDialog) render(w int) {
	q := strings.TrimSpace(d.search.Value())
	k := fmt.Sprintf("%d/%d/%s/%d", w, d.fold, q, d.c.Gen)
	if k == d.key {
		return
	}
	d.key = k
	left := d.side(d.it.raw, w)
	right := d.side(d.it.canonical, w)
	n := max(len(left), len(right))
	d.lines, d.matches = d.lines[:0], nil
	s := d.c.Styles
	for i := 0; i < n; i++ {
		var l, r string
		if i < len(left) {
			l = left[i]
		}
		if i < len(right) {
			r = right[i]
		}
		line := fit(l, w) + s.Subtle.Render(" │ ") + fit(r, w)
		if q != "" && (strings.Contains(strings.ToLower(ansi.Strip(l)), strings.ToLower(q)) ||
			strings.Contains(strings.ToLower(ansi.Strip(r)), strings.ToLower(q))) {
			d.matches = append(d.matches, i)
			line = s.Marker.Render("▶") + line
		} else {
			line = " " + line
		}
		d.lines = append(d.lines, line)
	}
	if d.match >= len(d.matches) {
		d.match = -1
	}
}

// side renders one JSON text (folded as asked) highlighted in w cells;
// text that is not JSON is wrapped as it is.
func (d *inspectorDialog) side(raw []byte, w int) []string {
	t := bytes.TrimSpace(raw)
	if !json.Valid(t) {
		return wrapLines(string(t), w)
	}
	return d.c.highlight(foldJSON(gjson.ParseBytes(t), d.fold), w)
}

func (d *inspectorDialog) View(w, h int) string {
	s := d.c.Styles
	inner := w - s.Dialog.GetHorizontalFrameSize()
	colW := max(10, (inner-4)/2)
	d.colW = colW
	d.render(colW)
	room := max(1, h-s.Dialog.GetVerticalFrameSize()-4)
	d.scroll = min(d.scroll, max(0, len(d.lines)-room))
	head := " " + fit(s.Bold.Render("raw (as on the wire)"), colW) + "   " + s.Bold.Render("canonical (modelwire)")
	lines := []string{head}
	lines = append(lines, d.lines[d.scroll:min(len(d.lines), d.scroll+room)]...)
	status := fmt.Sprintf("lines %d–%d of %d", d.scroll+1, min(len(d.lines), d.scroll+room), len(d.lines))
	if d.fold > 0 {
		status += fmt.Sprintf(" · folded below depth %d", d.fold)
	}
	if q := strings.TrimSpace(d.search.Value()); q != "" && !d.typing {
		status += fmt.Sprintf(" · %s matching %q", count(len(d.matches), "line"), q)
	}
	if d.typing {
		lines = append(lines, d.search.View(inner, 1, d.c))
	} else {
		lines = append(lines, s.Muted.Render(status))
	}
	return d.c.box("Inspect · "+d.it.title, lines, hintOf(d.Bindings(d.km)...), w, h)
}

// foldJSON pretty-prints a JSON value in its own key order, showing
// objects and arrays deeper than depth (0: none) as {…n} / […n].
func foldJSON(v gjson.Result, depth int) string {
	var b strings.Builder
	var walk func(v gjson.Result, level int)
	walk = func(v gjson.Result, level int) {
		if !v.IsObject() && !v.IsArray() {
			b.WriteString(compactJSON([]byte(v.Raw)))
			return
		}
		open, closeB := "{", "}"
		if v.IsArray() {
			open, closeB = "[", "]"
		}
		n := 0
		v.ForEach(func(_, _ gjson.Result) bool { n++; return true })
		if n == 0 {
			b.WriteString(open + closeB)
			return
		}
		if depth > 0 && level >= depth {
			fmt.Fprintf(&b, "%s…%d%s", open, n, closeB)
			return
		}
		b.WriteString(open + "\n")
		i := 0
		pad := strings.Repeat("  ", level+1)
		v.ForEach(func(k, e gjson.Result) bool {
			b.WriteString(pad)
			if v.IsObject() {
				b.WriteString(compactJSON([]byte(k.Raw)) + ": ")
			}
			walk(e, level+1)
			if i++; i < n {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
			return true
		})
		b.WriteString(strings.Repeat("  ", level) + closeB)
	}
	walk(v, 0)
	return b.String()
}

// inspectFocused is what the focused panel has selected, or false.
func (m *Model) inspectFocused() (inspectee, bool) {
	st := m.d.state
	t := m.d.turn()
	switch m.focus {
	case panelAssembly:
		req, n := m.panels[panelAssembly].(*assemblyPanel).request()
		if req == nil {
			return inspectee{}, false
		}
		canon, _ := json.MarshalIndent(map[string]any{"method": req.Method, "path": req.Path, "map": req.Map,
			"degradations": req.Degradations}, "", "  ")
		title := fmt.Sprintf("request, turn %d", n)
		if n == 0 {
			title = "request (preview, not sent yet)"
		}
		url := ""
		if t != nil && len(t.Attempts) > 0 {
			url = t.Attempts[len(t.Attempts)-1].URL
		}
		return inspectee{title: title, raw: req.Body, canonical: canon, curl: curlCommand(req, url, m.d.rc.Protocol, m.d.rc.Provider)}, true
	case panelLog:
		es := m.logP.entries()
		i := m.logP.sel
		if i < 0 {
			i = len(es) - 1
		}
		if i < 0 || i >= len(es) || t == nil {
			return inspectee{}, false
		}
		e := es[i]
		canon, _ := json.Marshal(e.Events)
		return inspectee{title: fmt.Sprintf("event %d of turn %d (%s)", e.Index+1, t.N, e.Raw.Event), raw: []byte(e.Raw.Data), canonical: canon}, true
	case panelStream:
		if t == nil || len(t.Lanes) == 0 {
			return inspectee{}, false
		}
		l := t.Lanes[len(t.Lanes)-1]
		if m.d.laneHL != "" {
			for _, x := range t.Lanes {
				if x.ItemID == m.d.laneHL {
					l = x
				}
			}
		}
		// The raw side is every raw event that touched the lane.
		var raws []json.RawMessage
		for _, e := range t.Log {
			for _, ev := range e.Events {
				if ev.ItemID == l.ItemID {
					raws = append(raws, rawJSON(e.Raw.Data))
					break
				}
			}
		}
		rawArr, _ := json.Marshal(raws)
		laneJSON, _ := json.Marshal(struct {
			*session.Lane
			Text string `json:"text"`
		}{l, l.Text()})
		return inspectee{title: fmt.Sprintf("%s lane %s, turn %d", l.Kind, l.ItemID, t.N), raw: rawArr, canonical: laneJSON}, true
	case panelValidation:
		if len(st.Layers) == 0 {
			return inspectee{}, false
		}
		canon, _ := json.Marshal(map[string]any{"layers": st.Layers, "output": json.RawMessage(orNull(st.Output))})
		var text string
		if t != nil {
			for _, l := range t.Lanes {
				if l.Kind == adapters.KindMessage {
					text += l.Text()
				}
			}
		}
		return inspectee{title: "validation", raw: []byte(text), canonical: canon}, true
	}
	return inspectee{}, false
}

// rawJSON keeps a raw event's data as JSON, or as a JSON string when it
// is not JSON ("[DONE]").
func rawJSON(data string) json.RawMessage {
	if json.Valid([]byte(data)) {
		return json.RawMessage(data)
	}
	b, _ := json.Marshal(data)
	return b
}

func orNull(b []byte) []byte {
	if len(b) == 0 {
		return []byte("null")
	}
	return b
}

// curlCommand is a request as a ready-to-run curl (package copyout): the
// URL it was sent to (the simulator's default address for a preview), its
// headers with the key taken from the provider's environment variable,
// and its body.
func curlCommand(req *adapters.HTTPRequest, url, protocol, provider string) string {
	if url == "" {
		url = "http://127.0.0.1:8787" + req.Path // modelwire serve's address
	}
	return copyout.Curl(copyout.Request{Method: req.Method, URL: url, Headers: req.Headers, Body: req.Body, Protocol: protocol, Provider: provider})
}

// copyToClipboard writes text to the terminal's clipboard with OSC 52
// (through tmux or screen when inside one).
func copyToClipboard(text string) error {
	seq := osc52.New(text)
	switch {
	case os.Getenv("TMUX") != "":
		seq = seq.Tmux()
	case strings.HasPrefix(os.Getenv("TERM"), "screen"):
		seq = seq.Screen()
	}
	_, err := seq.WriteTo(os.Stderr)
	return err
}
