package adapters

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// ServerTiming is where a provider reports its own time on a request in
// the response's headers (13.7.1: a server-reported figure keeps its own
// starting point and is never mixed into the client's time points).
type ServerTiming struct {
	// Header carries the figure ("" when the provider reports none).
	Header string
	// Metric, when set, makes Header a W3C Server-Timing list and names
	// the metric whose dur is the figure; otherwise the header's value is
	// the figure in milliseconds.
	Metric string
	// What says what the figure measures, as the provider documents it
	// (or that it does not), for the screens' label.
	What string
}

// Read returns the figure in milliseconds from a response's headers.
func (s ServerTiming) Read(h http.Header) (ms float64, ok bool) {
	if s.Header == "" || h == nil {
		return 0, false
	}
	v := h.Get(s.Header)
	if v == "" {
		return 0, false
	}
	if s.Metric == "" {
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		return f, err == nil && f >= 0
	}
	// name;dur=123.4;desc="…", metrics separated by commas.
	for _, metric := range strings.Split(v, ",") {
		parts := strings.Split(metric, ";")
		if strings.TrimSpace(parts[0]) != s.Metric {
			continue
		}
		for _, p := range parts[1:] {
			k, val, _ := strings.Cut(strings.TrimSpace(p), "=")
			if strings.EqualFold(k, "dur") {
				f, err := strconv.ParseFloat(strings.Trim(val, `"`), 64)
				return f, err == nil && f >= 0
			}
		}
	}
	return 0, false
}

// Label is how a screen names the figure: the header (and metric).
func (s ServerTiming) Label() string {
	if s.Metric != "" {
		return s.Header + " " + s.Metric
	}
	return s.Header
}

// RateLimitNames are the headers a provider reports its rate limits in
// (13.7.2): the limits per minute, what is left of them and when they
// reset. Empty when it sends none.
type RateLimitNames struct {
	RequestsLimit, RequestsRemaining, RequestsReset string
	TokensLimit, TokensRemaining, TokensReset       string
	// ResetAt: a reset is an RFC 3339 time; otherwise a duration ("6s",
	// "1m30s", "12ms").
	ResetAt bool
}

// RateLimits are a response's rate-limit figures; a figure the response
// did not carry is -1 (reset: 0).
type RateLimits struct {
	RequestsLimit, RequestsRemaining int64
	TokensLimit, TokensRemaining     int64
	RequestsReset, TokensReset       time.Duration
}

// Any reports whether a limit was read (a limit of zero is none).
func (r RateLimits) Any() bool { return r.RequestsLimit > 0 || r.TokensLimit > 0 }

// Read reads the rate-limit figures of a response received at now; a
// reset given as a time is left unknown (0) when now is zero.
func (n RateLimitNames) Read(h http.Header, now time.Time) RateLimits {
	num := func(name string) int64 {
		if name == "" {
			return -1
		}
		v, err := strconv.ParseInt(strings.TrimSpace(h.Get(name)), 10, 64)
		if err != nil || v < 0 {
			return -1
		}
		return v
	}
	reset := func(name string) time.Duration {
		v := strings.TrimSpace(h.Get(name))
		if name == "" || v == "" {
			return 0
		}
		if n.ResetAt {
			t, err := time.Parse(time.RFC3339, v)
			if err != nil || now.IsZero() {
				return 0
			}
			return max(t.Sub(now), 0)
		}
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return 0
		}
		return d
	}
	return RateLimits{
		RequestsLimit: num(n.RequestsLimit), RequestsRemaining: num(n.RequestsRemaining), RequestsReset: reset(n.RequestsReset),
		TokensLimit: num(n.TokensLimit), TokensRemaining: num(n.TokensRemaining), TokensReset: reset(n.TokensReset),
	}
}

// OpenAIRateLimits are OpenAI's x-ratelimit-* headers (protocols.md §6.4).
var OpenAIRateLimits = RateLimitNames{
	RequestsLimit: "x-ratelimit-limit-requests", RequestsRemaining: "x-ratelimit-remaining-requests", RequestsReset: "x-ratelimit-reset-requests",
	TokensLimit: "x-ratelimit-limit-tokens", TokensRemaining: "x-ratelimit-remaining-tokens", TokensReset: "x-ratelimit-reset-tokens",
}

// OpenAIServerTiming is OpenAI's openai-processing-ms: the time the API
// spent on the request, by its own clock (for a stream, up to its first
// byte).
var OpenAIServerTiming = ServerTiming{Header: "openai-processing-ms", What: "the API's own processing time"}

// IsOutputToken reports whether an event is an observable output token,
// the end of the chapter's end-to-end TTFT: any delta the model produced,
// reasoning and tool arguments included.
func IsOutputToken(e *Event) bool {
	switch e.Type {
	case EvTextDelta, EvRefusalDelta, EvReasoningDelta, EvToolArgsDelta:
		return e.Delta != ""
	}
	return false
}

// IsVisibleText reports whether an event is visible text: a text or
// refusal delta (reasoning is not what a person is shown as the answer).
func IsVisibleText(e *Event) bool {
	return (e.Type == EvTextDelta || e.Type == EvRefusalDelta) && e.Delta != ""
}
