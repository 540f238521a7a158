package ui

import (
	"strings"
	"testing"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/jsonschema"
	"github.com/modelwire/modelwire/session"
)

// noDecision fails if the session got an answer.
func noDecision(t *testing.T, reply chan session.Decision, what string) {
	t.Helper()
	select {
	case d := <-reply:
		t.Fatalf("%s: the session got %+v", what, d)
	default:
	}
}

// A call whose arguments fail its schema cannot be approved: a and A are
// refused with the reason (the dialog stays, and offers edit and reject
// only); r still rejects it.
func TestApproveRefusedForArgumentsThatFailTheSchema(t *testing.T) {
	m := newLive(t, 120, 40)
	p := refundProposal()
	p.Arguments = []byte(`{"order_id":"O-2048"}`)
	p.Violations = []jsonschema.Violation{{Pointer: "", Message: `missing property "line_id"`}}
	reply := ask(m, p)
	contains(t, m.View(), "e edit · r reject", "cannot run as proposed")
	if strings.Contains(screenText(m.View()), "a approve") {
		t.Errorf("the dialog offers a approve for a call that fails its schema:\n%s", screenText(m.View()))
	}
	run(press(m, "a"))
	noDecision(t, reply, "a on a call that fails its schema")
	if !strings.Contains(m.status.text, "cannot approve get_order_line: its arguments fail the tool's schema") {
		t.Errorf("status %q", m.status.text)
	}
	if _, ok := m.top().(*approvalDialog); !ok {
		t.Fatal("the refused approval closed the dialog")
	}
	run(press(m, "A"))
	noDecision(t, reply, "A on a call that fails its schema")
	if m.approveAll {
		t.Error("A on a call that cannot run turned approve-all on")
	}
	run(press(m, "r", "enter"))
	if d := got(t, reply); d.Kind != session.Rejected {
		t.Fatalf("r gave %+v", d)
	}
}

// step is one stream step of turn 1 for updates.
func step(i int, evs ...adapters.Event) session.Update {
	return session.Update{Kind: session.UpStep, Turn: 1, Step: &adapters.Step{Index: i, Events: evs}}
}

// A call is approved only at its closed state: while its lane still
// streams arguments, a is refused; once the lane closes and parses, a
// approves it. The walkthrough must be at the proposals step.
func TestApproveOnlyOnceTheArgumentsClosed(t *testing.T) {
	m := newLive(t, 120, 40)
	p := refundProposal()
	m.Update(updatesMsg{gen: m.gen, ups: []session.Update{
		step(0, adapters.Event{Type: adapters.EvItemStarted, ItemID: "fc_1", Kind: string(adapters.KindToolCall), CallID: p.CallID, Name: p.Name}),
		step(1, adapters.Event{Type: adapters.EvToolArgsDelta, ItemID: "fc_1", CallID: p.CallID, Delta: `{"order_id":"O-2048",`}),
	}})
	reply := ask(m, p)
	run(press(m, "a"))
	noDecision(t, reply, "a while the arguments stream")
	if !strings.Contains(m.status.text, "have not closed") {
		t.Errorf("status %q", m.status.text)
	}
	// The arguments close; the engine is at the proposals step again.
	m.Update(updatesMsg{gen: m.gen, ups: []session.Update{
		step(2, adapters.Event{Type: adapters.EvToolArgsDelta, ItemID: "fc_1", CallID: p.CallID, Delta: `"line_id":"L1"}`},
			adapters.Event{Type: adapters.EvItemDone, ItemID: "fc_1", CallID: p.CallID},
			adapters.Event{Type: adapters.EvToolProposed, CallID: p.CallID, Name: p.Name, Arguments: p.Arguments}),
	}})
	if l := m.laneOf(p.CallID); l == nil || l.State != adapters.ItemParsed {
		t.Fatalf("lane %+v, want parsed", l)
	}
	// The walkthrough is not at the proposals step (a first event came
	// after the proposal): still refused.
	m.Update(updatesMsg{gen: m.gen, ups: []session.Update{step(0)}})
	run(press(m, "a"))
	noDecision(t, reply, "a away from the proposals step")
	if !strings.Contains(m.status.text, "not at the proposals step") {
		t.Errorf("status %q", m.status.text)
	}
	m.Update(updatesMsg{gen: m.gen, ups: []session.Update{{Kind: session.UpProposal, Turn: 1, Proposal: &p}}})
	run(press(m, "a"))
	if d := got(t, reply); d.Kind != session.Approved {
		t.Fatalf("a at the closed call gave %+v", d)
	}
}
