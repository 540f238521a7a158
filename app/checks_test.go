package app

import (
	"context"
	"slices"
	"testing"

	"github.com/modelwire/modelwire/check"
	"github.com/modelwire/modelwire/store"
)

// TestLibraryChecks: what check stored reads back as the workbench's
// matrix — a cell per recording and target, the verdicts and regressions
// check printed, the child under its recording; a second check of the
// same pair replaces the first, and plain forks and probes are no cells.
func TestLibraryChecks(t *testing.T) {
	db := openTemp(t)
	ids := recordRefund(t, db)[:2]
	eng := &Engine{DB: db, Version: "test", Source: store.SourceRun, Getenv: func(string) string { return "" }}
	var targets []Target
	for _, spec := range []string{"openai-chat", "sim:refund/wrong-cap"} {
		tg, err := ParseTarget(spec, "")
		if err != nil {
			t.Fatal(err)
		}
		targets = append(targets, tg)
	}
	run := func(recs []string, ts []Target) {
		t.Helper()
		if _, err := eng.CheckAll(context.Background(), recs, ts, nil); err != nil {
			t.Fatal(err)
		}
	}
	run(ids, targets)
	run(ids[:1], targets[1:]) // again: the newer child replaces the older
	if _, err := eng.RunSuite(context.Background(), check.Probes[:1], []Target{{Spec: "sim", Provider: "sim"}}, nil); err != nil {
		t.Fatal(err)
	}
	cells, err := Library{DB: db}.Checks()
	if err != nil {
		t.Fatal(err)
	}
	if len(cells) != 4 {
		t.Fatalf("%d cells, want 4 (2 recordings × 2 targets): %+v", len(cells), cells)
	}
	list, err := db.ListSessions(store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	parent := map[string]string{}
	for _, s := range list {
		parent[s.ID] = s.ParentID
	}
	newest := ""
	for _, s := range list { // newest first: the first wrong-cap child of ids[0]
		if s.ParentID == ids[0] && newest == "" {
			newest = s.ID
		}
	}
	for i, c := range cells {
		wantRec, wantTarget := ids[i/2], targets[i%2].Spec
		if c.Recording != wantRec || c.Target != wantTarget {
			t.Errorf("cell %d is %s → %s, want %s → %s", i, c.Recording, c.Target, wantRec, wantTarget)
		}
		if parent[c.Child] != c.Recording {
			t.Errorf("%s → %s: child %s is not under its recording (parent %q)", c.Recording, c.Target, c.Child, parent[c.Child])
		}
		if c.RecordingVerdict != "pass" || c.RecordingProtocol == "" {
			t.Errorf("%s: recording %q on %q, want a pass", c.Recording, c.RecordingVerdict, c.RecordingProtocol)
		}
		variant := c.Target == "sim:refund/wrong-cap"
		switch {
		case variant && (c.Status != "fail" || c.FailedLayer != "domain" || !slices.Equal(c.Regressions, []string{"layer:domain"})):
			t.Errorf("%s → %s: %s %s %v, want fail domain [layer:domain]", c.Recording, c.Target, c.Status, c.FailedLayer, c.Regressions)
		case !variant && (c.Status != "pass" || len(c.Regressions) != 0):
			t.Errorf("%s → %s: %s %v, want a pass", c.Recording, c.Target, c.Status, c.Regressions)
		}
	}
	if cells[1].Child != newest {
		t.Errorf("%s → wrong-cap shows child %s, want the newer %s", ids[0], cells[1].Child, newest)
	}
}
