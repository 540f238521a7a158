package session

import (
	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/pricing"
	"github.com/modelwire/modelwire/store"
)

// EstimateCost prices responses at the model table's list prices (each
// at the model it names, else model), as a session's Result.Cost does;
// ok is false when no response could be priced.
func EstimateCost(model string, turns []adapters.Summary) (total float64, currency string, ok bool) {
	c := pricing.PriceSession(model, turns)
	for _, t := range c.Turns {
		ok = ok || t.Priced
	}
	return c.Total, c.Currency, ok
}

// CostOfAttempts prices a stored session attempt by attempt, its failed
// and retried attempts included and a cut stream's "to reconcile"
// (pricing.PriceAttempts over the stored usage); model is the model asked
// for, where a response names none the table knows.
func CostOfAttempts(model string, attempts []store.Attempt) *pricing.SessionCost {
	in := make([]pricing.Attempt, len(attempts))
	for i, a := range attempts {
		in[i] = pricing.Attempt{Model: a.ResponseModel, Usage: a.Usage, Status: a.StatusCode}
	}
	return pricing.PriceAttempts(model, in)
}
