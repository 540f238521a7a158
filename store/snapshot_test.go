package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/modelwire/modelwire/adapters"
)

// withSnapshotEvery sets snapshotEvery for one test, with three levels
// of fanout 3 (so that a short session has rows at every level).
func withSnapshotEvery(t testing.TB, k int) { withSnapshots(t, k, 3, 3) }

func withSnapshots(t testing.TB, every, fanout, levels int) {
	t.Helper()
	e, f, l := snapshotEvery, snapshotFanout, snapshotLevels
	snapshotEvery, snapshotFanout, snapshotLevels = every, fanout, levels
	t.Cleanup(func() { snapshotEvery, snapshotFanout, snapshotLevels = e, f, l })
}

// longStream is a response of about n steps exercising every rule the
// reducer has: items of every kind open at once, deltas with multi-byte
// text, closes whose final text equals or replaces the deltas (or comes
// with nothing before it), tool calls with good and bad arguments, deltas
// for items that never started, duplicates, raw events without canonical
// events, several events in one step, usage, a terminal, late events and
// the end. With bad set, some deltas carry ill-formed UTF-8, split across
// deltas.
func longStream(rng *rand.Rand, n int, bad bool) *liveStream {
	l := newLiveStream(adapters.OpenAIResponses)
	l.step(sse("response.created", `{}`), adapters.Event{Type: adapters.EvResponseStarted, ResponseID: "resp_long", Model: "gpt-test"})
	type open struct {
		id   string
		kind adapters.ItemKind
		text string
	}
	var items []*open
	next := 0
	deltaType := map[adapters.ItemKind]adapters.EventType{adapters.KindMessage: adapters.EvTextDelta, adapters.KindReasoning: adapters.EvReasoningDelta,
		adapters.KindToolCall: adapters.EvToolArgsDelta, adapters.KindRefusal: adapters.EvRefusalDelta}
	kinds := []adapters.ItemKind{adapters.KindMessage, adapters.KindReasoning, adapters.KindToolCall, adapters.KindRefusal}
	pieces := []string{"退款", " refund", "<b>&", `"q"`, "\n", "é", " "}
	argPieces := []string{`{"order_id":`, ` "O-20`, `48"`, `}`, `[1,`, `2]`}
	if bad {
		pieces = append(pieces, "\xe2\x82", "\xac", "\xff")
	}
	for len(l.steps) < n {
		raw := sse("x", fmt.Sprintf(`{"i":%d}`, len(l.steps)))
		switch r := rng.IntN(20); {
		case r < 2 || len(items) == 0:
			k := kinds[rng.IntN(len(kinds))]
			it := &open{id: fmt.Sprintf("it_%d", next), kind: k}
			next++
			items = append(items, it)
			l.step(raw, adapters.Event{Type: adapters.EvItemStarted, ItemID: it.id, Kind: string(k), CallID: "call_" + it.id, Name: "get_order"})
		case r < 13:
			it := items[rng.IntN(len(items))]
			d := pieces[rng.IntN(len(pieces))]
			if it.kind == adapters.KindToolCall {
				d = argPieces[rng.IntN(len(argPieces))]
			}
			it.text += d
			l.step(raw, adapters.Event{Type: deltaType[it.kind], ItemID: it.id, Delta: d})
		case r < 15:
			i := rng.IntN(len(items))
			it := items[i]
			items = append(items[:i], items[i+1:]...)
			ev := adapters.Event{Type: adapters.EvItemDone, ItemID: it.id, Signature: "sig_" + it.id}
			switch rng.IntN(4) {
			case 0:
				f := it.text
				ev.Final = &f
			case 1:
				f := it.text + " (final)"
				if it.kind == adapters.KindToolCall {
					f = `{"order_id":"O-2048"}`
				}
				ev.Final = &f
			}
			l.step(raw, ev)
		case r == 15:
			l.step(raw) // a raw event with no canonical event
		case r == 16:
			l.step(raw, adapters.Event{Type: adapters.EvTextDelta, ItemID: fmt.Sprintf("ghost_%d", next), Delta: "boo"})
			next++
		case r == 17:
			l.step(raw, adapters.Event{Type: adapters.EvUsage, Usage: &adapters.Usage{InputTokens: adapters.Int(int64(len(l.steps))),
				ProviderUsage: json.RawMessage(`{ "input_tokens" : 1, "note": "<&>" }`)}},
				adapters.Diag(adapters.DiagMalformedEvent, "a malformed event"))
		case r == 18:
			l.step(raw, adapters.Event{Type: adapters.EvItemStarted, ItemID: "it_0", Kind: "message"}) // started twice
		default:
			l.step(raw, adapters.Event{Type: adapters.EvUnknown, RawType: "ping"})
		}
	}
	l.step(sse("response.completed", `{}`),
		adapters.Event{Type: adapters.EvUsage, Usage: &adapters.Usage{InputTokens: adapters.Int(9), OutputTokens: adapters.Int(99)}},
		adapters.Terminal(adapters.StatusCompleted, adapters.StopFinal, "completed"))
	l.step(sse("late", `{}`), adapters.Event{Type: adapters.EvTextDelta, ItemID: "it_0", Delta: "late"})
	l.end()
	return l
}

