package sim

import (
	"net/http"
	"strconv"
	"time"

	"github.com/modelwire/modelwire/adapters"
)

// The simulator's rate limits: generous, and counted down per request so
// the headers move as a real provider's do (protocols.md §6.4).
const (
	simRequestLimit = 500
	simTokenLimit   = 200000
)

// setRateLimitHeaders adds the rate-limit headers the provider behind a
// protocol sends: OpenAI's x-ratelimit-* (resets as durations), Anthropic's
// anthropic-ratelimit-* (resets as RFC 3339 times). Gemini and DeepSeek
// document none. n is the request's number since the server started.
func setRateLimitHeaders(h http.Header, protocol string, n uint64, now time.Time) {
	remaining := strconv.FormatUint(simRequestLimit-1-n%simRequestLimit, 10)
	tokens := strconv.FormatUint(simTokenLimit-(n%simRequestLimit)*1000, 10)
	switch protocol {
	case adapters.OpenAIResponses, adapters.OpenAIChat:
		h.Set("x-ratelimit-limit-requests", strconv.Itoa(simRequestLimit))
		h.Set("x-ratelimit-remaining-requests", remaining)
		h.Set("x-ratelimit-reset-requests", "120ms")
		h.Set("x-ratelimit-limit-tokens", strconv.Itoa(simTokenLimit))
		h.Set("x-ratelimit-remaining-tokens", tokens)
		h.Set("x-ratelimit-reset-tokens", "6s")
	case adapters.AnthropicMessages:
		reset := now.Add(time.Minute).UTC().Format(time.RFC3339)
		h.Set("anthropic-ratelimit-requests-limit", strconv.Itoa(simRequestLimit))
		h.Set("anthropic-ratelimit-requests-remaining", remaining)
		h.Set("anthropic-ratelimit-requests-reset", reset)
		h.Set("anthropic-ratelimit-tokens-limit", strconv.Itoa(simTokenLimit))
		h.Set("anthropic-ratelimit-tokens-remaining", tokens)
		h.Set("anthropic-ratelimit-tokens-reset", reset)
	}
}

// rateLimitFault answers the rate-limit faults, each with its own form of
// Retry-After: seconds, an HTTP date, or a wait beyond one minute.
func (s *Server) rateLimitFault(w http.ResponseWriter, simp adapters.Simulated) bool {
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
		return false
	}
	e := simp.ErrorResponse(http.StatusTooManyRequests, "rate_limit", "Rate limit reached for requests. Please try again later.")
	e.Header.Set("Retry-After", retryAfter)
	writeError(w, e)
	return true
}
