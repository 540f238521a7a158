package store

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func toolCallRows(t *testing.T, db *DB, sid int64) int {
	t.Helper()
	var n int
	if err := db.sql.QueryRow(`SELECT count(*) FROM tool_calls WHERE sid = ?`, sid).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func commits(db *DB) int {
	db.w.flushMu.Lock()
	defer db.w.flushMu.Unlock()
	return db.w.commits
}

// TestExecCommitsWithTheQueue: an attempt started while steps are queued
// (a retry after a cut stream) goes in the same commit as them.
func TestExecCommitsWithTheQueue(t *testing.T) {
	db, err := Open(filepath.Join(t.TempDir(), "x.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s, err := db.CreateSession(SessionMeta{Title: "run", Protocol: "openai-responses"})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := s.StartAttempt(1, AttemptMeta{Method: "POST", URL: "http://x/v1/responses"})
	if err != nil {
		t.Fatal(err)
	}
	if err := rec.Append(deltaStep(0, 1, "msg_1")); err != nil {
		t.Fatal(err)
	}
	before := commits(db)
	if _, err := s.StartAttempt(1, AttemptMeta{Method: "POST", URL: "http://x/v1/responses", RetryReason: "cut"}); err != nil {
		t.Fatal(err)
	}
	if got := commits(db) - before; got != 1 {
		t.Errorf("queued step and attempt start took %d commits, want 1", got)
	}
	got, err := db.GetSession(s.ID())
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Attempts) != 2 || got.Attempts[0].LastSeq != 1 {
		t.Errorf("after the retry's start: %d attempts, the first's last entry %d; want 2 and 1 (its step committed)", len(got.Attempts), got.Attempts[0].LastSeq)
	}
}

// TestCopyAttemptsCommitWithTheBatch: a copy session's attempts (a
// collected trace) are written with the batch — nothing until it commits,
// then each attempt with its own steps and calls, and the session's end.
func TestCopyAttemptsCommitWithTheBatch(t *testing.T) {
	db, err := Open(filepath.Join(t.TempDir(), "x.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s, err := db.CreateSession(SessionMeta{Copy: true, Title: "trace", Protocol: "openai-responses"})
	if err != nil {
		t.Fatal(err)
	}
	before := commits(db)
	for turn := 1; turn <= 3; turn++ {
		rec, err := s.StartAttempt(turn, AttemptMeta{Method: "POST", URL: "http://x/v1/responses"})
		if err != nil {
			t.Fatal(err)
		}
		appendResponse(t, rec, 3+turn, fmt.Sprintf("msg_%d", turn))
		if err := s.RecordToolResult(ToolResult{Turn: turn, CallID: fmt.Sprintf("call_%d", turn), Content: `{}`}); err != nil {
			t.Fatal(err)
		}
	}
	if got := commits(db) - before; got != 0 {
		t.Errorf("a copy's three turns took %d commits before the batch, want 0", got)
	}
	if n := toolCallRows(t, db, s.ls.sid); n != 0 {
		t.Errorf("a copy's results committed before the batch (%d rows)", n)
	}
	if err := s.FinishAt(StatusDone, time.Now()); err != nil {
		t.Fatal(err)
	}
	if got := commits(db) - before; got != 0 {
		t.Errorf("a copy's end took %d commits before the batch, want 0", got)
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if got := commits(db) - before; got != 1 {
		t.Errorf("the batch took %d commits, want 1", got)
	}
	if got, err := db.GetSession(s.ID()); err != nil || got.Status != StatusDone {
		t.Errorf("after the batch: %v, status %v; want done", err, got)
	}
	_, turns, err := db.Turns(s.ID())
	if err != nil {
		t.Fatal(err)
	}
	if len(turns) != 3 {
		t.Fatalf("%d turns stored, want 3", len(turns))
	}
	for i, tr := range turns {
		if want := fmt.Sprintf("msg_%d", i+1); len(tr.Items) != 1 || tr.Items[0].ID != want || tr.Attempt.State != StatusDone {
			t.Errorf("turn %d: items %+v state %s; want one item %s, done", i+1, tr.Items, tr.Attempt.State, want)
		}
		if tr.Attempt.FirstSeq == 0 || tr.Attempt.RawEvents != 4+i {
			t.Errorf("turn %d: first entry %d, %d raw events; want its own steps (%d)", i+1, tr.Attempt.FirstSeq, tr.Attempt.RawEvents, 4+i)
		}
	}
	if n := toolCallRows(t, db, s.ls.sid); n != 3 {
		t.Errorf("%d results stored, want 3", n)
	}
}

// TestExecFailureKeepsTheQueue: when the write exec runs fails, what was
// queued before it is still committed, and the failure is not reported
// again by the next write.
func TestExecFailureKeepsTheQueue(t *testing.T) {
	db, err := Open(filepath.Join(t.TempDir(), "x.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s, err := db.CreateSession(SessionMeta{Copy: true, Title: "trace", Protocol: "openai-chat"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.RecordToolResult(ToolResult{Turn: 1, CallID: "call_1", Name: "get_order", Content: `{}`}); err != nil {
		t.Fatal(err)
	}
	// A session with an id already taken fails inside exec's transaction.
	if _, err := db.createSession(SessionMeta{Title: "dup", Protocol: "openai-chat"}, s.ID(), StatusRunning); err == nil || !strings.Contains(err.Error(), "UNIQUE") {
		t.Fatalf("duplicate id: err = %v, want a UNIQUE failure", err)
	}
	if n := toolCallRows(t, db, s.ls.sid); n != 1 {
		t.Errorf("the queued result was lost with the failed write (%d rows)", n)
	}
	if err := s.RecordToolResult(ToolResult{Turn: 1, CallID: "call_2", Name: "get_order", Content: `{}`}); err != nil {
		t.Errorf("the next write reports the failed one: %v", err)
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if n := toolCallRows(t, db, s.ls.sid); n != 2 {
		t.Errorf("%d results stored, want 2", n)
	}
}
