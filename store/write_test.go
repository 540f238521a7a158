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

// TestCopyAttemptsCommitWithTheBatch: a copy session (a collected trace)
// is written with the batch — its row, attempts, entries and end: nothing
// until it commits, then each attempt with its own steps and calls.
func TestCopyAttemptsCommitWithTheBatch(t *testing.T) {
	db, err := Open(filepath.Join(t.TempDir(), "x.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	before := commits(db)
	s, err := db.CreateSession(SessionMeta{Copy: true, Title: "trace", Protocol: "openai-responses"})
	if err != nil {
		t.Fatal(err)
	}
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
	if _, err := db.GetSession(s.ID()); err == nil {
		t.Errorf("a copy's session is listed before the batch")
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
	failing := func(t *txn) error { return t.exec(`UPDATE no_such_table SET x = 1`) }
	if err := db.w.exec(failing); err == nil || !strings.Contains(err.Error(), "no_such_table") {
		t.Fatalf("exec: err = %v, want the statement's failure", err)
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

// A copy's id taken by another writer before the batch commits: the row
// takes another id, which ID reports; neither session is lost.
func TestCopyIDTakenBeforeTheBatch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.db")
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	other, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	s, err := db.CreateSession(SessionMeta{Copy: true, Title: "collected", Protocol: "openai-chat"})
	if err != nil {
		t.Fatal(err)
	}
	first := s.ID()
	o, err := other.createSession(SessionMeta{Title: "the other writer's", Protocol: "openai-chat"}, first, StatusRunning)
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Finish(StatusDone); err != nil {
		t.Fatal(err)
	}
	if err := s.FinishAt(StatusDone, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := db.Flush(); err != nil {
		t.Fatalf("the batch with a taken id: %v", err)
	}
	if s.ID() == first {
		t.Fatalf("the copy kept the taken id %s", first)
	}
	for id, title := range map[string]string{first: "the other writer's", s.ID(): "collected"} {
		if got, err := db.GetSession(id); err != nil || got.Title != title || got.Status != StatusDone {
			t.Errorf("session %s: %v %+v, want %q, done", id, err, got, title)
		}
	}
}

// An importer that fails part way deletes the copy it was writing, whose
// row may still be waiting for the batch: nothing of it is left.
func TestDeleteCopyBeforeTheBatch(t *testing.T) {
	db, err := Open(filepath.Join(t.TempDir(), "x.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s, err := db.CreateSession(SessionMeta{Copy: true, Title: "half imported", Protocol: "openai-chat"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.RecordToolResult(ToolResult{Turn: 1, CallID: "call_1", Content: `{}`}); err != nil {
		t.Fatal(err)
	}
	if err := s.Interrupt(); err != nil {
		t.Fatal(err)
	}
	if err := db.DeleteSession(s.ID()); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if err := db.Flush(); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.sql.QueryRow(`SELECT (SELECT count(*) FROM sessions) + (SELECT count(*) FROM tool_calls)`).Scan(&n); err != nil || n != 0 {
		t.Errorf("%d rows left of the deleted copy (%v)", n, err)
	}
}
