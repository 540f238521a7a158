package check

import (
	"slices"
	"testing"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/store"
)

func str(s string) *string { return &s }

// session builds a stored session of the given turns whose final
// verdicts are layers (layer → pass|fail).
func session(status store.Status, layers map[string]store.Verdict, turns ...store.TurnRecord) (*store.Session, []store.TurnRecord) {
	s := &store.Session{}
	s.ID, s.Status = "s", status
	for _, l := range []string{"transport", "protocol", "parse", "schema", "domain"} {
		if v, ok := layers[l]; ok {
			s.Validations = append(s.Validations, store.ValidationRecord{Seq: 9, Turn: len(turns), Validation: store.Validation{Layer: l, Status: v}})
		}
	}
	for _, t := range turns {
		s.Attempts = append(s.Attempts, t.Attempt)
	}
	return s, turns
}

var allPass = map[string]store.Verdict{"transport": "pass", "protocol": "pass", "parse": "pass", "schema": "pass", "domain": "pass"}

func usage() *adapters.Usage {
	return &adapters.Usage{InputTokens: adapters.Int(10), OutputTokens: adapters.Int(2)}
}

// The capability predicates on hand-made turns: each applies only when
// its condition came up, and fails where the turns show it mishandled.
func TestCapabilities(t *testing.T) {
	calls := store.TurnRecord{Turn: 1, Summary: adapters.Summary{Terminal: adapters.StatusCompleted, Usage: usage(),
		ToolCalls: []adapters.ToolCall{{CallID: "a", Name: "x"}, {CallID: "b", Name: "y"}}},
		Calls: []store.Call{{Turn: 1, CallID: "a", HasResult: true}, {Turn: 1, CallID: "b", HasResult: true}}}
	answer := store.TurnRecord{Turn: 2, Summary: adapters.Summary{Terminal: adapters.StatusCompleted, Text: `{"ok":true}`, Usage: usage()}}
	s, turns := session(store.StatusDone, allPass, calls, answer)
	p := profile(s, turns)
	if p.Verdict != "pass" || p.Capabilities[ToolCallIDs] != Pass || p.Capabilities[ParallelCalls] != Pass || p.Capabilities[UsagePresent] != Pass ||
		p.Capabilities[RefusalShown] != NA || p.Capabilities[StructuredOutput] != NA {
		t.Errorf("clean: %+v", p)
	}

	// One result missing: the parallel calls were not each answered; a
	// repeated call_id is no correlation.
	half := calls
	half.Calls = half.Calls[:1]
	s, turns = session(store.StatusDone, allPass, half, answer)
	if p := profile(s, turns); p.Capabilities[ParallelCalls] != Fail || p.Capabilities[ToolCallIDs] != Pass {
		t.Errorf("half answered: %v", p.Capabilities)
	}
	twice := calls
	twice.Summary.ToolCalls = []adapters.ToolCall{{CallID: "a"}, {CallID: "a"}}
	s, turns = session(store.StatusDone, allPass, twice, answer)
	if p := profile(s, turns); p.Capabilities[ToolCallIDs] != Fail {
		t.Errorf("repeated call_id: %v", p.Capabilities)
	}

	// A refusal with its text, rejected: shown. A truncated answer taken
	// as the answer (every layer passes): not shown. No usage: fails.
	refused := store.TurnRecord{Turn: 1, Summary: adapters.Summary{Terminal: adapters.StatusRefused, StopReason: adapters.StopRefusal, Refusal: str("no")}}
	s, turns = session(store.StatusFailed, map[string]store.Verdict{"transport": "pass", "protocol": "fail"}, refused)
	if p := profile(s, turns); p.Capabilities[RefusalShown] != Pass || p.FailedLayer != "protocol" || p.Capabilities[EmptyShown] != NA {
		t.Errorf("refusal: %+v", p)
	}
	cut := store.TurnRecord{Turn: 1, Summary: adapters.Summary{Terminal: adapters.StatusIncomplete, StopReason: adapters.StopTruncated, Text: `{"ok":`}}
	s, turns = session(store.StatusDone, allPass, cut)
	if p := profile(s, turns); p.Capabilities[TruncationShown] != Fail {
		t.Errorf("truncation taken for an answer: %v", p.Capabilities)
	}
	bare := answer
	bare.Summary.Usage = nil
	s, turns = session(store.StatusDone, allPass, bare)
	if p := profile(s, turns); p.Capabilities[UsagePresent] != Fail || p.Cost != nil {
		t.Errorf("no usage: %v, cost %v", p.Capabilities, p.Cost)
	}
}

// Compare names a layer or capability the recording passed and the
// target failed, and nothing the recording failed too.
func TestCompare(t *testing.T) {
	rec := &Profile{ID: "r", Verdict: "pass", Layers: map[string]string{"parse": "pass", "domain": "pass"},
		Capabilities: map[Capability]Mark{UsagePresent: Pass, RefusalShown: NA}}
	got := &Profile{ID: "c", Verdict: "fail", FailedLayer: "domain", Layers: map[string]string{"parse": "pass", "domain": "fail"},
		Capabilities: map[Capability]Mark{UsagePresent: Fail, RefusalShown: Fail}}
	c := Compare(rec, got, "x")
	if !c.Regressed || !slices.Equal(c.Regressions, []string{"layer:domain", "capability:usage_present"}) || c.Child != "c" {
		t.Errorf("cell %+v", c)
	}
	if s := Summarize([]Cell{c, Compare(rec, rec, "y")}); s.Exit != 1 || s.Regressed != 1 || s.Capabilities[UsagePresent]["x"].Regressed != 1 {
		t.Errorf("summary %+v", s)
	}
}
