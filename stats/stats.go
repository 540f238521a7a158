// Package stats aggregates stored sessions the way the chapter measures
// calls (13.7.1, 13.7.3): grouped by model, protocol, provider, scenario,
// cache state or reasoning; per group the failure rate and the layers that
// failed, p50/p95/max of each time point and of generation speed, tokens,
// the cost with failed and retried attempts included, the cost per
// successful session, the cache hit ratio from the cached tokens reported,
// and the sessions whose missing usage leaves their cost to reconcile. It
// reads the store's numbers (store.EachStatSession), never events, and
// prices with pricing's rule. `modelwire stats` and the workbench's stats
// view print what it computes.
package stats

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/pricing"
	"github.com/modelwire/modelwire/store"
)

// Dimensions are what sessions can be grouped by, in the order --by
// accepts them.
var Dimensions = []string{"model", "protocol", "provider", "scenario", "cache", "reasoning", "reasoning-setting", "input-size", "output-size"}

// Values of the cache and reasoning dimensions.
const (
	CacheHit     = "hit"     // some attempt reported cached input tokens
	CacheMiss    = "miss"    // usage reported, no cached tokens
	ReasoningYes = "yes"     // some attempt reported reasoning tokens
	ReasoningNo  = "no"      // usage reported, no reasoning tokens
	UsageMissing = "unknown" // no attempt reported usage: cache and reasoning unknown
	// SettingDefault: the request set nothing of reasoning (the provider's
	// default); a session recorded without its request bodies, or before
	// the setting was kept, is UsageMissing's "unknown".
	SettingDefault = "default"
	NoFailedLayer  = "none" // a failed session whose last validation failed no layer
)

// dimension reads a session's value for one dimension.
var dimension = map[string]func(s *store.StatSession) string{
	"model":    func(s *store.StatSession) string { return orUnknown(model(s)) },
	"protocol": func(s *store.StatSession) string { return orUnknown(s.Info.Protocol) },
	"provider": func(s *store.StatSession) string { return orUnknown(s.Info.Provider) },
	"scenario": func(s *store.StatSession) string { return orUnknown(s.Info.Origin()) },
	"cache": func(s *store.StatSession) string {
		return usageState(s, func(a *store.StatAttempt) bool { return a.CacheRead > 0 }, CacheHit, CacheMiss)
	},
	"reasoning": func(s *store.StatSession) string {
		return usageState(s, func(a *store.StatAttempt) bool { return a.Reasoning > 0 }, ReasoningYes, ReasoningNo)
	},
	// The largest request and answer the session's provider reported, in
	// tokens (13.7.1 compares like with like).
	"input-size": func(s *store.StatSession) string { return size(s, func(a *store.StatAttempt) int64 { return a.Input }) },
	"output-size": func(s *store.StatSession) string {
		return size(s, func(a *store.StatAttempt) int64 { return a.Output })
	},
	// The first request's setting, as sent (its descriptor read it).
	"reasoning-setting": func(s *store.StatSession) string {
		for _, a := range s.Attempts {
			if a.SettingKnown {
				return cmp.Or(a.ReasoningSetting, SettingDefault)
			}
		}
		return UsageMissing
	},
}

// model is the model asked for, so that a failure that never heard the
// provider name its model groups with that model's successes; the one
// reported where none was asked for (a recording).
func model(s *store.StatSession) string {
	if s.Info.Model != "" {
		return s.Info.Model
	}
	return s.Info.ModelReported
}

func orUnknown(v string) string {
	if v == "" {
		return "(unknown)"
	}
	return v
}

// usageState is yes when some attempt's reported usage has the property,
// no when usage was reported without it, UsageMissing when none was.
func usageState(s *store.StatSession, has func(*store.StatAttempt) bool, yes, no string) string {
	out := UsageMissing
	for i := range s.Attempts {
		a := &s.Attempts[i]
		if has(a) {
			return yes
		}
		if reported(a) {
			out = no
		}
	}
	return out
}

