package store

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
	"unicode/utf8"

	"github.com/modelwire/modelwire/adapters"
)

// The JSONL export: a header line, then per session one "session" line,
// its "attempt" lines, and its timeline as "step" lines, each a raw event
// with the canonical events derived from it exactly as stored. Derived
// columns (usage, terminal, counters) are not exported: importing the
// steps rebuilds them. Importing an export into another database and
// exporting it again gives the same bytes.

// ExportFormat is the version of the JSONL export format.
const ExportFormat = 1

const exportMagic = "modelwire.export"

type exportHeader struct {
	Type   string `json:"type"`
	Format int    `json:"format"`
	Schema int    `json:"schema"`
}

type exportSession struct {
	Type          string          `json:"type"`
	ID            string          `json:"id"`
	CreatedAt     time.Time       `json:"created_at"`
	FinishedAt    *time.Time      `json:"finished_at,omitempty"`
	Status        Status          `json:"status"`
	Title         string          `json:"title"`
	Scenario      string          `json:"scenario"`
	Variant       string          `json:"variant,omitempty"`
	Protocol      string          `json:"protocol"`
	Provider      string          `json:"provider"`
	Model         string          `json:"model"`
	ModelReported string          `json:"model_reported,omitempty"`
	BaseURL       string          `json:"base_url,omitempty"`
	Source        string          `json:"source,omitempty"`
	Version       string          `json:"modelwire_version,omitempty"`
	ParentID      string          `json:"parent_id,omitempty"`
	Manifest      json.RawMessage `json:"manifest,omitempty"`
}

type exportAttempt struct {
	Type              string           `json:"type"`
	Turn              int              `json:"turn"`
	Attempt           int              `json:"attempt"`
	Protocol          string           `json:"protocol"`
	StartedAt         time.Time        `json:"started_at"`
	StartUS           int64            `json:"start_us"`
	Method            string           `json:"method"`
	URL               string           `json:"url"`
	RequestHeaders    http.Header      `json:"request_headers"`
	RequestBody       *string          `json:"request_body,omitempty"`
	RequestBodyBase64 []byte           `json:"request_body_base64,omitempty"`
	Stream            bool             `json:"stream"`
	RetryReason       string           `json:"retry_reason,omitempty"`
	StatusCode        int              `json:"status_code"`
	ResponseHeaders   http.Header      `json:"response_headers"`
	Error             string           `json:"error,omitempty"`
	State             Status           `json:"state"`
	TimingsUS         map[string]int64 `json:"timings_us,omitempty"`
}

// exportStep is a step line; it is written by hand (see writeStep) and
// read with this.
type exportStep struct {
	Type string `json:"type"`
	storedStep
}

var timingNames = [...]string{"sent", "first_byte", "first_event", "first_text", "terminal", "finished"}

// ExportJSONL writes one session as JSON Lines.
func (db *DB) ExportJSONL(w io.Writer, id string) error {
	s, err := db.GetSession(id)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 256<<10)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(exportHeader{Type: exportMagic, Format: ExportFormat, Schema: SchemaVersion}); err != nil {
		return err
	}
	man, _ := json.Marshal(s.Manifest)
	es := exportSession{Type: "session", ID: s.ID, CreatedAt: s.CreatedAt.UTC(), Status: s.Status, Title: s.Title,
		Scenario: s.Scenario, Variant: s.Variant, Protocol: s.Protocol, Provider: s.Provider, Model: s.Model,
		ModelReported: s.ModelReported, BaseURL: s.BaseURL, Source: s.Source, Version: s.Version, ParentID: s.ParentID, Manifest: man}
	if string(man) == "{}" {
		es.Manifest = nil
	}
	if !s.FinishedAt.IsZero() {
		f := s.FinishedAt.UTC()
		es.FinishedAt = &f
	}
	if err := enc.Encode(es); err != nil {
		return err
	}
	for _, a := range s.Attempts {
		ea := exportAttemptOf(a)
		if err := enc.Encode(ea); err != nil {
			return err
		}
	}
	it, err := db.sessionSteps(id)
	if err != nil {
		return err
	}
	defer it.close()
	var buf bytes.Buffer
	for st := it.next(); st != nil && st.Seq <= s.Events; st = it.next() {
		buf.Reset()
		writeStoredStep(&buf, st)
		bw.WriteString(`{"type":"step",`)
		bw.Write(buf.Bytes()[1:])
		bw.WriteByte('\n')
	}
	if err := it.close(); err != nil {
		return err
	}
	return bw.Flush()
}

