package ui

import (
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/pricing"
	"github.com/modelwire/modelwire/session"
	"github.com/modelwire/modelwire/stats"
	"github.com/modelwire/modelwire/validate"
)

// sessionsDialog browses stored sessions: fuzzy search, sort by any
// column, delete (after a confirmation), export, and enter to replay one.
type sessionsDialog struct {
	c       *Common
	km      *KeyMap
	all     []session.SessionInfo
	err     error
	loading bool
	sel     int
	sortBy  int  // index into sessionColumns
	desc    bool // descending (the default for the creation time)
	filter  *editor
	editing bool
	// marked are the sessions marked for a diff (m), in marking order.
	marked []string
	// search finds the sessions whose content holds a text (the
	// library's, run in a command); hits are its answer for hitsFor.
	search  func(text string) ([]string, error)
	hits    map[string]bool
	hitsFor string
}

// minContentSearch is the shortest query also looked for in sessions'
// content (shorter ones match almost everything).
const minContentSearch = 3

// contentHitsMsg is the library's answer to a content search.
type contentHitsMsg struct {
	text string
	ids  []string
	err  error
}

func newSessionsDialog(c *Common, km *KeyMap) *sessionsDialog {
	d := &sessionsDialog{c: c, km: km, loading: true, filter: newEditor(true), sortBy: colCreated, desc: true}
	d.filter.prompt = "/"
	d.filter.holder = "search: / then type (fuzzy: title, model, scenario or app, protocol, status, fault, layer; 3+ characters: also text sent or received)"
	return d
}

func (d *sessionsDialog) Kind() dialogKind { return dlgSessions }

func (d *sessionsDialog) setList(list []session.SessionInfo, err error) {
	d.all, d.err, d.loading = list, err, false
	d.sel = min(d.sel, max(0, len(d.visible())-1))
}

// visible is the list as searched and sorted, each fork under the
// session it was made from.
func (d *sessionsDialog) visible() []session.SessionInfo {
	v, _ := d.rows()
	return v
}

// rows is visible with how deep each session sits under its parent: the
// sort orders the sessions without a parent listed, and the forks of
// each one (SessionTree, as `modelwire sessions` nests them).
func (d *sessionsDialog) rows() ([]session.SessionInfo, []int) {
	q := strings.TrimSpace(d.filter.Value())
	var out []session.SessionInfo
	for _, s := range d.all {
		if q == "" || fuzzyMatch(q, searchText(s)) || (d.hitsFor == q && d.hits[s.ID]) {
			out = append(out, s)
		}
	}
	col := sessionColumns[d.sortBy]
	sort.SliceStable(out, func(i, j int) bool {
		if d.desc {
			return col.less(out[j], out[i])
		}
		return col.less(out[i], out[j])
	})
	return groupBatches(SessionTree(out))
}

// searchText is what the search looks in.
func searchText(s session.SessionInfo) string {
	return strings.Join([]string{s.ID, s.Title, s.Origin(), s.Model, s.ModelReported, s.Protocol, s.Provider, string(s.Status),
		strings.Join(s.Faults, " "), s.FailedLayer, s.Source}, " ")
}

// fuzzyMatch reports whether the runes of q appear in s in order,
// ignoring case ("antfail" finds "anthropic-messages … failed").
func fuzzyMatch(q, s string) bool {
	rs := []rune(strings.ToLower(s))
	i := 0
	for _, r := range strings.ToLower(q) {
		if r == ' ' {
			continue
		}
		for i < len(rs) && rs[i] != r {
			i++
		}
		if i == len(rs) {
			return false
		}
		i++
	}
	return true
}

func (d *sessionsDialog) selected() (session.SessionInfo, bool) {
	v := d.visible()
	if d.sel < 0 || d.sel >= len(v) || isBatchRow(v[d.sel]) {
		return session.SessionInfo{}, false
	}
	return v[d.sel], true
}

