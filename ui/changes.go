package ui

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/diff"
	"github.com/modelwire/modelwire/jsonschema"
	"github.com/modelwire/modelwire/session"
)

// The what-changed view (d): what the request on screen adds to the one
// before it, as the chapter walks through it (13.6.4–13.6.6) — the items
// appended with their call ids, the tool results, tool_choice going from
// auto to none. The two wire bodies are compared as JSON with package
// diff (key order and white space do not count, a string holding JSON is
// compared as that JSON), so the view reads the same for every protocol:
// it names paths and values, never a protocol's fields.

// turnChange is one difference between two requests' bodies.
type turnChange struct {
	op   string // diff.OpAdded, OpRemoved, OpChanged
	path string // input[4], tool_choice, toolConfig.functionCallingConfig.mode
	a, b any
}

// requestChanges lists what b adds to a (two wire bodies): the changed
// values first (tool_choice auto → none is the point of the last turn),
// then what was removed, then what was added, each in the body's order.
func requestChanges(a, b []byte) ([]turnChange, error) {
	va, err := jsonschema.ParseJSON(a)
	if err != nil {
		return nil, fmt.Errorf("the earlier request's body: %w", err)
	}
	vb, err := jsonschema.ParseJSON(b)
	if err != nil {
		return nil, fmt.Errorf("this request's body: %w", err)
	}
	var out []turnChange
	for _, c := range diff.Values("", va, vb, nil) {
		out = append(out, turnChange{op: c.Op, path: dotted(c.Path), a: c.A, b: c.B})
	}
	rank := map[string]int{diff.OpChanged: 0, diff.OpRemoved: 1, diff.OpAdded: 2}
	sort.SliceStable(out, func(i, j int) bool { return rank[out[i].op] < rank[out[j].op] })
	return out, nil
}

// dotted writes a diff path (input/4/content) as the source map writes
// fields: input[4].content.
func dotted(p string) string {
	var b strings.Builder
	for i, seg := range strings.Split(p, "/") {
		seg = jsonschema.UnescapeToken(seg)
		if _, err := strconv.Atoi(seg); err == nil {
			b.WriteString("[" + seg + "]")
			continue
		}
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(seg)
	}
	return b.String()
}

// idKeys name an item in a person's words: its call id first.
var itemIDKeys = []string{"call_id", "tool_call_id", "tool_use_id", "id"}

// describe names a JSON value in a line: an item's kind (type or role),
// its call id and its function's name, and the same of the items it
// holds (a message's tool calls, a content's parts); a scalar is itself.
func describe(v any, depth int) string {
	switch x := v.(type) {
	case map[string]any:
		var parts []string
		for _, k := range []string{"role", "type"} {
			if s, ok := x[k].(string); ok {
				parts = append(parts, s)
			}
		}
		if len(x) == 1 {
			// A part holding one item (Gemini's {"functionCall": {…}}):
			// its key is its kind.
			for k, inner := range x {
				if _, ok := inner.(map[string]any); ok {
					return strings.TrimSpace(k + " " + describe(inner, depth))
				}
			}
		}
		name, _ := x["name"].(string)
		if f, ok := x["function"].(map[string]any); ok && name == "" {
			name, _ = f["name"].(string)
		}
		if name != "" {
			parts = append(parts, name)
		}
		for _, k := range itemIDKeys {
			if s, ok := x[k].(string); ok && s != "" {
				parts = append(parts, s)
				break
			}
		}
		if depth < 1 {
			for _, k := range []string{"tool_calls", "content", "parts"} {
				arr, ok := x[k].([]any)
				if !ok {
					continue
				}
				var inner []string
				for _, it := range arr {
					if _, ok := it.(map[string]any); !ok {
						continue
					}
					if d := describe(it, depth+1); d != "" {
						inner = append(inner, d)
					}
				}
				if len(inner) > 0 {
					parts = append(parts, "("+strings.Join(inner, ", ")+")")
				}
			}
		}
		return strings.Join(parts, " ")
	case []any:
		return count(len(x), "item")
	}
	return scalarText(v)
}

// scalarText is a scalar as JSON (strings quoted), anything else as its
// compact JSON.
func scalarText(v any) string { return diff.Text(v) }

