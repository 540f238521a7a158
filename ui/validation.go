package ui

import (
	"fmt"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/pricing"
	"github.com/modelwire/modelwire/session"
	"github.com/modelwire/modelwire/validate"
)

// validationPanel shows the five layers, the terminal status and stop
// reason, the parsed answer, usage by class per turn, and the timings.
type validationPanel struct {
	scroller
	c *Common
	d *viewData
}

func newValidationPanel(c *Common, d *viewData) *validationPanel {
	return &validationPanel{c: c, d: d}
}

func (p *validationPanel) HandleKey(msg tea.KeyMsg, km *KeyMap) (bool, tea.Cmd) {
	return p.scrollKey(msg, km, len(p.lines())), nil
}

func (p *validationPanel) View() []string { return p.window(p.lines()) }

func (p *validationPanel) lines() []string {
	s := p.c.Styles
	w := p.w
	st := p.d.state
	var out []string
	if st == nil {
		return []string{s.Muted.Render("no session")}
	}
	// Terminal of the last response.
	if t := st.Current(); t != nil && t.Terminal != nil {
		ev := t.Terminal
		stStyle := s.Good
		if ev.Status != adapters.StatusCompleted {
			stStyle = s.Bad
		}
		line := s.Muted.Render("terminal ") + stStyle.Render(string(ev.Status)) + s.Muted.Render(" · stop ") + string(ev.StopReason)
		if ev.ProviderStopReason != "" {
			line += s.Muted.Render(" (" + ev.ProviderStopReason + ")")
		}
		out = append(out, wrapLines(line, w)...)
		if next := validate.TerminalAdvice(ev.Status, ev.StopReason); next != "" {
			for _, l := range wrapLines("next: "+next, max(1, w-2)) {
				out = append(out, "  "+s.Warn.Render(l))
			}
		}
	}
	if g := p.regeneration(st); len(g) > 0 {
		out = append(out, "", p.c.section("regeneration"))
		out = append(out, g...)
	}
	out = append(out, cut(s.Muted.Render("session ")+p.status(st), w))
	if why := stopReason(st); why != "" && p.interrupted(st) {
		for _, l := range wrapLines(why, max(1, w-2)) {
			out = append(out, "  "+s.Muted.Render(l))
		}
	}
	out = append(out, "", p.c.section("layers"))
	byLayer := map[validate.Layer]validate.LayerResult{}
	for _, l := range st.Layers {
		byLayer[l.Layer] = l
	}
	for _, name := range validate.Layers {
		l, ok := byLayer[name]
		if !ok {
			out = append(out, "  "+s.Subtle.Render("· "+padRight(string(name), 9)+" pending"))
			continue
		}
		icon := map[validate.Verdict]string{validate.Pass: "✓", validate.Fail: "✗", validate.Skip: "–"}[l.Status]
		head := "  " + s.State(string(l.Status)).Render(icon+" "+padRight(string(name), 9)+" "+padRight(string(l.Status), 4))
		detail := oneLine(l.Detail)
		if name == validate.Domain && st.Domain != nil {
			// The checks are listed below, each with its values.
			detail = p.checksSummary(st.Domain)
		}
		if l.Status == validate.Pass && displayWidth(head)+1+displayWidth(detail) <= w {
			// A pass needs no essay: one line when it fits.
			out = append(out, head+" "+s.Muted.Render(detail))
			continue
		}
		out = append(out, head)
		for _, dl := range wrapLines(detail, max(1, w-4)) {
			if l.Status == validate.Pass {
				dl = s.Muted.Render(dl)
			}
			out = append(out, "    "+dl)
		}
	}
	// The answer in the output schema's order, whole, under the layers;
	// the checks with the values they used and the facts with their
	// arithmetic after the usage and cost, and the timings last, as the
	// panel grows at its bottom while a session runs. The tool calls are
	// the lanes'; the values view (v) has them and all of this whole.
	secs := p.c.valueSections(p.d, w, false)
	for len(secs) > 0 && secs[0].name == "answer" {
		out = append(out, "", p.c.section(secs[0].name))
		out = append(out, secs[0].lines...)
		secs = secs[1:]
	}
	if u := p.usage(st); len(u) > 0 {
		out = append(out, "", p.c.section("usage by class"))
		out = append(out, u...)
	}
	if c := p.cost(st); len(c) > 0 {
		out = append(out, "", p.c.section("cost (estimate)"))
		out = append(out, c...)
	}
	for _, sec := range secs {
		out = append(out, "", p.c.section(sec.name))
		out = append(out, sec.lines...)
	}
	if tm := p.timings(st); len(tm) > 0 {
		out = append(out, "", p.c.section("timings"))
		out = append(out, tm...)
	}
	return out
}

