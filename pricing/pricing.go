// Package pricing is the dated table of model facts (context window,
// output limit and list prices, from models.json) and the chapter's cost
// rule, which prices one response's usage and a session's responses from
// it. It knows the canonical usage (adapters) and nothing of sessions,
// transports or front ends: the engine prices its turns with it and checks
// a request's token budget against the table; the workbench prices its
// lists.
package pricing

import (
	"cmp"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/modelwire/modelwire/adapters"
)

// The chapter's cost rule (13.7.3): cost = Σ (tokens in each billing
// bucket × that bucket's price). The canonical usage (adapters.Usage) has
// each provider's counts normalised so that cached reads and writes are
// parts of the input, the hour-long writes part of the writes, and
// reasoning part of the output: each bucket is priced on what is left of
// its parent once its parts are taken out, so nothing is counted twice.
// Server tools are billed per call. Usage that never arrived (a cut
// stream) is "to reconcile", never zero.

//go:embed models.json
var modelsJSON []byte

// ModelFacts are one model's documented limits and list prices (USD per
// million tokens; 0 means the bucket falls back to a neighbour: cached
// input and cache writes to input, reasoning to output).
type ModelFacts struct {
	Model         string  `json:"model"`
	Provider      string  `json:"provider"`
	AsOf          string  `json:"as_of"`
	Source        string  `json:"source"`
	ContextWindow int     `json:"context_window"`
	MaxOutput     int     `json:"max_output"`
	Input         float64 `json:"input"`
	CachedInput   float64 `json:"cached_input"`
	CacheWrite    float64 `json:"cache_write"`
	// CacheWrite1h prices the writes kept for an hour (Anthropic's
	// 1-hour TTL); 0 falls back to CacheWrite.
	CacheWrite1h float64 `json:"cache_write_1h"`
	Output       float64 `json:"output"`
	Reasoning    float64 `json:"reasoning"`
	// WebSearchCall is the price of one server-side web search (per call,
	// not per million tokens); 0 when the model has none.
	WebSearchCall float64 `json:"web_search_call"`
}

// ModelTable is the embedded data file of model facts.
type ModelTable struct {
	Date     string       `json:"date"`
	Label    string       `json:"label"`
	Currency string       `json:"currency"`
	Unit     string       `json:"unit"`
	Note     string       `json:"note"`
	Models   []ModelFacts `json:"models"`
}

// Models is the embedded table.
var Models = sync.OnceValue(func() *ModelTable {
	var t ModelTable
	if err := json.Unmarshal(modelsJSON, &t); err != nil {
		// Built in, so a test catches this; never worth a crash.
		return &ModelTable{Label: "no prices: pricing/models.json does not parse: " + err.Error()}
	}
	return &t
})

// Lookup finds a model: its exact name, else the longest entry the name
// extends with a dated or versioned suffix (claude-sonnet-4-5-20250929).
func (t *ModelTable) Lookup(model string) (ModelFacts, bool) {
	var best ModelFacts
	for _, m := range t.Models {
		if m.Model == model {
			return m, true
		}
		if strings.HasPrefix(model, m.Model+"-") && len(m.Model) > len(best.Model) {
			best = m
		}
	}
	return best, best.Model != ""
}

// Cost is the estimated price of one response's usage, in the table's
// currency.
type Cost struct {
	Model string `json:"model"`
	// Priced is false when the table has no price for the model, or the
	// response reported no usage; the amounts are then zero and unknown.
	Priced bool   `json:"priced"`
	Why    string `json:"why,omitempty"`
	// ToReconcile: the response was cut before its usage arrived. It
	// may well be billed: the amount is to be reconciled with the
	// provider's bill, and is not zero.
	ToReconcile bool `json:"to_reconcile,omitempty"`
	// LowerBound: something the response reported has no price in the
	// table (web searches of a model without a per-call price); Why says
	// what, and the amounts count the rest.
	LowerBound bool `json:"lower_bound,omitempty"`
	Buckets
}

// Buckets are the amounts per billing bucket, disjoint: Input is the
// uncached input only, CacheWrite the 5-minute writes only, Output the
// visible output only (reasoning apart), Tools the server tools' calls.
type Buckets struct {
	Input        float64 `json:"input"`
	CachedInput  float64 `json:"cached_input"`
	CacheWrite   float64 `json:"cache_write"`
	CacheWrite1h float64 `json:"cache_write_1h"`
	Output       float64 `json:"output"`
	Reasoning    float64 `json:"reasoning"`
	Tools        float64 `json:"tools"`
	Total        float64 `json:"total"`
	// Savings is what the cache hits saved against the uncached price.
	Savings float64 `json:"savings"`
}

