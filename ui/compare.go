package ui

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/registry"
	"github.com/modelwire/modelwire/session"
)

// compareDialog shows the same canonical request encoded for all six
// protocols: first a table of where each part goes (each source, the
// tools, a tool result, the output schema), then one protocol's body at a
// time (←/→) with the top-level fields that not every protocol has marked.
type compareDialog struct {
	c     *Common
	tab   int
	off   int
	cols  []compareCol
	rows  []compareRow
	cache map[cmpKey][]string
	// first and shown are the protocol columns the table shows now.
	first, shown int
	// edits are the words a variant changed in the passing case's prompt.
	variant string
	edits   []string
}

type cmpKey struct{ tab, w, gen int }

type compareCol struct {
	protocol string
	req      *adapters.HTTPRequest
	err      error
	keys     map[string]bool
}

type compareRow struct {
	what  string
	cells []string
}

// resultMarker is the tool result text used to find where results go.
const resultMarker = "«tool result»"

func newCompareDialog(c *Common, sc *session.Scenario, rc RunConfig) *compareDialog {
	d := &compareDialog{c: c, cache: map[cmpKey][]string{}}
	if sc == nil {
		return d
	}
	if v, ok := sc.Variants[sc.Variant]; ok {
		d.variant = sc.FullName()
		for _, e := range v.Edits {
			d.edits = append(d.edits, e.String())
		}
	}
	req := sc.Request(rc.Stream, rc.History)
	// A second request carrying one model turn and its result, to show
	// where each protocol puts tool results.
	req2 := sc.Request(rc.Stream, adapters.HistoryFull)
	if len(sc.Script) > 0 {
		var turn adapters.Turn
		for i, it := range sc.Script[0].Items {
			if it.Kind != adapters.KindToolCall {
				continue
			}
			id := fmt.Sprintf("call_demo_%d", i)
			turn.Items = append(turn.Items, adapters.OutputItem{Kind: it.Kind, ID: "fc_demo", CallID: id, Name: it.Name, Arguments: it.Arguments})
			turn.Results = append(turn.Results, adapters.ToolResult{CallID: id, Name: it.Name, Content: resultMarker})
		}
		if len(turn.Items) > 0 {
			req2.Turns = []adapters.Turn{turn}
		}
	}
	for _, name := range registry.Protocols {
		col := compareCol{protocol: name, keys: map[string]bool{}}
		p, err := registry.Lookup(name)
		if err == nil {
			col.req, err = p.Encode(req, adapters.ProviderSim)
		}
		col.err = err
		if col.req != nil {
			var top map[string]json.RawMessage
			if json.Unmarshal(col.req.Body, &top) == nil {
				for k := range top {
					col.keys[k] = true
				}
			}
		}
		d.cols = append(d.cols, col)
	}
	// Rows: each source, then the first tool, a tool result and the output
	// schema. Every cell comes from the encoder's own field map where it
	// has one, so a row names the place its part went in each protocol.
	for _, src := range sc.Sources {
		row := compareRow{what: src.ID}
		for _, col := range d.cols {
			row.cells = append(row.cells, fieldOf(col, src.ID))
		}
		d.rows = append(d.rows, row)
	}
	if len(sc.Tools) > 0 {
		name := sc.Tools[0].Name
		row := compareRow{what: "tool " + name}
		for _, col := range d.cols {
			cell := fieldOf(col, "tool:"+name)
			if cell == "—" {
				cell = pathOfValue(col.req, name, true)
			}
			row.cells = append(row.cells, cell)
		}
		d.rows = append(d.rows, row)
	}
	if len(req2.Turns) > 0 {
		row := compareRow{what: "tool result"}
		for _, name := range registry.Protocols {
			p, _ := registry.Lookup(name)
			w, err := p.Encode(req2, adapters.ProviderSim)
			if err != nil {
				row.cells = append(row.cells, "—")
				continue
			}
			row.cells = append(row.cells, itemOf(pathOfValue(w, resultMarker, false)))
		}
		d.rows = append(d.rows, row)
	}
	if sc.Output.Name != "" {
		row := compareRow{what: "output schema"}
		for _, col := range d.cols {
			// Where the schema itself went (the field map), not where its
			// name is: Gemini's formats carry no name, DeepSeek sends the
			// schema as an instruction.
			cell := fieldOf(col, "output_schema")
			if cell == "—" {
				cell = pathOfValue(col.req, sc.Output.Name, true)
			}
			row.cells = append(row.cells, cell)
		}
		d.rows = append(d.rows, row)
	}
	return d
}

func fieldOf(col compareCol, source string) string {
	if col.req == nil {
		return "—"
	}
	for _, m := range col.req.Map {
		if m.Source == source {
			return shortPath(m.Field)
		}
	}
	return "—"
}

