package app

import (
	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/diff"
	"github.com/modelwire/modelwire/session"
	"github.com/modelwire/modelwire/store"
)

// Side is one session of a comparison of a fork's children with their
// parent, from the fork's turn on: the answer, the verdicts, the latency,
// tokens and cost of those turns (the earlier turns are the parent's in
// every child).
type Side struct {
	// Target is the target as written ("" for the parent).
	Target   string `json:"target"`
	Session  string `json:"session"`
	Protocol string `json:"protocol"`
	Provider string `json:"provider"`
	Model    string `json:"model"`
	// Verdict is "pass", or "fail" with the first failing layer in Failed.
	Verdict string             `json:"verdict"`
	Failed  string             `json:"failed_layer,omitempty"`
	Layers  []store.Validation `json:"validation"`
	// Answer is the final object (the last turn's text, as JSON when it is).
	Answer any `json:"answer"`
	// LatencyMS sums the turns' times to their terminal event.
	LatencyMS    float64 `json:"latency_ms"`
	InputTokens  int64   `json:"input_tokens"`
	OutputTokens int64   `json:"output_tokens"`
	// Cost is the estimate at list prices; Priced false when the model
	// has no price.
	Cost     float64 `json:"cost"`
	Currency string  `json:"currency,omitempty"`
	Priced   bool    `json:"priced"`
	// Changes are the differences from the parent (none for the parent).
	Changes []diff.Change `json:"changes,omitempty"`
	Differ  int           `json:"differences"`
}

// Comparison is a parent and its children side by side, from turn Turn.
type Comparison struct {
	Parent string `json:"parent"`
	Turn   int    `json:"turn"`
	Sides  []Side `json:"sides"` // the parent first, then each child in order
}

// CompareForks compares the children (made by targets, in order) with
// their parent from turn on, and lists each child's differences from the
// parent (diff.Sessions).
func CompareForks(db *store.DB, parent string, turn int, children, targets []string) (*Comparison, error) {
	pr, err := diff.Load(db, parent)
	if err != nil {
		return nil, err
	}
	c := &Comparison{Parent: parent, Turn: turn, Sides: []Side{sideOf(pr, turn, "")}}
	for i, id := range children {
		r, err := diff.Load(db, id)
		if err != nil {
			return nil, err
		}
		s := sideOf(r, turn, targets[i])
		s.Changes = diff.Sessions(pr, r, diff.Options{})
		s.Differ = len(s.Changes)
		c.Sides = append(c.Sides, s)
	}
	return c, nil
}

func sideOf(r *diff.Recording, turn int, target string) Side {
	s := r.Session
	sd := Side{Target: target, Session: s.ID, Protocol: s.Protocol, Provider: s.Provider, Model: s.ModelShown(),
		Layers: s.FinalValidations(), Answer: diff.Output(r.Turns), Verdict: "pass"}
	for _, l := range sd.Layers {
		if l.Status == store.VerdictFail {
			sd.Verdict, sd.Failed = "fail", l.Layer
			break
		}
	}
	if len(sd.Layers) == 0 {
		sd.Verdict = "none"
	}
	var sums []adapters.Summary
	for _, t := range r.Turns {
		if t.Turn < turn {
			continue
		}
		if d := t.Attempt.Timings.Terminal; d != nil {
			sd.LatencyMS += float64(d.Microseconds()) / 1000
		}
		if u := t.Attempt.Usage; u != nil {
			if u.InputTokens != nil {
				sd.InputTokens += *u.InputTokens
			}
			if u.OutputTokens != nil {
				sd.OutputTokens += *u.OutputTokens
			}
		}
		sums = append(sums, t.Summary)
	}
	sd.Cost, sd.Currency, sd.Priced = session.EstimateCost(s.Model, sums)
	return sd
}