// add sums another's buckets into c.
func (c *Buckets) add(o Buckets) {
	c.Input += o.Input
	c.CachedInput += o.CachedInput
	c.CacheWrite += o.CacheWrite
	c.CacheWrite1h += o.CacheWrite1h
	c.Output += o.Output
	c.Reasoning += o.Reasoning
	c.Tools += o.Tools
	c.Total += o.Total
	c.Savings += o.Savings
}

// Lines names each non-zero bucket with its amount, in the order a bill
// lists them ("input 0.00040", …), for the screens.
func (c Buckets) Lines() []string {
	var out []string
	for _, b := range []struct {
		name string
		v    float64
	}{{"input", c.Input}, {"cached read", c.CachedInput}, {"cache write 5m", c.CacheWrite}, {"cache write 1h", c.CacheWrite1h},
		{"output", c.Output}, {"reasoning", c.Reasoning}, {"tools", c.Tools}} {
		if b.v != 0 {
			out = append(out, fmt.Sprintf("%s %.5f", b.name, b.v))
		}
	}
	return out
}

// PriceUsage prices one response's usage for a model.
func PriceUsage(model string, u *adapters.Usage) Cost {
	facts, ok := Models().Lookup(model)
	if !ok {
		return Cost{Model: model, Why: noPrice(model)}
	}
	return priceUsage(model, facts, u)
}

// noPrice is the reason a model's responses are not priced.
func noPrice(model string) string { return fmt.Sprintf("no price for model %q in the table", model) }

// priceUsage is PriceUsage with the model's facts found in the table.
func priceUsage(model string, facts ModelFacts, u *adapters.Usage) Cost {
	c := Cost{Model: model}
	if u == nil {
		c.ToReconcile = true
		c.Why = "no usage reported (a cut stream): to reconcile with the provider's bill, not zero"
		return c
	}
	n := func(p *int64) float64 {
		if p == nil {
			return 0
		}
		return float64(*p)
	}
	or := func(p, fallback float64) float64 {
		if p == 0 {
			return fallback
		}
		return p
	}
	const perToken = 1e-6
	read, write, reasoning := n(u.CacheReadTokens), n(u.CacheWriteTokens), n(u.ReasoningTokens)
	write1h := min(n(u.CacheWrite1hTokens), write)
	plain := max(n(u.InputTokens)-read-write, 0)
	writePrice := or(facts.CacheWrite, facts.Input)
	c.Input = plain * facts.Input * perToken
	c.CachedInput = read * or(facts.CachedInput, facts.Input) * perToken
	c.CacheWrite = (write - write1h) * writePrice * perToken
	c.CacheWrite1h = write1h * or(facts.CacheWrite1h, writePrice) * perToken
	c.Output = max(n(u.OutputTokens)-reasoning, 0) * facts.Output * perToken
	c.Reasoning = reasoning * or(facts.Reasoning, facts.Output) * perToken
	c.Tools = n(u.WebSearchCalls) * facts.WebSearchCall
	if n(u.WebSearchCalls) > 0 && facts.WebSearchCall == 0 {
		c.LowerBound = true
		c.Why = fmt.Sprintf("%d web searches not priced: no per-call price for %s in the table (the total is a lower bound)", *u.WebSearchCalls, model)
	}
	c.Total = c.Input + c.CachedInput + c.CacheWrite + c.CacheWrite1h + c.Output + c.Reasoning + c.Tools
	c.Savings = read*facts.Input*perToken - c.CachedInput
	c.Priced = true
	return c
}

// SessionCost is the estimated cost of a session's responses.
type SessionCost struct {
	// Label and Date say what the numbers are: an estimate from a dated
	// table, to be reconciled with the provider's bill.
	Label    string `json:"label"`
	Date     string `json:"table_date"`
	Currency string `json:"currency"`
	Turns    []Cost `json:"turns,omitempty"`
	// Attempts are each HTTP attempt's cost (PriceAttempts), failed and
	// retried ones included.
	Attempts []Cost  `json:"attempts,omitempty"`
	Total    float64 `json:"total"`
	Savings  float64 `json:"savings"`
	// Buckets sums the responses' buckets (its Total is Total).
	Buckets Buckets `json:"buckets"`
	// ToReconcile counts the responses cut before their usage arrived.
	ToReconcile int `json:"to_reconcile"`
	// Complete is false when a response could not be priced: the total
	// is then a lower bound.
	Complete bool `json:"complete"`
}

