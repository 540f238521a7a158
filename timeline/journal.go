package timeline

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"sync"
	"time"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/registry"
	"github.com/modelwire/modelwire/session"
	"github.com/modelwire/modelwire/store"
)

// NewStoreJournal records into db a session described by meta; stream
// says whether its attempts stream.
func NewStoreJournal(db *store.DB, meta store.SessionMeta, stream bool) *StoreJournal {
	return &StoreJournal{db: db, meta: meta, stream: stream, requests: map[int]*adapters.HTTPRequest{},
		recs: map[[2]int]*store.Recorder{}, ends: map[[2]int]time.Duration{}}
}

// StoreJournal is the one place a session's updates become stored events:
// runs, the workbench, the proxy and imports record through it, so any
// session can be listed and replayed the same way later. It implements
// session.Journal and names the session through SessionID.
//
// Rules it keeps:
//   - an attempt is recorded once per (turn, attempt); a "retrying in …"
//     notice about one already recorded changes nothing;
//   - several attempts may be open at once (the proxy's exchanges
//     overlap), each with its own recorder;
//   - a decision's arguments are stored only when they are JSON;
//   - a run records one verdict for the session and, for a regenerated
//     answer, the verdict on the turn it failed; a proxied conversation
//     (store.SourceProxy) records a verdict per exchange, with its turn;
//   - an attempt still open when the session ends is finished with an
//     error that says so.
//
// The engine calls it on the session goroutine, before the UI sees the
// update; every store call here only queues work for the store's writer
// (it commits on terminal events and session-level entries), so recording
// costs the stream no disk wait per event. It is safe for concurrent use.
type StoreJournal struct {
	db   *store.DB
	meta store.SessionMeta

	mu       sync.Mutex
	w        *store.SessionWriter
	requests map[int]*adapters.HTTPRequest // by turn
	recs     map[[2]int]*store.Recorder    // open attempts by (turn, attempt)
	ends     map[[2]int]time.Duration      // an imported attempt's end, from its file
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
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.w == nil {
		return ""
	}
	return j.w.ID()
}

// Start creates the session (as UpStarted does) and returns its id; a
// started session is not created again.
func (j *StoreJournal) Start() (string, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if err := j.start(); err != nil {
		return "", err
	}
	return j.w.ID(), nil
}

func (j *StoreJournal) start() error {
	if j.w != nil {
		return nil
	}
	w, err := j.db.CreateSession(j.meta)
	if err != nil {
		return err
	}
	j.w = w
	if j.inherit != nil {
		return j.inherit(w)
	}
	return nil
}

// Interrupt marks the session interrupted when it was stopped before its
// end (the run's context cancelled); a finished session, or one never
// started, is left as it is.
func (j *StoreJournal) Interrupt() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.w == nil {
		return nil
	}
	j.finishAll(context.Canceled)
	return j.w.Interrupt()
}

// Finish ends the session with status (done or failed) when its end is
// not an UpFinished (the proxy ends a conversation when it goes quiet).
func (j *StoreJournal) Finish(status store.Status) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.w == nil {
		return nil
	}
	j.finishAll(errors.New("the session ended before the response did"))
	return j.w.Finish(status)
}

// FinishAt is Finish with the session's end at a given time: an import
// ends it when its file says.
func (j *StoreJournal) FinishAt(status store.Status, at time.Time) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.w == nil {
		return errors.New("the journal has no session")
	}
	j.finishAll(errors.New("the session ended before the response did"))
	return j.w.FinishAt(status, at)
}

