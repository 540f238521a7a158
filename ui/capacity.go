package ui

import (
	"net/http"
	"strings"
	"time"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/registry"
	"github.com/modelwire/modelwire/capacity"
	"github.com/modelwire/modelwire/session"
)

// capacityText is the chapter's throughput bound (13.7.2) for the session
// shown: the rate-limit headers of its latest answered attempt up to turn
// t, read by protocol's descriptor, and the tokens and seconds its last
// turns took; the workbench keeps one request in flight. "" when the provider
// sends no limits or nothing is measured yet.
func capacityText(st *session.State, t *session.TurnState, protocol string) string {
	d, ok := registry.Describe(protocol)
	if !ok || st == nil || d.RateLimits == (adapters.RateLimitNames{}) {
		return ""
	}
	// The latest turns up to t: a replay of thousands renders every frame.
	end := len(st.Turns)
	if t != nil && t.N >= 1 && t.N <= end {
		end = t.N
	}
	var samples []capacity.Sample
	for _, turn := range st.Turns[max(0, end-turnRows):end] {
		var smp capacity.Sample
		for _, a := range turn.Attempts {
			if len(a.RateLimits) > 0 {
				// A reset given as a time is unknown here: the view has no
				// clock (it would differ frame to frame).
				smp.Limits = d.RateLimits.Read(headerOf(a.RateLimits), time.Time{})
			}
		}
		if u := turn.Usage; u != nil && u.InputTokens != nil && u.OutputTokens != nil {
			smp.Tokens = *u.InputTokens + *u.OutputTokens
		}
		if tm := turn.Timings; tm != nil && tm.Terminal > 0 {
			smp.Seconds = tm.Terminal / 1000
		}
		samples = append(samples, smp)
	}
	b := capacity.Compute(capacity.FromSamples(samples, 1))
	if b.Binding == "" {
		return ""
	}
	return "capacity " + b.String()
}

// headerOf turns the "name: value" lines a State keeps back into headers.
func headerOf(lines []string) http.Header {
	h := http.Header{}
	for _, l := range lines {
		if k, v, ok := strings.Cut(l, ": "); ok {
			h.Add(k, v)
		}
	}
	return h
}
