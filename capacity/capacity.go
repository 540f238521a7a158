// Package capacity is the chapter's teaching bound on sustained
// throughput (13.7.2):
//
//	requests/s ≤ min(RPM/60, TPM/(60 × tokens per request), concurrency/seconds per request)
//
// from a provider's latest rate-limit headers (read through its
// protocol's descriptor) and the tokens and seconds its requests were
// measured to take. The bound is an average: it cannot foresee bursts,
// long tails or short windows, so it is shown with its inputs and the
// term that binds, and a planned run is warned, not stopped.
package capacity

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/modelwire/modelwire/adapters"
)

// Sample is one answered attempt, as the bound measures it.
type Sample struct {
	// Limits are its response's rate-limit figures (-1 where absent).
	Limits adapters.RateLimits
	// Tokens are the tokens it used, input and output (what a token
	// limit counts); 0 when it reported none.
	Tokens int64
	// Seconds is how long it was in flight: from the request's start to
	// its terminal event; 0 when unknown.
	Seconds float64
}

// Inputs are the bound's inputs: the latest limits, the measured means,
// and how many requests the plan keeps in flight.
type Inputs struct {
	adapters.RateLimits
	TokensPerRequest  float64 `json:"tokens_per_request"`
	SecondsPerRequest float64 `json:"seconds_per_request"`
	Concurrency       int     `json:"concurrency"`
	// Samples is how many attempts the means are over.
	Samples int `json:"samples"`
}

// FromSamples takes the limits of the latest sample that carried any and
// the means of the samples' tokens and seconds (each over the samples
// that measured it), for a plan keeping concurrency requests in flight.
func FromSamples(samples []Sample, concurrency int) Inputs {
	in := Inputs{RateLimits: adapters.RateLimits{RequestsLimit: -1, RequestsRemaining: -1, TokensLimit: -1, TokensRemaining: -1},
		Concurrency: concurrency, Samples: len(samples)}
	var tokens, secs float64
	var nt, ns int
	for _, s := range samples {
		if s.Limits.Any() {
			in.RateLimits = s.Limits
		}
		if s.Tokens > 0 {
			tokens += float64(s.Tokens)
			nt++
		}
		if s.Seconds > 0 {
			secs += s.Seconds
			ns++
		}
	}
	if nt > 0 {
		in.TokensPerRequest = tokens / float64(nt)
	}
	if ns > 0 {
		in.SecondsPerRequest = secs / float64(ns)
	}
	return in
}

// Term is one of the bound's three terms.
type Term struct {
	Name      string  `json:"name"` // "RPM", "TPM", "concurrency"
	Formula   string  `json:"formula"`
	PerSecond float64 `json:"per_second"`
}

// Bound is the bound worked out: its terms (those whose inputs are
// known), the least of them and which one that is.
type Bound struct {
	Inputs    Inputs  `json:"inputs"`
	Terms     []Term  `json:"terms"`
	PerSecond float64 `json:"per_second"` // 0 when no term is known
	Binding   string  `json:"binding,omitempty"`
}

// Compute works out the bound. A term whose inputs are unknown (no limit
// header, no measured request) is left out, never taken as zero.
func Compute(in Inputs) Bound {
	b := Bound{Inputs: in}
	if in.RequestsLimit > 0 {
		b.Terms = append(b.Terms, Term{Name: "RPM", PerSecond: float64(in.RequestsLimit) / 60,
			Formula: fmt.Sprintf("%d/60", in.RequestsLimit)})
	}
	if in.TokensLimit > 0 && in.TokensPerRequest > 0 {
		b.Terms = append(b.Terms, Term{Name: "TPM", PerSecond: float64(in.TokensLimit) / (60 * in.TokensPerRequest),
			Formula: fmt.Sprintf("%d/(60×%.0f tokens)", in.TokensLimit, in.TokensPerRequest)})
	}
	if in.Concurrency > 0 && in.SecondsPerRequest > 0 {
		b.Terms = append(b.Terms, Term{Name: "concurrency", PerSecond: float64(in.Concurrency) / in.SecondsPerRequest,
			Formula: fmt.Sprintf("%d/%s", in.Concurrency, seconds(in.SecondsPerRequest))})
	}
	b.PerSecond = math.Inf(1)
	for _, t := range b.Terms {
		if t.PerSecond < b.PerSecond {
			b.PerSecond, b.Binding = t.PerSecond, t.Name
		}
	}
	if b.Binding == "" {
		b.PerSecond = 0
	}
	return b
}

