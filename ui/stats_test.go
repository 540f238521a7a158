package ui

import (
	"path/filepath"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/stats"
	"github.com/modelwire/modelwire/store"
)

// statsStore is a store of six sessions: refund-model answering its first
// text at 100, 200, 300 and 400 ms (the last failing schema), 1,000
// tokens in and 500 out each; gpt-4.1-mini at 1,000 and 2,000 ms, 2,000 in
// and 100 out, over another protocol.
func statsStore(t *testing.T) stats.Source {
	t.Helper()
	db, err := store.Open(filepath.Join(t.TempDir(), "stats.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	add := func(model, protocol string, firstText time.Duration, in, out int64, failed bool) {
		w, err := db.CreateSession(store.SessionMeta{Scenario: "refund", Protocol: protocol, Provider: "sim", Model: model})
		must(err)
		rec, err := w.StartAttempt(1, store.AttemptMeta{Method: "POST"})
		must(err)
		must(rec.MarkAt(store.MarkSent, time.Millisecond))
		must(rec.AppendAt(firstText, adapters.Step{Index: 0, Events: []adapters.Event{
			{Type: adapters.EvResponseStarted, ResponseID: "r", Model: model}, {Type: adapters.EvTextDelta, ItemID: "m", Delta: "ok"}}}))
		must(rec.AppendAt(2*firstText, adapters.Step{Index: 1, Events: []adapters.Event{
			{Type: adapters.EvUsage, Usage: &adapters.Usage{InputTokens: adapters.Int(in), OutputTokens: adapters.Int(out)}},
			{Type: adapters.EvTerminal, Status: adapters.StatusCompleted}}}))
		must(rec.FinishAt(nil, 2*firstText))
		status, verdict := store.StatusDone, store.VerdictPass
		if failed {
			status, verdict = store.StatusFailed, store.VerdictFail
		}
		must(w.RecordValidation(1, []store.Validation{{Layer: "schema", Status: verdict}}))
		must(w.Finish(status))
	}
	for i := 1; i <= 4; i++ {
		add("refund-model", adapters.OpenAIResponses, time.Duration(i)*100*time.Millisecond, 1000, 500, i == 4)
	}
	add("gpt-4.1-mini", adapters.OpenAIChat, time.Second, 2000, 100, false)
	add("gpt-4.1-mini", adapters.OpenAIChat, 2*time.Second, 2000, 100, false)
	return stats.Source{DB: db}
}

func isStats(msg tea.Msg) bool { _, ok := msg.(statsMsg); return ok }

// openStats opens the sessions list, then the stats view with %, at 80×24.
func openStats(t *testing.T, src StatsSource) *Model {
	t.Helper()
	m := New(Options{Library: &matrixLib{}, Stats: src})
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	deliver(m, press(m, "s"), func(msg tea.Msg) bool { _, ok := msg.(sessionsMsg); return ok })
	deliver(m, press(m, "%"), isStats)
	if _, ok := m.top().(*statsDialog); !ok {
		t.Fatalf("%% opened %T, want the stats view", m.top())
	}
	return m
}

// The sessions list's % opens the stats view by model: per group the
// sessions, failure rate, p50/p95 of first text, cost and cost per
// success (as worked out from statsStore), the failing layer, the
// first-text histogram on one scale and a cost bar per group — all within
// 80×24. → groups by the next dimension, read again in a command.
func TestStatsView(t *testing.T) {
	m := openStats(t, statsStore(t))
	v := m.View()
	fits(t, v)
	// refund-model: 1 of 4 failed; p50 rank 2 of 100…400 ms, p95 rank 4;
	// cost 4 × (1,000 × $1 + 500 × $4)/M = 0.012, over 3 successes.
	// gpt-4.1-mini: 2 × (2,000 × $0.40 + 100 × $1.60)/M = 0.00192.
	contains(t, v, "Stats by model · 6 sessions · 2 groups", "MODEL", "FAIL%", "TEXT p50/p95 ms",
		"refund-model", "25.0%", "200/400", "0.0120", "0.004000", "failed at: schema 1",
		"gpt-4.1-mini", "0.0%", "1000/2000", "0.0019", "0.000960",
		"Time to first text", "▲ 200", "2000 ms", "Cost per group, USD", "█")
	d := m.top().(*statsDialog)
	if ch := d.firstTextChart(60, d.pointIndex("first_text")); len(ch) < 5 {
		t.Errorf("first-text chart %q: want a histogram and a p50 mark per group", ch)
	}

	deliver(m, press(m, "right"), isStats)
	v = m.View()
	fits(t, v)
	contains(t, v, "Stats by protocol · 6 sessions · 2 groups", "PROTOCOL", adapters.OpenAIResponses, adapters.OpenAIChat)

	press(m, "esc")
	if _, ok := m.top().(*sessionsDialog); !ok {
		t.Errorf("esc left %T on top, want the sessions list", m.top())
	}
}

// The help of the sessions list names %; an answer older than the last
// reading is dropped; with no store the view is not offered.
func TestStatsViewKeysAndStale(t *testing.T) {
	m := openStats(t, statsStore(t))
	press(m, "esc")
	found := false
	for _, b := range m.top().Bindings(&m.km) {
		if b.Help().Key == "%" {
			found = true
		}
	}
	if !found {
		t.Error("the sessions list's help does not name %")
	}
	m.Update(statsMsg{gen: m.statsGen - 1, by: "provider", report: &stats.Report{}})
	if _, ok := m.top().(*sessionsDialog); !ok {
		t.Errorf("a stale reading opened %T", m.top())
	}

	bare := New(Options{})
	bare.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	bare.loadStats("model")
	if bare.top() != nil {
		t.Errorf("with no store the stats view opened %T", bare.top())
	}
}

// An empty store says how to fill it.
func TestStatsViewEmpty(t *testing.T) {
	m := openStats(t, emptyStats{})
	contains(t, m.View(), "Stats by model · 0 sessions", "no sessions stored yet")
}

type emptyStats struct{}

func (emptyStats) Stats(by []string) (*stats.Report, error) { return &stats.Report{By: by}, nil }
