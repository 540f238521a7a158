package ui

import (
	"encoding/json"

	"github.com/modelwire/modelwire/session"
	"github.com/modelwire/modelwire/store"
)

// newStoreJournal records a workbench session in the store.
func newStoreJournal(db *store.DB, sc *session.Scenario, rc RunConfig, prov session.Provider, version string) *session.StoreJournal {
	params, _ := json.Marshal(map[string]any{"stream": rc.Stream, "history": rc.History, "faults": rc.Faults,
		"step_mode": rc.StepMode, "edited_sources": keys(rc.Edits)})
	tools, _ := json.Marshal(sc.Request(rc.Stream, rc.History).Tools)
	title := sc.Title
	if title == "" {
		title = sc.FullName()
	}
	model := sc.Model
	if model == "" {
		model = "sim-model"
	}
	return session.NewStoreJournal(db, store.SessionMeta{
		Title: title, Scenario: sc.Name, Variant: sc.Variant, Protocol: rc.Protocol, Provider: rc.Provider,
		Model: model, BaseURL: prov.BaseURL, Source: "tui", Version: version,
		Manifest: store.Manifest{Parameters: params, Tools: tools, OutputSchema: sc.Output.Schema}, ParentID: rc.Parent,
	}, rc.Stream)
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
