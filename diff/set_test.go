package diff

import (
	"testing"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/store"
)

func rec(id, answer string, domain store.Verdict) *Recording {
	s := &store.Session{SessionInfo: store.SessionInfo{ID: id}}
	s.Validations = []store.ValidationRecord{{Seq: 9, Validation: store.Validation{Layer: "domain", Status: domain}}}
	return &Recording{Session: s, Turns: []store.TurnRecord{{Turn: 1}, {Turn: 2, Summary: adapters.Summary{Text: answer}}}}
}

// Over a set of runs, each field of the final object is tallied: the cap
// that changed in one run of three shows as 2 of 3 and 1 of 3, with the
// sessions that gave each value; a field one run lacks counts as missing.
func TestSetTalliesEachField(t *testing.T) {
	tallies := Set([]*Recording{
		rec("a", `{"decision":"needs_review","max_refund_cents":13000}`, "pass"),
		rec("b", `{"max_refund_cents":15000,"decision":"needs_review"}`, "fail"),
		rec("c", `{"decision":"needs_review","max_refund_cents":13000.0,"extra":1}`, "pass"),
	})
	by := map[string]Tally{}
	for _, t := range tallies {
		by[t.Path] = t
	}
	if !by["output/decision"].Stable() || !by["turns"].Stable() {
		t.Errorf("decision and turns should be stable: %+v", tallies)
	}
	caps := by["output/max_refund_cents"].Values
	if len(caps) != 2 || caps[0].N != 2 || Text(caps[0].Value) != "13000" || caps[1].N != 1 || caps[1].Sessions[0] != "b" {
		t.Errorf("cap tally %+v, want 13000 twice (a, c) and 15000 once (b)", caps)
	}
	if d := by["validation/domain"].Values; len(d) != 2 || d[0].Value != "pass" || d[0].N != 2 {
		t.Errorf("domain tally %+v", d)
	}
	if e := by["output/extra"].Values; len(e) != 2 || e[0].Value != nil || e[0].N != 2 || e[0].Sessions[1] != "b" {
		t.Errorf("a field two runs lack: %+v", e)
	}
}