// appendStream records l's steps with rec and finishes the attempt.
func appendStream(t testing.TB, rec *Recorder, l *liveStream) {
	t.Helper()
	for i, st := range l.steps {
		if err := rec.AppendAt(time.Duration(i+1)*time.Millisecond, st); err != nil {
			t.Fatal(err)
		}
	}
	if err := rec.Finish(nil); err != nil {
		t.Fatal(err)
	}
}

// snapshotSession records a session of several turns and attempts: a long
// response, a decision and a tool result, a failed attempt and its retry
// (a long response with ill-formed UTF-8), a validation, and the refund
// stream. It returns the id and the first entry of each long response with
// its live stream.
func snapshotSession(t testing.TB, db *DB, seed uint64) (string, map[int]*liveStream) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	w, err := db.CreateSession(refundMeta())
	if err != nil {
		t.Fatal(err)
	}
	starts := map[int]*liveStream{}
	next := 1
	attempt := func(turn int, l *liveStream) {
		rec, err := w.StartAttempt(turn, AttemptMeta{Method: "POST", URL: "https://api.openai.com/v1/responses", Stream: true})
		if err != nil {
			t.Fatal(err)
		}
		starts[next] = l
		appendStream(t, rec, l)
		for _, st := range l.steps {
			next += stepEntries(st)
		}
	}
	attempt(1, longStream(rng, 90, false))
	if err := w.RecordDecision(Decision{Turn: 1, CallID: "call_it_1", Name: "get_order", Decision: DecisionApproved, Arguments: json.RawMessage(`{"a":1}`)}); err != nil {
		t.Fatal(err)
	}
	w.RecordToolResult(ToolResult{Turn: 1, CallID: "call_it_1", Content: "ok"})
	next += 2
	failed := newLiveStream(adapters.OpenAIResponses)
	failed.step(adapters.RawEvent{Data: `{"error":{}}`}, adapters.Event{Type: adapters.EvTerminal, Status: adapters.StatusFailed, StopReason: adapters.StopError,
		Error: &adapters.APIError{Type: "rate_limit", HTTPStatus: 429}})
	attempt(2, failed)
	attempt(2, longStream(rng, 70, true))
	w.RecordValidation(0, []Validation{{"transport", "pass", ""}})
	next++
	attempt(3, refundStream())
	if err := w.Finish(StatusDone); err != nil {
		t.Fatal(err)
	}
	return w.ID(), starts
}

// stateJSON is a state as JSON, to compare states (Items carry the
// reducer's internal buffer, which is not part of the state).
func stateJSON(t testing.TB, st *State) string {
	t.Helper()
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// replayAll is the state at every entry (0 to the end), replayed without
// snapshots by a cursor stepping forward from the start: each attempt's
// events fed in order to a reducer started at the attempt's start.
func replayAll(t testing.TB, db *DB, id string) []string {
	t.Helper()
	c, err := db.NewCursor(id)
	if err != nil {
		t.Fatal(err)
	}
	c.replayOnly = true
	n, err := c.Len()
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, n+1)
	for i := range out {
		st, err := c.Seek(i)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = stateJSON(t, st)
	}
	return out
}