// size is the bucket of the largest count tokens reads from the session's
// attempts (negative: not reported), UsageMissing when none reported one.
func size(s *store.StatSession, tokens func(*store.StatAttempt) int64) string {
	most := int64(-1)
	for i := range s.Attempts {
		most = max(most, tokens(&s.Attempts[i]))
	}
	if most < 0 {
		return UsageMissing
	}
	return sizeBucket(most)
}

// sizeBucket names the range of token counts n falls in: powers of four
// from 256 ("0–255", "256–1023", …, "1048576+").
func sizeBucket(n int64) string {
	lo, hi := int64(0), int64(256)
	for n >= hi && hi < 1<<20 {
		lo, hi = hi, hi*4
	}
	if n >= hi {
		return strconv.FormatInt(hi, 10) + "+"
	}
	return strconv.FormatInt(lo, 10) + "–" + strconv.FormatInt(hi-1, 10)
}

// compareKeys orders groups by their values, each as compareValue does.
func compareKeys(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if c := compareValue(a[i], b[i]); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(a), len(b))
}

// compareValue orders values as strings, except that values beginning
// with a number (the size buckets) come in numeric order, before others.
func compareValue(x, y string) int {
	nx, okx := leadingInt(x)
	ny, oky := leadingInt(y)
	switch {
	case okx && oky && nx != ny:
		return cmp.Compare(nx, ny)
	case okx && !oky:
		return -1
	case !okx && oky:
		return 1
	}
	return strings.Compare(x, y)
}

// leadingInt is the number v begins with, if it begins with a digit.
func leadingInt(v string) (int64, bool) {
	end := 0
	for end < len(v) && end < 18 && v[end] >= '0' && v[end] <= '9' {
		end++
	}
	if end == 0 {
		return 0, false
	}
	n, err := strconv.ParseInt(v[:end], 10, 64)
	return n, err == nil
}

// reported says whether the provider reported the attempt's usage.
func reported(a *store.StatAttempt) bool { return a.Input >= 0 || a.Output >= 0 }

// ParseBy reads --by: dimensions separated by commas.
func ParseBy(v string) ([]string, error) {
	var by []string
	for _, d := range strings.Split(v, ",") {
		d = strings.TrimSpace(d)
		if d == "" {
			continue
		}
		if dimension[d] == nil {
			return nil, fmt.Errorf("--by %q: want some of %s", d, strings.Join(Dimensions, ","))
		}
		if slices.Contains(by, d) {
			return nil, fmt.Errorf("--by names %q twice", d)
		}
		by = append(by, d)
	}
	return by, nil
}

// Report is the aggregate of a query: one Group per distinct value of
// its dimensions, sorted by those values.
type Report struct {
	By     []string
	Groups []Group
	// Points name the time points of each Group's Points.
	Points []string
	// Currency, TableDate and Label say what the costs are: an estimate
	// from pricing's dated table.
	Currency, TableDate, Label string
}

// Group is the figures of the sessions sharing one value of each
// dimension.
type Group struct {
	// Key holds the group's value of each dimension, in By's order.
	Key []string
	// Sessions counts them: Done, Failed, Interrupted and Running.
	Sessions, Done, Failed, Interrupted, Running int
	// FailedLayers counts the failed sessions by the first layer that
	// failed in their last validation (NoFailedLayer when none did).
	FailedLayers map[string]int
	// Attempts counts every HTTP attempt; Retries those after the first of
	// their turn.
	Attempts, Retries int
	// Points are the distributions of each time point (Report.Points),
	// ms from the attempt's request start, over the attempts that reached it.
	Points []Dist
	// Speed is output tokens per second over the attempts that produced
	// output: from the first output point (store.TimePoints' Output) to
	// the terminal point.
	Speed Dist
	// Tokens reported, summed over every attempt. Cached and cache-write
	// tokens are parts of the input, reasoning tokens part of the output.
	InputTokens, OutputTokens, CachedTokens, CacheWriteTokens, ReasoningTokens int64
	// Cost is every priced attempt's cost, failed and retried ones
	// included.
	Cost float64
	// ToReconcile counts sessions with an attempt that got an answer but
	// no usage (a cut stream): its cost is unknown, not zero. Unpriced
	// counts sessions with usage for a model the table has no price for.
	// Either makes Cost a lower bound.
	ToReconcile, Unpriced int

	// ms holds each time point's values, sorted (for Histogram).
	ms [][]float64
}

