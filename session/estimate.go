package session

import (
	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/pricing"
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
