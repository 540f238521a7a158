package proxy

import (
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/modelwire/modelwire/session"
	"github.com/modelwire/modelwire/store"
)

// journal records one conversation in the store from the same updates the
// workbench folds. It is session.StoreJournal's counterpart for recorded
// traffic, and differs from it where a proxy differs from a run: attempts
// of several exchanges may be open at once (one store.Recorder each),
// each attempt carries its own request, stream flag and retry reason,
// an HTTP error's body is kept as the attempt's one raw event, and
// validation is recorded per turn (an exchange), not for the session.
type journal struct {
	db   *store.DB
	meta store.SessionMeta

	mu   sync.Mutex
	w    *store.SessionWriter
	recs map[[2]int]*store.Recorder
}

func newJournal(db *store.DB, meta store.SessionMeta) *journal {
	return &journal{db: db, meta: meta, recs: map[[2]int]*store.Recorder{}}
}

// start creates the session.
func (j *journal) start() (string, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.w != nil {
		return j.w.ID(), nil
	}
	w, err := j.db.CreateSession(j.meta)
	if err != nil {
		return "", err
	}
	j.w = w
	return w.ID(), nil
}

// record writes one update of exchange x.
func (j *journal) record(x *exchange, u session.Update) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.w == nil {
		return errors.New("the journal has no session")
	}
	key := [2]int{u.Turn, u.Attempt}
	switch u.Kind {
	case session.UpAttempt:
		m := store.AttemptMeta{Protocol: x.protocolName(), Method: x.method, URL: u.URL, Header: x.recHeader,
			Body: x.recBody, Stream: x.req.stream, RetryReason: x.retryReason}
		rec, err := j.w.StartAttempt(u.Turn, m)
		if err != nil {
			return err
		}
		j.recs[key] = rec
		_ = rec.MarkAt(store.MarkSent, 0)
		if u.HTTPStatus == 0 {
			delete(j.recs, key)
			return rec.Finish(errors.New(u.Err))
		}
		if u.Timings != nil && u.Timings.FirstByte > 0 {
			_ = rec.MarkAt(store.MarkFirstByte, ms(u.Timings.FirstByte))
		}
		return rec.Response(u.HTTPStatus, u.Header)
	case session.UpStep:
		rec := j.recs[key]
		if rec == nil {
			return nil
		}
		return rec.AppendAt(ms(u.OffsetMS), *u.Step)
	case session.UpResponse:
		rec := j.recs[key]
		if rec == nil {
			return nil
		}
		delete(j.recs, key)
		var err error
		if u.Err != "" {
			err = errors.New(u.Err)
		}
		return rec.Finish(err)
	case session.UpDecision:
		d := store.Decision{Turn: u.Turn, CallID: u.Proposal.CallID, Name: u.Proposal.Name, Decision: u.Decision.Kind,
			Arguments: validJSON(u.Proposal.Arguments), Reason: u.Decision.Reason, At: u.At}
		return j.w.RecordDecision(d)
	case session.UpValidated:
		vs := make([]store.Validation, len(u.Layers))
		for i, l := range u.Layers {
			vs[i] = store.Validation{Layer: l.Layer, Status: l.Status, Detail: l.Detail}
		}
		return j.w.RecordValidation(u.Turn, vs)
	}
	return nil
}

// finish ends the session: done when every exchange passed its judged
// layers, failed otherwise.
func (j *journal) finish(failed bool) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.w == nil {
		return nil
	}
	for k, rec := range j.recs {
		_ = rec.Finish(errors.New("the proxy stopped before the response ended"))
		delete(j.recs, k)
	}
	status := store.StatusDone
	if failed {
		status = store.StatusFailed
	}
	return j.w.Finish(status)
}

func validJSON(b json.RawMessage) json.RawMessage {
	if len(b) == 0 || !json.Valid(b) {
		return nil
	}
	return b
}

// ms converts float milliseconds to a duration.
func ms(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }

// sinceMS is the time from t0 to t in float milliseconds.
func sinceMS(t0, t time.Time) float64 { return float64(t.Sub(t0).Microseconds()) / 1000 }