func (p *validationPanel) status(st *session.State) string {
	s := p.c.Styles
	if p.interrupted(st) {
		return s.Warn.Render("interrupted")
	}
	switch st.Status {
	case session.StatusDone:
		return s.Good.Render("done")
	case session.StatusFailed:
		return s.Bad.Render("failed")
	case session.StatusRunning:
		if p.d.paused != "" {
			return s.Info.Render("paused at " + p.d.paused)
		}
		return s.Info.Render("running")
	}
	return s.Warn.Render(string(st.Status))
}

// interrupted reports whether the session shows as stopped before its
// end: it is, or it is a replay of one that was (whose record ends where
// it stopped: it is not running anywhere).
func (p *validationPanel) interrupted(st *session.State) bool {
	return st.Status == session.StatusInterrupted || st.Status == session.StatusRunning && p.d.replay && p.d.ended == session.StatusInterrupted
}

// stopReason is why an interrupted session stopped, as stored: the error
// of its last attempt ("" when it has none).
func stopReason(st *session.State) string {
	for i := len(st.Turns) - 1; i >= 0; i-- {
		if as := st.Turns[i].Attempts; len(as) > 0 {
			return oneLine(as[len(as)-1].Err)
		}
	}
	return ""
}

// checksSummary says how many checks passed and which failed.
func (p *validationPanel) checksSummary(d *session.Domain) string {
	var failed []string
	for _, c := range d.Checks {
		if !c.Pass {
			failed = append(failed, c.ID)
		}
	}
	sum := fmt.Sprintf("%d of %d business checks pass", len(d.Checks)-len(failed), len(d.Checks))
	if len(failed) > 0 {
		sum += "; failing: " + strings.Join(failed, ", ")
	}
	return sum + " (checks below)"
}

// usage is a table of token usage by class, one row a turn and a total.
func (p *validationPanel) usage(st *session.State) []string {
	type row struct {
		name string
		v    [5]*int64
	}
	var rows []row
	var total row
	total.name = "total"
	for _, t := range st.Turns {
		if t.Usage == nil {
			continue
		}
		u := t.Usage
		r := row{name: fmt.Sprintf("turn %d", t.N), v: [5]*int64{u.InputTokens, u.CacheReadTokens, u.CacheWriteTokens, u.OutputTokens, u.ReasoningTokens}}
		rows = append(rows, r)
		for i, x := range r.v {
			if x != nil {
				if total.v[i] == nil {
					total.v[i] = adapters.Int(0)
				}
				*total.v[i] += *x
			}
		}
	}
	if len(rows) == 0 {
		return nil
	}
	many := len(rows) > 1
	rows, earlier := lastRows(rows)
	if many {
		rows = append(rows, total)
	}
	s := p.c.Styles
	head := []string{"", "input", "cache r", "cache w", "output", "reason"}
	cw := 7
	if p.w < 48 {
		head = []string{"", "in", "c.rd", "c.wr", "out", "rsn"}
		cw = 5
	}
	line := func(cells []string) string {
		var b strings.Builder
		b.WriteString("  " + fit(cells[0], 7))
		for _, c := range cells[1:] {
			b.WriteString(" " + fmt.Sprintf("%*s", cw, c))
		}
		return cut(b.String(), p.w)
	}
	out := []string{s.Muted.Render(line(head))}
	out = append(out, p.earlier(earlier, "in the total")...)
	for _, r := range rows {
		cells := []string{r.name}
		for _, x := range r.v {
			if x == nil {
				cells = append(cells, "–")
			} else {
				cells = append(cells, fmt.Sprint(*x))
			}
		}
		out = append(out, line(cells))
	}
	return out
}

// timings lists each turn's six time points (13.7.1) — headers, first
// event, first output token (reasoning counts), first visible text and
// the terminal, from the request's start — and, on a line of its own, the
// figure the provider reported of its own time, which is never one of them.
func (p *validationPanel) timings(st *session.State) []string {
	var timed []*session.TurnState
	for _, t := range st.Turns {
		if t.Timings != nil {
			timed = append(timed, t)
		}
	}
	timed, earlier := lastRows(timed)
	out := p.earlier(earlier, "")
	s := p.c.Styles
	for _, t := range timed {
		tm := t.Timings
		line := fmt.Sprintf("turn %d  headers %s · event %s · token %s · text %s · end %s", t.N,
			msOrDash(tm.Headers), msOrDash(tm.FirstEvent), msOrDash(tm.FirstToken), msOrDash(tm.FirstText), msOrDash(tm.Terminal))
		out = append(out, styleLines(s.Text, hang("  ", line, 4, p.w))...)
		if sv := tm.Server; sv != nil {
			line := fmt.Sprintf("server %s (%s: the provider's own clock, not one of the above)", msText(sv.MS), sv.Source)
			out = append(out, styleLines(s.Muted, hang("  ", line, 4, p.w))...)
		}
		if spark, marks, sum := turnTimeline(t, p.w-4); spark != "" {
			out = append(out, "  "+s.Accent.Render(spark))
			if marks != "" {
				out = append(out, "  "+s.Tool().Render(marks))
			}
			out = append(out, cut(s.Muted.Render("  "+sum), p.w))
		}
	}
	return out
}

