package app

import (
	"context"
	"maps"
	"path/filepath"
	"slices"
	"testing"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/session"
	"github.com/modelwire/modelwire/store"
)

// TestManifestHashes: a session's input hashes (prompt template, each
// tool, the output schema) change when, and only when, a prompt source,
// a tool schema or the output schema changes — a fault, another run of
// the same inputs, change none of them — and the manifest names the
// models, client and versions.
func TestManifestHashes(t *testing.T) {
	db, err := store.Open(filepath.Join(t.TempDir(), "mw.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	eng := &Engine{DB: db, Version: "test", Source: store.SourceRun, Getenv: func(string) string { return "" }}
	run := func(t *testing.T, edit func(sc *session.Scenario), faults ...string) store.Manifest {
		t.Helper()
		sc, err := Catalog{}.Lookup("refund")
		if err != nil {
			t.Fatal(err)
		}
		sc.Sources, sc.Tools = slices.Clone(sc.Sources), slices.Clone(sc.Tools)
		if edit != nil {
			edit(sc)
		}
		res, err := eng.Run(context.Background(), session.Setup{Scenario: sc, Protocol: adapters.OpenAIResponses, Provider: adapters.ProviderSim,
			Stream: true, History: adapters.HistoryFull, Policy: session.PolicyAuto, Faults: faults}, session.Hooks{})
		if res == nil || res.SessionID == "" {
			t.Fatalf("run: %v", err)
		}
		s, err := db.GetSession(res.SessionID)
		if err != nil {
			t.Fatal(err)
		}
		return s.Manifest
	}
	base := run(t, nil)
	in := base.InputHashes()
	for _, k := range []string{"prompt", "tools", "output_schema", "tool/get_order_line", "tool/get_refund_ledger", "tool/get_refund_policy"} {
		if in[k] == "" {
			t.Errorf("no %s hash in %v", k, in)
		}
	}
	if base.Model != "refund-model" || base.ModelReported == "" || base.Protocol != adapters.OpenAIResponses || base.Provider != adapters.ProviderSim ||
		base.Client != "modelwire/test" || base.Version != "test" || base.AdapterVersion != adapters.Version {
		t.Errorf("manifest %+v", base)
	}

	for _, c := range []struct {
		name    string
		edit    func(sc *session.Scenario)
		faults  []string
		changed []string // the input hashes that change
	}{
		{"the same inputs again", nil, nil, nil},
		{"another fault", nil, []string{"duplicate-events"}, nil},
		{"a source edited", func(sc *session.Scenario) { sc.Sources[0].Text += " Be brief." }, nil, []string{"prompt"}},
		{"a tool's schema edited", func(sc *session.Scenario) {
			sc.Tools[1].Parameters = []byte(`{"type":"object","properties":{"order_id":{"type":"string"}},"required":["order_id"],"additionalProperties":false}`)
		}, nil, []string{"tools", "tool/" + "TOOL1"}},
		{"the output schema changed", func(sc *session.Scenario) {
			sc.Output.Schema = append([]byte(`{"description":"edited",`), sc.Output.Schema[1:]...)
		}, nil, []string{"output_schema"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := run(t, c.edit, c.faults...).InputHashes()
			var changed []string
			for _, k := range slices.Sorted(maps.Keys(in)) {
				if got[k] != in[k] {
					changed = append(changed, k)
				}
			}
			want := slices.Clone(c.changed)
			for i, k := range want {
				if k == "tool/TOOL1" {
					sc, _ := Catalog{}.Lookup("refund")
					want[i] = "tool/" + sc.Tools[1].Name
				}
			}
			slices.Sort(want)
			if !slices.Equal(changed, want) {
				t.Errorf("changed hashes %v, want %v", changed, want)
			}
		})
	}
}
