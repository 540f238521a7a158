package ui

import (
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/registry"
	"github.com/modelwire/modelwire/app"
	"github.com/modelwire/modelwire/session"
	"github.com/modelwire/modelwire/store"
	"github.com/modelwire/modelwire/timeline"
	"github.com/modelwire/modelwire/transport"
)

// F works on an application's session too (here the refund case stored
// as the proxy stores one: no scenario, no decisions or results of its
// own, the results only inside the requests). The dialog offers the
// results turn 3's request carries; an edited one is planned as a re-send
// of the application's request, standing in for the application, with
// the simulator playing what `proxy --upstream sim` plays.
func TestForkAnApplicationsSession(t *testing.T) {
	db, scripted, ups, sc := recordFixture(t)
	rc := DefaultRunConfig()
	meta := app.Meta(rc.setup(sc), transport.Provider{Name: "sim", BaseURL: "http://127.0.0.1:1"}, "proxy", "test")
	meta.Scenario, meta.Source, meta.Title = "", "proxy", "POST sim/v1/responses"
	j := timeline.NewStoreJournal(db, meta, rc.Stream)
	proto, err := registry.Lookup(rc.Protocol)
	if err != nil {
		t.Fatal(err)
	}
	var history []adapters.Turn // what the application sent back, turn by turn
	for _, u := range ups {
		switch u.Kind {
		case session.UpProposal:
			history[len(history)-1].Items = append(history[len(history)-1].Items, adapters.OutputItem{Kind: adapters.KindToolCall,
				ID: "fc_" + u.Proposal.CallID, CallID: u.Proposal.CallID, Name: u.Proposal.Name, Arguments: u.Proposal.Arguments})
			continue // the application decided and ran its tools
		case session.UpResult:
			history[len(history)-1].Results = append(history[len(history)-1].Results, *u.Result)
			continue
		case session.UpDecision:
			continue
		case session.UpAssembled:
			// Each turn's request carries the conversation so far.
			req := sc.Request(rc.Stream, adapters.HistoryFull)
			req.Turns = history
			w, err := proto.Encode(req, "sim")
			if err != nil {
				t.Fatal(err)
			}
			u.Request = w
			history = append(history, adapters.Turn{})
		}
		if err := j.Record(u); err != nil {
			t.Fatalf("record %s: %v", u.Kind, err)
		}
	}
	parent := j.SessionID()
	if parent == scripted {
		t.Fatal("one session")
	}

	eng := &setupEngine{got: make(chan session.Setup, 1)}
	m := New(Options{Library: app.Library{DB: db}, Backend: &EngineBackend{Engine: eng}, Getenv: func(string) string { return "" }})
	m.Update(tea.WindowSizeMsg{Width: 140, Height: 40})
	for _, msg := range run(m.loadReplay(parent)) {
		m.Update(msg)
	}
	settle(m, press(m, "G"))
	press(m, "F")
	d, ok := m.top().(*forkDialog)
	if !ok {
		t.Fatalf("F on an application's last turn opened %T (status %q), want the fork dialog", m.top(), m.status.text)
	}
	order := -1
	for i, c := range d.choices {
		if strings.Contains(c.label, "get_order_line") {
			order = i
		}
	}
	if order < 0 || !strings.Contains(d.choices[order].original, `"paid_cents": 18000`) || len(d.choices) != 5 {
		t.Fatalf("choices %+v, want no edit, the body and the three results turn 3's request carries", d.choices)
	}
	edited := strings.Replace(d.choices[order].original, `"paid_cents": 18000`, `"paid_cents": 20000`, 1)
	_, cmd := m.Update(forkEditedMsg{gen: d.gen, idx: order, text: edited})
	var plan forkPlannedMsg
	for _, msg := range run(cmd) {
		if p, ok := msg.(forkPlannedMsg); ok {
			plan = p
		}
	}
	s := plan.setup
	if plan.err != nil || s.Fork == nil || s.Fork.Resend == nil || s.Fork.FromTurn != 3 || s.Parent != parent {
		t.Fatalf("planned %+v", plan)
	}
	if !strings.Contains(string(s.Fork.Resend.First.Body), `paid_cents\":20000`) {
		t.Errorf("the re-sent request does not carry the edited result: %s", s.Fork.Resend.First.Body)
	}
	if s.Simulate == nil || s.Simulate.Name != "refund" || s.Scenario == nil || s.Scenario.Name != "" {
		t.Errorf("the simulator plays %v, the fork stands in with %v", s.Simulate, s.Scenario)
	}
	if s.ForkResults[store.CallRef{Turn: 1, CallID: "call_1_0"}] == "" {
		t.Errorf("fork results %v, want the order's", s.ForkResults)
	}
}
