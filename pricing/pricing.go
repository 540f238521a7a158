// Package pricing is the dated table of model facts (context window,
// output limit and list prices, from models.json) and the chapter's cost
// rule, which prices one response's usage and a session's responses from
// it. It knows the canonical usage (adapters) and nothing of sessions,
// transports or front ends: the engine prices its turns with it and checks
// a request's token budget against the table; the workbench prices its
// lists.
package pricing

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/modelwire/modelwire/adapters"
)

// The chapter's cost rule (13.7.3): cost = Σ (tokens in each billing
// bucket × that bucket's price); cached reads and writes are parts of the
// input, reasoning is part of the output, so nothing is counted twice.
// Usage that never arrived (a cut stream) is unknown, not zero.

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
	Output        float64 `json:"output"`
	Reasoning     float64 `json:"reasoning"`
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
	// Amounts per billing bucket.
	Input       float64 `json:"input"`
	CachedInput float64 `json:"cached_input"`
	CacheWrite  float64 `json:"cache_write"`
	Output      float64 `json:"output"`
	Reasoning   float64 `json:"reasoning"`
	Total       float64 `json:"total"`
	// Savings is what the cache hits saved against the uncached price.
	Savings float64 `json:"savings"`
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
	switch {
	case u == nil:
		c.Why = "no usage reported (a cut stream or a failed attempt): the cost is unknown, not zero"
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
	plain := max(n(u.InputTokens)-read-write, 0)
	c.Input = plain * facts.Input * perToken
	c.CachedInput = read * or(facts.CachedInput, facts.Input) * perToken
	c.CacheWrite = write * or(facts.CacheWrite, facts.Input) * perToken
	c.Output = max(n(u.OutputTokens)-reasoning, 0) * facts.Output * perToken
	c.Reasoning = reasoning * or(facts.Reasoning, facts.Output) * perToken
	c.Total = c.Input + c.CachedInput + c.CacheWrite + c.Output + c.Reasoning
	c.Savings = read*facts.Input*perToken - c.CachedInput
	c.Priced = true
	return c
}

// SessionCost is the estimated cost of a session's responses.
type SessionCost struct {
	// Label and Date say what the numbers are: an estimate from a dated
	// table, to be reconciled with the provider's bill.
	Label    string  `json:"label"`
	Date     string  `json:"table_date"`
	Currency string  `json:"currency"`
	Turns    []Cost  `json:"turns"`
	Total    float64 `json:"total"`
	Savings  float64 `json:"savings"`
	// Complete is false when a turn could not be priced: the total is then
	// a lower bound.
	Complete bool `json:"complete"`
}

// PriceSession prices each response; model is the model asked for, used
// where a response does not name its own.
func PriceSession(model string, turns []adapters.Summary) *SessionCost {
	t := Models()
	sc := &SessionCost{Label: t.Label, Date: t.Date, Currency: t.Currency, Complete: true, Turns: make([]Cost, 0, len(turns))}
	// A long replay prices 1,000s of turns at every frame, nearly all of
	// one model: each model is looked up once.
	type found struct {
		facts ModelFacts
		ok    bool
		why   string
	}
	seen := map[string]found{}
	lookup := func(m string) found {
		f, ok := seen[m]
		if !ok {
			f.facts, f.ok = t.Lookup(m)
			if !f.ok {
				f.why = noPrice(m)
			}
			seen[m] = f
		}
		return f
	}
	for _, s := range turns {
		m := s.Model
		f := lookup(m)
		if !f.ok {
			m, f = model, lookup(model)
		}
		c := Cost{Model: m, Why: f.why}
		if f.ok {
			c = priceUsage(m, f.facts, s.Usage)
		}
		sc.Turns = append(sc.Turns, c)
		sc.Total += c.Total
		sc.Savings += c.Savings
		sc.Complete = sc.Complete && c.Priced
	}
	return sc
}

// String is the one-line form: "$0.0123 estimate — reconcile … (prices of …)".
func (c *SessionCost) String() string {
	s := fmt.Sprintf("%s %.4f, cache savings %.4f — %s (table of %s)", c.Currency, c.Total, c.Savings, c.Label, c.Date)
	if !c.Complete {
		s += "; some turns unpriced, so this is a lower bound"
	}
	return s
}