// exportAttemptOf is an attempt as an export line.
func exportAttemptOf(a Attempt) exportAttempt {
	ea := exportAttempt{Type: "attempt", Turn: a.Turn, Attempt: a.Attempt, Protocol: a.Protocol, StartedAt: a.StartedAt.UTC(),
		StartUS: a.Start.Microseconds(), Method: a.Method, URL: a.URL, RequestHeaders: a.RequestHeader, Stream: a.Stream,
		RetryReason: a.RetryReason, StatusCode: a.StatusCode, ResponseHeaders: a.ResponseHeader, Error: a.Error, State: a.State}
	if a.RequestBody != nil {
		if utf8.Valid(a.RequestBody) {
			b := string(a.RequestBody)
			ea.RequestBody = &b
		} else {
			ea.RequestBodyBase64 = a.RequestBody
		}
	}
	tm := a.Timings
	for i, d := range []*time.Duration{tm.Sent, tm.FirstByte, tm.FirstEvent, tm.FirstText, tm.Terminal, tm.Finished} {
		if d != nil {
			if ea.TimingsUS == nil {
				ea.TimingsUS = map[string]int64{}
			}
			ea.TimingsUS[timingNames[i]] = d.Microseconds()
		}
	}
	return ea
}

// writeStoredStep writes a step read back from a chunk, as writeStep wrote it.
func writeStoredStep(buf *bytes.Buffer, st *storedStep) {
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

// ImportResult says what an import did.
type ImportResult struct {
	Sessions []string // ids of the sessions imported
	Present  []string // ids skipped because the database has them already
	Skipped  int      // HAR entries that were not a request of any protocol
	Entries  int      // HAR entries read
}

// jsonlSession is one session of an import file, as checked by the first
// pass: where its lines are.
type jsonlSession struct {
	meta     exportSession
	attempts []exportAttempt
	line     int // of the session line
	// maxStepTurn is the largest turn a session-level step names.
	maxStepTurn int
}

// ImportJSONL imports the sessions of a JSONL export. The whole file is
// checked before anything is written, so a malformed file (reported with
// its line) imports nothing. Sessions whose id the database already has
// are skipped, never overwritten.
//
// It stays in store, not with the session journal that HAR imports and
// live runs record through: a JSONL export is a dump of stored events, and
// importing it restores rows as they were, with their ids and offsets; it
// converts no exchange into events.
func (db *DB) ImportJSONL(r io.ReadSeeker, name string) (ImportResult, error) {
	var res ImportResult
	if db.w == nil {
		return res, errors.New("store: the database is open read-only")
	}
	// First pass: check everything.
	if _, err := scanJSONL(r, name, nil); err != nil {
		return res, err
	}
	if _, err := r.Seek(0, io.SeekStart); err != nil {
		return res, err
	}
	// Second pass: write.
	var created []string
	fail := func(err error) (ImportResult, error) {
		for _, id := range created {
			_ = db.DeleteSession(id)
		}
		return ImportResult{}, err
	}
	// A session is started at its first step (or at the next session or
	// the end), once its attempt lines have been read.
	var cur *importing
	var next *jsonlSession
	start := func() error {
		if next == nil {
			return nil
		}
		s := next
		next = nil
		if _, err := db.sid(context.Background(), s.meta.ID); err == nil {
			res.Present = append(res.Present, s.meta.ID)
			return nil
		}
		imp, err := db.startImport(s)
		if err != nil {
			return fmt.Errorf("%s:%d: %w", name, s.line, err)
		}
		cur = imp
		created = append(created, imp.w.ID())
		res.Sessions = append(res.Sessions, imp.w.ID())
		return nil
	}
	end := func() error {
		if err := start(); err != nil {
			return err
		}
		err := cur.finish()
		cur = nil
		return err
	}
	_, err := scanJSONL(r, name, func(line int, kind string, raw []byte, sess *jsonlSession, step *exportStep) error {
		switch kind {
		case "session":
			if err := end(); err != nil {
				return err
			}
			next = sess
		case "step":
			if err := start(); err != nil {
				return err
			}
			if cur == nil {
				return nil // a session already present
			}
			if err := cur.step(step); err != nil {
				return fmt.Errorf("%s:%d: %w", name, line, err)
			}
		}
		return nil
	})
	if err == nil {
		err = end()
	}
	if err != nil {
		return fail(err)
	}
	return res, nil
}

// scanJSONL reads and checks an export. With fn nil it only checks; with
// fn it also calls fn for each session and step line, in order.
func scanJSONL(r io.Reader, name string, fn func(line int, kind string, raw []byte, s *jsonlSession, st *exportStep) error) ([]*jsonlSession, error) {
	br := bufio.NewReaderSize(r, 256<<10)
	bad := func(line int, format string, args ...any) error {
		return &InputError{File: name, Line: line, Entry: -1, Msg: fmt.Sprintf(format, args...)}
	}
	var sessions []*jsonlSession
	var cur *jsonlSession
	nextSeq := 0
	rawNext := map[[2]int]int{} // (turn, attempt) → next raw index
	for line := 1; ; line++ {
		b, err := br.ReadBytes('\n')
		if err != nil && err != io.EOF {
			return nil, &InputError{File: name, Entry: -1, Msg: err.Error()}
		}
		if len(b) == 0 && err == io.EOF {
			if line == 1 {
				return nil, bad(1, "the file is empty; a modelwire JSONL export starts with a %q line", exportMagic)
			}
			break
		}
		b = bytes.TrimRight(b, "\r\n")
		if len(bytes.TrimSpace(b)) == 0 {
			if err == io.EOF {
				break
			}
			continue
		}
		if !utf8.Valid(b) {
			// encoding/json would quietly turn the bytes into U+FFFD: an
			// export is always UTF-8, so this one is damaged.
			return nil, bad(line, "not valid UTF-8")
		}
		var head struct {
			Type string `json:"type"`
		}
		if jerr := json.Unmarshal(b, &head); jerr != nil {
			return nil, bad(line, "not a JSON object: %v", jerr)
		}
		if line == 1 && head.Type != exportMagic {
			return nil, bad(1, "not a modelwire JSONL export: the first line must be {\"type\":%q,…}", exportMagic)
		}
		switch head.Type {
		case exportMagic:
			var h exportHeader
			if err := json.Unmarshal(b, &h); err != nil {
				return nil, bad(line, "bad header: %v", err)
			}
			if h.Format > ExportFormat || h.Format < 1 {
				return nil, bad(line, "export format %d; this modelwire reads format %d", h.Format, ExportFormat)
			}
		case "session":
			if err := checkNumbers(cur, name); err != nil {
				return nil, err
			}
			var s exportSession
			if err := strictUnmarshal(b, &s); err != nil {
				return nil, bad(line, "bad session: %v", err)
			}
			if s.ID == "" {
				return nil, bad(line, "the session has no id")
			}
			switch s.Status {
			case StatusRunning, StatusDone, StatusFailed, StatusInterrupted:
			default:
				return nil, bad(line, "session status %q", s.Status)
			}
			if len(s.Manifest) > 0 {
				var m Manifest
				if err := json.Unmarshal(s.Manifest, &m); err != nil {
					return nil, bad(line, "bad manifest: %v", err)
				}
			}
			cur = &jsonlSession{meta: s, line: line}
			sessions = append(sessions, cur)
			nextSeq = 1
			rawNext = map[[2]int]int{}
			if fn != nil {
				if err := fn(line, "session", b, cur, nil); err != nil {
					return nil, err
				}
			}
		case "attempt":
			if cur == nil {
				return nil, bad(line, "an attempt before any session line")
			}
			var a exportAttempt
			if err := strictUnmarshal(b, &a); err != nil {
				return nil, bad(line, "bad attempt: %v", err)
			}
			key := [2]int{a.Turn, a.Attempt}
			if a.Turn < 1 || a.Attempt < 1 {
				return nil, bad(line, "attempt %d.%d: turns and attempts are numbered from 1", a.Turn, a.Attempt)
			}
			if _, dup := rawNext[key]; dup {
				return nil, bad(line, "attempt %d.%d appears twice", a.Turn, a.Attempt)
			}
			if nextSeq != 1 {
				return nil, bad(line, "attempt lines must come before the session's steps")
			}
			switch a.State {
			case StatusRunning, StatusDone, StatusFailed, StatusInterrupted:
			default:
				return nil, bad(line, "attempt state %q", a.State)
			}
			rawNext[key] = 0
			cur.attempts = append(cur.attempts, a)
		case "step":
			if cur == nil {
				return nil, bad(line, "a step before any session line")
			}
			var st exportStep
			if err := strictUnmarshal(b, &st); err != nil {
				return nil, bad(line, "bad step: %v", err)
			}
			if st.Seq != nextSeq {
				return nil, bad(line, "step seq %d, expected %d (steps must be complete and in order)", st.Seq, nextSeq)
			}
			if st.Turn < 0 || st.OffsetUS < 0 {
				return nil, bad(line, "step %d: negative turn or offset", st.Seq)
			}
			if (st.Raw == nil) != (st.RawIndex == nil) {
				return nil, bad(line, "step %d: raw and raw_index go together", st.Seq)
			}
			if st.Attempt == 0 {
				cur.maxStepTurn = max(cur.maxStepTurn, st.Turn)
				if st.Raw != nil || len(st.Events) != 1 {
					return nil, bad(line, "step %d: a session-level step has one event and no raw event", st.Seq)
				}
				if _, err := parseSessionEntry(st.Events[0]); err != nil {
					return nil, bad(line, "step %d: %v", st.Seq, err)
				}
			} else {
				key := [2]int{st.Turn, st.Attempt}
				want, ok := rawNext[key]
				if !ok {
					return nil, bad(line, "step %d belongs to attempt %d.%d, which has no attempt line", st.Seq, st.Turn, st.Attempt)
				}
				if st.RawIndex != nil {
					if *st.RawIndex != want {
						return nil, bad(line, "step %d: raw_index %d, expected %d", st.Seq, *st.RawIndex, want)
					}
					rawNext[key] = want + 1
				} else if len(st.Events) == 0 {
					return nil, bad(line, "step %d has neither a raw event nor events", st.Seq)
				}
				for i, ev := range st.Events {
					var e adapters.Event
					if err := json.Unmarshal(ev, &e); err != nil || e.Type == "" {
						return nil, bad(line, "step %d: event %d is not a canonical event", st.Seq, i)
					}
				}
			}
			nextSeq += st.entries()
			if fn != nil {
				if err := fn(line, "step", b, cur, &st); err != nil {
					return nil, err
				}
			}
		default:
			return nil, bad(line, "unknown line type %q", head.Type)
		}
		if err == io.EOF {
			break
		}
	}
	if err := checkNumbers(cur, name); err != nil {
		return nil, err
	}
	if len(sessions) == 0 {
		return nil, &InputError{File: name, Entry: -1, Msg: "the file holds no session"}
	}
	return sessions, nil
}

// checkNumbers holds a session's turn and attempt numbers to what the
// file holds for it: every turn from 1 to the last has an attempt (a
// fork's copied turns included), so no turn or attempt number can exceed
// the number of attempt lines, nor can a session-level entry's turn. A
// crafted turn of 2·10⁹ would otherwise be stored, and every reader that
// sizes its tables by the turns would try to allocate them.
func checkNumbers(s *jsonlSession, name string) error {
	if s == nil {
		return nil
	}
	n := len(s.attempts)
	for _, a := range s.attempts {
		if a.Turn > n || a.Attempt > n {
			return &InputError{File: name, Line: s.line, Entry: -1, Msg: fmt.Sprintf(
				"attempt %d.%d: the session has %d attempt lines, so no turn or attempt number can exceed %d", a.Turn, a.Attempt, n, n)}
		}
	}
	if s.maxStepTurn > max(n, 1) {
		return &InputError{File: name, Line: s.line, Entry: -1, Msg: fmt.Sprintf(
			"a session-level entry names turn %d; the session has %d attempt lines", s.maxStepTurn, n)}
	}
	return nil
}

// strictUnmarshal rejects unknown fields, so a typo is an error rather
// than silently lost data.
func strictUnmarshal(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
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
			if l.Status != "pass" && l.Status != "fail" && l.Status != "skip" {
				return nil, fmt.Errorf("validation layer %q has status %q", l.Layer, l.Status)
			}
		}
		return v, nil
	default:
		return nil, fmt.Errorf("unknown session-level entry %q", t)
	}
}

