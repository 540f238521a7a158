package cli

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/registry"
	"github.com/modelwire/modelwire/store"
)

// importTranscript stores a Claude Code transcript (`--output-format
// stream-json` or `json`) as one session: one attempt whose raw events are
// the transcript's lines, decoded by the claude-code adapter, so the
// workbench can open it like any recorded session. The CLI keeps no time
// per line: every event is placed at the start.
func importTranscript(db *store.DB, r io.Reader, path string) (store.ImportResult, error) {
	p, err := registry.Lookup(adapters.ClaudeCode)
	if err != nil {
		return store.ImportResult{}, err
	}
	w, err := db.CreateSession(store.SessionMeta{Title: "claude-code transcript " + filepath.Base(path), Scenario: "claude-code",
		Protocol: adapters.ClaudeCode, Provider: "claude-code", Source: "claude-code", Version: Version})
	if err != nil {
		return store.ImportResult{}, err
	}
	rec, err := w.StartAttempt(1, store.AttemptMeta{Method: "CLI", URL: "claude -p (" + filepath.Base(path) + ")", Stream: true})
	if err != nil {
		return store.ImportResult{}, err
	}
	if err := rec.Response(200, nil); err != nil {
		return store.ImportResult{}, err
	}
	st := adapters.NewStream(p)
	if err := adapters.ReadStream(p, st, r, func(step adapters.Step) error { return rec.AppendAt(0, step) }); err != nil {
		return store.ImportResult{}, err
	}
	if err := rec.Finish(nil); err != nil {
		return store.ImportResult{}, err
	}
	status := store.StatusDone
	if sum := st.Summary(); sum.Terminal != adapters.StatusCompleted {
		status = store.StatusFailed
	}
	if err := w.Finish(status); err != nil {
		return store.ImportResult{}, fmt.Errorf("finishing the session: %w", err)
	}
	return store.ImportResult{Sessions: []string{w.ID()}}, nil
}