// Record implements session.Journal.
func (j *StoreJournal) Record(u session.Update) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if u.Kind == session.UpStarted {
		return j.start()
	}
	if j.w == nil {
		return errors.New("the journal has no session")
	}
	key := [2]int{u.Turn, u.Attempt}
	switch u.Kind {
	case session.UpAssembled:
		// Only the latest turn's request is kept (its retries record it
		// again): a long session's earlier requests, each carrying the
		// whole history so far, would otherwise all stay in memory.
		for t := range j.requests {
			if t < u.Turn {
				delete(j.requests, t)
			}
		}
		j.requests[u.Turn] = u.Request
	case session.UpAttempt:
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
		return j.attempt(u, m)
	case session.UpStep:
		if rec := j.recs[key]; rec != nil { // a step without its attempt has nothing to attach to
			return rec.AppendAt(ms(u.OffsetMS), *u.Step)
		}
	case session.UpResponse:
		var err error
		if u.Err != "" {
			err = errors.New(u.Err)
		}
		return j.finish(key, err)
	case session.UpDecision:
		d := store.Decision{Turn: u.Turn, CallID: u.Proposal.CallID, Name: u.Proposal.Name, Decision: u.Decision.Kind,
			Arguments: validJSON(u.Proposal.Arguments), Reason: u.Decision.Reason, At: u.At}
		if u.Decision.Kind == session.Edited {
			d.Edited = u.Decision.Arguments
		}
		return j.w.RecordDecision(d)
	case session.UpResult:
		r := u.Result
		return j.w.RecordToolResult(store.ToolResult{Turn: u.Turn, CallID: r.CallID, Name: r.Name, Content: r.Content, IsError: r.IsError, At: u.At})
	case session.UpValidated, session.UpRegenerate:
		vs := make([]store.Validation, len(u.Layers))
		for i, l := range u.Layers {
			vs[i] = l.Stored()
		}
		switch {
		case store.PerExchange(j.meta.Source):
			return j.w.RecordValidation(u.Turn, vs) // the exchange's verdict
		case u.Kind == session.UpRegenerate:
			j.finishAll(nil)
			return j.w.RecordValidation(u.Turn-1, vs) // the verdict on the answer being regenerated
		}
		j.finishAll(nil)
		return j.w.RecordValidation(0, vs)
	case session.UpFinished:
		j.finishAll(nil)
		status := store.StatusFailed
		if u.Status == store.StatusDone {
			status = store.StatusDone
		}
		return j.w.Finish(status)
	}
	return nil
}

// RecordVerdict records the layers' verdict on one turn (an imported
// exchange's, as the proxy records one per exchange).
func (j *StoreJournal) RecordVerdict(turn int, layers []session.LayerResult) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	vs := make([]store.Validation, len(layers))
	for i, l := range layers {
		vs[i] = l.Stored()
	}
	return j.w.RecordValidation(turn, vs)
}

// RecordAttempt records an HTTP attempt with its request as the caller
// knows it (the proxy has each exchange's own request, stream flag and
// retry reason).
func (j *StoreJournal) RecordAttempt(u session.Update, m store.AttemptMeta) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.w == nil {
		return errors.New("the journal has no session")
	}
	// The caller carries the request itself: the journal's copy of the
	// turn's request (a body of megabytes) is not needed again.
	delete(j.requests, u.Turn)
	return j.attempt(u, m)
}

// AttemptTimes place an imported attempt where its file says; a live
// attempt is placed by the clock. The durations are from the attempt's
// start; a zero FirstEvent, FirstToken or FirstText is "not in the file"
// (the steps then place it), a zero Terminal is End.
type AttemptTimes struct {
	Started                           time.Time
	Offset                            time.Duration // from the session's start
	Sent, Headers, End                time.Duration
	FirstEvent, FirstToken, FirstText time.Duration
	Terminal                          time.Duration
	// Server is the provider's own figure, named by ServerSource ("" for
	// none).
	Server       time.Duration
	ServerSource string
}