// replayState is the state at n replayed from the attempt's start.
func replayState(t testing.TB, db *DB, id string, n int) *State {
	t.Helper()
	c, err := db.NewCursor(id)
	if err != nil {
		t.Fatal(err)
	}
	c.replayOnly = true
	st, err := c.Seek(n)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// snapshotSeqs lists the snapshots (the rows of level 0).
func snapshotSeqs(t testing.TB, db *DB) []int {
	t.Helper()
	rows, err := db.sql.Query(`SELECT seq FROM snapshots WHERE level = 0 ORDER BY seq`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []int
	for rows.Next() {
		var s int
		rows.Scan(&s)
		out = append(out, s)
	}
	return out
}

// sampleEntries is the entries worth checking: the first and the last,
// every snapshot and the entries either side of it, and some at random
// (all of them when all is set).
func sampleEntries(t testing.TB, db *DB, total int, all bool, seed uint64) []int {
	t.Helper()
	if all {
		out := make([]int, total+1)
		for i := range out {
			out[i] = i
		}
		return out
	}
	pick := map[int]bool{0: true, total: true}
	for _, s := range snapshotSeqs(t, db) {
		for _, n := range []int{s - 1, s, s + 1} {
			if n >= 0 && n <= total {
				pick[n] = true
			}
		}
	}
	rng := rand.New(rand.NewPCG(seed, 3))
	for range 40 {
		pick[rng.IntN(total+1)] = true
	}
	out := make([]int, 0, len(pick))
	for n := range pick {
		out = append(out, n)
	}
	sort.Ints(out)
	return out
}

// snapshotRows lists every row as level:seq.
func snapshotRows(t testing.TB, db *DB) string {
	t.Helper()
	rows, err := db.sql.Query(`SELECT level, seq FROM snapshots ORDER BY level, seq`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var l, s int
		rows.Scan(&l, &s)
		out = append(out, fmt.Sprintf("%d:%d", l, s))
	}
	return strings.Join(out, " ")
}

// TestSnapshotsMatchReplay: StateAt with snapshots equals the full replay
// at every entry of a session of several turns and attempts, for several
// snapshot spacings, and a cursor moving at random agrees too.
func TestSnapshotsMatchReplay(t *testing.T) {
	for i, c := range []struct{ k, fanout, levels int }{{2, 3, 3}, {5, 2, 4}, {7, 4, 1}} {
		k, all := c.k, i == 0
		t.Run(fmt.Sprintf("every%d-fanout%d-levels%d", c.k, c.fanout, c.levels), func(t *testing.T) {
			withSnapshots(t, c.k, c.fanout, c.levels)
			db, _ := openTemp(t)
			id, _ := snapshotSession(t, db, uint64(k))
			info, _ := db.GetSession(id)
			seqs := snapshotSeqs(t, db)
			if len(seqs) < info.Events/k/2 {
				t.Fatalf("only %d snapshots for %d entries every %d", len(seqs), info.Events, k)
			}
			want := replayAll(t, db, id)
			rng := rand.New(rand.NewPCG(1, uint64(k)))
			for range 5 { // stepping forward is replaying from the start
				n := rng.IntN(info.Events + 1)
				if got := stateJSON(t, replayState(t, db, id, n)); got != want[n] {
					t.Fatalf("replay to %d:\n got %s\nwant %s", n, got, want[n])
				}
			}
			checkEverySnapshot(t, db, id, want)
			for _, n := range sampleEntries(t, db, info.Events, all, uint64(k)) {
				c, err := db.NewCursor(id) // as StateAt does
				if err != nil {
					t.Fatal(err)
				}
				got, err := c.Seek(n)
				if err != nil {
					t.Fatal(err)
				}
				if g := stateJSON(t, got); g != want[n] {
					t.Fatalf("entry %d:\n got %s\nwant %s", n, g, want[n])
				}
				// Replay starts at a snapshot: at most snapshotEvery entries
				// and the rest of a step (a step here has at most 3) before n.
				if c.replayed > k+3 {
					t.Fatalf("entry %d: replayed %d entries with snapshots every %d", n, c.replayed, k)
				}
			}
			c, _ := db.NewCursor(id)
			for range 60 {
				var n int
				switch rng.IntN(4) {
				case 0: // around a snapshot
					n = seqs[rng.IntN(len(seqs))] + rng.IntN(3) - 1
				case 1: // a step on
					n = min(c.pos+1, info.Events)
				default:
					n = rng.IntN(info.Events + 1)
				}
				n = max(0, min(n, info.Events))
				st, err := c.Seek(n)
				if err != nil {
					t.Fatal(err)
				}
				if g := stateJSON(t, st); g != want[n] {
					t.Fatalf("cursor at %d:\n got %s\nwant %s", n, g, want[n])
				}
			}
		})
	}
}

// checkEverySnapshot restores the reducer from each snapshot of the
// session and compares it with the full replay to the same entry (StateAt
// would hide a snapshot that does not fold by replaying instead).
func checkEverySnapshot(t *testing.T, db *DB, id string, want []string) {
	t.Helper()
	rows, err := db.sql.Query(`SELECT aid, seq, attempts.protocol FROM snapshots JOIN attempts USING (aid)
		JOIN sessions USING (sid) WHERE sessions.id = ? AND level = 0 ORDER BY seq`, id)
	if err != nil {
		t.Fatal(err)
	}
	type snap struct {
		aid   int64
		seq   int
		proto string
	}
	var snaps []snap
	for rows.Next() {
		var s snap
		rows.Scan(&s.aid, &s.seq, &s.proto)
		snaps = append(snaps, s)
	}
	rows.Close()
	if len(snaps) == 0 {
		t.Fatal("no snapshots")
	}
	for _, s := range snaps {
		red, folded, err := db.restoreSnapshot(context.Background(), s.aid, s.seq, s.proto)
		if err != nil {
			t.Fatalf("snapshot at %d: %v", s.seq, err)
		}
		// At most fanout-1 rows of each level but the top one, and the top
		// level's: one per every·fanout^(levels-1) entries.
		topEvery := snapshotEvery
		for range snapshotLevels - 1 {
			topEvery *= snapshotFanout
		}
		if limit := (snapshotFanout-1)*(snapshotLevels-1) + s.seq/topEvery; folded > limit {
			t.Fatalf("snapshot at %d: %d rows folded, more than %d", s.seq, folded, limit)
		}
		var w State
		if err := json.Unmarshal([]byte(want[s.seq]), &w); err != nil {
			t.Fatal(err)
		}
		var items []adapters.Item
		for _, it := range red.Items() {
			items = append(items, *it)
		}
		if got, want := jsonOf(t, items), jsonOf(t, w.Items); got != want {
			t.Fatalf("snapshot at %d: items\n got %s\nwant %s", s.seq, got, want)
		}
		if got, want := jsonOf(t, red.Summary()), jsonOf(t, w.Summary); got != want {
			t.Fatalf("snapshot at %d: summary\n got %s\nwant %s", s.seq, got, want)
		}
	}
}

// TestSnapshotsMatchLive: with snapshots, the state after each step of a
// long response is the live reducer's.
func TestSnapshotsMatchLive(t *testing.T) {
	withSnapshotEvery(t, 5)
	db, _ := openTemp(t)
	id, starts := snapshotSession(t, db, 42)
	l := starts[1]
	end := 0
	for i, st := range l.steps {
		end += stepEntries(st)
		got, err := db.StateAt(id, end)
		if err != nil {
			t.Fatal(err)
		}
		want := l.states[i]
		var items []adapters.Item
		items = append(items, want.items...)
		if a, b := jsonOf(t, got.Items), jsonOf(t, items); a != b {
			t.Fatalf("step %d (entry %d): items\n got %s\nwant %s", i, end, a, b)
		}
		if a, b := jsonOf(t, got.Summary), jsonOf(t, want.summary); a != b {
			t.Fatalf("step %d (entry %d): summary\n got %s\nwant %s", i, end, a, b)
		}
	}
}

func jsonOf(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestSnapshotsIllFormedUTF8: the shadow reducer is fed what replay reads
// back (U+FFFD for ill-formed bytes), not what the live path held.
func TestSnapshotsIllFormedUTF8(t *testing.T) {
	withSnapshotEvery(t, 2)
	db, _ := openTemp(t)
	l := newLiveStream(adapters.OpenAIResponses)
	l.step(sse("a", `{}`), adapters.Event{Type: adapters.EvItemStarted, ItemID: "m", Kind: "message"})
	for _, d := range []string{"€ ", "\xe2\x82", "\xac", "ok", "\xff"} {
		l.step(sse("d", `{}`), adapters.Event{Type: adapters.EvTextDelta, ItemID: "m", Delta: d})
	}
	l.step(sse("d", `{}`), adapters.Event{Type: adapters.EvTextDelta, ItemID: "m\xff", Delta: "x"})
	l.step(sse("z", `{}`), adapters.Terminal(adapters.StatusCompleted, adapters.StopFinal, "done"))
	w, _ := record(t, db, refundMeta(), l)
	w.Finish(StatusDone)
	info, _ := db.GetSession(w.ID())
	checkAllStates(t, db, w.ID())
	st, _ := db.StateAt(w.ID(), info.Events)
	if st.Items[0].Text != "€ \ufffd\ufffd\ufffdok\ufffd" {
		t.Errorf("text %q", st.Items[0].Text)
	}
}

// TestSnapshotsImported: a JSONL import and a HAR import get snapshots as
// they are written, and their states are the full replay's.
func TestSnapshotsImported(t *testing.T) {
	withSnapshotEvery(t, 4)
	a, _ := openTemp(t)
	id, _ := snapshotSession(t, a, 9)
	exported := exportJSONL(t, a, id)

	b, _ := openTemp(t)
	res, err := importJSONL(b, bytes.NewReader(exported), "export.jsonl")
	if err != nil || len(res.Sessions) != 1 {
		t.Fatalf("%+v %v", res, err)
	}
	if got, want := snapshotRows(t, b), snapshotRows(t, a); got != want {
		t.Errorf("imported snapshots at %v, want %v", got, want)
	}
	checkAllStates(t, b, res.Sessions[0])
	if !bytes.Equal(exportJSONL(t, b, res.Sessions[0]), exported) {
		t.Error("the export of the import differs")
	}

	var data []string
	for i := range 40 {
		data = append(data, fmt.Sprintf(`{"d":"w%d "}`, i))
	}
	data = append(data, `{"finish":"stop"}`, "[DONE]")
	har := harJSON(t, harEntryMap("POST", "https://api.openai.com/v1/chat/completions", 200, "text/event-stream", sseBody(data...), ""))
	c, _ := openTemp(t)
	hres, err := importHAR(c, bytes.NewReader(har), "cap.har", fakeLookup)
	if err != nil || len(hres.Sessions) != 1 {
		t.Fatalf("%+v %v", hres, err)
	}
	if n := len(snapshotSeqs(t, c)); n < 5 {
		t.Errorf("HAR import: %d snapshots", n)
	}
	checkAllStates(t, c, hres.Sessions[0])
}

// checkAllStates checks every snapshot, and StateAt at every entry,
// against the replay without snapshots.
func checkAllStates(t *testing.T, db *DB, id string) {
	t.Helper()
	want := replayAll(t, db, id)
	checkEverySnapshot(t, db, id, want)
	for _, n := range sampleEntries(t, db, len(want)-1, false, 1) {
		got, err := db.StateAt(id, n)
		if err != nil {
			t.Fatal(err)
		}
		if g := stateJSON(t, got); g != want[n] {
			t.Fatalf("entry %d:\n got %s\nwant %s", n, g, want[n])
		}
	}
}

// schema1 turns the database at path into what modelwire wrote before
// migration 0002: a new file made by 0001_init.sql alone, holding the same
// rows (no snapshots, attempts without their snapshots column).
func schema1(t *testing.T, path string) string {
	t.Helper()
	old := filepath.Join(t.TempDir(), "schema1.db")
	conn, err := sql.Open("sqlite", dsn(old, "_pragma=foreign_keys(0)"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetMaxOpenConns(1)
	init, err := migrationFS.ReadFile("migrations/0001_init.sql")
	if err != nil {
		t.Fatal(err)
	}
	must := func(q string, args ...any) {
		t.Helper()
		if _, err := conn.Exec(q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	must(string(init))
	must(fmt.Sprintf("PRAGMA application_id = %d; PRAGMA user_version = 1", applicationID))
	must(`ATTACH DATABASE ? AS src`, path)
	for _, table := range []string{"sessions", "attempts", "chunks", "tool_calls", "validations"} {
		rows, err := conn.Query(`SELECT name FROM pragma_table_info(?)`, table)
		if err != nil {
			t.Fatal(err)
		}
		var cols []string
		for rows.Next() {
			var c string
			rows.Scan(&c)
			cols = append(cols, c)
		}
		rows.Close()
		list := strings.Join(cols, ", ")
		must(`INSERT INTO main.` + table + ` (` + list + `) SELECT ` + list + ` FROM src.` + table)
	}
	// Schema 1 stored chunks uncompressed (codec 0, migration 0004).
	rows, err := conn.Query(`SELECT cid, steps, raws, codec FROM src.chunks`)
	if err != nil {
		t.Fatal(err)
	}
	type plain struct {
		cid         int64
		steps, raws []byte
	}
	var chunks []plain
	for rows.Next() {
		var c plain
		var codec int
		if err := rows.Scan(&c.cid, &c.steps, &c.raws, &codec); err != nil {
			t.Fatal(err)
		}
		if c.steps, err = decodeChunkColumn(c.steps, codec); err != nil {
			t.Fatal(err)
		}
		if c.raws, err = decodeChunkColumn(c.raws, codec); err != nil {
			t.Fatal(err)
		}
		chunks = append(chunks, c)
	}
	rows.Close()
	for _, c := range chunks {
		var raws any
		if c.raws != nil {
			raws = c.raws
		}
		must(`UPDATE main.chunks SET steps = ?, raws = ? WHERE cid = ?`, string(c.steps), raws, c.cid)
	}
	must(`DETACH DATABASE src`)
	return old
}

// TestMigrateSchema1: a database of schema 1 opens read-only as it is
// (replay without snapshots), migrates cleanly when opened for writing,
// and gets its snapshots the first time a long response is replayed.
func TestMigrateSchema1(t *testing.T) {
	withSnapshotEvery(t, 6)
	db, path := openTemp(t)
	id, _ := snapshotSession(t, db, 5)
	info, _ := db.GetSession(id)
	want := replayAll(t, db, id)
	db.Close()
	old := schema1(t, path)

	ro, err := OpenWith(old, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{0, 1, info.Events / 3, info.Events / 2, info.Events} {
		st, err := ro.StateAt(id, n)
		if err != nil {
			t.Fatal(err)
		}
		if got := stateJSON(t, st); got != want[n] {
			t.Fatalf("read-only schema 1, entry %d:\n got %s\nwant %s", n, got, want[n])
		}
	}
	ro.Close()

	mdb, err := Open(old)
	if err != nil {
		t.Fatal(err)
	}
	defer mdb.Close()
	var version int
	var integrity string
	mdb.sql.QueryRow(`PRAGMA user_version`).Scan(&version)
	mdb.sql.QueryRow(`PRAGMA integrity_check`).Scan(&integrity)
	if version != SchemaVersion || version < 2 || integrity != "ok" {
		t.Fatalf("after migration: version %d, integrity %s", version, integrity)
	}
	var flagged int
	mdb.sql.QueryRow(`SELECT count(*) FROM attempts WHERE snapshots = 0`).Scan(&flagged)
	if flagged != 4 || len(snapshotSeqs(t, mdb)) != 0 {
		t.Fatalf("migrated: %d attempts without snapshots, %d snapshots", flagged, len(snapshotSeqs(t, mdb)))
	}
	check := func(n int) {
		t.Helper()
		st, err := mdb.StateAt(id, n)
		if err != nil {
			t.Fatal(err)
		}
		if got := stateJSON(t, st); got != want[n] {
			t.Fatalf("migrated, entry %d:\n got %s\nwant %s", n, got, want[n])
		}
	}
	for n := info.Events; n >= 0; n -= 5 { // the first far jump into each attempt adds its snapshots
		check(n)
	}
	checkEverySnapshot(t, mdb, id, want)
	for _, n := range sampleEntries(t, mdb, info.Events, false, 2) {
		check(n)
	}
	mdb.sql.QueryRow(`SELECT count(*) FROM attempts WHERE snapshots = 0`).Scan(&flagged)
	if flagged != 1 { // the failed attempt is too short to need any
		t.Errorf("%d attempts still without snapshots", flagged)
	}
	again, _ := openTemp(t)
	snapshotSession(t, again, 5)
	if got, want := snapshotRows(t, mdb), snapshotRows(t, again); got != want {
		t.Errorf("backfilled snapshots at %v, the writer's at %v", got, want)
	}
	// New sessions in the migrated file are written with snapshots.
	w, _ := record(t, mdb, refundMeta(), longStream(rand.New(rand.NewPCG(1, 1)), 40, false))
	w.Finish(StatusDone)
	var fresh int
	mdb.sql.QueryRow(`SELECT count(*) FROM snapshots JOIN attempts USING (aid) JOIN sessions USING (sid) WHERE sessions.id = ?`, w.ID()).Scan(&fresh)
	if fresh == 0 {
		t.Error("a session recorded after the migration has no snapshots")
	}
}

// TestSnapshotsGoWithTheSession: deleting a session deletes its snapshots.
func TestSnapshotsGoWithTheSession(t *testing.T) {
	withSnapshotEvery(t, 3)
	db, _ := openTemp(t)
	id, _ := snapshotSession(t, db, 1)
	if len(snapshotSeqs(t, db)) == 0 {
		t.Fatal("no snapshots")
	}
	if err := db.DeleteSession(id); err != nil {
		t.Fatal(err)
	}
	if n := len(snapshotSeqs(t, db)); n != 0 {
		t.Errorf("%d snapshots left", n)
	}
}

// TestSnapshotDamaged: a snapshot that does not fold is ignored, and the
// state is replayed from the attempt's start.
func TestSnapshotDamaged(t *testing.T) {
	withSnapshotEvery(t, 5)
	db, _ := openTemp(t)
	id, _ := snapshotSession(t, db, 2)
	seqs := snapshotSeqs(t, db)
	at := seqs[len(seqs)/2]
	n := at + 1
	want := stateJSON(t, replayState(t, db, id, n))
	var aid int64
	var proto string
	if err := db.sql.QueryRow(`SELECT aid, protocol FROM snapshots JOIN attempts USING (aid) WHERE level = 0 AND seq = ?`, at).Scan(&aid, &proto); err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.restoreSnapshot(context.Background(), aid, at, proto); err != nil {
		t.Fatalf("the snapshot does not fold before it is damaged: %v", err)
	}
	if _, err := db.sql.Exec(`UPDATE snapshots SET text = x'00' || coalesce(text, x'') WHERE seq = ?`, at); err != nil {
		t.Fatal(err)
	}
	if red, _, err := db.restoreSnapshot(context.Background(), aid, at, proto); err == nil {
		t.Fatalf("a damaged snapshot folded: %+v", red.Summary())
	}
	st, err := db.StateAt(id, n)
	if err != nil {
		t.Fatal(err)
	}
	if got := stateJSON(t, st); got != want {
		t.Fatalf("entry %d:\n got %s\nwant %s", n, got, want)
	}
}

// A recorder whose step could not be queued stops keeping snapshots (its
// shadow reducer has seen a step that is not stored).
func TestSnapshotsStopWhenAStepIsRefused(t *testing.T) {
	withSnapshotEvery(t, 2)
	db, _ := openTemp(t)
	w, err := db.CreateSession(refundMeta())
	if err != nil {
		t.Fatal(err)
	}
	rec, _ := w.StartAttempt(1, AttemptMeta{Method: "POST", URL: "http://x/v1/responses", Header: http.Header{}})
	w.Finish(StatusDone)
	if err := rec.Append(adapters.Step{Index: 0, Raw: sse("a", "{}")}); err == nil {
		t.Fatal("appended to a finished session")
	}
	if rec.snap != nil {
		t.Error("the recorder still keeps snapshots")
	}
}

// TestSnapshotsStoreTextOnce: each level keeps every byte of an item's
// text once, and a final text that replaced the deltas once more.
func TestSnapshotsStoreTextOnce(t *testing.T) {
	withSnapshots(t, 10, 4, 2)
	db, _ := openTemp(t)
	l := newLiveStream(adapters.OpenAIResponses)
	l.step(sse("a", `{}`), adapters.Event{Type: adapters.EvItemStarted, ItemID: "m", Kind: "message"})
	for range 300 {
		l.step(sse("d", `{}`), adapters.Event{Type: adapters.EvTextDelta, ItemID: "m", Delta: "abc"})
	}
	final := strings.Repeat("X", 50)
	l.step(sse("done", `{}`), adapters.Event{Type: adapters.EvItemDone, ItemID: "m", Final: &final})
	for range 60 {
		l.step(sse("p", `{}`), adapters.Event{Type: adapters.EvUnknown, RawType: "ping"})
	}
	l.step(sse("z", `{}`), adapters.Terminal(adapters.StatusCompleted, adapters.StopFinal, "done"))
	w, _ := record(t, db, refundMeta(), l)
	w.Finish(StatusDone)
	for level := range 2 {
		var rows, bytes int
		db.sql.QueryRow(`SELECT count(*), coalesce(sum(length(text)), 0) FROM snapshots WHERE level = ?`, level).Scan(&rows, &bytes)
		if rows == 0 || bytes > 900+50 {
			t.Errorf("level %d: %d rows hold %d bytes of text, for 900 bytes of deltas and a final text of 50", level, rows, bytes)
		}
	}
	checkAllStates(t, db, w.ID())
}
