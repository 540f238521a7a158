package store

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelwire/modelwire/adapters"
)

// The benchmarks measure; no test asserts wall time. Run them with
//
//	go test -run '^$' -bench . -benchtime 1x ./store/
//
// Targets (issue 3): ≥ 100,000 events/s appended, a jump to the middle of a
// 1,000,000-event session under 20 ms, memory that does not grow with the
// session's length.

// rssMB reads this process's resident set size from /proc (0 elsewhere).
func rssMB() float64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return kb / 1024
		}
	}
	return 0
}

func settle() {
	runtime.GC()
	debug.FreeOSMemory()
}

// deltaStep is a typical streamed event: an OpenAI Responses text delta
// and the text.delta it becomes.
func deltaStep(i, seq int, item string) adapters.Step {
	data := fmt.Sprintf(`{"type":"response.output_text.delta","sequence_number":%d,"item_id":"%s","output_index":1,"content_index":0,"delta":" refund","logprobs":[]}`, i, item)
	return adapters.Step{Index: i, Raw: adapters.RawEvent{Event: "response.output_text.delta", Data: data},
		Events: []adapters.Event{{Seq: seq, Type: adapters.EvTextDelta, ItemID: item, Delta: " refund"}}}
}

// appendResponse records one response of n events: started, item, n-4
// deltas, done, terminal.
func appendResponse(tb testing.TB, rec *Recorder, n int, item string) {
	tb.Helper()
	must := func(err error) {
		if err != nil {
			tb.Fatal(err)
		}
	}
	off := time.Duration(0)
	app := func(st adapters.Step) {
		off += 20 * time.Microsecond
		must(rec.AppendAt(off, st))
	}
	app(adapters.Step{Index: 0, Raw: adapters.RawEvent{Event: "response.created", Data: `{"type":"response.created","response":{"id":"resp_1"}}`},
		Events: []adapters.Event{{Seq: 1, Type: adapters.EvResponseStarted, ResponseID: "resp_1", Model: "gpt-test"}}})
	app(adapters.Step{Index: 1, Raw: adapters.RawEvent{Event: "response.output_item.added", Data: `{"type":"response.output_item.added"}`},
		Events: []adapters.Event{{Seq: 2, Type: adapters.EvItemStarted, ItemID: item, Kind: "message"}}})
	for i := 2; i < n-2; i++ {
		app(deltaStep(i, i+1, item))
	}
	app(adapters.Step{Index: n - 2, Raw: adapters.RawEvent{Event: "response.output_item.done", Data: `{"type":"response.output_item.done"}`},
		Events: []adapters.Event{{Seq: n - 1, Type: adapters.EvItemDone, ItemID: item}}})
	app(adapters.Step{Index: n - 1, Raw: adapters.RawEvent{Event: "response.completed", Data: `{"type":"response.completed"}`},
		Events: []adapters.Event{adapters.Terminal(adapters.StatusCompleted, adapters.StopFinal, "completed")}})
	must(rec.Finish(nil))
}

// buildSession records a session of total events in responses of perTurn
// events each, and closes the database.
func buildSession(tb testing.TB, path string, total, perTurn int) (string, time.Duration) {
	db, err := Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	w, err := db.CreateSession(SessionMeta{Title: "bench", Protocol: adapters.OpenAIResponses, Provider: "sim"})
	if err != nil {
		tb.Fatal(err)
	}
	start := time.Now()
	for turn := 1; turn <= total/perTurn; turn++ {
		rec, err := w.StartAttempt(turn, AttemptMeta{Method: "POST", URL: "http://127.0.0.1/v1/responses", Stream: true})
		if err != nil {
			tb.Fatal(err)
		}
		appendResponse(tb, rec, perTurn, "msg_"+strconv.Itoa(turn))
	}
	if err := w.Finish(StatusDone); err != nil {
		tb.Fatal(err)
	}
	el := time.Since(start)
	if err := db.Close(); err != nil {
		tb.Fatal(err)
	}
	return w.ID(), el
}

func dbBytes(path string) int64 {
	var n int64
	for _, p := range []string{path, path + "-wal"} {
		if st, err := os.Stat(p); err == nil {
			n += st.Size()
		}
	}
	return n
}

