package ui

import (
	"fmt"
	"sort"
	"strings"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/session"
)

// sparkBlocks draw how many events arrived in a slice of time.
var sparkBlocks = []rune("▁▂▃▄▅▆▇█")

// turnTimeline draws when a turn's events arrived, so a slow or bursty
// stream is seen at a glance: a sparkline of events per slice of the
// turn (blank where nothing came), a line marking where tool arguments
// opened ( and closed ) and where the first output token * and first
// visible text | came, and what it adds up to — the longest stall and the
// output tokens per second.
func turnTimeline(t *session.TurnState, w int) (spark, marks, summary string) {
	if len(t.Log) < 2 || w < 8 {
		return "", "", ""
	}
	last := t.Log[len(t.Log)-1].Attempt
	var offs []float64
	for _, e := range t.Log {
		// The end of the stream is no event (and is not stored: a replay
		// must draw the same line).
		if e.Attempt == last && (e.Index >= 0 || len(e.Events) > 0) {
			offs = append(offs, e.OffsetMS)
		}
	}
	if len(offs) < 2 {
		return "", "", ""
	}
	start, end := offs[0], offs[len(offs)-1]
	span := max(end-start, 1)
	slot := func(ms float64) int { return min(w-1, max(0, int((ms-start)/span*float64(w-1)))) }
	// Fewer slices than events, or every slice holds one event and the
	// line says nothing; each slice is drawn over w/n cells.
	n := min(w, max(8, len(offs)/3))
	counts := make([]int, n)
	top := 0
	for _, o := range offs {
		i := min(n-1, int((o-start)/span*float64(n)))
		counts[i]++
		top = max(top, counts[i])
	}
	var b strings.Builder
	for i := 0; i < w; i++ {
		c := counts[i*n/w]
		if c == 0 {
			b.WriteRune(' ')
			continue
		}
		b.WriteRune(sparkBlocks[(c*len(sparkBlocks)-1)/top])
	}
	spark = b.String()

	m := []rune(strings.Repeat(" ", w))
	for _, l := range t.Lanes {
		if l.Kind != adapters.KindToolCall {
			continue
		}
		open, done := slot(l.StartMS), -1
		if l.DoneMS > 0 {
			// A call that opened and closed within one slot still shows both.
			done = max(slot(l.DoneMS), open+1)
			if done == len(m) {
				open, done = open-1, open
			}
		}
		m[open] = '('
		if done >= 0 {
			m[done] = ')'
		}
	}
	// Where the first output token (*) and the first visible text (|)
	// came: apart on a reasoning stream, where thinking precedes the answer.
	var points []string
	if tm := t.Timings; tm != nil {
		for _, pt := range []struct {
			at   float64
			mark rune
			name string
		}{{tm.FirstToken, '*', "token"}, {tm.FirstText, '|', "text"}} {
			if pt.at <= 0 || pt.at < start || pt.at > end {
				continue
			}
			if i := slot(pt.at); m[i] == ' ' {
				m[i] = pt.mark
			}
			points = append(points, fmt.Sprintf("%c %s +%s", pt.mark, pt.name, msText(pt.at)))
		}
	}
	marks = strings.TrimRight(string(m), " ")

	// The longest stall stands out against the typical gap.
	gaps := make([]float64, 0, len(offs)-1)
	longest, at := 0.0, 0.0
	for i := 1; i < len(offs); i++ {
		g := offs[i] - offs[i-1]
		gaps = append(gaps, g)
		if g > longest {
			longest, at = g, offs[i-1]
		}
	}
	sort.Float64s(gaps)
	median := gaps[len(gaps)/2]
	parts := []string{count(len(offs), "event") + " in " + msText(span)}
	parts = append(parts, points...)
	if longest >= 200 && longest > 4*median {
		parts = append(parts, fmt.Sprintf("stall %s at +%s", msText(longest), msText(at-start)))
	}
	// Output tokens count reasoning: the rate runs from the first of any.
	if tm := t.Timings; t.Usage != nil && t.Usage.OutputTokens != nil && tm != nil && firstOut(tm) > 0 && tm.Terminal > firstOut(tm) {
		secs := (tm.Terminal - firstOut(tm)) / 1000
		parts = append(parts, fmt.Sprintf("%.0f tok/s", float64(*t.Usage.OutputTokens)/secs))
	}
	return spark, marks, strings.Join(parts, " · ")
}

// firstOut is when output began: the first token, or, for a turn recorded
// before tokens were timed, the first text.
func firstOut(tm *session.Timings) float64 {
	if tm.FirstToken > 0 {
		return tm.FirstToken
	}
	return tm.FirstText
}
