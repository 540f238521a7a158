package ui

import (
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/session"
	"github.com/modelwire/modelwire/store"
)

// storeJournal records a session's updates in the store, so a workbench
// session can be listed and replayed later. It implements session.Journal
// (and names the session through SessionID).
//
// The engine calls it on the session goroutine, before the UI sees the
// update; every store call here only queues work for the store's writer
// (it commits on terminal events and session-level entries), so recording
// costs the stream no disk wait per event.
type storeJournal struct {
	db   *store.DB
	meta store.SessionMeta

	w        *store.SessionWriter
	requests map[int]*adapters.HTTPRequest // by turn
	rec      *store.Recorder
	recKey   [2]int // turn, attempt of rec
	stream   bool
}

func newStoreJournal(db *store.DB, sc *session.Scenario, rc RunConfig, prov session.Provider, version string) *storeJournal {
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
	return &storeJournal{db: db, stream: rc.Stream, requests: map[int]*adapters.HTTPRequest{}, meta: store.SessionMeta{
		Title: title, Scenario: sc.Name, Variant: sc.Variant, Protocol: rc.Protocol, Provider: rc.Provider,
		Model: model, BaseURL: prov.BaseURL, Source: "tui", Version: version,
		Manifest: store.Manifest{Parameters: params, Tools: tools, OutputSchema: sc.Output.Schema},
	}}
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// SessionID is the store's id of the session (after UpStarted).
func (j *storeJournal) SessionID() string {
	if j.w == nil {
		return ""
	}
	return j.w.ID()
}

// Record implements session.Journal.
func (j *storeJournal) Record(u session.Update) error {
	if u.Kind != session.UpStarted && j.w == nil {
		return errors.New("the journal has no session")
	}
	switch u.Kind {
	case session.UpStarted:
		w, err := j.db.CreateSession(j.meta)
		if err != nil {
			return err
		}
		j.w = w
	case session.UpAssembled:
		j.requests[u.Turn] = u.Request
	case session.UpAttempt:
		return j.attempt(u)
	case session.UpStep:
		if j.rec == nil || j.recKey != [2]int{u.Turn, u.Attempt} {
			return nil // a step without its attempt cannot happen; nothing to attach it to
		}
		return j.rec.AppendAt(ms(u.OffsetMS), *u.Step)
	case session.UpResponse:
		return j.finishAttempt(nil)
	case session.UpDecision:
		d := store.Decision{Turn: u.Turn, CallID: u.Proposal.CallID, Name: u.Proposal.Name, Decision: u.Decision.Kind,
			Arguments: u.Proposal.Arguments, Reason: u.Decision.Reason, At: u.At}
		if u.Decision.Kind == session.Edited {
			d.Edited = u.Decision.Arguments
		}
		return j.w.RecordDecision(d)
	case session.UpResult:
		r := u.Result
		return j.w.RecordToolResult(store.ToolResult{Turn: u.Turn, CallID: r.CallID, Name: r.Name, Content: r.Content, IsError: r.IsError, At: u.At})
	case session.UpValidated:
		vs := make([]store.Validation, len(u.Layers))
		for i, l := range u.Layers {
			vs[i] = store.Validation{Layer: l.Layer, Status: l.Status, Detail: l.Detail}
		}
		if err := j.finishAttempt(nil); err != nil {
			return err
		}
		return j.w.RecordValidation(0, vs)
	case session.UpFinished:
		if err := j.finishAttempt(nil); err != nil {
			return err
		}
		status := u.Status
		if status != store.StatusDone {
			status = store.StatusFailed
		}
		return j.w.Finish(status)
	}
	return nil
}

// attempt records an HTTP attempt: a new one when the (turn, attempt)
// pair is new; the engine's "retrying in …" notice about an attempt
// already recorded changes nothing.
func (j *storeJournal) attempt(u session.Update) error {
	if j.rec != nil && j.recKey == [2]int{u.Turn, u.Attempt} {
		return nil
	}
	if err := j.finishAttempt(nil); err != nil {
		return err
	}
	m := store.AttemptMeta{URL: u.URL, Stream: j.stream}
	if req := j.requests[u.Turn]; req != nil {
		m.Method, m.Body = req.Method, req.Body
		m.Header = http.Header{}
		for k, v := range req.Headers {
			m.Header.Set(k, v)
		}
	}
	if u.HTTPStatus == 0 && u.Header != nil {
		m.Header = u.Header // a transport failure carries the request's headers (the store redacts them)
	}
	rec, err := j.w.StartAttempt(u.Turn, m)
	if err != nil {
		return err
	}
	j.rec, j.recKey = rec, [2]int{u.Turn, u.Attempt}
	_ = rec.MarkAt(store.MarkSent, 0)
	if u.HTTPStatus != 0 {
		if u.Timings != nil && u.Timings.FirstByte > 0 {
			_ = rec.MarkAt(store.MarkFirstByte, ms(u.Timings.FirstByte))
		}
		if err := rec.Response(u.HTTPStatus, u.Header); err != nil {
			return err
		}
	}
	if u.Err != "" && u.HTTPStatus == 0 {
		return j.finishAttempt(errors.New(u.Err))
	}
	return nil
}

func (j *storeJournal) finishAttempt(err error) error {
	if j.rec == nil {
		return nil
	}
	rec := j.rec
	j.rec = nil
	return rec.Finish(err)
}

// ms converts the engine's float milliseconds to a duration.
func ms(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