// BenchmarkAppend appends 1,000,000 events through the batched path (one
// response, one Recorder) and reports events/s, bytes per event on disk
// and RSS.
func BenchmarkAppend(b *testing.B) {
	const n = 1_000_000
	for range b.N {
		path := filepath.Join(b.TempDir(), "append.db")
		settle()
		before := rssMB()
		b.StartTimer()
		_, el := buildSession(b, path, n, n)
		b.StopTimer()
		b.ReportMetric(float64(n)/el.Seconds(), "events/s")
		b.ReportMetric(float64(dbBytes(path))/n, "bytes/event")
		b.ReportMetric(before, "rss-before-MB")
		b.ReportMetric(rssMB(), "rss-after-MB")
	}
}

// BenchmarkJump opens a stored session and jumps to its middle: the time
// to the first event there (open, resolve, page) and to the rebuilt
// state, and RSS before and after. Sessions of 100,000 and 1,000,000
// events are made of responses of 1,000 events (a long multi-turn
// session); "one-response" is the worst case, a single response of
// 1,000,000 events, where the state is restored from the last snapshot
// before the middle (snapshot.go) and the entries after it replayed.
// ms-to-state-far is the jump to the entry farthest from a snapshot near
// the middle (just before the next one), where the most is replayed.
func BenchmarkJump(b *testing.B) {
	for _, c := range []struct {
		name           string
		total, perTurn int
	}{
		{"100k", 100_000, 1000},
		{"1M", 1_000_000, 1000},
		{"1M-one-response", 1_000_000, 1_000_000},
	} {
		b.Run(c.name, func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "jump.db")
			id, _ := buildSession(b, path, c.total, c.perTurn)
			mid := c.total/2 + 7
			far := mid
			if db, err := OpenWith(path, Options{ReadOnly: true}); err == nil {
				var next int
				if db.sql.QueryRow(`SELECT coalesce(min(seq), 0) FROM snapshots WHERE level = 0 AND seq > ?`, mid).Scan(&next) == nil && next > 0 {
					far = next - 1
				}
				db.Close()
			}
			var first, state, farState time.Duration
			settle()
			before := rssMB()
			b.ResetTimer()
			for range b.N {
				t0 := time.Now()
				db, err := OpenWith(path, Options{ReadOnly: true})
				if err != nil {
					b.Fatal(err)
				}
				full, err := db.Resolve(id[:8])
				if err != nil {
					b.Fatal(err)
				}
				es, err := db.Events(full, mid, 1)
				if err != nil || len(es) != 1 || es[0].Seq != mid {
					b.Fatalf("%v %v", es, err)
				}
				first += time.Since(t0)
				t1 := time.Now()
				st, err := db.StateAt(full, mid)
				if err != nil || len(st.Items) != 1 {
					b.Fatalf("%+v %v", st, err)
				}
				state += time.Since(t1)
				t2 := time.Now()
				if _, err := db.StateAt(full, far); err != nil {
					b.Fatal(err)
				}
				farState += time.Since(t2)
				db.Close()
			}
			b.StopTimer()
			after := rssMB()
			b.ReportMetric(float64(first.Microseconds())/1000/float64(b.N), "ms-to-first-event")
			b.ReportMetric(float64(state.Microseconds())/1000/float64(b.N), "ms-to-state")
			b.ReportMetric(float64(farState.Microseconds())/1000/float64(b.N), "ms-to-state-far")
			b.ReportMetric(before, "rss-before-MB")
			b.ReportMetric(after, "rss-after-MB")
			b.ReportMetric(float64(dbBytes(path))/float64(c.total), "bytes/event")
		})
	}
}

// TestBenchHelpers keeps the benchmark's session builder honest: the
// session it makes has the entries and state it claims.
func TestBenchHelpers(t *testing.T) {
	path := filepath.Join(t.TempDir(), "b.db")
	id, _ := buildSession(t, path, 3000, 1000)
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s, _ := db.GetSession(id)
	if s.Events != 3000 || len(s.Attempts) != 3 || s.Turns != 3 {
		t.Fatalf("%+v", s.SessionInfo)
	}
	st, err := db.StateAt(id, 1500)
	if err != nil {
		t.Fatal(err)
	}
	if st.Turn != 2 || len(st.Items) != 1 || st.Items[0].Text != strings.Repeat(" refund", 1500-1000-2) {
		t.Errorf("state at 1500: turn %d, %+v", st.Turn, st.Items)
	}
	var b bytes.Buffer
	if err := exportJSONLTo(db, &b, id); err != nil {
		t.Fatal(err)
	}
}
