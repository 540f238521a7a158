package ui

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/session"
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
		out = append(out, cut(line, w))
	}
	out = append(out, cut(s.Muted.Render("session ")+p.status(st), w))
	out = append(out, "", p.c.section("layers"))
	byLayer := map[string]session.LayerResult{}
	for _, l := range st.Layers {
		byLayer[l.Layer] = l
	}
	for _, name := range session.Layers {
		l, ok := byLayer[name]
		if !ok {
			out = append(out, "  "+s.Subtle.Render("· "+padRight(name, 9)+" pending"))
			continue
		}
		icon := map[string]string{session.Pass: "✓", session.Fail: "✗", session.Skip: "–"}[l.Status]
		head := "  " + s.State(l.Status).Render(icon+" "+padRight(name, 9)+" "+padRight(l.Status, 4))
		detail := oneLine(l.Detail)
		if l.Status == session.Pass {
			// A pass needs no essay: one line.
			out = append(out, cut(head+" "+s.Muted.Render(detail), w))
			continue
		}
		out = append(out, head)
		for _, dl := range wrapLines(detail, max(1, w-4)) {
			out = append(out, "    "+dl)
		}
	}
	if ans := p.answer(st.Output); len(ans) > 0 {
		out = append(out, "", p.c.section("answer"))
		out = append(out, ans...)
	}
	if u := p.usage(st); len(u) > 0 {
		out = append(out, "", p.c.section("usage by class"))
		out = append(out, u...)
	}
	if tm := p.timings(st); len(tm) > 0 {
		out = append(out, "", p.c.section("timings"))
		out = append(out, tm...)
	}
	return out
}

func (p *validationPanel) status(st *session.State) string {
	s := p.c.Styles
	switch st.Status {
	case "done":
		return s.Good.Render("done")
	case "failed":
		return s.Bad.Render("failed")
	case "running":
		if p.d.paused != "" {
			return s.Info.Render("paused at " + p.d.paused)
		}
		return s.Info.Render("running")
	}
	return s.Warn.Render(st.Status)
}

// answer lists the parsed answer's top-level fields: scalars as they are,
// arrays and objects compacted.
func (p *validationPanel) answer(out json.RawMessage) []string {
	if len(out) == 0 {
		return nil
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(out, &obj) != nil {
		return []string{cut("  "+string(out), p.w)}
	}
	keys := make([]string, 0, len(obj))
	kw := 0
	for k := range obj {
		keys = append(keys, k)
		kw = max(kw, displayWidth(k))
	}
	sort.Strings(keys)
	kw = min(kw, max(8, p.w*45/100))
	s := p.c.Styles
	var lines []string
	for _, k := range keys {
		v := obj[k]
		var str string
		if json.Unmarshal(v, &str) != nil {
			str = compactJSON(v)
		}
		val := oneLine(str)
		if k == "decision" || k == "max_refund_cents" {
			val = s.Accent.Render(val)
		}
		lines = append(lines, cut("  "+s.Muted.Render(fit(k, kw))+" "+val, p.w))
	}
	return lines
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
	if len(rows) > 1 {
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

// timings lists each turn's first byte, first event, first text and total.
func (p *validationPanel) timings(st *session.State) []string {
	var out []string
	s := p.c.Styles
	for _, t := range st.Turns {
		if t.Timings == nil {
			continue
		}
		tm := t.Timings
		line := fmt.Sprintf("  turn %d  byte %s · event %s · text %s · total %s", t.N,
			msOrDash(tm.FirstByte), msOrDash(tm.FirstEvent), msOrDash(tm.FirstText), msOrDash(tm.Terminal))
		out = append(out, cut(s.Text.Render(line), p.w))
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
