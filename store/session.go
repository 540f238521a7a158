package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"
)

// Status is a session's (or an attempt's) state in the store.
type Status string

// The statuses: running while it is recorded (or its process died, until
// the next open sweeps it to interrupted), done when it ended well, failed
// when its work ran and failed, interrupted when it was stopped before its
// end.
const (
	StatusRunning     Status = "running"
	StatusDone        Status = "done"
	StatusFailed      Status = "failed"
	StatusInterrupted Status = "interrupted"
)

// Verdict is a validation layer's outcome, as the store keeps it (the
// validate package judges the layers and names them for its callers).
type Verdict string

// The verdicts.
const (
	VerdictPass Verdict = "pass"
	VerdictFail Verdict = "fail"
	VerdictSkip Verdict = "skip"
)

// Valid reports whether v is one of the verdicts.
func (v Verdict) Valid() bool { return v == VerdictPass || v == VerdictFail || v == VerdictSkip }

// Session sources: what recorded a session (SessionMeta.Source).
const (
	SourceRun        = "run"         // modelwire run
	SourceTUI        = "tui"         // the workbench
	SourceProxy      = "proxy"       // modelwire proxy: one verdict per exchange
	SourceClaudeCode = "claude-code" // an imported Claude Code transcript
	SourceHAR        = "har"         // an imported HAR file
	SourceWorkshop   = "workshop"    // serve --workshop: a participant's graded requests, one verdict each
)

// PerExchange reports whether a session of this source records one
// verdict per exchange (each with its turn) and lets attempts overlap, as
// a recording does, rather than a run's one verdict at the end.
func PerExchange(source string) bool { return source == SourceProxy || source == SourceWorkshop }

// SessionMeta describes a session when it is created.
type SessionMeta struct {
	// Title is what a person reads in the list (a scenario's title, or
	// "POST api.openai.com/v1/responses" for a recording); --search
	// matches it.
	Title    string
	Scenario string // "refund", or a scenario file's path
	Variant  string // "" or the variant of refund/<variant>
	Protocol string
	Provider string
	Model    string // the model asked for
	BaseURL  string // redacted when stored
	// Source says what recorded it: "run", "tui", "proxy", "har", ...
	Source string
	// Version is the modelwire version that recorded it.
	Version  string
	Manifest Manifest
	// CreatedAt defaults to now.
	CreatedAt time.Time
	// ParentID names the session this one was made from (edit-and-resend,
	// a fork); "" for none.
	ParentID string
	// Copy: the session is recorded from a record kept elsewhere (an
	// application's trace, a file), so its attempts, decisions, results,
	// verdicts and end commit with the next batch instead of each at once
	// (Flush waits for it) — a crash loses nothing that cannot be read
	// again. Not stored.
	Copy bool
}

// SessionWriter records one session. Only the DB handle that created a
// session writes it; everything it is given is committed in order.
type SessionWriter struct {
	db *DB
	ls *liveSession
}

// CreateSession starts recording a new session, status running.
func (db *DB) CreateSession(m SessionMeta) (*SessionWriter, error) {
	return db.createSession(m, "", StatusRunning)
}

func (db *DB) createSession(m SessionMeta, id string, status Status) (*SessionWriter, error) {
	if db.w == nil {
		return nil, errors.New("store: the database is open read-only")
	}
	created := m.CreatedAt
	if created.IsZero() {
		created = time.Now()
	}
	if p := Redact(string(m.Manifest.Parameters)); p != string(m.Manifest.Parameters) {
		m.Manifest.Parameters = json.RawMessage(p) // an upstream's userinfo or key= in the parameters
	}
	man, err := m.Manifest.complete(m)
	if err != nil {
		return nil, err
	}
	manJSON, _ := json.Marshal(man)
	ls := &liveSession{protocol: m.Protocol, start: time.Now(), nextSeq: 1, attempts: map[int]int{}, batchEntries: m.Copy}
	insert := func(t *txn, id string) (bool, error) {
		err := t.w.conn.QueryRowContext(t.ctx, `INSERT INTO sessions (id, created_at, status, title, scenario, variant,
			protocol, provider, model, base_url, source, modelwire_version, manifest, writer_pid, writer_token, parent_id)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING RETURNING sid`,
			id, created.UnixMilli(), status, Redact(m.Title), m.Scenario, m.Variant, m.Protocol, m.Provider, m.Model,
			Redact(m.BaseURL), m.Source, m.Version, string(manJSON), os.Getpid(), db.token, m.ParentID).Scan(&ls.sid)
		if errors.Is(err, sql.ErrNoRows) {
			return false, nil // the id is taken
		}
		return err == nil, err
	}
	if m.Copy && id == "" {
		return db.createCopy(ls, created, insert)
	}
	fixed := id != ""
	for try := 0; ; try++ {
		if !fixed {
			id = newID(created)
		}
		ls.id = id
		var ok bool
		if err = db.w.exec(func(t *txn) (err error) { ok, err = insert(t, id); return err }); err != nil {
			return nil, err
		}
		if ok {
			break
		}
		if fixed || try == 4 {
			return nil, fmt.Errorf("store: session id %s is taken", id)
		}
	}
	db.w.mu.Lock()
	db.w.sessions[ls.sid] = ls
	db.w.mu.Unlock()
	return &SessionWriter{db: db, ls: ls}, nil
}

