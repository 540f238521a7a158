package store

import (
	"context"
	"database/sql"
	"strings"
	"time"
)

// What `modelwire stats` reads: sessions and their attempts as numbers,
// in two queries over the sessions and attempts tables (no events, no
// bodies), so that 100,000 sessions aggregate in well under a second.

// TimePoint is one of an attempt's stored time points: the name stats
// reports it by and its column (µs from the attempt's start, NULL when the
// attempt never got there).
type TimePoint struct {
	Name   string
	Column string
	// Output marks a point where generated output is first seen: an
	// attempt's generation speed (output tokens per second) is timed from
	// the earliest of these it reached to its terminal point.
	Output bool
	// Schema is the schema version whose migration added the column (0:
	// the first); a file older than that, opened as it is, reads the
	// point as never reached.
	Schema int
}

// TimePoints are the time points stats reports, in the order they happen
// in an attempt. A new stored point is one more line here (with the
// Schema that added its column).
var TimePoints = []TimePoint{
	{Name: "sent", Column: "sent_us"},
	{Name: "headers", Column: "first_byte_us"}, // 0001's name for it (see 0005)
	{Name: "first_event", Column: "first_event_us"},
	{Name: "first_token", Column: "first_token_us", Output: true, Schema: 5},
	{Name: "first_text", Column: "first_text_us", Output: true},
	{Name: "terminal", Column: "terminal_us"},
}

// TerminalPoint names the point that ends an attempt's generation.
const TerminalPoint = "terminal"

// StatSession is one session as stats reads it. The callback of
// EachStatSession gets the same value each time, its Attempts reused:
// keep what you need, not the pointer.
type StatSession struct {
	Info SessionInfo // the row's fields; no manifest, faults or token sums
	// Attempts are the session's attempts in turn and attempt order.
	Attempts []StatAttempt
}

// StatAttempt is one attempt's figures. Token counts are -1 where the
// provider reported none; Points hold µs from the attempt's start per
// TimePoints, -1 where the attempt never got there.
type StatAttempt struct {
	Turn, Attempt int
	StatusCode    int
	State         Status
	Model         string // as the response named it ("" when none did)
	Input, Output int64
	CacheRead     int64
	CacheWrite    int64
	Reasoning     int64
	CacheWrite1h  int64 // the hour-long part of CacheWrite
	WebSearches   int64
	Points        []int64
	// ReasoningSetting is the request's (AttemptMeta.Reasoning), when
	// SettingKnown.
	ReasoningSetting string
	SettingKnown     bool
}

// EachStatSession calls fn for each session f selects, oldest first, with
// its attempts. Sessions whose writer is gone count as interrupted, as in
// ListSessions; f.Limit is ignored. FailedLayer is read for failed
// sessions only.
//
// Sessions and attempts are two queries, run at once (the attempts in a
// goroutine, handed over in batches) and merged by sid: each is one pass
// in sid order. They read on two connections, so a session written while
// they run may show one attempt more or less than it ends with.
func (db *DB) EachStatSession(f Filter, fn func(*StatSession) error) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dead, err := db.sweep(ctx)
	if err != nil {
		return err
	}
	where, args := db.filterWhere(f, len(dead) == 0)
	cond := ""
	if len(where) > 0 {
		cond = ` WHERE ` + strings.Join(where, ` AND `)
	}
	id := `''` // the id is only wanted to find the dead
	if len(dead) > 0 {
		id = `id`
	}
	srows, err := db.sql.QueryContext(ctx, `SELECT sid, `+id+`, created_at, coalesce(finished_at, 0), status, scenario, variant,
		protocol, provider, model, model_reported, source, base_url,
		CASE WHEN status = 'failed' THEN coalesce((SELECT layer FROM validations v WHERE v.sid = sessions.sid AND v.status = 'fail'
			AND v.seq = (SELECT max(seq) FROM validations w WHERE w.sid = sessions.sid) ORDER BY v.ord LIMIT 1), '') ELSE '' END
		FROM sessions`+cond+` ORDER BY sid`, args...)
	if err != nil {
		return err
	}
	defer srows.Close()
	batches := make(chan attemptBatch, 4)
	go db.readStatAttempts(ctx, cond, args, batches)

	var (
		s       StatSession
		b       attemptBatch
		next    int // b.attempts[next] is the next attempt to merge
		created int64
		done    int64
	)
	// peek returns the next attempt's sid, -1 when there is none.
	peek := func() (int64, error) {
		for next == len(b.sids) {
			var ok bool
			if b, ok = <-batches; !ok {
				return -1, nil
			}
			if b.err != nil {
				return -1, b.err
			}
			next = 0
		}
		return b.sids[next], nil
	}
	for srows.Next() {
		var sid int64
		in := &s.Info
		if err := srows.Scan(&sid, &in.ID, &created, &done, &in.Status, &in.Scenario, &in.Variant, &in.Protocol,
			&in.Provider, &in.Model, &in.ModelReported, &in.Source, &in.BaseURL, &in.FailedLayer); err != nil {
			return err
		}
		in.CreatedAt, in.FinishedAt = time.UnixMilli(created), time.Time{}
		if done != 0 {
			in.FinishedAt = time.UnixMilli(done)
		}
		if dead[in.ID] {
			in.Status = StatusInterrupted
		}
		s.Attempts = s.Attempts[:0]
		for {
			asid, err := peek()
			if err != nil {
				return err
			}
			if asid < 0 || asid > sid {
				break
			}
			if asid == sid {
				s.Attempts = append(s.Attempts, b.attempts[next])
			}
			next++
		}
		if f.Status != "" && in.Status != f.Status {
			continue
		}
		if err := fn(&s); err != nil {
			return err
		}
	}
	return srows.Err()
}