func (d *sessionsDialog) Bindings(km *KeyMap) []key.Binding {
	if d.editing {
		return []key.Binding{km.Dialog.Accept, km.Dialog.Close}
	}
	return []key.Binding{km.Nav.Up, km.Nav.Down, km.Dialog.Replay, km.Dialog.Filter, km.Dialog.Sort, km.Dialog.Reverse, km.Dialog.Delete,
		km.Dialog.Export, km.Dialog.Mark, km.Dialog.Diff, km.Dialog.Matrix, km.Dialog.Stats, km.Nav.Top, km.Nav.Bottom, km.Dialog.Close}
}

func (d *sessionsDialog) HandleKey(msg tea.KeyMsg, km *KeyMap) (action, tea.Cmd) {
	if d.editing {
		switch {
		case key.Matches(msg, km.Dialog.Accept), key.Matches(msg, km.Dialog.Close):
			d.editing = false
			d.filter.Blur()
			return nil, nil
		}
		d.filter.Update(msg)
		d.sel = 0
		return nil, d.searchContent()
	}
	n := len(d.visible())
	switch {
	case key.Matches(msg, km.Dialog.Close), key.Matches(msg, km.Global.Sessions):
		return actClose{}, nil
	case key.Matches(msg, km.Nav.Up):
		d.sel = max(0, d.sel-1)
	case key.Matches(msg, km.Nav.Down):
		d.sel = min(max(0, n-1), d.sel+1)
	case key.Matches(msg, km.Nav.Top):
		d.sel = 0
	case key.Matches(msg, km.Nav.Bottom):
		d.sel = max(0, n-1)
	case key.Matches(msg, km.Dialog.Filter):
		d.editing = true
		d.filter.Focus()
		return nil, nil
	case key.Matches(msg, km.Dialog.Sort):
		d.sortBy = (d.sortBy + 1) % len(sessionColumns)
		d.desc = d.sortBy == colCreated
	case key.Matches(msg, km.Dialog.Reverse):
		d.desc = !d.desc
	case key.Matches(msg, km.Dialog.Replay):
		if s, ok := d.selected(); ok {
			return actOpenReplay{id: s.ID}, nil
		}
	case key.Matches(msg, km.Dialog.Delete):
		if s, ok := d.selected(); ok {
			return actAskDelete{id: s.ID}, nil
		}
	case key.Matches(msg, km.Dialog.Export):
		if s, ok := d.selected(); ok {
			return actExport{id: s.ID}, nil
		}
	case key.Matches(msg, km.Dialog.Mark):
		if s, ok := d.selected(); ok {
			d.toggleMark(s.ID)
		}
	case key.Matches(msg, km.Dialog.Diff):
		return d.diffAction(), nil
	case key.Matches(msg, km.Dialog.Matrix):
		return actOpenMatrix{}, nil
	case key.Matches(msg, km.Dialog.Stats):
		return actOpenStats{by: stats.Dimensions[0]}, nil
	}
	return nil, nil
}

// toggleMark marks a session for a diff, or unmarks it; a third mark
// drops the oldest.
func (d *sessionsDialog) toggleMark(id string) {
	for i, m := range d.marked {
		if m == id {
			d.marked = append(d.marked[:i], d.marked[i+1:]...)
			return
		}
	}
	d.marked = append(d.marked, id)
	if len(d.marked) > 2 {
		d.marked = d.marked[1:]
	}
}

// diffAction compares the two marked sessions (the first marked is a),
// else the selected fork with the session it came from.
func (d *sessionsDialog) diffAction() action {
	if len(d.marked) == 2 {
		return actOpenDiff{a: d.marked[0], b: d.marked[1]}
	}
	if s, ok := d.selected(); ok && s.ParentID != "" {
		return actOpenDiff{a: s.ParentID, b: s.ID}
	}
	return actStatus{level: levelWarn, text: "diff: mark two sessions with m, or select a fork"}
}

// gutter is the two cells before a row: the cursor, a mark for a diff.
func (d *sessionsDialog) gutter(id string, selected bool) string {
	for i, m := range d.marked {
		if m == id {
			return string("ab"[i]) + " "
		}
	}
	if selected {
		return "▸ "
	}
	return "  "
}

// searchDelay is how long typing pauses before the content search runs:
// a scan per keystroke would queue searches that the next key makes stale.
const searchDelay = 200 * time.Millisecond

