package session

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/store"
)

// NewStoreJournal records into db a session described by meta; stream
// says whether its attempts stream.
func NewStoreJournal(db *store.DB, meta store.SessionMeta, stream bool) *StoreJournal {
	return &StoreJournal{db: db, meta: meta, stream: stream, requests: map[int]*adapters.HTTPRequest{}}
}

// StoreJournal records a session's updates in the store, so any session
// (run, workbench) can be listed and replayed later. It implements Journal
// and names the session through SessionID.
//
// The engine calls it on the session goroutine, before the UI sees the
// update; every store call here only queues work for the store's writer
// (it commits on terminal events and session-level entries), so recording
// costs the stream no disk wait per event.
type StoreJournal struct {
	db   *store.DB
	meta store.SessionMeta

	w        *store.SessionWriter
	requests map[int]*adapters.HTTPRequest // by turn
	rec      *store.Recorder
	recKey   [2]int // turn, attempt of rec
	stream   bool
	// inherit copies a fork's parent turns in when the session is created.
	inherit func(w *store.SessionWriter) error
}

// Inherit makes the session a fork's: when it is created, the turns of
// session parent before turn `before` are copied into it, with the given
// tool results' contents replaced (by turn and call_id).
func (j *StoreJournal) Inherit(parent string, before int, results map[store.CallRef]string) {
	j.inherit = func(w *store.SessionWriter) error { return j.db.CopyTurns(w, parent, before, results) }
}

// SessionID is the store's id of the session (after UpStarted).
func (j *StoreJournal) SessionID() string {
	if j.w == nil {
		return ""
	}
	return j.w.ID()
}

// Interrupt marks the session interrupted when it was stopped before its
// end (the run's context cancelled); a finished session, or one never
// started, is left as it is.
func (j *StoreJournal) Interrupt() error {
	if j.w == nil {
		return nil
	}
	if err := j.finishAttempt(context.Canceled); err != nil {
		return err
	}
	return j.w.Interrupt()
}

// Record implements Journal.
func (j *StoreJournal) Record(u Update) error {
	if u.Kind != UpStarted && j.w == nil {
		return errors.New("the journal has no session")
	}
	switch u.Kind {
	case UpStarted:
		w, err := j.db.CreateSession(j.meta)
		if err != nil {
			return err
		}
		j.w = w
		if j.inherit != nil {
			return j.inherit(w)
		}
	case UpAssembled:
		j.requests[u.Turn] = u.Request
	case UpAttempt:
		return j.attempt(u)
	case UpStep:
		if j.rec == nil || j.recKey != [2]int{u.Turn, u.Attempt} {
			return nil // a step without its attempt cannot happen; nothing to attach it to
		}
		return j.rec.AppendAt(ms(u.OffsetMS), *u.Step)
	case UpResponse:
		return j.finishAttempt(nil)
	case UpDecision:
		d := store.Decision{Turn: u.Turn, CallID: u.Proposal.CallID, Name: u.Proposal.Name, Decision: u.Decision.Kind,
			Arguments: u.Proposal.Arguments, Reason: u.Decision.Reason, At: u.At}
		if u.Decision.Kind == Edited {
			d.Edited = u.Decision.Arguments
		}
		return j.w.RecordDecision(d)
	case UpResult:
		r := u.Result
		return j.w.RecordToolResult(store.ToolResult{Turn: u.Turn, CallID: r.CallID, Name: r.Name, Content: r.Content, IsError: r.IsError, At: u.At})
	case UpValidated, UpRegenerate:
		vs := make([]store.Validation, len(u.Layers))
		for i, l := range u.Layers {
			vs[i] = store.Validation{Layer: l.Layer, Status: l.Status, Detail: l.Detail}
		}
		if err := j.finishAttempt(nil); err != nil {
			return err
		}
		if u.Kind == UpRegenerate {
			// The verdict on the answer that is being regenerated.
			return j.w.RecordValidation(u.Turn-1, vs)
		}
		return j.w.RecordValidation(0, vs)
	case UpFinished:
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
func (j *StoreJournal) attempt(u Update) error {
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

func (j *StoreJournal) finishAttempt(err error) error {
	if j.rec == nil {
		return nil
	}
	rec := j.rec
	j.rec = nil
	return rec.Finish(err)
}

// ms converts the engine's float milliseconds to a duration.
func ms(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