// ImportAttempt records an HTTP attempt read from a file (a HAR entry)
// that got a response: u numbers it and gives the status and headers, m
// the request, t its times. Its steps and its end follow as UpStep and
// UpResponse updates, as for a live attempt; the end is recorded at t.End.
func (j *StoreJournal) ImportAttempt(u session.Update, m store.AttemptMeta, t AttemptTimes) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.w == nil {
		return errors.New("the journal has no session")
	}
	key := [2]int{u.Turn, u.Attempt}
	if j.recs[key] != nil {
		return nil
	}
	rec, err := j.w.StartAttemptAt(u.Turn, u.Attempt, j.withReasoning(m), t.Started, t.Offset)
	if err != nil {
		return err
	}
	j.recs[key], j.ends[key] = rec, t.End
	_ = rec.MarkAt(store.MarkSent, t.Sent)
	_ = rec.MarkAt(store.MarkFirstByte, t.Headers)
	for _, m := range []struct {
		mark store.Mark
		at   time.Duration
	}{{store.MarkFirstEvent, t.FirstEvent}, {store.MarkFirstToken, t.FirstToken}, {store.MarkFirstText, t.FirstText}} {
		if m.at > 0 {
			_ = rec.MarkAt(m.mark, m.at)
		}
	}
	if t.ServerSource != "" {
		_ = rec.ServerTime(t.Server, t.ServerSource)
	}
	if err := rec.Response(u.HTTPStatus, u.Header); err != nil {
		return err
	}
	// A file that keeps no time per event has the terminal at the end of
	// the transfer, placed before the steps would place it at their offset.
	if t.Terminal == 0 {
		t.Terminal = t.End
	}
	return rec.MarkAt(store.MarkTerminal, t.Terminal)
}

// RestoreEntry writes back a session-level entry (a decision, a tool
// result, a verdict) as it was stored, offset into the session: what a
// modelwire HAR export carries after an exchange.
func (j *StoreJournal) RestoreEntry(off time.Duration, entry json.RawMessage) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.w == nil {
		return errors.New("the journal has no session")
	}
	return j.w.RestoreEntry(off, entry)
}

// withReasoning is m with the reasoning setting its body carries, as the
// protocol's descriptor reads it; m as it is when it has no body.
func (j *StoreJournal) withReasoning(m store.AttemptMeta) store.AttemptMeta {
	if m.Body == nil || m.Reasoning != nil {
		return m
	}
	if d, ok := registry.Describe(cmp.Or(m.Protocol, j.meta.Protocol)); ok {
		r := d.ReasoningSetting(m.Body)
		m.Reasoning = &r
	}
	return m
}

// attempt records an HTTP attempt: a new one when the (turn, attempt)
// pair is new; a notice about an attempt already recorded changes nothing.
// An attempt that got no response is finished at once with its error.
func (j *StoreJournal) attempt(u session.Update, m store.AttemptMeta) error {
	key := [2]int{u.Turn, u.Attempt}
	if j.recs[key] != nil {
		return nil
	}
	if !store.PerExchange(j.meta.Source) {
		j.finishAll(nil) // a run's attempts follow one another
	}
	rec, err := j.w.StartAttempt(u.Turn, j.withReasoning(m))
	if err != nil {
		return err
	}
	j.recs[key] = rec
	_ = rec.MarkAt(store.MarkSent, 0)
	if u.HTTPStatus == 0 {
		if u.Err != "" {
			return j.finish(key, errors.New(u.Err))
		}
		return nil
	}
	if u.Timings != nil && u.Timings.Headers > 0 {
		_ = rec.MarkAt(store.MarkFirstByte, ms(u.Timings.Headers))
	}
	if u.Timings != nil && u.Timings.Server != nil {
		_ = rec.ServerTime(ms(u.Timings.Server.MS), u.Timings.Server.Source)
	}
	return rec.Response(u.HTTPStatus, u.Header)
}

func (j *StoreJournal) finish(key [2]int, err error) error {
	rec := j.recs[key]
	if rec == nil {
		return nil
	}
	delete(j.recs, key)
	if end, ok := j.ends[key]; ok {
		delete(j.ends, key)
		return rec.FinishAt(err, end)
	}
	return rec.Finish(err)
}

// finishAll finishes every open attempt with err. Errors are dropped: the
// attempt's end is best effort once the session moves on.
func (j *StoreJournal) finishAll(err error) {
	for key := range j.recs {
		_ = j.finish(key, err)
	}
}

// validJSON is b when it is JSON, else nil (a proposal's arguments cut
// mid-stream are not).
func validJSON(b json.RawMessage) json.RawMessage {
	if len(b) == 0 || !json.Valid(b) {
		return nil
	}
	return b
}

// ms converts the engine's float milliseconds to a duration, rounded so
// that a duration converted to milliseconds comes back the same.
func ms(v float64) time.Duration { return time.Duration(math.Round(v * float64(time.Millisecond))) }