// importing is a session being imported.
type importing struct {
	db       *DB
	w        *SessionWriter
	meta     exportSession
	recs     map[[2]int]*Recorder
	attempts []exportAttempt
}

func (db *DB) startImport(s *jsonlSession) (*importing, error) {
	var man Manifest
	if len(s.meta.Manifest) > 0 {
		_ = json.Unmarshal(s.meta.Manifest, &man)
	}
	m := s.meta
	id := m.ID
	if !validIDPrefix(id) || len(id) != IDLength {
		id = "" // not one of ours: give it a fresh id
	}
	w, err := db.createSession(SessionMeta{Title: m.Title, Scenario: m.Scenario, Variant: m.Variant, Protocol: m.Protocol,
		Provider: m.Provider, Model: m.Model, BaseURL: m.BaseURL, Source: m.Source, Version: m.Version, Manifest: man,
		CreatedAt: m.CreatedAt, ParentID: m.ParentID}, id, StatusRunning)
	if err != nil {
		return nil, err
	}
	imp := &importing{db: db, w: w, meta: m, recs: map[[2]int]*Recorder{}, attempts: s.attempts}
	for _, a := range s.attempts {
		rec, err := imp.attempt(a)
		if err != nil {
			return nil, err
		}
		imp.recs[[2]int{a.Turn, a.Attempt}] = rec
	}
	return imp, nil
}