// contentSearchDueMsg says typing paused on text.
type contentSearchDueMsg struct{ text string }

// searchContent schedules the content search of the query; it runs
// (searchDue) only if the query is still the same when the delay is up.
func (d *sessionsDialog) searchContent() tea.Cmd {
	q := strings.TrimSpace(d.filter.Value())
	if d.search == nil || utf8.RuneCountInString(q) < minContentSearch || q == d.hitsFor {
		return nil
	}
	return tea.Tick(searchDelay, func(time.Time) tea.Msg { return contentSearchDueMsg{text: q} })
}

// searchDue looks for the query in the sessions' content, off the UI's
// goroutine; the answer counts only while the query is unchanged.
func (d *sessionsDialog) searchDue(q string) tea.Cmd {
	if q != strings.TrimSpace(d.filter.Value()) || q == d.hitsFor {
		return nil
	}
	search := d.search
	return func() tea.Msg {
		ids, err := search(q)
		return contentHitsMsg{text: q, ids: ids, err: err}
	}
}

func (d *sessionsDialog) Update(msg tea.Msg) tea.Cmd {
	if m, ok := msg.(contentSearchDueMsg); ok {
		return d.searchDue(m.text)
	}
	if m, ok := msg.(contentHitsMsg); ok && m.err == nil && m.text == strings.TrimSpace(d.filter.Value()) {
		d.hitsFor, d.hits = m.text, make(map[string]bool, len(m.ids))
		for _, id := range m.ids {
			d.hits[id] = true
		}
		d.sel = min(d.sel, max(0, len(d.visible())-1))
	}
	return nil
}

func (d *sessionsDialog) View(w, h int) string {
	s := d.c.Styles
	bw := w
	inner := bw - s.Dialog.GetHorizontalFrameSize()
	var lines []string
	switch {
	case d.loading:
		lines = append(lines, s.Muted.Render("loading…"))
	case d.err != nil:
		lines = append(lines, s.Bad.Render(d.err.Error()))
	}
	order := "↑"
	if d.desc {
		order = "↓"
	}
	sortText := "   sort: " + sessionColumns[d.sortBy].name + " " + order
	// The search line keeps room for the sort, whatever its placeholder says.
	fw := max(10, inner-ansi.StringWidth(sortText))
	lines = append(lines, cut(fit(d.filter.View(fw, 1, d.c), fw)+s.Muted.Render(sortText), inner))
	v, depth := d.rows()
	cols := d.columnsFor(inner-2, idWidth(depth))
	var head []string
	for _, c := range cols {
		name := c.name
		if c.sessionColumn == sessionColumns[d.sortBy] {
			name += order
		}
		head = append(head, c.cell(name))
	}
	lines = append(lines, s.Muted.Render(cut("  "+strings.Join(head, " "), inner)))
	room := max(1, h-8)
	first := max(0, min(d.sel-room/2, len(v)-room))
	for i := first; i < min(len(v), first+room); i++ {
		x := v[i]
		if isBatchRow(x) {
			lines = append(lines, d.batchHeader(x, i == d.sel, inner))
			continue
		}
		var cells []string
		for _, c := range cols {
			val := c.value(x)
			if c.sessionColumn == idColumn {
				val = forkID(x.ID, depth[i])
				if _, _, _, ok := x.Batch(); ok && depth[i] == 1 {
					val = "  " + x.ID // a batch's request, under its header
				}
			}
			cell := c.cell(val)
			switch c.name {
			case "STATUS":
				cell = s.State(string(map[session.Status]validate.Verdict{session.StatusDone: validate.Pass, session.StatusFailed: validate.Fail}[x.Status])).Render(cell)
			case "FAILED":
				cell = s.Bad.Render(cell)
			}
			cells = append(cells, cell)
		}
		// The cursor glyph marks the selection without colour too; a
		// session marked for a diff shows as a or b.
		line := d.gutter(x.ID, false) + strings.Join(cells, " ")
		if i == d.sel {
			line = s.Selected.Render(fit(d.gutter(x.ID, true)+ansiStrip(strings.Join(cells, " ")), inner))
		}
		lines = append(lines, cut(line, inner))
	}
	switch {
	case d.loading || d.err != nil:
	case len(d.all) == 0:
		lines = append(lines, s.Muted.Render("no stored sessions"))
	case len(v) == 0:
		lines = append(lines, s.Muted.Render(fmt.Sprintf("no session matches %q (of %d stored)", strings.TrimSpace(d.filter.Value()), len(d.all))))
	}
	hint := hintOf(d.Bindings(d.km)...)
	return d.c.box(fmt.Sprintf("Sessions (%d)", len(v)-batchRows(v)), lines, hint, bw, h)
}

