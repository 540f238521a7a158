package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/modelwire/modelwire/adapters"
)

// Reading and restoring rows as they were stored. The file formats (the
// har and jsonl packages) export a session through EachStep, and a JSONL
// import, a HAR export's session-level entries and a fork's copied turns
// (fork.go) write rows back through a Restorer: they restore what was
// recorded rather than convert an exchange into events.

// ImportResult says what an import did.
type ImportResult struct {
	Sessions []string // ids of the sessions imported
	Present  []string // ids skipped because the database has them already
	Skipped  int      // HAR entries that were not a request of any protocol
	Entries  int      // HAR entries read
}

// HasSession reports whether the database holds the session id.
func (db *DB) HasSession(id string) bool {
	_, err := db.sid(context.Background(), id)
	return err == nil
}

// EachStep calls fn with each step of the session id's timeline up to
// entry upto, raw events included, as stored. fn must not keep st, which
// the next step reuses; its Events and Raw are its own.
func (db *DB) EachStep(id string, upto int, fn func(st *StoredStep)) error {
	it, err := db.sessionSteps(id)
	if err != nil {
		return err
	}
	defer it.close()
	for st := it.next(); st != nil && st.Seq <= upto; st = it.next() {
		fn(st)
	}
	return it.close()
}

// AppendJSON writes the step in the export's form: as writeStep writes it
// to a chunk, with its raw event inline.
func (st *StoredStep) AppendJSON(buf *bytes.Buffer) {
	op := &stepOp{seq: st.Seq, turn: st.Turn, attempt: st.Attempt, offsetUS: st.OffsetUS, rawIndex: -1}
	if st.RawIndex != nil && st.Raw != nil {
		op.rawIndex, op.raw = *st.RawIndex, *st.Raw
	}
	op.events = joinEvents(st.Events)
	writeStepJSON(buf, op, true)
}

func joinEvents(evs []json.RawMessage) []byte {
	if len(evs) == 0 {
		return nil
	}
	var b bytes.Buffer
	b.WriteByte('[')
	for i, ev := range evs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(ev)
	}
	b.WriteByte(']')
	return b.Bytes()
}

// CheckSessionEntry checks a session-level entry (a decision, a tool
// result, a verdict) as a file holds it, before anything is written.
func CheckSessionEntry(raw json.RawMessage) error {
	_, err := parseSessionEntry(raw)
	return err
}

// parseSessionEntry decodes and checks a session-level entry.
func parseSessionEntry(raw json.RawMessage) (any, error) {
	switch t := eventType(raw); t {
	case EntryDecision:
		var d decisionEvent
		if err := json.Unmarshal(raw, &d); err != nil {
			return nil, err
		}
		switch {
		case d.CallID == "":
			return nil, errors.New("a decision without call_id")
		case d.Decision != DecisionApproved && d.Decision != DecisionEdited && d.Decision != DecisionRejected && d.Decision != DecisionAuto:
			return nil, fmt.Errorf("decision %q", d.Decision)
		case d.Decision == DecisionEdited && len(d.Arguments) == 0:
			return nil, errors.New("an edited decision without arguments")
		}
		return d, nil
	case EntryToolResult:
		var r resultEvent
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, err
		}
		if r.CallID == "" {
			return nil, errors.New("a tool result without call_id")
		}
		return r, nil
	case EntryValidation:
		var v validationEvent
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, err
		}
		for _, l := range v.Results {
			if !l.Status.Valid() {
				return nil, fmt.Errorf("validation layer %q has status %q", l.Layer, l.Status)
			}
		}
		return v, nil
	default:
		return nil, fmt.Errorf("unknown session-level entry %q", t)
	}
}

// RestoreEntry writes back a session-level entry (a decision, a tool
// result, a verdict) as it was stored, offset into the session.
func (s *SessionWriter) RestoreEntry(off time.Duration, raw json.RawMessage) error {
	return s.restoreEntry(off, raw, joinEvents([]json.RawMessage{raw})) // a step's events, as stored
}

func (s *SessionWriter) restoreEntry(off time.Duration, raw json.RawMessage, body []byte) error {
	entry, err := parseSessionEntry(raw)
	if err != nil {
		return err
	}
	switch e := entry.(type) {
	case decisionEvent:
		return s.recordDecision(e.decision(), off, body)
	case resultEvent:
		return s.recordToolResult(ToolResult{Turn: e.Turn, CallID: e.CallID, Name: e.Name, Content: e.Content, IsError: e.IsError, At: e.At}, off, body)
	case validationEvent:
		return s.recordValidation(e.Turn, e.Results, e.At, off, body)
	}
	return nil
}

// RestoreSession starts a session restored from a file: with id when it
// is one of ours, else with a fresh one; running until its Restorer
// finishes it.
func (db *DB) RestoreSession(m SessionMeta, id string) (*SessionWriter, error) {
	if !validIDPrefix(id) || len(id) != IDLength {
		id = "" // not one of ours: give it a fresh id
	}
	return db.createSession(m, id, StatusRunning)
}