// attempt inserts an attempt with its recorded timings, response and
// state; its steps then add what they imply (usage, terminal, counters).
func (imp *importing) attempt(a exportAttempt) (*Recorder, error) {
	body := a.RequestBodyBase64
	if a.RequestBody != nil {
		body = []byte(*a.RequestBody)
	}
	rec, err := imp.w.startAttempt(a.Turn, a.Attempt, AttemptMeta{Protocol: a.Protocol, Method: a.Method, URL: a.URL,
		Header: a.RequestHeaders, Body: body, Stream: a.Stream, RetryReason: a.RetryReason},
		a.StartedAt, time.Duration(a.StartUS)*time.Microsecond, time.Now())
	if err != nil {
		return nil, err
	}
	// The file's timings are the record: the steps must not mark any.
	for i := range rec.marked {
		rec.marked[i] = true
	}
	respH, _ := json.Marshal(Redact(a.ResponseHeaders))
	if a.ResponseHeaders == nil {
		respH = []byte("{}")
	}
	cols := []any{a.StatusCode, string(respH), Redact(a.Error)}
	for _, name := range timingNames {
		if v, ok := a.TimingsUS[name]; ok {
			cols = append(cols, v)
		} else {
			cols = append(cols, nil)
		}
	}
	cols = append(cols, rec.aid)
	err = imp.db.w.exec(func(t *txn) error {
		return t.exec(`UPDATE attempts SET status_code = ?, response_headers = ?, error = ?, sent_us = ?, first_byte_us = ?,
			first_event_us = ?, first_text_us = ?, terminal_us = ?, finished_us = ? WHERE aid = ?`, cols...)
	})
	return rec, err
}

