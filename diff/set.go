package diff

import (
	"slices"
	"strconv"

	"github.com/modelwire/modelwire/jsonschema"
)

// Tally is how often each value of one field came out over a set of
// sessions (run --repeat): one value means the field is stable.
type Tally struct {
	Path   string  `json:"path"`
	Values []Count `json:"values"`
}

// Count is one value and the sessions that gave it.
type Count struct {
	Value    any      `json:"value"`
	N        int      `json:"n"`
	Sessions []string `json:"sessions"`
}

// Stable reports whether every session gave the same value.
func (t Tally) Stable() bool { return len(t.Values) == 1 }

// Set tallies what a set of sessions of one case came to: each field of
// the final object, each validation layer's status, and the number of
// turns. One sample proves little; this says whether an answer is stable.
func Set(recs []*Recording) []Tally {
	var order []string
	tallies := map[string]*Tally{}
	add := func(path string, v any, id string) {
		t := tallies[path]
		if t == nil {
			t = &Tally{Path: path}
			tallies[path] = t
			order = append(order, path)
		}
		for i := range t.Values {
			if Equal(t.Values[i].Value, v) {
				t.Values[i].N++
				t.Values[i].Sessions = append(t.Values[i].Sessions, id)
				return
			}
		}
		t.Values = append(t.Values, Count{Value: v, N: 1, Sessions: []string{id}})
	}
	for _, r := range recs {
		id := r.Session.ID
		out := Output(r.Turns)
		if m, ok := out.(map[string]any); ok {
			keys := make([]string, 0, len(m))
			for k := range m {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				add("output/"+jsonschema.EscapeToken(k), m[k], id)
			}
		} else {
			add("output", out, id)
		}
		for _, v := range r.Session.FinalValidations() {
			add("validation/"+v.Layer, string(v.Status), id)
		}
		add("turns", strconv.Itoa(len(r.Turns)), id)
	}
	// A field some sessions lack is a value too: missing (null).
	for _, path := range order {
		t := tallies[path]
		had := map[string]bool{}
		for _, c := range t.Values {
			for _, id := range c.Sessions {
				had[id] = true
			}
		}
		var lack []string
		for _, r := range recs {
			if !had[r.Session.ID] {
				lack = append(lack, r.Session.ID)
			}
		}
		if len(lack) > 0 {
			t.Values = append(t.Values, Count{Value: nil, N: len(lack), Sessions: lack})
		}
	}
	out := make([]Tally, len(order))
	for i, p := range order {
		out[i] = *tallies[p]
		slices.SortStableFunc(out[i].Values, func(a, b Count) int { return b.N - a.N })
	}
	return out
}
