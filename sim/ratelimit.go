package sim

import (
	"net/http"
	"time"

	"github.com/modelwire/modelwire/adapters"
)

// rateLimitFault takes a rate-limit fault: the 429 to answer with, each
// fault with its own form of Retry-After (seconds, an HTTP date, or a wait
// beyond one minute); nil when none is due.
func (s *Server) rateLimitFault(simp adapters.Simulated) *adapters.SimError {
	f := s.opts.Faults
	var retryAfter string
	switch {
	case f.take("rate-limit", true):
		retryAfter = "1"
	case f.take("rate-limit-date", true):
		retryAfter = time.Now().Add(2 * time.Second).UTC().Format(http.TimeFormat)
	case f.take("rate-limit-long", true):
		retryAfter = "120"
	default:
		return nil
	}
	e := simp.ErrorResponse(http.StatusTooManyRequests, "rate_limit", "Rate limit reached for requests. Please try again later.")
	e.Header.Set("Retry-After", retryAfter)
	return e
}