// Histogram counts the values of time point i (Report.Points) in bins
// equal bins over [0, hi] ms; a value past hi counts in the last bin.
func (g *Group) Histogram(i int, hi float64, bins int) []int {
	out := make([]int, max(bins, 1))
	if i < 0 || i >= len(g.ms) || hi <= 0 {
		return out
	}
	for _, v := range g.ms[i] {
		b := int(v / hi * float64(len(out)))
		out[min(max(b, 0), len(out)-1)]++
	}
	return out
}

// FailureRate is failed sessions over finished (done or failed) ones; NaN
// when none finished.
func (g *Group) FailureRate() float64 { return ratio(float64(g.Failed), float64(g.Done+g.Failed)) }

// CostPerSuccess is the group's whole cost (failed and retried attempts
// included) over its successful (done) sessions; NaN when none succeeded.
func (g *Group) CostPerSuccess() float64 { return ratio(g.Cost, float64(g.Done)) }

// CacheHitRatio is the cached input tokens reported over all input
// tokens reported; NaN when none were.
func (g *Group) CacheHitRatio() float64 {
	return ratio(float64(g.CachedTokens), float64(g.InputTokens))
}

// CostComplete says whether Cost is the whole cost rather than a lower
// bound.
func (g *Group) CostComplete() bool { return g.ToReconcile == 0 && g.Unpriced == 0 }

func ratio(a, b float64) float64 {
	if b == 0 {
		return math.NaN()
	}
	return a / b
}