// String is the bound with its inputs on one line: "≤ 26.7 requests/s,
// TPM binds: RPM 5000/60 = 83.3 · TPM 4000000/(60×2500 tokens) = 26.7 ·
// concurrency 1/0.50s = 2.0".
func (b Bound) String() string {
	if b.Binding == "" {
		return "no bound: no rate-limit headers or measured requests yet"
	}
	terms := make([]string, len(b.Terms))
	for i, t := range b.Terms {
		terms[i] = fmt.Sprintf("%s %s = %s", t.Name, t.Formula, rate(t.PerSecond))
	}
	s := fmt.Sprintf("≤ %s requests/s, %s binds: %s", rate(b.PerSecond), b.Binding, strings.Join(terms, " · "))
	var left []string
	for _, r := range []struct {
		n     int64
		what  string
		reset time.Duration
	}{{b.Inputs.RequestsRemaining, "requests", b.Inputs.RequestsReset}, {b.Inputs.TokensRemaining, "tokens", b.Inputs.TokensReset}} {
		if r.n < 0 {
			continue
		}
		l := fmt.Sprintf("%d %s", r.n, r.what)
		if r.reset > 0 {
			l += " (reset in " + short(r.reset).String() + ")"
		}
		left = append(left, l)
	}
	if len(left) > 0 {
		s += "; remaining " + strings.Join(left, ", ")
	}
	return s
}

// Plan checks a planned run of n requests sent as the inputs' plan sends
// them (Concurrency in flight, each taking SecondsPerRequest): it returns
// a warning, with the numbers, when the run's first minute would send
// more than the bound sustains in a minute, or when it needs more
// requests or tokens than remain before the limits reset; "" otherwise,
// or when the bound cannot be worked out.
func (b Bound) Plan(n int) string {
	in := b.Inputs
	if n <= 0 || in.SecondsPerRequest <= 0 || in.Concurrency <= 0 {
		return ""
	}
	sendRate := float64(in.Concurrency) / in.SecondsPerRequest
	duration := time.Duration(float64(n) / sendRate * float64(time.Second))
	var why []string
	over := false
	if b.Binding != "" {
		if firstMinute := math.Min(float64(n), sendRate*60); firstMinute > b.PerSecond*60 {
			over = true
			why = append(why, fmt.Sprintf("about %s requests/s for %s exceeds the capacity bound %s", rate(sendRate), short(duration), b))
		}
	}
	if in.RequestsRemaining >= 0 && int64(n) > in.RequestsRemaining && duration < in.RequestsReset {
		why = append(why, fmt.Sprintf("%d requests, %d remaining until the reset in %s", n, in.RequestsRemaining, short(in.RequestsReset)))
	}
	if need := float64(n) * in.TokensPerRequest; in.TokensRemaining >= 0 && need > float64(in.TokensRemaining) && duration < in.TokensReset {
		why = append(why, fmt.Sprintf("about %.0f tokens, %d remaining until the reset in %s", need, in.TokensRemaining, short(in.TokensReset)))
	}
	if len(why) == 0 {
		return ""
	}
	if !over && b.Binding != "" {
		why = append(why, fmt.Sprintf("capacity ≤ %s requests/s, %s binds", rate(b.PerSecond), b.Binding))
	}
	return fmt.Sprintf("warning: %d planned requests: %s", n, strings.Join(why, "; "))
}

func rate(v float64) string {
	if v >= 100 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.1f", v)
}

// short rounds a duration for reading: to the millisecond under a
// second, to a tenth of a second above.
func short(d time.Duration) time.Duration {
	if d < time.Second {
		return d.Round(time.Millisecond)
	}
	return d.Round(100 * time.Millisecond)
}

func seconds(v float64) string {
	if v < 1 {
		return fmt.Sprintf("%.1fms", v*1000)
	}
	return fmt.Sprintf("%.2fs", v)
}
