package app

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/registry"
	"github.com/modelwire/modelwire/check"
	"github.com/modelwire/modelwire/session"
	"github.com/modelwire/modelwire/store"
)

// recordRefund runs the refund scenario once per protocol on the
// simulator into db and returns the sessions' ids, in registry order.
func recordRefund(t *testing.T, db *store.DB) []string {
	t.Helper()
	sc, err := Catalog{}.Lookup("refund")
	if err != nil {
		t.Fatal(err)
	}
	eng := &Engine{DB: db, Version: "test", Source: store.SourceRun, Getenv: func(string) string { return "" }}
	var ids []string
	for _, p := range registry.Protocols {
		res, err := eng.Run(context.Background(), session.Setup{Scenario: sc, Protocol: p, Provider: adapters.ProviderSim,
			Stream: true, History: adapters.HistoryFull, Policy: session.PolicyAuto}, session.Hooks{})
		if err != nil || !res.Passed() {
			t.Fatalf("%s: %v %+v", p, err, res)
		}
		ids = append(ids, res.SessionID)
	}
	return ids
}

func openTemp(t *testing.T) *store.DB {
	t.Helper()
	db, err := store.Open(filepath.Join(t.TempDir(), "mw.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestCheckMatrix: the refund sessions of all six protocols, each re-sent
// to every other protocol and to refund/wrong-cap. The protocol switches
// regress nothing; the variant regresses the domain layer, and only it.
func TestCheckMatrix(t *testing.T) {
	db := openTemp(t)
	ids := recordRefund(t, db)
	eng := &Engine{DB: db, Version: "test", Source: store.SourceRun, Getenv: func(string) string { return "" }}
	var targets []Target
	for _, spec := range append(slices.Clone(registry.Protocols), "sim:refund/wrong-cap") {
		tg, err := ParseTarget(spec, "")
		if err != nil {
			t.Fatal(err)
		}
		targets = append(targets, tg)
	}
	cells, err := eng.CheckAll(context.Background(), ids, targets, nil)
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv("CHECK_SHOW") != "" {
		check.WriteText(os.Stdout, cells)
		check.WriteJSON(os.Stdout, cells[:1])
	}
	if len(cells) != len(ids)*len(targets) {
		t.Fatalf("%d cells, want %d", len(cells), len(ids)*len(targets))
	}
	for _, c := range cells {
		variant := c.Target == "sim:refund/wrong-cap"
		switch {
		case c.Status == "error":
			t.Errorf("%s → %s: %s", c.Session, c.Target, c.Error)
		case variant && (!slices.Equal(c.Regressions, []string{"layer:domain"}) || c.FailedLayer != "domain"):
			t.Errorf("%s → %s: regressions %v, failed %q; want the domain layer", c.Session, c.Target, c.Regressions, c.FailedLayer)
		case !variant && (c.Regressed || c.Status != "pass"):
			t.Errorf("%s → %s: %s %v", c.Session, c.Target, c.Status, c.Regressions)
		}
	}
	if s := check.Summarize(cells); s.Exit != 1 || s.Regressed != len(ids) {
		t.Errorf("summary %+v: want the %d variant cells regressed, exit 1", s, len(ids))
	}
}