// attemptBatch is a run of attempts in sid order (sids[i] is attempts[i]'s
// session), or the error that ended the reading.
type attemptBatch struct {
	sids     []int64
	attempts []StatAttempt
	err      error
}

const attemptBatchSize = 1024

// readStatAttempts sends the attempts of the sessions cond selects, in
// batches, then closes out; it stops when ctx ends.
func (db *DB) readStatAttempts(ctx context.Context, cond string, args []any, out chan<- attemptBatch) {
	defer close(out)
	send := func(b attemptBatch) bool {
		select {
		case out <- b:
			return true
		case <-ctx.Done():
			return false
		}
	}
	var cols strings.Builder
	if db.schema < 5 { // 0005 added the hour-long writes and web searches
		cols.WriteString(`, -1, -1`)
	} else {
		cols.WriteString(`, coalesce(cache_write_1h_tokens, -1), coalesce(web_search_calls, -1)`)
	}
	if db.schema < 6 { // 0006 added the reasoning setting
		cols.WriteString(`, NULL`)
	} else {
		cols.WriteString(`, reasoning_setting`)
	}
	for _, p := range TimePoints {
		if db.schema < p.Schema {
			cols.WriteString(`, -1`)
			continue
		}
		cols.WriteString(`, coalesce(` + p.Column + `, -1)`)
	}
	q := `SELECT sid, turn, attempt, status_code, state, response_model, coalesce(input_tokens, -1), coalesce(output_tokens, -1),
		coalesce(cache_read_tokens, -1), coalesce(cache_write_tokens, -1), coalesce(reasoning_tokens, -1)` + cols.String() + `
		FROM attempts`
	if cond != "" {
		q += ` WHERE sid IN (SELECT sid FROM sessions` + cond + `)`
	}
	rows, err := db.sql.QueryContext(ctx, q+` ORDER BY sid, turn, attempt`, args...)
	if err != nil {
		send(attemptBatch{err: err})
		return
	}
	defer rows.Close()
	var (
		sid     int64
		a       StatAttempt
		points  = make([]int64, len(TimePoints))
		setting sql.NullString
		dest    = []any{&sid, &a.Turn, &a.Attempt, &a.StatusCode, &a.State, &a.Model, &a.Input, &a.Output, &a.CacheRead, &a.CacheWrite, &a.Reasoning, &a.CacheWrite1h, &a.WebSearches, &setting}
	)
	for i := range points {
		dest = append(dest, &points[i])
	}
	var b attemptBatch
	var arena []int64 // the batch's points
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			send(attemptBatch{err: err})
			return
		}
		if b.sids == nil {
			b.sids, b.attempts = make([]int64, 0, attemptBatchSize), make([]StatAttempt, 0, attemptBatchSize)
			arena = make([]int64, 0, attemptBatchSize*len(points))
		}
		a.ReasoningSetting, a.SettingKnown = setting.String, setting.Valid
		start := len(arena)
		arena = append(arena, points...)
		a.Points = arena[start:len(arena):len(arena)]
		b.sids, b.attempts = append(b.sids, sid), append(b.attempts, a)
		if len(b.sids) == attemptBatchSize {
			if !send(b) {
				return
			}
			b = attemptBatch{}
		}
	}
	if err := rows.Err(); err != nil {
		send(attemptBatch{err: err})
		return
	}
	if len(b.sids) > 0 {
		send(b)
	}
}