// shortPath drops the .text leaf of a path: where a part goes is the
// message, block or part, not the string inside it. Indexes stay: the
// first block of a message is content[0], not the whole content.
func shortPath(p string) string {
	if strings.HasSuffix(p, ".text") && len(p) > len(".text") {
		return strings.TrimSuffix(p, ".text")
	}
	return p
}

// itemOf cuts a path to the last array element on it: the message, block
// or part that carries a value (contents[2].parts[0], not the fields of
// its functionResponse).
func itemOf(p string) string {
	if i := strings.LastIndexByte(p, ']'); i >= 0 {
		return p[:i+1]
	}
	return p
}

// pathOfValue finds the JSON path of the first string equal to (or, when
// exact is false, containing) v in a request body, with array indexes.
func pathOfValue(req *adapters.HTTPRequest, v string, exact bool) string {
	if req == nil {
		return "—"
	}
	var doc any
	if json.Unmarshal(req.Body, &doc) != nil {
		return "—"
	}
	var walk func(x any, path string) string
	walk = func(x any, path string) string {
		switch t := x.(type) {
		case map[string]any:
			ks := make([]string, 0, len(t))
			for k := range t {
				ks = append(ks, k)
			}
			sort.Strings(ks)
			for _, k := range ks {
				p := k
				if path != "" {
					p = path + "." + k
				}
				if r := walk(t[k], p); r != "" {
					return r
				}
			}
		case []any:
			for i, e := range t {
				if r := walk(e, fmt.Sprintf("%s[%d]", path, i)); r != "" {
					return r
				}
			}
		case string:
			if t == v || (!exact && strings.Contains(t, v)) {
				return path
			}
		}
		return ""
	}
	if p := walk(doc, ""); p != "" {
		return p
	}
	return "—"
}

func (d *compareDialog) Kind() dialogKind       { return dlgCompare }
func (d *compareDialog) Update(tea.Msg) tea.Cmd { return nil }

func (d *compareDialog) Bindings(km *KeyMap) []key.Binding {
	return []key.Binding{km.Dialog.Left, km.Dialog.Right, km.Nav.Up, km.Nav.Down, km.Dialog.Close}
}

func (d *compareDialog) HandleKey(msg tea.KeyMsg, km *KeyMap) (action, tea.Cmd) {
	switch {
	case key.Matches(msg, km.Dialog.Close), key.Matches(msg, km.Global.Compare):
		return actClose{}, nil
	case key.Matches(msg, km.Dialog.Left):
		d.tab = (d.tab + len(d.cols) - 1) % max(1, len(d.cols))
		d.off = 0
	case key.Matches(msg, km.Dialog.Right), key.Matches(msg, km.Global.NextPanel):
		d.tab = (d.tab + 1) % max(1, len(d.cols))
		d.off = 0
	case dialogScroll(msg, km, &d.off, dialogPage):
	}
	return nil, nil
}

