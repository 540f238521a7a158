package capacity

import (
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/registry"
)

func limits(rpm, tpm, reqLeft, tokLeft int64, reset time.Duration) adapters.RateLimits {
	return adapters.RateLimits{RequestsLimit: rpm, TokensLimit: tpm, RequestsRemaining: reqLeft, TokensRemaining: tokLeft,
		RequestsReset: reset, TokensReset: reset}
}

// The bound is the least of the terms whose inputs are known, and names
// the one that binds.
func TestCompute(t *testing.T) {
	for _, c := range []struct {
		name    string
		in      Inputs
		want    float64
		binding string
		terms   int
	}{
		// 5000/60 = 83.3; 4,000,000/(60×2,500) = 26.7; 1/0.5 = 2
		{"concurrency binds", Inputs{RateLimits: limits(5000, 4_000_000, -1, -1, 0), TokensPerRequest: 2500, SecondsPerRequest: 0.5, Concurrency: 1}, 2, "concurrency", 3},
		// 50 in flight: 50/0.5 = 100 > 26.7
		{"TPM binds", Inputs{RateLimits: limits(5000, 4_000_000, -1, -1, 0), TokensPerRequest: 2500, SecondsPerRequest: 0.5, Concurrency: 50}, 4_000_000.0 / (60 * 2500), "TPM", 3},
		// 60 RPM: 1/s; 1,000,000/(60×100) = 166.7; 10/0.1 = 100
		{"RPM binds", Inputs{RateLimits: limits(60, 1_000_000, -1, -1, 0), TokensPerRequest: 100, SecondsPerRequest: 0.1, Concurrency: 10}, 1, "RPM", 3},
		// No token limit header: that term is left out, not zero.
		{"no token limit", Inputs{RateLimits: limits(600, -1, -1, -1, 0), TokensPerRequest: 100, SecondsPerRequest: 0.1, Concurrency: 10}, 10, "RPM", 2},
		// Nothing measured and no headers: no bound.
		{"nothing known", Inputs{RateLimits: limits(-1, -1, -1, -1, 0), Concurrency: 1}, 0, "", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := Compute(c.in)
			if math.Abs(b.PerSecond-c.want) > 1e-9 || b.Binding != c.binding || len(b.Terms) != c.terms {
				t.Fatalf("bound %v/s by %q over %d terms; want %v by %q over %d: %s", b.PerSecond, b.Binding, len(b.Terms), c.want, c.binding, c.terms, b)
			}
			if c.binding != "" && !strings.Contains(b.String(), c.binding+" binds") {
				t.Errorf("the one-line form does not say what binds: %s", b)
			}
		})
	}
}

// A planned run is warned when its first minute sends more than the
// bound sustains in a minute, or it needs more than remains before the
// reset; a short run under the bound is not.
func TestPlan(t *testing.T) {
	// 600 RPM (10/s) binds; the plan sends 1 in flight at 0.05 s: 20/s.
	b := Compute(Inputs{RateLimits: limits(600, 10_000_000, 10_000, 10_000_000, time.Minute), TokensPerRequest: 100, SecondsPerRequest: 0.05, Concurrency: 1})
	for _, c := range []struct {
		n    int
		want string // "" for no warning
	}{
		{3, ""},   // 3 requests in 0.15 s: under 600 a minute
		{600, ""}, // 600 in 30 s: exactly the minute's allowance
		{601, "exceeds the capacity bound ≤ 10.0 requests/s, RPM binds"}, // 601 in 30 s: more than 600 in the first minute
		{5000, "20.0 requests/s"},
	} {
		got := b.Plan(c.n)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("plan of %d: %q, want one containing %q", c.n, got, c.want)
		}
		if got != "" && (!strings.HasPrefix(got, "warning: ") || strings.Contains(got, "\n")) {
			t.Errorf("not a one-line warning: %q", got)
		}
	}
	// 5 requests left until a reset a minute away: a plan of 10 runs out.
	low := Compute(Inputs{RateLimits: limits(5000, 4_000_000, 5, 3_000_000, time.Minute), TokensPerRequest: 1000, SecondsPerRequest: 1, Concurrency: 1})
	if got := low.Plan(10); !strings.Contains(got, "10 requests, 5 remaining until the reset in 1m0s") {
		t.Errorf("remaining requests: %q", got)
	}
	if got := low.Plan(4); got != "" {
		t.Errorf("4 of 5 remaining: %q", got)
	}
	// Nothing measured: nothing to warn of.
	if got := Compute(Inputs{RateLimits: limits(1, 1, 0, 0, time.Hour), Concurrency: 1}).Plan(100); got != "" {
		t.Errorf("no measured requests, yet %q", got)
	}
}

// The limits are read from each provider's own headers, by its
// descriptor: OpenAI's durations and Anthropic's reset times.
func TestSamplesFromProviderHeaders(t *testing.T) {
	now := time.Date(2026, 12, 5, 4, 0, 0, 0, time.UTC)
	oa, _ := registry.Describe(adapters.OpenAIResponses)
	h := http.Header{}
	for k, v := range map[string]string{"x-ratelimit-limit-requests": "5000", "x-ratelimit-limit-tokens": "4000000",
		"x-ratelimit-remaining-requests": "4999", "x-ratelimit-remaining-tokens": "3997469",
		"x-ratelimit-reset-requests": "12ms", "x-ratelimit-reset-tokens": "1m30s"} {
		h.Set(k, v)
	}
	l := oa.RateLimits.Read(h, now)
	if l.RequestsLimit != 5000 || l.TokensRemaining != 3997469 || l.RequestsReset != 12*time.Millisecond || l.TokensReset != 90*time.Second {
		t.Fatalf("OpenAI limits %+v", l)
	}
	an, _ := registry.Describe(adapters.AnthropicMessages)
	h = http.Header{}
	h.Set("anthropic-ratelimit-requests-limit", "4000")
	h.Set("anthropic-ratelimit-requests-remaining", "3999")
	h.Set("anthropic-ratelimit-requests-reset", now.Add(20*time.Second).Format(time.RFC3339))
	h.Set("anthropic-ratelimit-tokens-limit", "2400000")
	a := an.RateLimits.Read(h, now)
	if a.RequestsLimit != 4000 || a.RequestsReset != 20*time.Second || a.TokensLimit != 2400000 || a.TokensRemaining != -1 {
		t.Fatalf("Anthropic limits %+v", a)
	}
	// The latest limits, the means over what was measured.
	in := FromSamples([]Sample{{Limits: l, Tokens: 1000, Seconds: 1}, {Limits: adapters.RateLimits{RequestsLimit: -1, TokensLimit: -1}, Tokens: 3000}, {Limits: a, Seconds: 3}}, 2)
	if in.RequestsLimit != 4000 || in.TokensPerRequest != 2000 || in.SecondsPerRequest != 2 || in.Concurrency != 2 || in.Samples != 3 {
		t.Fatalf("inputs %+v", in)
	}
}