// shownColumn is a column as one view of the list lays it out.
type shownColumn struct {
	*sessionColumn
	width int
}

// cell pads or cuts v to the column's width.
func (c shownColumn) cell(v string) string {
	if c.right && ansi.StringWidth(v) < c.width {
		return strings.Repeat(" ", c.width-ansi.StringWidth(v)) + v
	}
	return fit(v, c.width)
}

// columnsFor picks the columns that fit in width: by priority (a column
// the person sorts by always), shown in their usual order; the ID column
// is idw wide. A column that does not fit takes the cells it lacks from
// the columns kept before it that can give some (down to their least
// width), so at 80 columns the protocol stays and the scenario is cut.
func (d *sessionsDialog) columnsFor(width, idw int) []shownColumn {
	widths := map[*sessionColumn]int{}
	used := 0
	keep := func(c *sessionColumn) {
		w := c.width
		if c == idColumn {
			w = idw
		}
		lack := used + w + 1 - width
		if lack > 0 {
			give := 0
			for k, kw := range widths {
				if k.least > 0 {
					give += kw - k.least
				}
			}
			if give < lack {
				return
			}
			for _, k := range sessionColumns { // in order: the same cuts each time
				if kw, ok := widths[k]; ok && k.least > 0 && lack > 0 {
					n := min(kw-k.least, lack)
					widths[k], lack, used = kw-n, lack-n, used-n
				}
			}
		}
		widths[c] = w
		used += w + 1
	}
	if d.sortBy != colCreated {
		keep(sessionColumns[d.sortBy])
	}
	for _, i := range columnPriority {
		if _, ok := widths[sessionColumns[i]]; !ok {
			keep(sessionColumns[i])
		}
	}
	var out []shownColumn
	for _, c := range sessionColumns {
		if w, ok := widths[c]; ok {
			out = append(out, shownColumn{c, w})
		}
	}
	return out
}

// forkID is a session's id in the list: a fork's (or an edited
// re-send's) indented under the session it was made from, after ↳.
func forkID(id string, depth int) string {
	if depth == 0 {
		return id
	}
	return strings.Repeat(" ", depth-1) + "↳ " + id
}

// idWidth is the ID column's width for sessions this deep: an id, and
// room for the deepest fork's indent.
func idWidth(depth []int) int {
	w := idColumn.width
	for _, d := range depth {
		w = max(w, ansi.StringWidth(forkID(strings.Repeat("x", sessionIDLen), d)))
	}
	return w
}

// sessionColumn is one column of the sessions list.
type sessionColumn struct {
	name  string
	width int
	// least is how narrow the column may be cut to make room for
	// another (0: never cut).
	least int
	right bool
	value func(session.SessionInfo) string
	less  func(a, b session.SessionInfo) bool
}

func byText(f func(session.SessionInfo) string) func(a, b session.SessionInfo) bool {
	return func(a, b session.SessionInfo) bool { return f(a) < f(b) }
}

func byNumber(f func(session.SessionInfo) int64) func(a, b session.SessionInfo) bool {
	return func(a, b session.SessionInfo) bool { return f(a) < f(b) }
}

func textColumn(name string, width int, f func(session.SessionInfo) string) *sessionColumn {
	return &sessionColumn{name: name, width: width, value: f, less: byText(f)}
}

func numberColumn(name string, width int, f func(session.SessionInfo) int64, show func(int64) string) *sessionColumn {
	return &sessionColumn{name: name, width: width, right: true, less: byNumber(f),
		value: func(s session.SessionInfo) string { return show(f(s)) }}
}