// memberLines are an added or removed object's members, one each as
// "key: value" with a string holding JSON shown as that JSON, wrapped to
// width, at most max lines.
func memberLines(v any, width, maxLines int) []string {
	m, ok := v.(map[string]any)
	if !ok {
		return capLines(wrapJSON(diff.Text(v), width), maxLines, width)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var out []string
	for _, k := range keys {
		switch k {
		case "type", "role", "call_id", "tool_call_id", "tool_use_id", "id", "name":
			continue // in the item's line above
		}
		out = append(out, wrapJSON(k+": "+diff.Text(unwrapJSON(m[k])), width)...)
	}
	return capLines(out, maxLines, width)
}

// unwrapJSON reads each string in v that holds a JSON object or array as
// that JSON (tool arguments and results travel as strings), so a person
// reads {"order_id":"O-2048"}, not {\"order_id\":…}.
func unwrapJSON(v any) any {
	switch x := v.(type) {
	case string:
		if t := strings.TrimSpace(x); len(t) > 1 && (t[0] == '{' || t[0] == '[') {
			if p, err := jsonschema.ParseJSON([]byte(t)); err == nil {
				return unwrapJSON(p)
			}
		}
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = unwrapJSON(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = unwrapJSON(e)
		}
		return out
	}
	return v
}

// capLines keeps the first n lines, the last cut with an ellipsis when
// more follow.
func capLines(ls []string, n, width int) []string {
	if len(ls) <= n {
		return ls
	}
	ls = append([]string(nil), ls[:n]...)
	if !strings.HasSuffix(ls[n-1], "…") {
		ls[n-1] = cut(ls[n-1], width-1) + "…"
	}
	return ls
}

// changesDialog shows what one turn's request adds to the turn before it;
// [ and ] move to the turn before and after.
type changesDialog struct {
	c      *Common
	km     *KeyMap
	reqs   []*adapters.HTTPRequest // each turn's request, turn 1 first
	turn   int                     // the turn shown (1-based)
	scroll int
	// cache: the lines for (turn, width).
	cacheTurn, cacheW int
	cache             []string
}

// newChangesDialog opens on turn (the one the panels show).
func newChangesDialog(c *Common, km *KeyMap, st *session.State, turn int) *changesDialog {
	d := &changesDialog{c: c, km: km, turn: max(1, turn)}
	for _, t := range st.Turns {
		d.reqs = append(d.reqs, t.Request)
	}
	d.turn = min(d.turn, max(1, len(d.reqs)))
	return d
}

func (d *changesDialog) Kind() dialogKind       { return dlgChanges }
func (d *changesDialog) Update(tea.Msg) tea.Cmd { return nil }
func (d *changesDialog) Bindings(km *KeyMap) []key.Binding {
	return []key.Binding{km.Replay.PrevTurn, km.Replay.NextTurn, km.Nav.Up, km.Nav.Down, km.Dialog.Close}
}

func (d *changesDialog) HandleKey(msg tea.KeyMsg, km *KeyMap) (action, tea.Cmd) {
	switch {
	case key.Matches(msg, km.Dialog.Close), key.Matches(msg, km.Global.Changes):
		return actClose{}, nil
	case key.Matches(msg, km.Replay.PrevTurn):
		if d.turn > 1 {
			d.turn, d.scroll = d.turn-1, 0
		}
	case key.Matches(msg, km.Replay.NextTurn):
		if d.turn < len(d.reqs) {
			d.turn, d.scroll = d.turn+1, 0
		}
	case dialogScroll(msg, km, &d.scroll, dialogPage):
	}
	return nil, nil
}

// lines renders the comparison of turn d.turn with the one before.
func (d *changesDialog) lines(inner int) []string {
	if d.cache != nil && d.cacheTurn == d.turn && d.cacheW == inner {
		return d.cache
	}
	s := d.c.Styles
	var out []string
	cur, prev := d.request(d.turn), d.request(d.turn-1)
	switch {
	case cur == nil:
		out = wrapLines(s.Muted.Render("no request has been sent yet: press n to start, and from turn 2 on d shows what each request adds"), inner)
	case d.turn > 1 && prev == nil:
		out = append(out, s.Bold.Render(cut(cur.Method+" "+cur.Path, inner)))
		out = append(out, wrapLines(s.Muted.Render(fmt.Sprintf("turn %d's request is not in this session (a fork sends from a later turn): nothing to compare with", d.turn-1)), inner)...)
	case d.turn == 1:
		out = append(out, s.Bold.Render(cut(cur.Method+" "+cur.Path, inner)))
		out = append(out, wrapLines(s.Muted.Render("turn 1 is the first request: nothing before it to compare. From turn 2 on, this view shows what each request adds to the one before — the calls and results it carries by call_id, and what it changes (] next turn)"), inner)...)
	default:
		out = d.compare(prev, cur, inner)
	}
	d.cache, d.cacheTurn, d.cacheW = out, d.turn, inner
	return out
}

func (d *changesDialog) request(turn int) *adapters.HTTPRequest {
	if turn < 1 || turn > len(d.reqs) {
		return nil
	}
	return d.reqs[turn-1]
}

func (d *changesDialog) compare(prev, cur *adapters.HTTPRequest, inner int) []string {
	s := d.c.Styles
	out := []string{s.Bold.Render(cut(cur.Method+" "+cur.Path, inner))}
	if prev.Path != cur.Path {
		out = append(out, cut(s.Warn.Render("~ path ")+prev.Path+" -> "+cur.Path, inner))
	}
	cs, err := requestChanges(prev.Body, cur.Body)
	if err != nil {
		return append(out, wrapLines(s.Bad.Render(err.Error()), inner)...)
	}
	added, changed, removed := 0, 0, 0
	for _, c := range cs {
		switch c.op {
		case diff.OpAdded:
			added++
		case diff.OpRemoved:
			removed++
		default:
			changed++
		}
	}
	if len(cs) == 0 {
		return append(out, s.Muted.Render(fmt.Sprintf("the same body as turn %d's", d.turn-1)))
	}
	sum := fmt.Sprintf("against turn %d's request: %d added, %d changed", d.turn-1, added, changed)
	if removed > 0 {
		sum += fmt.Sprintf(", %d removed", removed)
	}
	out = append(out, wrapLines(s.Muted.Render(sum), inner)...)
	for _, c := range cs {
		out = append(out, "")
		switch c.op {
		case diff.OpChanged:
			if isScalar(c.a) && isScalar(c.b) {
				out = append(out, wrapLines(s.Warn.Render("~ ")+s.Accent.Render(c.path)+"  "+s.Bad.Render(scalarText(c.a))+" -> "+s.Good.Render(scalarText(c.b)), inner)...)
				continue
			}
			out = append(out, cut(s.Warn.Render("~ ")+s.Accent.Render(c.path), inner))
			for _, l := range capLines(wrapJSON(diff.Text(c.a), inner-4), 3, inner-4) {
				out = append(out, "  "+s.Bad.Render("- "+l))
			}
			for _, l := range capLines(wrapJSON(diff.Text(c.b), inner-4), 3, inner-4) {
				out = append(out, "  "+s.Good.Render("+ "+l))
			}
		case diff.OpAdded, diff.OpRemoved:
			sign, st, v := "+ ", s.Good, c.b
			if c.op == diff.OpRemoved {
				sign, st, v = "- ", s.Bad, c.a
			}
			out = append(out, cut(st.Render(sign)+s.Accent.Render(c.path)+"  "+describe(v, 0), inner))
			if _, obj := v.(map[string]any); !obj {
				if isScalar(v) {
					continue
				}
			}
			for _, l := range memberLines(v, inner-4, 4) {
				out = append(out, "    "+s.Muted.Render(l))
			}
		}
	}
	return out
}

func isScalar(v any) bool {
	switch v.(type) {
	case map[string]any, []any:
		return false
	}
	return true
}

func (d *changesDialog) View(w, h int) string {
	st := d.c.Styles.Dialog
	inner := w - st.GetHorizontalFrameSize()
	all := d.lines(inner)
	room := max(1, h-st.GetVerticalFrameSize()-2)
	d.scroll = min(d.scroll, max(0, len(all)-room))
	// The box keeps its size from turn to turn: [ and ] do not make it
	// jump.
	all = append([]string(nil), all[d.scroll:]...)
	for len(all) < room {
		all = append(all, "")
	}
	title := fmt.Sprintf("What turn %d's request adds", d.turn)
	return d.c.box(title, all, hintOf(d.Bindings(d.km)...), w, h)
}
