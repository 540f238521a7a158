package stats_test

import (
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/store"
)

// The stores the tests and the benchmark read are written through the
// store's own writer (the one every session is recorded through), with
// the timings and usage each attempt is given here.

// attemptSpec is one HTTP attempt: its status, the offsets it reached
// (0: never), and its usage (nil: none reported).
type attemptSpec struct {
	status                                     int
	firstByte, firstEvent, firstText, terminal time.Duration
	firstReasoning                             time.Duration // 0: no reasoning
	usage                                      *adapters.Usage
	model                                      string
	failed                                     bool // ended with a transport error
}

// sessionSpec is one session: what it ran, its attempts (all of turn
// 1), and how it ended (failedLayer "" for done).
type sessionSpec struct {
	protocol, provider, model string
	created                   time.Time
	attempts                  []attemptSpec
	failedLayer               string
}

var layers = []string{"transport", "protocol", "parse", "schema", "domain"}

func usage(in, out, cached, reasoning int64) *adapters.Usage {
	u := &adapters.Usage{InputTokens: adapters.Int(in), OutputTokens: adapters.Int(out), CacheReadTokens: adapters.Int(cached)}
	if reasoning > 0 {
		u.ReasoningTokens = adapters.Int(reasoning)
	}
	return u
}

// writeSession records s as the engine would: attempts with their marks,
// events and usage, the validation of the turn, the session's end.
func writeSession(tb testing.TB, db *store.DB, s sessionSpec) {
	tb.Helper()
	must := func(err error) {
		if err != nil {
			tb.Fatal(err)
		}
	}
	w, err := db.CreateSession(store.SessionMeta{Title: "stats fixture", Scenario: "refund", Protocol: s.protocol,
		Provider: s.provider, Model: s.model, Source: store.SourceRun, CreatedAt: s.created})
	must(err)
	for _, a := range s.attempts {
		rec, err := w.StartAttempt(1, store.AttemptMeta{Method: "POST", URL: "http://sim/v1", Stream: true})
		must(err)
		must(rec.MarkAt(store.MarkSent, 100*time.Microsecond))
		if a.firstByte > 0 {
			must(rec.MarkAt(store.MarkFirstByte, a.firstByte))
			must(rec.Response(a.status, nil))
		}
		idx := 0
		step := func(at time.Duration, evs ...adapters.Event) {
			must(rec.AppendAt(at, adapters.Step{Index: idx, Raw: adapters.RawEvent{Event: "e", Data: "{}"}, Events: evs}))
			idx++
		}
		if a.firstEvent > 0 {
			step(a.firstEvent, adapters.Event{Type: adapters.EvResponseStarted, ResponseID: "r", Model: a.model})
		}
		if a.firstReasoning > 0 {
			step(a.firstReasoning, adapters.Event{Type: adapters.EvReasoningDelta, ItemID: "rs", Delta: "thinking"})
		}
		if a.firstText > 0 {
			step(a.firstText, adapters.Event{Type: adapters.EvTextDelta, ItemID: "m", Delta: "ok"})
		}
		var end []adapters.Event
		if a.usage != nil {
			end = append(end, adapters.Event{Type: adapters.EvUsage, Usage: a.usage})
		}
		at := a.terminal
		if at > 0 {
			end = append(end, adapters.Event{Type: adapters.EvTerminal, Status: adapters.StatusCompleted})
		} else {
			at = a.firstEvent + time.Millisecond
		}
		if len(end) > 0 {
			step(at, end...)
		}
		var ferr error
		if a.failed {
			ferr = errors.New("stream cut")
		}
		must(rec.FinishAt(ferr, at))
	}
	var vs []store.Validation
	for _, l := range layers {
		st := store.VerdictPass
		if l == s.failedLayer {
			st = store.VerdictFail
		}
		vs = append(vs, store.Validation{Layer: l, Status: st})
	}
	must(w.RecordValidation(1, vs))
	status := store.StatusDone
	if s.failedLayer != "" {
		status = store.StatusFailed
	}
	must(w.FinishAt(status, s.created.Add(time.Second)))
}

// multiply copies every session of the file at path (with its attempts
// and validations) k-1 more times, in SQL, whatever columns the schema
// has: the benchmark's 100,000 sessions from a few hundred written
// through the store. The copies keep no timeline (stats reads none).
func multiply(tb testing.TB, path string, k int) {
	tb.Helper()
	raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		tb.Fatal(err)
	}
	defer raw.Close()
	cols := func(table string, skip ...string) []string {
		rows, err := raw.Query(`SELECT name FROM pragma_table_info(?)`, table)
		if err != nil {
			tb.Fatal(err)
		}
		defer rows.Close()
		var out []string
	next:
		for rows.Next() {
			var c string
			if err := rows.Scan(&c); err != nil {
				tb.Fatal(err)
			}
			for _, s := range skip {
				if c == s {
					continue next
				}
			}
			out = append(out, c)
		}
		return out
	}
	var maxSID, maxAID int64
	if err := raw.QueryRow(`SELECT (SELECT max(sid) FROM sessions), (SELECT max(aid) FROM attempts)`).Scan(&maxSID, &maxAID); err != nil {
		tb.Fatal(err)
	}
	sc := strings.Join(cols("sessions", "sid", "id"), ", ")
	ac := strings.Join(cols("attempts", "aid", "sid", "first_seq", "last_seq"), ", ")
	vc := strings.Join(cols("validations", "sid"), ", ")
	tx, err := raw.Begin()
	if err != nil {
		tb.Fatal(err)
	}
	for i := int64(1); i < int64(k); i++ {
		for _, q := range []string{
			fmt.Sprintf(`INSERT INTO sessions (sid, id, %s) SELECT sid + %d, id || '-%d', %s FROM sessions WHERE sid <= %d`, sc, i*maxSID, i, sc, maxSID),
			fmt.Sprintf(`INSERT INTO attempts (aid, sid, %s) SELECT aid + %d, sid + %d, %s FROM attempts WHERE aid <= %d`, ac, i*maxAID, i*maxSID, ac, maxAID),
			fmt.Sprintf(`INSERT INTO validations (sid, %s) SELECT sid + %d, %s FROM validations WHERE sid <= %d`, vc, i*maxSID, vc, maxSID),
		} {
			if _, err := tx.Exec(q); err != nil {
				tb.Fatal(err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		tb.Fatal(err)
	}
}
