package app

import (
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/modelwire/modelwire/diff"
	"github.com/modelwire/modelwire/jsonl"
	"github.com/modelwire/modelwire/samples"
	"github.com/modelwire/modelwire/session"
	"github.com/modelwire/modelwire/store"
	"github.com/modelwire/modelwire/timeline"
)

// Library is the store as the workbench's sessions browser and replay
// see it.
type Library struct{ DB *store.DB }

// List lists the stored sessions, newest first.
func (l Library) List() ([]session.SessionInfo, error) { return l.DB.ListSessions(store.Filter{}) }

// Search names the sessions whose exchanges contain text (store.Filter's
// Content), newest first.
func (l Library) Search(text string) ([]string, error) {
	list, err := l.DB.ListSessions(store.Filter{Content: text})
	ids := make([]string, len(list))
	for i, s := range list {
		ids[i] = s.ID
	}
	return ids, err
}

// Delete deletes a session.
func (l Library) Delete(id string) error { return l.DB.DeleteSession(id) }

// Export writes the session as JSON Lines to modelwire-<id>.jsonl in dir
// and returns the path; an existing file is not overwritten.
func (l Library) Export(id, dir string) (string, error) {
	path := filepath.Join(dir, "modelwire-"+id+".jsonl")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return "", err
	}
	if err := jsonl.Export(l.DB, f, id); err != nil {
		f.Close()
		os.Remove(path)
		return "", err
	}
	return path, f.Close()
}

// Load opens a session's replayer, with its scenario when it is one of
// the embedded ones (a recording, or a scenario file moved since, is
// replayed without notes).
func (l Library) Load(id string) (*timeline.Replayer, error) {
	s, err := l.DB.GetSession(id)
	if err != nil {
		return nil, err
	}
	var sc *session.Scenario
	if s.Scenario != "" {
		sc, _ = samples.Lookup(s.ScenarioName())
	}
	return timeline.ReplayerOf(l.DB, s, sc)
}

// Diff compares two stored sessions by turn and call_id (package diff).
func (l Library) Diff(a, b string) (*diff.Result, error) {
	return diff.Compare(l.DB, a, b, diff.Options{})
}

// Fork plans a fork of session id from turn (PlanFork) for the
// workbench: body, when set, is the turn's whole request body edited;
// results replace earlier tool results by TURN:CALL_ID. It returns the
// setup the workbench runs.
func (l Library) Fork(id string, turn int, body []byte, results map[string]string) (session.Setup, error) {
	e := ForkEdits{Body: body, BodyName: "(edited in the workbench)"}
	for _, ref := range slices.Sorted(maps.Keys(results)) {
		e.Results = append(e.Results, ForkResult{Ref: ref, Content: results[ref]})
	}
	p, err := PlanFork(l.DB, id, turn, e)
	if err != nil {
		return session.Setup{}, err
	}
	return p.Setup()
}
