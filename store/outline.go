package store

import (
	"context"
	"strings"
)

// Outline is what a replay needs to know of a timeline before reading
// it: its length and its session-level entries (decisions, tool results,
// verdicts — few, and where turns start and end between responses). It
// reads the chunk index and the session-level chunks only, never the
// responses' events, so it costs the same for a session of any length.
func (db *DB) Outline(id string) (n int, session []Entry, err error) {
	ctx := context.Background()
	sid, err := db.sid(ctx, id)
	if err != nil {
		return 0, nil, err
	}
	err = db.sql.QueryRowContext(ctx, `SELECT coalesce(max(last_seq), 0) FROM chunks WHERE sid = ?`, sid).Scan(&n)
	if err != nil {
		return 0, nil, err
	}
	rows, err := db.sql.QueryContext(ctx, `SELECT steps, -1, NULL FROM chunks WHERE sid = ? AND aid IS NULL ORDER BY seq`, sid)
	if err != nil {
		return 0, nil, err
	}
	it := &stepIter{rows: rows, from: 1}
	defer it.close()
	for s := it.next(); s != nil; s = it.next() {
		for i := range s.entries() {
			session = append(session, s.entry(i))
		}
	}
	return n, session, it.close()
}

// EachEntryContaining calls fn, in order, for the entries of the chunks of
// session id whose stored events contain any of texts (as stored: JSON),
// and only those: a pass for rare events (diagnostics, proposals) that
// decodes only the chunks that hold them. fn sees the chunks' other
// entries too and picks its own.
func (db *DB) EachEntryContaining(id string, texts []string, fn func(Entry) error) error {
	ctx := context.Background()
	sid, err := db.sid(ctx, id)
	if err != nil {
		return err
	}
	if len(texts) == 0 {
		return nil
	}
	conds := make([]string, len(texts))
	args := []any{sid}
	for i, t := range texts {
		conds[i] = `instr(steps, ?) > 0`
		args = append(args, t)
	}
	rows, err := db.sql.QueryContext(ctx, `SELECT steps, -1, NULL FROM chunks WHERE sid = ? AND (`+strings.Join(conds, ` OR `)+`) ORDER BY seq`, args...)
	if err != nil {
		return err
	}
	it := &stepIter{rows: rows, from: 1}
	defer it.close()
	for s := it.next(); s != nil; s = it.next() {
		for i := range s.entries() {
			if err := fn(s.entry(i)); err != nil {
				return err
			}
		}
	}
	return it.close()
}