func msOrDash(v float64) string {
	if v <= 0 {
		return "–"
	}
	return msText(v)
}

// regeneration says which turn asked again and why; the first verdict's
// failing layer is the reason, the layers above are the final verdict.
func (p *validationPanel) regeneration(st *session.State) []string {
	s := p.c.Styles
	var out []string
	for _, t := range st.Turns {
		g := t.Regenerates
		if g == nil {
			continue
		}
		head := fmt.Sprintf("turn %d asked again after turn %d's answer failed %s:", t.N, t.N-1, g.Layer)
		out = append(out, styleLines(s.Warn, hang("  ", head, 4, p.w))...)
		for _, l := range wrapLines(oneLine(g.Detail), max(1, p.w-4)) {
			out = append(out, "    "+l)
		}
	}
	if len(out) > 0 && st.Status == session.StatusFailed {
		out = append(out, styleLines(s.Bad, hang("  ", "cannot complete: the answer is withheld; the tool results are the evidence", 4, p.w))...)
	}
	return out
}

// cost prices each turn's usage from the embedded model table, bucket by
// bucket (13.7.3), with the table's label and date: an estimate, never
// the bill. A turn cut before its usage is "to reconcile", not zero.
func (p *validationPanel) cost(st *session.State) []string {
	sums := make([]adapters.Summary, 0, len(st.Turns)) // a long replay has 1,000s
	turns := make([]int, 0, len(st.Turns))
	for _, t := range st.Turns {
		if t.Summary == nil && t.Usage == nil {
			continue
		}
		// The usage folded from the stream is the turn's; a replay may
		// have it without a summary.
		var sum adapters.Summary
		if t.Summary != nil {
			sum = *t.Summary
		}
		if t.Usage != nil {
			sum.Usage = t.Usage
		}
		sums = append(sums, sum)
		turns = append(turns, t.N)
	}
	if len(sums) == 0 {
		return nil
	}
	s := p.c.Styles
	model := "" // the model asked for prices a response that names none the table knows
	if p.d.scenario != nil {
		model = p.d.scenario.Model
	}
	c := pricing.PriceSession(model, sums)
	shown, earlier := lastRows(c.Turns)
	out := p.earlier(earlier, "in the total")
	for i, tc := range shown {
		i += earlier
		line := fmt.Sprintf("  turn %d  ", turns[i])
		if !tc.Priced {
			out = append(out, hang(line, tc.Why, 4, p.w)...)
			continue
		}
		line += fmt.Sprintf("%s %.5f", c.Currency, tc.Total)
		if tc.Savings > 0 {
			line += s.Good.Render(fmt.Sprintf("  cache saved %.5f", tc.Savings))
		}
		out = append(out, cut(line, p.w))
		if b := tc.Lines(); len(b) > 1 {
			out = append(out, styleLines(s.Muted, hang("    ", strings.Join(b, " · "), 6, p.w))...)
		}
		if tc.LowerBound {
			out = append(out, styleLines(s.Warn, hang("    ", tc.Why, 6, p.w))...)
		}
	}
	out = append(out, cut(fmt.Sprintf("  total   %s %.5f · cache saved %.5f", c.Currency, c.Total, c.Savings), p.w))
	if b := c.Buckets.Lines(); len(b) > 0 {
		out = append(out, styleLines(s.Muted, hang("    ", strings.Join(b, " · "), 6, p.w))...)
	}
	if c.ToReconcile > 0 {
		line := fmt.Sprintf("%s cut before its usage arrived: to reconcile with the bill, so the total is a lower bound", count(c.ToReconcile, "response"))
		out = append(out, styleLines(s.Warn, hang("  ", line, 4, p.w))...)
	}
	for _, l := range wrapLines(fmt.Sprintf("%s (table of %s)", c.Label, c.Date), max(1, p.w-2)) {
		out = append(out, "  "+s.Muted.Render(l))
	}
	return out
}

// turnRows is how many turns the per-turn tables (usage, timings, cost)
// list: the last ones, the turn shown among them. A session of thousands
// of turns would otherwise render thousands of rows every frame, for a
// panel that shows a screenful; the totals count every turn.
const turnRows = 50

// lastRows is the last turnRows of rows and how many come before them.
func lastRows[T any](rows []T) ([]T, int) {
	n := max(0, len(rows)-turnRows)
	return rows[n:], n
}

// earlier is the line that says n earlier turns are not listed.
func (p *validationPanel) earlier(n int, note string) []string {
	if n == 0 {
		return nil
	}
	line := fmt.Sprintf("  … %d earlier turns", n)
	if note != "" {
		line += " (" + note + ")"
	}
	return []string{cut(p.c.Styles.Muted.Render(line), p.w)}
}