// Restorer writes a session's attempts and steps back as they were
// stored.
type Restorer struct {
	w        *SessionWriter
	recs     map[[2]int]*Recorder
	attempts []Attempt
}

// NewRestorer restores into the session w is writing.
func NewRestorer(w *SessionWriter) *Restorer {
	return &Restorer{w: w, recs: map[[2]int]*Recorder{}}
}

// Attempt inserts an attempt with its recorded timings, response and
// state; its steps then add what they imply (usage, terminal, counters).
func (r *Restorer) Attempt(a Attempt) error {
	rec, err := r.w.startAttempt(a.Turn, a.Attempt, AttemptMeta{Protocol: a.Protocol, Method: a.Method, URL: a.URL,
		Header: a.RequestHeader, Body: a.RequestBody, Stream: a.Stream, RetryReason: a.RetryReason, Reasoning: a.Reasoning},
		a.StartedAt, a.Start, time.Now())
	if err != nil {
		return err
	}
	// The file's timings are the record: the steps must not mark any.
	for i := range rec.marked {
		rec.marked[i] = true
	}
	respH, _ := json.Marshal(Redact(a.ResponseHeader))
	if a.ResponseHeader == nil {
		respH = []byte("{}")
	}
	cols := []any{a.StatusCode, string(respH), Redact(a.Error)}
	tm := a.Timings
	for _, d := range []*time.Duration{tm.Sent, tm.FirstByte, tm.FirstEvent, tm.FirstText, tm.Terminal, tm.Finished} {
		if d != nil {
			cols = append(cols, d.Microseconds())
		} else {
			cols = append(cols, nil)
		}
	}
	for _, d := range []*time.Duration{tm.FirstToken, tm.Server} {
		if d != nil {
			cols = append(cols, d.Microseconds())
		} else {
			cols = append(cols, nil)
		}
	}
	var source any
	if tm.Server != nil {
		source = tm.ServerSource
	}
	cols = append(cols, source)
	aid := rec.aid
	err = r.w.db.w.exec(func(t *txn) error {
		return t.exec(`UPDATE attempts SET status_code = ?, response_headers = ?, error = ?, sent_us = ?, first_byte_us = ?,
			first_event_us = ?, first_text_us = ?, terminal_us = ?, finished_us = ?, first_token_us = ?, server_us = ?,
			server_source = ? WHERE aid = ?`, append(cols, *aid)...)
	})
	if err != nil {
		return err
	}
	r.recs[[2]int{a.Turn, a.Attempt}] = rec
	r.attempts = append(r.attempts, a)
	return nil
}

// Has reports whether attempt (turn, attempt) has been restored.
func (r *Restorer) Has(turn, attempt int) bool { return r.recs[[2]int{turn, attempt}] != nil }

// Step writes a step back as stored: a session-level entry, or a raw
// event of a restored attempt with the canonical events derived from it.
func (r *Restorer) Step(st *StoredStep) error {
	off := time.Duration(st.OffsetUS) * time.Microsecond
	if st.Attempt == 0 {
		if len(st.Events) == 0 {
			return errors.New("store: a session-level step without its entry")
		}
		return r.w.restoreEntry(off, st.Events[0], joinEvents(st.Events))
	}
	rec := r.recs[[2]int{st.Turn, st.Attempt}]
	if rec == nil {
		return errors.New("store: a step of an attempt that is not there")
	}
	evs := make([]adapters.Event, len(st.Events))
	for i, raw := range st.Events {
		if err := json.Unmarshal(raw, &evs[i]); err != nil {
			return err
		}
	}
	var raw adapters.RawEvent
	if st.Raw != nil {
		raw = *st.Raw
	}
	return rec.appendStep(off, st.Raw != nil, raw, evs, joinEvents(st.Events))
}

// FinishAttempts gives the restored attempts their recorded states.
func (r *Restorer) FinishAttempts() error {
	for _, a := range r.attempts {
		rec := r.recs[[2]int{a.Turn, a.Attempt}]
		state := a.State
		if state == StatusRunning {
			state = StatusInterrupted // its writer is not here
		}
		rec.mu.Lock()
		rec.finished, rec.snap = true, nil
		rec.mu.Unlock()
		aid := rec.aid
		if err := r.w.db.w.exec(func(t *txn) error {
			return t.exec(`UPDATE attempts SET state = ? WHERE aid = ?`, state, *aid)
		}); err != nil {
			return err
		}
	}
	return nil
}

// Finish gives the restored attempts their states and ends the session
// as status, at (zero: not recorded).
func (r *Restorer) Finish(status Status, at time.Time) error {
	if err := r.FinishAttempts(); err != nil {
		return err
	}
	return r.w.finish(status, at)
}
