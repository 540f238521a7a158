package app

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/session"
	"github.com/modelwire/modelwire/store"
	"github.com/modelwire/modelwire/transport"
)

// TestMeta: one rule names every recorded session — the variant in the
// title, the scenario's model unless one is asked for, no empty fault.
func TestMeta(t *testing.T) {
	sc, err := Catalog{}.Lookup("refund/wrong-cap")
	if err != nil {
		t.Fatal(err)
	}
	s := session.Setup{Scenario: sc, Protocol: adapters.OpenAIResponses, Provider: adapters.ProviderSim, Stream: true,
		History: adapters.HistoryFull, Faults: []string{""}, Params: map[string]any{"approve": "auto"}}
	m := Meta(s, transport.Provider{BaseURL: "http://127.0.0.1:9"}, store.SourceRun, "test")
	if m.Title != sc.Title+" [wrong-cap]" || m.Model != sc.Model || m.Variant != "wrong-cap" || m.BaseURL != "http://127.0.0.1:9" || m.Source != "run" {
		t.Errorf("meta %+v", m)
	}
	var params map[string]any
	if err := json.Unmarshal(m.Manifest.Parameters, &params); err != nil {
		t.Fatal(err)
	}
	if params["approve"] != "auto" || params["stream"] != true || len(params["faults"].([]any)) != 0 {
		t.Errorf("parameters %s", m.Manifest.Parameters)
	}
	s.Model = "other-model"
	if m := Meta(s, transport.Provider{}, store.SourceTUI, "test"); m.Model != "other-model" {
		t.Errorf("model %q, asked for other-model", m.Model)
	}
}

// TestEngineRecordsAndReplays: a session run on the simulator is stored
// through the journal and opens in the library's replayer at its end
// state.
func TestEngineRecordsAndReplays(t *testing.T) {
	db, err := store.Open(filepath.Join(t.TempDir(), "mw.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	sc, err := Catalog{}.Lookup("refund")
	if err != nil {
		t.Fatal(err)
	}
	eng := &Engine{DB: db, Version: "test", Source: store.SourceRun, Getenv: func(string) string { return "" }}
	res, err := eng.Run(context.Background(), session.Setup{Scenario: sc, Protocol: adapters.AnthropicMessages,
		Provider: adapters.ProviderSim, Stream: true, History: adapters.HistoryFull, Policy: session.PolicyAuto}, session.Hooks{})
	if err != nil || !res.Passed() {
		t.Fatalf("run: %v %+v", err, res)
	}
	r, err := Library{DB: db}.Load(res.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Seek(r.Len()); err != nil {
		t.Fatal(err)
	}
	st := r.State()
	if st.Status != store.StatusDone || len(st.Turns) != r.Turns() || r.Turns() != 3 || string(st.Output) != string(res.Output) {
		t.Fatalf("replayed: status %s, %d turns (%d counted), output %s; the run: %s", st.Status, len(st.Turns), r.Turns(), st.Output, res.Output)
	}
	if _, err := eng.Run(context.Background(), session.Setup{Scenario: sc, Protocol: adapters.OpenAIChat, Provider: "nope"}, session.Hooks{}); err == nil {
		t.Fatal("an unknown provider ran")
	} else if _, ok := err.(*SetupError); !ok {
		t.Fatalf("an unknown provider is a setup error, got %T %v", err, err)
	}
}