func (d *compareDialog) View(w, h int) string {
	s := d.c.Styles
	inner := w - s.Dialog.GetHorizontalFrameSize()
	if len(d.cols) == 0 {
		return d.c.box("Compare", []string{"no scenario loaded"}, "esc close", w, 5)
	}
	var lines []string
	// The table: one column per protocol when every path fits whole; else
	// as many whole columns as fit, scrolled to keep the selected protocol
	// (←/→) in view — a cut path ("messages[2].c…") says nothing.
	whatW := 0
	for _, r := range d.rows {
		whatW = max(whatW, displayWidth(r.what)+1)
	}
	whatW = min(whatW, 23, max(12, inner/5))
	first, n, cellW := d.window(inner - whatW)
	// Room left over goes to the columns evenly.
	if spare := inner - whatW - n; n > 0 {
		for i := first; i < first+n; i++ {
			spare -= cellW[i]
		}
		for i := first; i < first+n && spare > 0; i++ {
			cellW[i] += spare / n
		}
	}
	head := padRight("", whatW)
	for i := first; i < first+n; i++ {
		st := s.Muted
		if i == d.tab {
			st = s.Accent
		}
		name := d.cols[i].protocol
		if i == d.tab {
			name = focusMark + name // marked without colour too
		}
		head += " " + st.Render(fit(name, cellW[i]))
	}
	lines = append(lines, cut(head, inner))
	for _, r := range d.rows {
		differs := false
		for _, c := range r.cells {
			if c != r.cells[0] {
				differs = true
			}
		}
		mark := " "
		if differs {
			mark = s.Marker.Render("≠")
		}
		line := fit(r.what, whatW-1) + mark
		for i := first; i < first+n; i++ {
			line += " " + fit(r.cells[i], cellW[i])
		}
		lines = append(lines, cut(line, inner))
	}
	if n < len(d.cols) {
		shown := fmt.Sprintf("protocols %d–%d", first+1, first+n)
		if n == 1 {
			shown = fmt.Sprintf("protocol %d", first+1)
		}
		lines = append(lines, s.Muted.Render(cut(fmt.Sprintf("%s of %d (←→ for the others)", shown, len(d.cols)), inner)))
	}
	lines = append(lines, "", s.Muted.Render("≠ differs between protocols · + top-level field only some protocols have"))
	editLines := 0
	if len(d.edits) > 0 {
		// What the variant changed, whole: the only difference between
		// its requests and the passing case's.
		lines = append(lines, "", s.Warn.Render(cut(d.variant+" edits the passing case's prompt:", inner)))
		editLines = 2
		for _, e := range d.edits {
			for _, l := range wrapLines(e, max(1, inner-2)) {
				lines = append(lines, "  "+l)
				editLines++
			}
		}
	}
	// Tabs and the selected body.
	var tabs []string
	for i, col := range d.cols {
		if i == d.tab {
			tabs = append(tabs, s.TabActive.Render(focusMark+col.protocol))
		} else {
			tabs = append(tabs, s.Tab.Render(col.protocol))
		}
	}
	lines = append(lines, "", cut(strings.Join(tabs, ""), inner))
	lines = append(lines, d.body(inner)...)
	room := max(1, h-4)
	fixed := len(d.rows) + 5 + editLines
	if len(d.cols) > 0 && d.shown < len(d.cols) {
		fixed++ // the "protocols 1–2 of 6" line
	}
	if len(lines) > room {
		// The table stays while the body scrolls, unless it leaves the
		// body no room (80×24): then the whole dialog scrolls.
		bodyStart := fixed
		if room-fixed < 5 {
			bodyStart = 0
		}
		maxOff := max(0, len(lines)-room)
		d.off = min(d.off, maxOff)
		lines = append(lines[:bodyStart:bodyStart], lines[min(len(lines), bodyStart+d.off):]...)
	}
	return d.c.box("Compare: one request, six protocols", lines, "←→ protocol · ↑↓ scroll · esc close", w, h)
}

// window chooses the table's protocol columns for width cells, each as
// wide as its longest path: all of them when they fit, else the run of
// columns from first that fits, moved so the selected protocol is in it.
// It returns the first column, how many, and their widths.
func (d *compareDialog) window(width int) (first, n int, widths []int) {
	widths = make([]int, len(d.cols))
	for i, col := range d.cols {
		widths[i] = displayWidth(focusMark + col.protocol)
		for _, r := range d.rows {
			widths[i] = max(widths[i], displayWidth(r.cells[i]))
		}
		widths[i] = min(widths[i], max(1, width-1))
	}
	// fits is how many columns from f fit (at least one).
	fits := func(f int) int {
		used, k := 0, 0
		for i := f; i < len(widths) && used+widths[i]+1 <= width; i++ {
			used += widths[i] + 1
			k++
		}
		return max(1, k)
	}
	first = min(d.first, d.tab)
	for d.tab >= first+fits(first) {
		first++
	}
	n = fits(first)
	d.first, d.shown = first, n
	return first, n, widths
}

// body renders the selected protocol's body with marks on the top-level
// fields that not every protocol has.
func (d *compareDialog) body(w int) []string {
	if l, ok := d.cache[cmpKey{d.tab, w, d.c.Gen}]; ok {
		return l
	}
	s := d.c.Styles
	col := d.cols[d.tab]
	if col.err != nil {
		return []string{s.Bad.Render(col.err.Error())}
	}
	common := map[string]bool{}
	for k := range col.keys {
		all := true
		for _, o := range d.cols {
			if o.req != nil && !o.keys[k] {
				all = false
			}
		}
		common[k] = all
	}
	lines := []string{s.Bold.Render(col.req.Method + " " + col.req.Path)}
	hl := d.c.highlightJSON(col.req.Body, w-2)
	for _, l := range hl {
		mark := "  "
		plain := ansiStrip(l)
		// A top-level key line is indented by exactly two spaces.
		if strings.HasPrefix(plain, "  \"") && !strings.HasPrefix(plain, "   ") {
			k := plain[3:]
			if i := strings.Index(k, "\""); i >= 0 && !common[k[:i]] {
				mark = s.Marker.Render("+ ")
			}
		}
		lines = append(lines, mark+l)
	}
	d.cache[cmpKey{d.tab, w, d.c.Gen}] = lines
	return lines
}
