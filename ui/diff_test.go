package ui

import (
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/modelwire/modelwire/app"
	"github.com/modelwire/modelwire/session"
	"github.com/modelwire/modelwire/store"
	"github.com/modelwire/modelwire/timeline"
	"github.com/modelwire/modelwire/transport"
)

// The sessions list marks a fork with ↳; D on it opens the diff against
// its parent: the changed tool result, a's value beside b's. Marking two
// sessions with m compares those two, the first marked as a.
func TestDiffViewFromTheSessionsList(t *testing.T) {
	db, parent, ups, sc := recordFixture(t)
	fork := recordEditedOrder(t, db, sc, ups, parent)

	m := New(Options{Library: app.Library{DB: db}})
	m.Update(tea.WindowSizeMsg{Width: 140, Height: 40})
	for _, msg := range run(press(m, "s")) {
		m.Update(msg)
	}
	contains(t, m.View(), "↳ "+fork)
	list := m.top().(*sessionsDialog)
	for i, s := range list.visible() {
		if s.ID == fork {
			list.sel = i
		}
	}
	openDiff := func() *diffDialog {
		t.Helper()
		isDiff := func(msg tea.Msg) bool { _, ok := msg.(diffMsg); return ok }
		for _, msg := range runUntil(press(m, "D"), isDiff, 30*time.Second) {
			if isDiff(msg) {
				m.Update(msg)
			}
		}
		d, ok := m.top().(*diffDialog)
		if !ok {
			t.Fatalf("D opened %T, want the diff", m.top())
		}
		return d
	}
	d := openDiff()
	if d.res.A.ID != parent || d.res.B.ID != fork {
		t.Errorf("diff of %s → %s, want the parent → the fork", d.res.A.ID, d.res.B.ID)
	}
	contains(t, m.View(), "Diff "+parent+" → "+fork, "tool_result", "paid_cents")
	side := false
	for _, l := range strings.Split(m.View(), "\n") {
		side = side || strings.Contains(l, "18000") && strings.Contains(l, "│ 20000")
	}
	if !side {
		t.Errorf("a's 18000 and b's 20000 are not side by side:\n%s", m.View())
	}
	press(m, "esc")
	if _, ok := m.top().(*sessionsDialog); !ok {
		t.Fatalf("esc left %T, want the sessions list back", m.top())
	}
	// Mark the fork, then the parent: a is the fork.
	press(m, "m")
	for i, s := range list.visible() {
		if s.ID == parent {
			list.sel = i
		}
	}
	press(m, "m")
	d = openDiff()
	if d.res.A.ID != fork || d.res.B.ID != parent {
		t.Errorf("marked diff of %s → %s, want the fork → the parent", d.res.A.ID, d.res.B.ID)
	}
}

// recordEditedOrder records the fixture's updates again as a new session
// made from parent ("" for none), with the order result's paid_cents
// 18000 edited to 20000, and returns its id.
func recordEditedOrder(t *testing.T, db *store.DB, sc *session.Scenario, ups []session.Update, parent string) string {
	t.Helper()
	rc := DefaultRunConfig()
	setup := rc.setup(sc)
	setup.Parent = parent
	j := timeline.NewStoreJournal(db, app.Meta(setup, transport.Provider{Name: "sim", BaseURL: "http://127.0.0.1:1"}, store.SourceTUI, "test"), rc.Stream)
	for _, u := range ups {
		if u.Kind == session.UpResult && u.Result.Name == "get_order_line" {
			r := *u.Result
			r.Content = strings.Replace(r.Content, `"paid_cents":18000`, `"paid_cents":20000`, 1)
			u.Result = &r
		}
		if err := j.Record(u); err != nil {
			t.Fatal(err)
		}
	}
	return j.SessionID()
}
