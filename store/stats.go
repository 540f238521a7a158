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
}

// TimePoints are the time points stats reports, in the order they happen
// in an attempt. A new stored point is one more line here.
var TimePoints = []TimePoint{
	{Name: "sent", Column: "sent_us"},
	{Name: "first_byte", Column: "first_byte_us"},
	{Name: "first_event", Column: "first_event_us"},
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
	Points        []int64
}

// EachStatSession calls fn for each session f selects, oldest first, with
// its attempts. Sessions whose writer is gone count as interrupted, as in
// ListSessions; f.Limit is ignored.
func (db *DB) EachStatSession(f Filter, fn func(*StatSession) error) error {
	ctx := context.Background()
	dead, err := db.sweep(ctx)
	if err != nil {
		return err
	}
	where, args := db.filterWhere(f, len(dead) == 0)
	cond := ""
	if len(where) > 0 {
		cond = ` WHERE ` + strings.Join(where, ` AND `)
	}
	// One read transaction: both queries see the same snapshot.
	tx, err := db.sql.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer tx.Rollback()
	srows, err := tx.QueryContext(ctx, `SELECT sid, id, created_at, coalesce(finished_at, 0), status, scenario, variant, protocol,
		provider, model, model_reported, source, base_url,
		coalesce((SELECT layer FROM validations v WHERE v.sid = sessions.sid AND v.status = 'fail'
			AND v.seq = (SELECT max(seq) FROM validations w WHERE w.sid = sessions.sid) ORDER BY v.ord LIMIT 1), '')
		FROM sessions`+cond+` ORDER BY sid`, args...)
	if err != nil {
		return err
	}
	defer srows.Close()

	var cols strings.Builder
	for _, p := range TimePoints {
		cols.WriteString(`, coalesce(` + p.Column + `, -1)`)
	}
	aq := `SELECT sid, turn, attempt, status_code, state, response_model, coalesce(input_tokens, -1), coalesce(output_tokens, -1),
		coalesce(cache_read_tokens, -1), coalesce(cache_write_tokens, -1), coalesce(reasoning_tokens, -1)` + cols.String() + `
		FROM attempts`
	if cond != "" {
		aq += ` WHERE sid IN (SELECT sid FROM sessions` + cond + `)`
	}
	arows, err := tx.QueryContext(ctx, aq+` ORDER BY sid, turn, attempt`, args...)
	if err != nil {
		return err
	}
	defer arows.Close()

	// The two results are merged by sid, both in sid order.
	var (
		s       StatSession
		a       StatAttempt
		aSID    int64 = -1
		aMore         = true
		created int64
		done    int64
		points  = make([]int64, len(TimePoints))
		dest    = []any{&aSID, &a.Turn, &a.Attempt, &a.StatusCode, &a.State, &a.Model, &a.Input, &a.Output, &a.CacheRead, &a.CacheWrite, &a.Reasoning}
	)
	for i := range points {
		dest = append(dest, &points[i])
	}
	nextAttempt := func() error {
		if aMore = arows.Next(); !aMore {
			return arows.Err()
		}
		return arows.Scan(dest...)
	}
	if err := nextAttempt(); err != nil {
		return err
	}
	// Attempts' point slices are cut from one arena per session.
	var arena []int64
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
		s.Attempts, arena = s.Attempts[:0], arena[:0]
		for aMore && aSID <= sid {
			if aSID == sid {
				start := len(arena)
				arena = append(arena, points...)
				a.Points = arena[start:len(arena):len(arena)]
				s.Attempts = append(s.Attempts, a)
			}
			if err := nextAttempt(); err != nil {
				return err
			}
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