// Compute aggregates the sessions f selects, grouped by by (nil: one
// group of every session).
func Compute(db *store.DB, f store.Filter, by []string) (*Report, error) {
	dims := make([]func(*store.StatSession) string, len(by))
	for i, d := range by {
		if dims[i] = dimension[d]; dims[i] == nil {
			return nil, fmt.Errorf("stats: unknown dimension %q", d)
		}
	}
	t := pricing.Models()
	r := &Report{By: by, Currency: t.Currency, TableDate: t.Date, Label: t.Label}
	for _, p := range store.TimePoints {
		r.Points = append(r.Points, p.Name)
	}
	groups := map[string]*acc{}
	key := make([]string, len(by))
	var kb []byte // the key's values, NUL-separated (the map lookup copies nothing)
	err := db.EachStatSession(f, func(s *store.StatSession) error {
		kb = kb[:0]
		for i, d := range dims {
			key[i] = d(s)
			kb = append(append(kb, key[i]...), 0)
		}
		g := groups[string(kb)]
		if g == nil {
			g = newAcc(slices.Clone(key))
			groups[string(kb)] = g
		}
		g.add(s)
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, g := range groups {
		r.Groups = append(r.Groups, g.group())
	}
	slices.SortFunc(r.Groups, func(a, b Group) int { return compareKeys(a.Key, b.Key) })
	return r, nil
}

// acc accumulates one group.
type acc struct {
	Group
	points [][]int64 // µs per time point
	speed  []float64
	// output and terminal index store.TimePoints.
	output   []int
	terminal int
	// prices caches pricing's facts lookups by model.
	prices map[string]bool
}

func newAcc(key []string) *acc {
	a := &acc{Group: Group{Key: key, FailedLayers: map[string]int{}}, points: make([][]int64, len(store.TimePoints)),
		terminal: -1, prices: map[string]bool{}}
	for i, p := range store.TimePoints {
		if p.Output {
			a.output = append(a.output, i)
		}
		if p.Name == store.TerminalPoint {
			a.terminal = i
		}
	}
	return a
}

func (g *acc) add(s *store.StatSession) {
	g.Sessions++
	switch s.Info.Status {
	case store.StatusDone:
		g.Done++
	case store.StatusFailed:
		g.Failed++
		l := s.Info.FailedLayer
		if l == "" {
			l = NoFailedLayer
		}
		g.FailedLayers[l]++
	case store.StatusInterrupted:
		g.Interrupted++
	default:
		g.Running++
	}
	reconcile, unpriced := false, false
	for i := range s.Attempts {
		a := &s.Attempts[i]
		g.Attempts++
		if a.Attempt > 1 {
			g.Retries++
		}
		for j, us := range a.Points {
			if us >= 0 {
				g.points[j] = append(g.points[j], us)
			}
		}
		g.addSpeed(a)
		if !reported(a) {
			// An answer whose usage never came (a cut stream) may be
			// billed: to reconcile. An HTTP error or no answer is not.
			reconcile = reconcile || (a.StatusCode >= 200 && a.StatusCode < 300)
			continue
		}
		g.InputTokens += max(a.Input, 0)
		g.OutputTokens += max(a.Output, 0)
		g.CachedTokens += max(a.CacheRead, 0)
		g.CacheWriteTokens += max(a.CacheWrite, 0)
		g.ReasoningTokens += max(a.Reasoning, 0)
		c, ok := g.price(a, s.Info.Model)
		g.Cost += c
		unpriced = unpriced || !ok
	}
	if reconcile {
		g.ToReconcile++
	}
	if unpriced {
		g.Unpriced++
	}
}

// price is the cost of an attempt's reported usage: for the model the
// response named, else the one asked for (as pricing.PriceSession does).
func (g *acc) price(a *store.StatAttempt, asked string) (float64, bool) {
	u := adapters.Usage{InputTokens: tokens(a.Input), OutputTokens: tokens(a.Output), CacheReadTokens: tokens(a.CacheRead),
		CacheWriteTokens: tokens(a.CacheWrite), ReasoningTokens: tokens(a.Reasoning),
		CacheWrite1hTokens: tokens(a.CacheWrite1h), WebSearchCalls: tokens(a.WebSearches)}
	model := a.Model
	if !g.known(model) {
		model = asked
	}
	c := pricing.PriceUsage(model, &u)
	return c.Total, c.Priced && !c.LowerBound
}

func (g *acc) known(model string) bool {
	ok, seen := g.prices[model]
	if !seen {
		_, ok = pricing.Models().Lookup(model)
		g.prices[model] = ok
	}
	return ok
}

// tokens is a stored count as adapters.Usage holds it (nil: not reported).
func tokens(n int64) *int64 {
	if n < 0 {
		return nil
	}
	return &n
}

// addSpeed samples output tokens per second, from the earliest output
// point the attempt reached to its terminal point.
func (g *acc) addSpeed(a *store.StatAttempt) {
	if a.Output <= 0 || g.terminal < 0 || a.Points[g.terminal] < 0 {
		return
	}
	from := int64(-1)
	for _, i := range g.output {
		if us := a.Points[i]; us >= 0 && (from < 0 || us < from) {
			from = us
		}
	}
	if from < 0 || a.Points[g.terminal] <= from {
		return
	}
	g.speed = append(g.speed, float64(a.Output)/(float64(a.Points[g.terminal]-from)/1e6))
}

// group is the finished Group: the distributions computed.
func (g *acc) group() Group {
	out := g.Group
	out.Points, out.ms = make([]Dist, len(g.points)), make([][]float64, len(g.points))
	for i, us := range g.points {
		out.ms[i] = millis(us)
		out.Points[i] = dist(out.ms[i])
	}
	out.Speed = dist(g.speed)
	return out
}

// Source is a store as the workbench's stats view reads it.
type Source struct{ DB *store.DB }

// Stats aggregates every stored session, grouped by by.
func (s Source) Stats(by []string) (*Report, error) { return Compute(s.DB, store.Filter{}, by) }
