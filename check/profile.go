// Package check compares sessions re-sent to another target with the
// recordings they came from (`modelwire check`): each session's figures
// and capabilities read from the store, the cells of the matrix sessions
// × targets, what regressed, and the capability suite's probes. It runs
// nothing: app re-sends the sessions (as forks) and runs the probes; this
// package reads what they stored and judges it.
package check

import (
	"time"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/pricing"
	"github.com/modelwire/modelwire/store"
	"github.com/modelwire/modelwire/validate"
)

// Profile is one stored session as check compares it: its verdict, its
// layers, its figures and its capabilities.
type Profile struct {
	ID       string `json:"id"`
	Protocol string `json:"protocol"`
	Provider string `json:"provider"`
	Model    string `json:"model"`
	// Verdict is pass when every final layer passes, else fail.
	Verdict     string            `json:"verdict"`
	FailedLayer string            `json:"failed_layer"`
	Layers      map[string]string `json:"layers"`
	Timings     Timings           `json:"timings"`
	Tokens      Tokens            `json:"tokens"`
	// Cost is the estimated cost (pricing's table); nil when a turn could
	// not be priced.
	Cost         *float64            `json:"cost"`
	Capabilities map[Capability]Mark `json:"capabilities"`
	Turns        int                 `json:"turns"`
}

// Timings are a session's time points, in milliseconds from its start
// (nil where the moment never came): the first event of the first
// response, the first answer text, and the end of the last response.
type Timings struct {
	FirstEvent *float64 `json:"first_event_ms"`
	FirstText  *float64 `json:"first_text_ms"`
	End        *float64 `json:"end_ms"`
}

// Tokens are the session's reported tokens over every attempt (nil: none reported).
type Tokens struct {
	Input  *int64 `json:"input"`
	Output *int64 `json:"output"`
}

// Read profiles a stored session.
func Read(db *store.DB, id string) (*Profile, error) {
	s, turns, err := db.Turns(id)
	if err != nil {
		return nil, err
	}
	return profile(s, turns), nil
}

func profile(s *store.Session, turns []store.TurnRecord) *Profile {
	p := &Profile{ID: s.ID, Protocol: s.Protocol, Provider: s.Provider, Model: s.Model, Layers: map[string]string{}, Turns: len(turns)}
	final := s.FinalValidations()
	p.Verdict = "pass"
	if len(final) == 0 || s.Status != store.StatusDone {
		p.Verdict = "fail"
	}
	for _, l := range validate.Layers {
		for _, v := range final {
			if v.Layer != string(l) {
				continue
			}
			p.Layers[v.Layer] = string(v.Status)
			if v.Status == store.VerdictFail {
				p.Verdict = "fail"
				if p.FailedLayer == "" {
					p.FailedLayer = v.Layer
				}
			}
		}
	}
	if p.Verdict == "fail" && p.FailedLayer == "" {
		p.FailedLayer = string(validate.Transport) // it ended before any verdict
	}
	at := func(a store.Attempt, d *time.Duration) *float64 {
		if d == nil {
			return nil
		}
		ms := float64((a.Start + *d).Microseconds()) / 1000
		return &ms
	}
	for _, a := range s.Attempts {
		if p.Timings.FirstEvent == nil {
			p.Timings.FirstEvent = at(a, a.Timings.FirstEvent)
		}
		if p.Timings.FirstText == nil {
			p.Timings.FirstText = at(a, a.Timings.FirstText)
		}
		end := a.Timings.Finished
		if a.Timings.Terminal != nil {
			end = a.Timings.Terminal
		}
		if e := at(a, end); e != nil {
			p.Timings.End = e
		}
	}
	for _, u := range s.Usage() {
		add(&p.Tokens.Input, u.InputTokens)
		add(&p.Tokens.Output, u.OutputTokens)
	}
	sums := make([]adapters.Summary, 0, len(turns))
	for _, t := range turns {
		sums = append(sums, t.Summary)
	}
	if c := pricing.PriceSession(s.Model, sums); c.Complete && len(sums) > 0 {
		p.Cost = &c.Total
	}
	p.Capabilities = capabilities(s, turns, p)
	return p
}

func add(dst **int64, v *int64) {
	if v == nil {
		return
	}
	if *dst == nil {
		*dst = new(int64)
	}
	**dst += *v
}
