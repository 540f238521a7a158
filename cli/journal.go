package cli

import (
	"encoding/json"

	"github.com/modelwire/modelwire/session"
	"github.com/modelwire/modelwire/store"
)

// openJournal opens the session store for a run and describes the session
// about to be recorded. A database that is not ours, or corrupt, is bad
// input (exit 2) and is left untouched.
func openJournal(app *App, sc *session.Scenario, f runFlags, prov session.Provider) (session.Journal, *store.DB, error) {
	db, err := openForWrite(app)
	if err != nil {
		return nil, nil, err
	}
	p := map[string]any{"stream": !f.noStream, "history": f.history, "approve": f.approve,
		"faults": f.fault, "timeouts": f.timeouts}
	parent := ""
	if f.fork != nil {
		p["fork"], parent = f.fork.record(), f.fork.parent
	}
	params, _ := json.Marshal(p)
	tools, _ := json.Marshal(sc.Request(true, "").Tools)
	model := f.model
	if model == "" {
		model = sc.Model
	}
	title := sc.Title
	if sc.Variant != "" {
		title += " [" + sc.Variant + "]"
	}
	j := session.NewStoreJournal(db, store.SessionMeta{
		Title: title, Scenario: sc.Name, Variant: sc.Variant, Protocol: f.protocol, Provider: f.provider,
		Model: model, BaseURL: prov.BaseURL, Source: "run", Version: Version,
		Manifest: store.Manifest{Parameters: params, Tools: tools, OutputSchema: sc.Output.Schema}, ParentID: parent,
	}, !f.noStream)
	return j, db, nil
}
