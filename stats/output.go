package stats

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Object is one group as `stats --json` writes it: one object a line.
// Its field names are stable (docs/stats.md); a figure that cannot be
// computed (a rate over nothing) is null, never 0.
type Object struct {
	Group        map[string]string `json:"group"`
	Sessions     int               `json:"sessions"`
	Done         int               `json:"done"`
	Failed       int               `json:"failed"`
	Interrupted  int               `json:"interrupted"`
	Running      int               `json:"running"`
	FailureRate  *float64          `json:"failure_rate"`
	FailedLayers map[string]int    `json:"failed_layers"`
	Attempts     int               `json:"attempts"`
	Retries      int               `json:"retries"`
	// TimeMS holds each time point's distribution, ms from the request's
	// start, by the point's name.
	TimeMS           map[string]DistObject `json:"time_ms"`
	OutputTokensPerS DistObject            `json:"output_tokens_per_s"`
	InputTokens      int64                 `json:"input_tokens"`
	OutputTokens     int64                 `json:"output_tokens"`
	CachedTokens     int64                 `json:"cached_tokens"`
	CacheWriteTokens int64                 `json:"cache_write_tokens"`
	ReasoningTokens  int64                 `json:"reasoning_tokens"`
	CacheHitRatio    *float64              `json:"cache_hit_ratio"`
	Cost             float64               `json:"cost"`
	CostPerSuccess   *float64              `json:"cost_per_success"`
	// CostComplete is false when ToReconcile or Unpriced sessions make
	// Cost a lower bound.
	CostComplete bool   `json:"cost_complete"`
	ToReconcile  int    `json:"to_reconcile"`
	Unpriced     int    `json:"unpriced"`
	Currency     string `json:"currency"`
}

// DistObject is a Dist in JSON: n, then null figures when n is 0.
type DistObject struct {
	N   int      `json:"n"`
	P50 *float64 `json:"p50"`
	P95 *float64 `json:"p95"`
	Max *float64 `json:"max"`
}

func num(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

func distObject(d Dist) DistObject {
	return DistObject{N: d.N, P50: num(d.P50), P95: num(d.P95), Max: num(d.Max)}
}

// Object is g as JSON.
func (r *Report) Object(g *Group) Object {
	o := Object{Group: map[string]string{}, Sessions: g.Sessions, Done: g.Done, Failed: g.Failed, Interrupted: g.Interrupted,
		Running: g.Running, FailureRate: num(g.FailureRate()), FailedLayers: g.FailedLayers, Attempts: g.Attempts,
		Retries: g.Retries, TimeMS: map[string]DistObject{}, OutputTokensPerS: distObject(g.Speed),
		InputTokens: g.InputTokens, OutputTokens: g.OutputTokens, CachedTokens: g.CachedTokens,
		CacheWriteTokens: g.CacheWriteTokens, ReasoningTokens: g.ReasoningTokens, CacheHitRatio: num(g.CacheHitRatio()),
		Cost: g.Cost, CostPerSuccess: num(g.CostPerSuccess()), CostComplete: g.CostComplete(),
		ToReconcile: g.ToReconcile, Unpriced: g.Unpriced, Currency: r.Currency}
	for i, d := range r.By {
		o.Group[d] = g.Key[i]
	}
	for i, p := range r.Points {
		o.TimeMS[p] = distObject(g.Points[i])
	}
	return o
}

// Name names a group in one line: "model=gpt-4.1 protocol=…", or "all"
// when the report is not grouped.
func (r *Report) Name(g *Group) string {
	if len(r.By) == 0 {
		return "all"
	}
	parts := make([]string, len(r.By))
	for i, d := range r.By {
		parts[i] = d + "=" + g.Key[i]
	}
	return strings.Join(parts, " ")
}

// Layers lists a group's failing layers, most failures first:
// "schema 100, domain 40".
func Layers(g *Group) string {
	names := slices.Collect(maps.Keys(g.FailedLayers))
	slices.SortFunc(names, func(a, b string) int {
		if c := g.FailedLayers[b] - g.FailedLayers[a]; c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%s %d", n, g.FailedLayers[n])
	}
	return strings.Join(parts, ", ")
}

// CSV is the report as rows for `stats --csv`: a header, then a row per
// group; the columns are Object's fields flattened (docs/stats.md), a
// figure that cannot be computed left empty.
func (r *Report) CSV() [][]string {
	head := append([]string{}, r.By...)
	head = append(head, "sessions", "done", "failed", "interrupted", "running", "failure_rate", "failed_layers", "attempts", "retries")
	for _, p := range r.Points {
		head = append(head, p+"_n", p+"_p50_ms", p+"_p95_ms", p+"_max_ms")
	}
	head = append(head, "output_tokens_per_s_n", "output_tokens_per_s_p50", "output_tokens_per_s_p95", "output_tokens_per_s_max",
		"input_tokens", "output_tokens", "cached_tokens", "cache_write_tokens", "reasoning_tokens", "cache_hit_ratio",
		"cost", "cost_per_success", "cost_complete", "to_reconcile", "unpriced", "currency")
	rows := [][]string{head}
	f := func(v float64) string {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return ""
		}
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	i := strconv.Itoa
	n := func(v int64) string { return strconv.FormatInt(v, 10) }
	for gi := range r.Groups {
		g := &r.Groups[gi]
		layers := make([]string, 0, len(g.FailedLayers))
		for _, l := range slices.Sorted(maps.Keys(g.FailedLayers)) {
			layers = append(layers, l+"="+i(g.FailedLayers[l]))
		}
		row := append([]string{}, g.Key...)
		row = append(row, i(g.Sessions), i(g.Done), i(g.Failed), i(g.Interrupted), i(g.Running), f(g.FailureRate()),
			strings.Join(layers, ";"), i(g.Attempts), i(g.Retries))
		for _, d := range append(slices.Clone(g.Points), g.Speed) {
			row = append(row, i(d.N), f(d.P50), f(d.P95), f(d.Max))
		}
		row = append(row, n(g.InputTokens), n(g.OutputTokens), n(g.CachedTokens), n(g.CacheWriteTokens), n(g.ReasoningTokens),
			f(g.CacheHitRatio()), f(g.Cost), f(g.CostPerSuccess()), strconv.FormatBool(g.CostComplete()), i(g.ToReconcile),
			i(g.Unpriced), r.Currency)
		rows = append(rows, row)
	}
	return rows
}
