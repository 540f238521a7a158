package ui

import (
	"fmt"
	"math"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/modelwire/modelwire/stats"
)

// The stats view: what `modelwire stats` computes over the stored
// sessions — a row per group (failure rate, failing layers, cost, cost
// per success, cache hits), the distribution of time to first text per
// group and the cost per group as terminal charts — opened from the
// sessions list with %. ← → change what the sessions are grouped by
// (read again in a command); ↑ ↓ scroll.

// StatsSource reads the stored sessions' aggregate (stats.Source).
type StatsSource interface {
	Stats(by []string) (*stats.Report, error)
}

// actOpenStats reads the aggregate grouped by by.
type actOpenStats struct{ by string }

func (actOpenStats) isAction() {}

// statsMsg carries a report back; gen drops an answer no longer wanted.
type statsMsg struct {
	gen    int
	by     string
	report *stats.Report
	err    error
}

// loadStats reads the aggregate in a command.
func (m *Model) loadStats(by string) tea.Cmd {
	if m.opts.Stats == nil {
		return m.setStatus(levelWarn, "no session store is open")
	}
	m.statsGen++
	gen, src := m.statsGen, m.opts.Stats
	return tea.Batch(m.setStatus(levelInfo, "reading the stored sessions' figures…"), func() tea.Msg {
		r, err := src.Stats([]string{by})
		return statsMsg{gen: gen, by: by, report: r, err: err}
	})
}

// onStats opens the view on the report that arrived (or replaces the one
// open).
func (m *Model) onStats(msg statsMsg) tea.Cmd {
	if msg.gen != m.statsGen {
		return nil
	}
	if msg.err != nil {
		return m.setStatus(levelError, "stats: "+msg.err.Error())
	}
	d := newStatsDialog(m.c, &m.km, msg.by, msg.report)
	if t := m.top(); t != nil && t.Kind() == dlgStats {
		m.dialogs[len(m.dialogs)-1] = d
	} else {
		m.dialogs = append(m.dialogs, d)
	}
	return m.setStatus(levelInfo, fmt.Sprintf("%s in %s by %s", count(d.sessions, "session"), count(len(msg.report.Groups), "group"), msg.by))
}

// statsDialog draws a report; top is the first line shown.
type statsDialog struct {
	c        *Common
	km       *KeyMap
	by       string
	r        *stats.Report
	sessions int
	top      int
	// room is how many lines the last frame had for the body.
	room int
}

func newStatsDialog(c *Common, km *KeyMap, by string, r *stats.Report) *statsDialog {
	d := &statsDialog{c: c, km: km, by: by, r: r}
	for _, g := range r.Groups {
		d.sessions += g.Sessions
	}
	return d
}

func (d *statsDialog) Kind() dialogKind       { return dlgStats }
func (d *statsDialog) Update(tea.Msg) tea.Cmd { return nil }
func (d *statsDialog) Bindings(km *KeyMap) []key.Binding {
	by := key.NewBinding(key.WithKeys(append(km.Dialog.Left.Keys(), km.Dialog.Right.Keys()...)...), key.WithHelp("←→", "group by"))
	scroll := key.NewBinding(key.WithKeys(append(km.Nav.Up.Keys(), km.Nav.Down.Keys()...)...), key.WithHelp("↑↓", "scroll"))
	return []key.Binding{by, scroll, km.Dialog.Close}
}

func (d *statsDialog) HandleKey(msg tea.KeyMsg, km *KeyMap) (action, tea.Cmd) {
	switch {
	case key.Matches(msg, km.Dialog.Close), key.Matches(msg, km.Dialog.Stats):
		return actClose{}, nil
	case key.Matches(msg, km.Dialog.Left):
		return actOpenStats{by: nextDimension(d.by, -1)}, nil
	case key.Matches(msg, km.Dialog.Right):
		return actOpenStats{by: nextDimension(d.by, 1)}, nil
	case key.Matches(msg, km.Nav.Up):
		d.top = max(0, d.top-1)
	case key.Matches(msg, km.Nav.Down):
		d.top++
	case key.Matches(msg, km.Nav.PageUp):
		d.top = max(0, d.top-max(1, d.room-1))
	case key.Matches(msg, km.Nav.PageDown):
		d.top += max(1, d.room-1)
	case key.Matches(msg, km.Nav.Top):
		d.top = 0
	}
	return nil, nil
}

// nextDimension is the dimension step places after by, cycling.
func nextDimension(by string, step int) string {
	dims := stats.Dimensions
	for i, d := range dims {
		if d == by {
			return dims[(i+step+len(dims))%len(dims)]
		}
	}
	return dims[0]
}

func (d *statsDialog) View(w, h int) string {
	st := d.c.Styles.Dialog
	inner := max(20, w-st.GetHorizontalFrameSize())
	d.room = max(1, h-st.GetVerticalFrameSize()-2)
	lines := d.lines(inner)
	d.top = min(d.top, max(0, len(lines)-d.room))
	title := fmt.Sprintf("Stats by %s · %s · %s", d.by, count(d.sessions, "session"), count(len(d.r.Groups), "group"))
	if len(lines) > d.room {
		title += fmt.Sprintf(" · lines %d–%d of %d", d.top+1, min(len(lines), d.top+d.room), len(lines))
	}
	return d.c.box(title, lines[d.top:], hintOf(d.Bindings(d.km)...), w, h)
}

// Column widths of the group table and the charts' labels.
const (
	statsLabel = 16
	statsGap   = "  "
)

