package jsonl

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"
	"unicode/utf8"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/store"
)

// jsonlSession is one session of an import file, as checked by the first
// pass: where its lines are.
type jsonlSession struct {
	meta     exportSession
	attempts []exportAttempt
	line     int // of the session line
	// maxStepTurn is the largest turn a session-level step names.
	maxStepTurn int
}

// Import imports the sessions of a JSONL export. The whole file is
// checked before anything is written, so a malformed file (reported with
// its line) imports nothing. Sessions whose id the database already has
// are skipped, never overwritten.
//
// It restores through store.Restorer, not through the session journal
// that HAR imports and live runs record through: a JSONL export is a dump
// of stored events, and importing it restores rows as they were, with
// their ids and offsets; it converts no exchange into events.
func Import(db *store.DB, r io.ReadSeeker, name string) (store.ImportResult, error) {
	var res store.ImportResult
	if db.ReadOnly() {
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
	fail := func(err error) (store.ImportResult, error) {
		for _, id := range created {
			_ = db.DeleteSession(id)
		}
		return store.ImportResult{}, err
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
		if db.HasSession(s.meta.ID) {
			res.Present = append(res.Present, s.meta.ID)
			return nil
		}
		imp, err := startImport(db, s)
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
		return &store.InputError{File: name, Line: line, Entry: -1, Msg: fmt.Sprintf(format, args...)}
	}
	var sessions []*jsonlSession
	var cur *jsonlSession
	nextSeq := 0
	rawNext := map[[2]int]int{} // (turn, attempt) → next raw index
	for line := 1; ; line++ {
		b, err := br.ReadBytes('\n')
		if err != nil && err != io.EOF {
			return nil, &store.InputError{File: name, Entry: -1, Msg: err.Error()}
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
			case store.StatusRunning, store.StatusDone, store.StatusFailed, store.StatusInterrupted:
			default:
				return nil, bad(line, "session status %q", s.Status)
			}
			if len(s.Manifest) > 0 {
				var m store.Manifest
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
			case store.StatusRunning, store.StatusDone, store.StatusFailed, store.StatusInterrupted:
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
				if err := store.CheckSessionEntry(st.Events[0]); err != nil {
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
			nextSeq += st.Entries()
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
		return nil, &store.InputError{File: name, Entry: -1, Msg: "the file holds no session"}
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
			return &store.InputError{File: name, Line: s.line, Entry: -1, Msg: fmt.Sprintf(
				"attempt %d.%d: the session has %d attempt lines, so no turn or attempt number can exceed %d", a.Turn, a.Attempt, n, n)}
		}
	}
	if s.maxStepTurn > max(n, 1) {
		return &store.InputError{File: name, Line: s.line, Entry: -1, Msg: fmt.Sprintf(
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

// importing is a session being imported.
type importing struct {
	w    *store.SessionWriter
	r    *store.Restorer
	meta exportSession
}

func startImport(db *store.DB, s *jsonlSession) (*importing, error) {
	var man store.Manifest
	if len(s.meta.Manifest) > 0 {
		_ = json.Unmarshal(s.meta.Manifest, &man)
	}
	m := s.meta
	w, err := db.RestoreSession(store.SessionMeta{Title: m.Title, Scenario: m.Scenario, Variant: m.Variant, Protocol: m.Protocol,
		Provider: m.Provider, Model: m.Model, BaseURL: m.BaseURL, Source: m.Source, Version: m.Version, Manifest: man,
		CreatedAt: m.CreatedAt, ParentID: m.ParentID}, m.ID)
	if err != nil {
		return nil, err
	}
	imp := &importing{w: w, r: store.NewRestorer(w), meta: m}
	for _, a := range s.attempts {
		if err := imp.r.Attempt(attemptOf(a)); err != nil {
			return nil, err
		}
	}
	return imp, nil
}

// attemptOf is an attempt line as the attempt it records.
func attemptOf(a exportAttempt) store.Attempt {
	body := a.RequestBodyBase64
	if a.RequestBody != nil {
		body = []byte(*a.RequestBody)
	}
	sa := store.Attempt{Turn: a.Turn, Attempt: a.Attempt, Protocol: a.Protocol, StartedAt: a.StartedAt,
		Start: time.Duration(a.StartUS) * time.Microsecond, Method: a.Method, URL: a.URL, RequestHeader: a.RequestHeaders,
		RequestBody: body, Stream: a.Stream, RetryReason: a.RetryReason, Reasoning: a.ReasoningSetting, StatusCode: a.StatusCode,
		ResponseHeader: a.ResponseHeaders, Error: a.Error, State: a.State}
	tm := timingsOf(&sa.Timings)
	sa.Timings.ServerSource = a.ServerSource
	for i, name := range timingNames {
		if v, ok := a.TimingsUS[name]; ok {
			d := time.Duration(v) * time.Microsecond
			*tm[i] = &d
		}
	}
	return sa
}

func (imp *importing) step(st *exportStep) error { return imp.r.Step(&st.StoredStep) }

// finish ends the imported session with its recorded states.
func (imp *importing) finish() error {
	if imp == nil {
		return nil
	}
	status := imp.meta.Status
	if status == store.StatusRunning {
		status = store.StatusInterrupted
	}
	var at time.Time
	if imp.meta.FinishedAt != nil {
		at = *imp.meta.FinishedAt
	}
	return imp.r.Finish(status, at)
}