// pricer looks each model up once: a long replay prices 1,000s of turns
// at every frame, nearly all of one model.
type pricer struct {
	t     *ModelTable
	model string // the model asked for
	seen  map[string]found
}

type found struct {
	facts ModelFacts
	ok    bool
	why   string
}

func (p *pricer) lookup(m string) found {
	f, ok := p.seen[m]
	if !ok {
		f.facts, f.ok = p.t.Lookup(m)
		if !f.ok {
			f.why = noPrice(m)
		}
		p.seen[m] = f
	}
	return f
}

// price prices one response's usage at the model it names, else at the
// model asked for.
func (p *pricer) price(named string, u *adapters.Usage) Cost {
	m, f := named, p.lookup(named)
	if !f.ok {
		m, f = p.model, p.lookup(p.model)
	}
	if !f.ok {
		return Cost{Model: m, Why: f.why, ToReconcile: u == nil}
	}
	return priceUsage(m, f.facts, u)
}

func newSessionCost(t *ModelTable) *SessionCost {
	return &SessionCost{Label: t.Label, Date: t.Date, Currency: t.Currency, Complete: true}
}

// count adds one response's cost to the session's.
func (sc *SessionCost) count(c Cost) {
	sc.Total += c.Total
	sc.Savings += c.Savings
	sc.Buckets.add(c.Buckets)
	sc.Complete = sc.Complete && c.Priced && !c.LowerBound
	if c.ToReconcile {
		sc.ToReconcile++
	}
}

// Attempt is one stored HTTP attempt, as pricing needs it.
type Attempt struct {
	// Model is the model the response named ("" when none did).
	Model string
	// Usage is what it reported; nil when none arrived.
	Usage *adapters.Usage
	// Status is the HTTP status; 0 when no response came.
	Status int
}

// PriceAttempts prices a session attempt by attempt (13.7.3: a task's
// cost includes its failed and retried attempts). An attempt with usage
// is priced whatever its outcome; one answered with an HTTP error, or
// never answered, reported no tokens and is priced at zero; a 2xx
// response without usage was cut before it arrived: to reconcile, not
// zero. model is the model asked for, used where a response names none
// the table knows.
func PriceAttempts(model string, attempts []Attempt) *SessionCost {
	p := &pricer{t: Models(), model: model, seen: map[string]found{}}
	sc := newSessionCost(p.t)
	sc.Attempts = make([]Cost, 0, len(attempts))
	for _, a := range attempts {
		var c Cost
		if a.Usage == nil && (a.Status == 0 || a.Status >= 300) {
			c = Cost{Model: cmp.Or(a.Model, model), Priced: true, Why: noTokens(a.Status)}
		} else {
			c = p.price(a.Model, a.Usage)
		}
		sc.Attempts = append(sc.Attempts, c)
		sc.count(c)
	}
	return sc
}

// noTokens says why an unanswered or refused attempt costs nothing.
func noTokens(status int) string {
	if status == 0 {
		return "no response: no tokens reported"
	}
	return fmt.Sprintf("HTTP %d: an error answer reports no tokens", status)
}

// PriceSession prices each response; model is the model asked for, used
// where a response does not name its own.
// A turn that ended in an error answer (its summary carries the error and
// no usage) reported no tokens and is priced at zero.
func PriceSession(model string, turns []adapters.Summary) *SessionCost {
	p := &pricer{t: Models(), model: model, seen: map[string]found{}}
	sc := newSessionCost(p.t)
	sc.Turns = make([]Cost, 0, len(turns))
	for _, s := range turns {
		var c Cost
		if s.Usage == nil && s.Error != nil {
			c = Cost{Model: cmp.Or(s.Model, model), Priced: true, Why: "an error answer reports no tokens"}
		} else {
			c = p.price(s.Model, s.Usage)
		}
		sc.Turns = append(sc.Turns, c)
		sc.count(c)
	}
	return sc
}

// String is the one-line form: "$0.0123 estimate — reconcile … (prices of …)".
func (c *SessionCost) String() string {
	s := fmt.Sprintf("%s %.4f, cache savings %.4f — %s (table of %s)", c.Currency, c.Total, c.Savings, c.Label, c.Date)
	if b := c.Buckets.Lines(); len(b) > 0 {
		s += "\n  buckets: " + strings.Join(b, " · ")
	}
	if c.ToReconcile > 0 {
		s += fmt.Sprintf("; %d response(s) cut before their usage: to reconcile, not zero", c.ToReconcile)
	}
	if !c.Complete {
		s += "; some responses (or their web searches) unpriced, so this is a lower bound"
	}
	return s
}
