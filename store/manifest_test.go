package store

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/modelwire/modelwire/adapters"
)

// TestManifestStoredAndOld: a manifest is stored with its hashes (the
// prompt template's and each tool's too) and the meta's model, protocol,
// provider and version; a row stored before those fields reads with what
// its columns say, and a damaged manifest lists as empty.
func TestManifestStoredAndOld(t *testing.T) {
	db, err := Open(filepath.Join(t.TempDir(), "mw.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tools := []adapters.Tool{{Name: "get_order_line", Description: "d", Parameters: json.RawMessage(`{"type": "object"}`)}}
	tj, _ := json.Marshal(tools)
	w, err := db.CreateSession(SessionMeta{Title: "t", Protocol: "p", Provider: "sim", Model: "m", Version: "v",
		Manifest: Manifest{Tools: tj, ToolDefs: tools, Prompt: []adapters.Source{{Role: adapters.RoleSystem, Text: "rules"}}, Client: "c"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Finish(StatusDone); err != nil {
		t.Fatal(err)
	}
	s, err := db.GetSession(w.ID())
	if err != nil {
		t.Fatal(err)
	}
	m := s.Manifest
	if m.Model != "m" || m.Protocol != "p" || m.Provider != "sim" || m.Version != "v" || m.Client != "c" ||
		m.Hashes["prompt"] == "" || m.Hashes["tools"] == "" || m.ToolHashes["get_order_line"] == "" || len(m.Tools) == 0 {
		t.Errorf("stored manifest %+v", m)
	}
	list, err := db.ListSessions(Filter{})
	if err != nil || len(list) != 1 {
		t.Fatal(err)
	}
	if lm := list[0].Manifest; lm.Tools != nil || lm.ToolHashes["get_order_line"] != m.ToolHashes["get_order_line"] || lm.Hashes["prompt"] != m.Hashes["prompt"] {
		t.Errorf("listed manifest %+v", lm)
	}

	// A row as an older modelwire stored it, then one damaged.
	if _, err := db.sql.Exec(`UPDATE sessions SET manifest = '{"hashes":{"tools":"sha256:x"}}', model_reported = 'm-1' WHERE id = ?`, w.ID()); err != nil {
		t.Fatal(err)
	}
	if s, err = db.GetSession(w.ID()); err != nil {
		t.Fatal(err)
	}
	if m := s.Manifest; m.Model != "m" || m.ModelReported != "m-1" || m.Protocol != "p" || m.Version != "v" || m.Hashes["tools"] != "sha256:x" || m.ToolHashes != nil {
		t.Errorf("an older row's manifest %+v", m)
	}
	if _, err := db.sql.Exec(`UPDATE sessions SET manifest = 'not json' WHERE id = ?`, w.ID()); err != nil {
		t.Fatal(err)
	}
	if list, err := db.ListSessions(Filter{}); err != nil || len(list) != 1 || list[0].Manifest.Model != "m" {
		t.Errorf("a damaged manifest: %v %+v", err, list)
	}
}
