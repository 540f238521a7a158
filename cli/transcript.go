package cli

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/registry"
	"github.com/modelwire/modelwire/session"
	"github.com/modelwire/modelwire/store"
	"github.com/modelwire/modelwire/timeline"
)

// importTranscript stores a Claude Code transcript (`--output-format
// stream-json` or `json`) as one session, through the journal every
// session is recorded by: one attempt whose raw events are the
// transcript's lines, decoded by the claude-code adapter, so the workbench
// can open it like any recorded session. The CLI keeps no time per line:
// every event is placed at the start. A transcript that cannot be read
// leaves its session stored as interrupted.
func importTranscript(db *store.DB, r io.Reader, path string) (store.ImportResult, error) {
	p, err := registry.Lookup(adapters.ClaudeCode)
	if err != nil {
		return store.ImportResult{}, err
	}
	j := timeline.NewStoreJournal(db, store.SessionMeta{Title: "claude-code transcript " + filepath.Base(path), Scenario: "claude-code",
		Protocol: adapters.ClaudeCode, Provider: "claude-code", Source: store.SourceClaudeCode, Version: Version,
		Manifest: store.Manifest{Client: "claude-code", AdapterVersion: adapters.Version}}, true)
	id, err := j.Start()
	if err != nil {
		return store.ImportResult{}, err
	}
	fail := func(err error) (store.ImportResult, error) {
		_ = j.Interrupt()
		return store.ImportResult{}, err
	}
	u := session.Update{Kind: session.UpAttempt, Turn: 1, Attempt: 1, URL: "claude -p (" + filepath.Base(path) + ")", HTTPStatus: 200}
	if err := j.RecordAttempt(u, store.AttemptMeta{Method: "CLI", URL: u.URL, Stream: true}); err != nil {
		return fail(err)
	}
	st := adapters.NewStream(p)
	err = adapters.ReadStream(p, st, r, func(step adapters.Step) error {
		return j.Record(session.Update{Kind: session.UpStep, Turn: 1, Attempt: 1, Step: &step})
	})
	if err != nil {
		return fail(err)
	}
	sum := st.Summary()
	if err := j.Record(session.Update{Kind: session.UpResponse, Turn: 1, Attempt: 1, Summary: &sum}); err != nil {
		return fail(err)
	}
	status := store.StatusDone
	if sum.Terminal != adapters.StatusCompleted {
		status = store.StatusFailed
	}
	if err := j.Record(session.Update{Kind: session.UpFinished, Status: status}); err != nil {
		return store.ImportResult{}, fmt.Errorf("finishing the session: %w", err)
	}
	return store.ImportResult{Sessions: []string{id}}, nil
}