// createCopy starts a copy (SessionMeta.Copy): its row goes in with the
// batch, like everything else of it, so a collected trace costs no commit
// of its own. Its id is one no session waiting for the batch has; should a
// stored session have it by then (the same millisecond and 15 random
// bits), the row takes another, which ID reports from then on.
func (db *DB) createCopy(ls *liveSession, created time.Time, insert func(t *txn, id string) (bool, error)) (*SessionWriter, error) {
	w := db.w
	w.mu.Lock()
	for {
		ls.id = newID(created)
		if !w.queuedIDs[ls.id] {
			break
		}
	}
	w.queuedIDs[ls.id] = true
	w.mu.Unlock()
	row := execOp(func(t *txn) error {
		w.mu.Lock()
		id := ls.id
		w.mu.Unlock()
		// A batch that failed after this row ran is retried whole: the
		// row runs again, and the sid it had then is not the session's.
		prev := ls.sid
		for try := 0; ; try++ {
			ok, err := insert(t, id)
			if err != nil {
				return err
			}
			if ok {
				break
			}
			if try == 4 {
				return fmt.Errorf("store: session id %s is taken", id)
			}
			id = newID(created)
		}
		w.mu.Lock()
		delete(w.queuedIDs, ls.id)
		if prev != 0 && prev != ls.sid {
			delete(w.sessions, prev)
		}
		ls.id = id
		w.sessions[ls.sid] = ls
		w.mu.Unlock()
		return nil
	})
	if _, err := w.append(ls, 0, false, func(_ int, b []op) []op { return append(b, row) }); err != nil {
		return nil, err
	}
	return &SessionWriter{db: db, ls: ls}, nil
}

// ID is the session's public id.
func (s *SessionWriter) ID() string {
	s.db.w.mu.Lock()
	defer s.db.w.mu.Unlock()
	return s.ls.id
}

// Flush commits everything recorded so far.
func (s *SessionWriter) Flush() error { return s.db.w.flush() }

// Finish commits everything and ends the session as done or failed.
func (s *SessionWriter) Finish(status Status) error {
	return s.FinishAt(status, time.Now())
}

// FinishAt is Finish with the session's end at a given time (an
// import's, from its file).
func (s *SessionWriter) FinishAt(status Status, at time.Time) error {
	if status != StatusDone && status != StatusFailed {
		return fmt.Errorf("store: a session finishes as %q or %q, not %q", StatusDone, StatusFailed, status)
	}
	return s.finish(status, at)
}

// Interrupt ends a session that was stopped before its end (cancelled,
// replaced by another, the program quitting): it lists as interrupted at
// once, not running until the database is closed. A finished session is
// left as it is.
func (s *SessionWriter) Interrupt() error {
	w := s.db.w
	w.mu.Lock()
	done := s.ls.finished
	w.mu.Unlock()
	if done {
		return nil
	}
	return s.finish(StatusInterrupted, time.Time{})
}

func (s *SessionWriter) finish(status Status, at time.Time) error {
	w := s.db.w
	var finished any
	if !at.IsZero() {
		finished = at.UnixMilli()
	}
	ls := s.ls
	end := execOp(func(t *txn) error { // ls.sid: a copy's is set by the batch
		if err := t.exec(`UPDATE sessions SET status = ?, finished_at = ? WHERE sid = ?`, status, finished, ls.sid); err != nil {
			return err
		}
		return t.exec(sqlInterruptAttempts, ls.sid)
	})
	if s.ls.batchEntries {
		// A copy's end goes in with the batch, like its entries.
		_, err := w.append(s.ls, 0, false, func(_ int, b []op) []op { return append(b, end) })
		w.mu.Lock()
		s.ls.finished = true
		w.mu.Unlock()
		return err
	}
	if err := w.exec(end); err != nil {
		return err
	}
	w.mu.Lock()
	s.ls.finished = true
	w.mu.Unlock()
	return nil
}

// sessionOffset is the monotonic time since the session started.
func (s *SessionWriter) sessionOffset() time.Duration { return time.Since(s.ls.start) }

// sweep marks running sessions whose writer is gone as interrupted (in a
// read-only handle it only reports them) and returns their ids.
func (db *DB) sweep(ctx context.Context) (map[string]bool, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT sid, id, writer_pid, writer_token FROM sessions WHERE status = 'running'`)
	if err != nil {
		return nil, err
	}
	type cand struct {
		sid int64
		id  string
	}
	var dead []cand
	for rows.Next() {
		var c cand
		var pid int
		var token string
		if err := rows.Scan(&c.sid, &c.id, &pid, &token); err != nil {
			rows.Close()
			return nil, err
		}
		if !writerAlive(pid, token) {
			dead = append(dead, c)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := make(map[string]bool, len(dead))
	for _, c := range dead {
		out[c.id] = true
	}
	if len(dead) == 0 || db.w == nil {
		return out, nil
	}
	return out, db.w.exec(func(t *txn) error {
		for _, c := range dead {
			if err := t.exec(sqlInterruptSession, c.sid); err != nil {
				return err
			}
			if err := t.exec(sqlInterruptAttempts, c.sid); err != nil {
				return err
			}
		}
		return nil
	})
}