// lines renders the whole report within inner cells: the table, the
// first-text chart, the cost chart.
func (d *statsDialog) lines(inner int) []string {
	s := d.c.Styles
	if len(d.r.Groups) == 0 {
		return []string{s.Muted.Render("no sessions stored yet"), "",
			cut("modelwire run (or the workbench, the proxy, an import) stores sessions; their figures show here.", inner)}
	}
	cols := []string{"SESSIONS", "FAIL%", "TEXT p50/p95 ms", "COST " + d.r.Currency, "PER SUCCESS"}
	head := fit(strings.ToUpper(d.by), statsLabel)
	for _, c := range cols {
		head += statsGap + c
	}
	out := []string{s.Muted.Render(cut(head, inner))}
	ft := d.pointIndex("first_text")
	for i := range d.r.Groups {
		g := &d.r.Groups[i]
		fail := pct(g.FailureRate())
		if g.Failed > 0 {
			fail = s.Warn.Render(fail)
		}
		first := "-"
		if ft >= 0 && !g.Points[ft].Empty() {
			first = ms(g.Points[ft].P50) + "/" + ms(g.Points[ft].P95)
		}
		cost := fmt.Sprintf("%.4f", g.Cost)
		if !g.CostComplete() {
			cost = "≥" + cost
		}
		per := "-"
		if v := g.CostPerSuccess(); !math.IsNaN(v) {
			per = fmt.Sprintf("%.6f", v)
		}
		cells := []string{fmt.Sprint(g.Sessions), fail, first, cost, per}
		line := fit(g.Key[0], statsLabel)
		for j, c := range cells {
			line += statsGap + padLeft(c, len(cols[j]))
		}
		out = append(out, cut(line, inner))
		if l := stats.Layers(g); l != "" {
			out = append(out, cut(fit("", statsLabel)+statsGap+s.Muted.Render("failed at: "+l), inner))
		}
		if g.ToReconcile > 0 || g.CachedTokens > 0 {
			out = append(out, cut(fit("", statsLabel)+statsGap+s.Muted.Render(fmt.Sprintf("cache hits %s · %d to reconcile", pct(g.CacheHitRatio()), g.ToReconcile)), inner))
		}
	}
	out = append(out, "")
	out = append(out, d.firstTextChart(inner, ft)...)
	out = append(out, "")
	return append(out, d.costChart(inner)...)
}

func (d *statsDialog) pointIndex(name string) int {
	for i, p := range d.r.Points {
		if p == name {
			return i
		}
	}
	return -1
}

// sparks are the eight heights of a histogram's bars.
var sparks = []rune("▁▂▃▄▅▆▇█")

// firstTextChart is the distribution of time to first text per group: a
// histogram over one scale for every group (0 to the largest maximum),
// each group's bars scaled to its own busiest bin.
func (d *statsDialog) firstTextChart(inner, ft int) []string {
	s := d.c.Styles
	out := []string{s.Accent.Render(cut("Time to first text, ms from the request's start (one scale, ▲ p50)", inner))}
	hi := 0.0
	if ft >= 0 {
		for _, g := range d.r.Groups {
			if !g.Points[ft].Empty() {
				hi = math.Max(hi, g.Points[ft].Max)
			}
		}
	}
	if hi <= 0 {
		return append(out, s.Muted.Render("no attempt reached its first text"))
	}
	width := max(8, inner-statsLabel-len(statsGap)-2)
	for i := range d.r.Groups {
		g := &d.r.Groups[i]
		hist := g.Histogram(ft, hi, width)
		top := 0
		for _, n := range hist {
			top = max(top, n)
		}
		var b strings.Builder
		for _, n := range hist {
			switch {
			case n == 0:
				b.WriteRune(' ')
			default:
				b.WriteRune(sparks[min(len(sparks)-1, (n*len(sparks)-1)/top)])
			}
		}
		out = append(out, fit(g.Key[0], statsLabel)+statsGap+s.Info.Render(b.String()))
		if p := g.Points[ft]; !p.Empty() {
			at := min(width-1, int(p.P50/hi*float64(width)))
			out = append(out, strings.Repeat(" ", statsLabel+len(statsGap)+at)+s.Muted.Render("▲ "+ms(p.P50)))
		}
	}
	axis := "0"
	end := ms(hi) + " ms"
	axis += strings.Repeat(" ", max(1, width-len(axis)-len(end))) + end
	return append(out, strings.Repeat(" ", statsLabel+len(statsGap))+s.Subtle.Render(axis))
}

// eighths are partial cells of a horizontal bar.
var eighths = []string{"", "▏", "▎", "▍", "▌", "▋", "▊", "▉"}

// costChart is a bar per group, to one scale, with its figure.
func (d *statsDialog) costChart(inner int) []string {
	s := d.c.Styles
	out := []string{s.Accent.Render(cut("Cost per group, "+d.r.Currency+", failed and retried attempts included", inner))}
	hi := 0.0
	for _, g := range d.r.Groups {
		hi = math.Max(hi, g.Cost)
	}
	width := max(8, inner-statsLabel-len(statsGap)-12)
	for i := range d.r.Groups {
		g := &d.r.Groups[i]
		bar := ""
		if hi > 0 {
			e := int(math.Round(g.Cost / hi * float64(width*8)))
			bar = strings.Repeat("█", e/8) + eighths[e%8]
		}
		figure := fmt.Sprintf("%.4f", g.Cost)
		if !g.CostComplete() {
			figure = "≥" + figure
		}
		out = append(out, fit(g.Key[0], statsLabel)+statsGap+s.Good.Render(fit(bar, width))+" "+figure)
	}
	return append(out, s.Muted.Render(cut(d.r.Label+" (table of "+d.r.TableDate+")", inner)))
}

func pct(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*v)
}

func ms(v float64) string {
	if v >= 100 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.1f", v)
}

// padLeft right-aligns s in width cells.
func padLeft(s string, width int) string {
	if w := lipgloss.Width(s); w < width {
		return strings.Repeat(" ", width-w) + s
	}
	return s
}