func (imp *importing) step(st *exportStep) error {
	off := time.Duration(st.OffsetUS) * time.Microsecond
	if st.Attempt == 0 {
		entry, err := parseSessionEntry(st.Events[0])
		if err != nil {
			return err
		}
		body := joinEvents(st.Events)
		switch e := entry.(type) {
		case decisionEvent:
			return imp.w.recordDecision(e.decision(), off, body)
		case resultEvent:
			return imp.w.recordToolResult(ToolResult{Turn: e.Turn, CallID: e.CallID, Name: e.Name, Content: e.Content, IsError: e.IsError, At: e.At}, off, body)
		case validationEvent:
			return imp.w.recordValidation(e.Turn, e.Results, e.At, off, body)
		}
		return nil
	}
	rec := imp.recs[[2]int{st.Turn, st.Attempt}]
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

// finish ends the imported session with its recorded states.
func (imp *importing) finish() error {
	if imp == nil {
		return nil
	}
	if err := imp.finishAttempts(); err != nil {
		return err
	}
	status := imp.meta.Status
	if status == StatusRunning {
		status = StatusInterrupted
	}
	var at time.Time
	if imp.meta.FinishedAt != nil {
		at = *imp.meta.FinishedAt
	}
	return imp.w.finish(status, at)
}

// finishAttempts gives the imported attempts their recorded states.
func (imp *importing) finishAttempts() error {
	for _, a := range imp.attempts {
		rec := imp.recs[[2]int{a.Turn, a.Attempt}]
		state := a.State
		if state == StatusRunning {
			state = StatusInterrupted // its writer is not here
		}
		rec.mu.Lock()
		rec.finished, rec.snap = true, nil
		rec.mu.Unlock()
		aid := rec.aid
		if err := imp.db.w.exec(func(t *txn) error {
			return t.exec(`UPDATE attempts SET state = ? WHERE aid = ?`, state, aid)
		}); err != nil {
			return err
		}
	}
	return nil
}