const colCreated = 1

// sessionCost estimates what a session's tokens cost at list prices (the
// price table the validation panel uses), every attempt counted; ok is
// false when the model has no price or no tokens were reported.
func sessionCost(s session.SessionInfo) (float64, bool) {
	if s.InputTokens+s.OutputTokens == 0 {
		return 0, false
	}
	u := &adapters.Usage{InputTokens: &s.InputTokens, OutputTokens: &s.OutputTokens,
		CacheReadTokens: &s.CacheReadTokens, CacheWriteTokens: &s.CacheWriteTokens, ReasoningTokens: &s.ReasoningTokens,
		CacheWrite1hTokens: &s.CacheWrite1hTokens, WebSearchCalls: &s.WebSearchCalls}
	for _, m := range []string{s.ModelReported, s.Model} {
		if c := pricing.PriceUsage(m, u); c.Priced {
			return c.Total, true
		}
	}
	return 0, false
}

// costColumn shows the estimate in the table's currency, to the digits
// the validation panel shows ("–" unpriced, which sorts as the cheapest).
var costColumn = &sessionColumn{name: "COST", width: 9, right: true,
	value: func(s session.SessionInfo) string {
		c, ok := sessionCost(s)
		if !ok {
			return "–"
		}
		if pricing.Models().Currency == "USD" {
			return fmt.Sprintf("$%.5f", c)
		}
		return fmt.Sprintf("%.5f", c)
	},
	less: func(a, b session.SessionInfo) bool {
		ca, oka := sessionCost(a)
		cb, okb := sessionCost(b)
		if oka != okb {
			return !oka
		}
		return ca < cb
	}}

// sessionIDLen is the length of a session id (store ids are 12
// characters, time-ordered).
const sessionIDLen = 12

// idColumn is the sessions' ids; the list draws a fork's under its
// parent's (forkID), room for one level kept.
var idColumn = textColumn("ID", sessionIDLen+2, func(s session.SessionInfo) string { return s.ID })

// sessionColumns are the list's columns in their order on screen.
var sessionColumns = []*sessionColumn{
	idColumn,
	{name: "CREATED", width: 11, value: func(s session.SessionInfo) string { return s.CreatedAt.Format("01-02 15:04") },
		less: func(a, b session.SessionInfo) bool { return a.CreatedAt.Before(b.CreatedAt) }},
	// The scenario (or an application's host) gives way first: its name
	// is cut, but a column that names what ran stays.
	{name: "SCENARIO/APP", width: 22, least: len("SCENARIO/APP"), value: originOf, less: byText(originOf)},
	textColumn("PROTOCOL", 18, func(s session.SessionInfo) string { return s.Protocol }),
	textColumn("PROVIDER", 10, func(s session.SessionInfo) string { return s.Provider }),
	textColumn("MODEL", 20, session.SessionInfo.ModelShown),
	textColumn("FAULT", 18, func(s session.SessionInfo) string { return strings.Join(s.Faults, ",") }),
	textColumn("STATUS", 11, func(s session.SessionInfo) string { return string(s.Status) }),
	textColumn("FAILED", 9, func(s session.SessionInfo) string { return s.FailedLayer }),
	numberColumn("TURNS", 5, func(s session.SessionInfo) int64 { return int64(s.Turns) }, func(n int64) string { return fmt.Sprint(n) }),
	numberColumn("TOKENS", 9, func(s session.SessionInfo) int64 { return s.InputTokens + s.OutputTokens }, func(n int64) string {
		if n == 0 {
			return "–"
		}
		return fmt.Sprint(n)
	}),
	costColumn,
	numberColumn("TIME", 8, func(s session.SessionInfo) int64 { return int64(s.Duration()) }, func(n int64) string {
		if n == 0 {
			return "–"
		}
		return time.Duration(n).Round(10 * time.Millisecond).String()
	}),
}

// columnPriority is the order columns are given room in a narrow list.
var columnPriority = []int{0, 7, 2, 8, 3, 9, 1, 10, 11, 12, 4, 5, 6}
