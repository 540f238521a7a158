package timeline

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/session"
	"github.com/modelwire/modelwire/store"
)

// recordTurns records a session of turns responses of perTurn entries
// each (response.created, item added, deltas, item done, completed), with
// a verdict per turn for a proxied session (source store.SourceProxy),
// the last one failing when failLast, and returns its id.
func recordTurns(t testing.TB, db *store.DB, source string, turns, perTurn int, failLast bool) string {
	t.Helper()
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	w, err := db.CreateSession(store.SessionMeta{Title: "generated", Protocol: adapters.OpenAIResponses, Provider: "sim", Source: source})
	must(err)
	for turn := 1; turn <= turns; turn++ {
		recordResponse(t, w, turn, perTurn)
		if source == store.SourceProxy {
			st := session.Pass
			if failLast && turn == turns {
				st = session.Fail
			}
			must(w.RecordValidation(turn, []store.Validation{{Layer: string(session.LayerTransport), Status: session.Pass}, {Layer: string(session.LayerDomain), Status: st}}))
		}
	}
	status := store.StatusDone
	if failLast {
		status = store.StatusFailed
	}
	must(w.Finish(status))
	return w.ID()
}

// recordResponse records turn's response of perTurn entries (see
// recordTurns).
func recordResponse(t testing.TB, w *store.SessionWriter, turn, perTurn int) {
	t.Helper()
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	rec, err := w.StartAttempt(turn, store.AttemptMeta{Method: "POST", URL: "http://127.0.0.1/v1/responses", Stream: true})
	must(err)
	item := fmt.Sprintf("msg_%d", turn)
	off := time.Duration(0)
	app := func(st adapters.Step) {
		off += 20 * time.Microsecond
		must(rec.AppendAt(off, st))
	}
	app(adapters.Step{Index: 0, Raw: adapters.RawEvent{Event: "response.created", Data: `{"type":"response.created"}`},
		Events: []adapters.Event{{Seq: 1, Type: adapters.EvResponseStarted, ResponseID: "resp_1", Model: "m"}}})
	app(adapters.Step{Index: 1, Raw: adapters.RawEvent{Event: "response.output_item.added", Data: `{"type":"response.output_item.added"}`},
		Events: []adapters.Event{{Seq: 2, Type: adapters.EvItemStarted, ItemID: item, Kind: string(adapters.KindMessage)}}})
	for i := 2; i < perTurn-3; i++ {
		app(adapters.Step{Index: i, Raw: adapters.RawEvent{Event: "response.output_text.delta", Data: `{"delta":" refund"}`},
			Events: []adapters.Event{{Seq: i + 1, Type: adapters.EvTextDelta, ItemID: item, Delta: " refund"}}})
	}
	app(adapters.Step{Index: perTurn - 3, Raw: adapters.RawEvent{Event: "response.output_item.done", Data: `{"type":"response.output_item.done"}`},
		Events: []adapters.Event{{Seq: perTurn - 2, Type: adapters.EvItemDone, ItemID: item}}})
	// One raw event, two entries: the usage and the terminal.
	app(adapters.Step{Index: perTurn - 2, Raw: adapters.RawEvent{Event: "response.completed", Data: `{"type":"response.completed"}`},
		Events: []adapters.Event{{Seq: perTurn - 1, Type: adapters.EvUsage, Usage: &adapters.Usage{}},
			adapters.Terminal(adapters.StatusCompleted, adapters.StopFinal, "completed")}})
	must(rec.Finish(nil))
}

// recordRegeneration records a run of three turns without tools in
// which turn 2's answer fails the domain layer and turn 3 asks again: the
// verdict on turn 2 between them (as the journal records an
// UpRegenerate), the session's verdict at the end.
func recordRegeneration(t testing.TB, db *store.DB) string {
	t.Helper()
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	w, err := db.CreateSession(store.SessionMeta{Title: "regenerated", Protocol: adapters.OpenAIResponses, Provider: "sim", Source: store.SourceRun})
	must(err)
	for turn := 1; turn <= 3; turn++ {
		recordResponse(t, w, turn, 8)
		if turn == 2 {
			must(w.RecordValidation(2, []store.Validation{{Layer: string(session.LayerParse), Status: session.Pass}, {Layer: string(session.LayerDomain), Status: session.Fail, Detail: "over the cap"}}))
		}
	}
	must(w.RecordValidation(0, []store.Validation{{Layer: string(session.LayerParse), Status: session.Pass}, {Layer: string(session.LayerDomain), Status: session.Pass}}))
	must(w.Finish(store.StatusDone))
	return w.ID()
}

// TestReplayerShowsTheEntrysTurn: at every position the state shows
// (State.Current, what the workbench's header and panels name) the turn
// of the entry there, as replay --json counts it — a turn's last entry
// (its tool result, its terminal, the verdict that asks again) shows
// that turn, not the next one's request (issue 27); position 0 shows
// turn 1's request. Stepping, jumping and stepping back agree, in a long
// session (skeletons) too; and a regenerated turn ends as it was
// received.
func TestReplayerShowsTheEntrysTurn(t *testing.T) {
	smallCheckpoints(t, 4, 64)
	db := openStore(t)
	sessions := map[string]string{
		"tools":        recordTools(t, db, 4, 10),
		"no tools":     recordTurns(t, db, store.SourceRun, 3, 8, false),
		"proxy":        recordTurns(t, db, store.SourceProxy, 3, 8, true),
		"regeneration": recordRegeneration(t, db),
	}
	for _, long := range []bool{false, true} {
		for name, id := range sessions {
			t.Run(fmt.Sprintf("%s long=%v", name, long), func(t *testing.T) {
				if long {
					d := detailedUpTo
					detailedUpTo = 0
					t.Cleanup(func() { detailedUpTo = d })
				}
				r, err := NewReplayer(db, id, nil)
				if err != nil {
					t.Fatal(err)
				}
				want := []int{1} // by position
				var last []int   // each turn's last entry
				if err := r.Each(1, 0, func(e store.Entry) error {
					turn := e.Turn
					if turn == 0 { // the session's verdict: the turn before
						turn = want[len(want)-1]
					}
					if turn > want[len(want)-1] && e.Seq > 1 {
						last = append(last, e.Seq-1)
					}
					want = append(want, turn)
					return nil
				}); err != nil {
					t.Fatal(err)
				}
				shown := func(r *Replayer, how string, p int) {
					t.Helper()
					cur := r.State().Current()
					if cur == nil || cur.N != want[p] {
						n := 0
						if cur != nil {
							n = cur.N
						}
						t.Fatalf("%s %d (turns end at %v): the state shows turn %d; the entry is turn %d's", how, p, last, n, want[p])
					}
				}
				for p := 0; p <= r.Len(); p++ {
					if err := r.Seek(p); err != nil {
						t.Fatal(err)
					}
					shown(r, "stepping to", p)
				}
				for p := r.Len(); p >= 0; p-- {
					if err := r.Seek(p); err != nil {
						t.Fatal(err)
					}
					shown(r, "stepping back to", p)
				}
				for _, p := range last {
					j, err := NewReplayer(db, id, nil) // a jump from the start, then on and back
					if err != nil {
						t.Fatal(err)
					}
					for _, q := range []int{p, p + 1, p} {
						if err := j.Seek(q); err != nil {
							t.Fatal(err)
						}
						shown(j, "jumping to", q)
					}
				}
				if name == "regeneration" {
					if err := r.Seek(r.Len()); err != nil {
						t.Fatal(err)
					}
					st := r.State()
					if g := st.Turns[2].Regenerates; g == nil || st.Turns[2].Summary == nil || st.Turns[2].Summary.Terminal != adapters.StatusCompleted {
						t.Fatalf("the regenerated turn ends as %+v, regenerating %+v; it was received completed", st.Turns[2].Summary, g)
					}
				}
			})
		}
	}
}

func openStore(t testing.TB) *store.DB {
	t.Helper()
	db, err := store.Open(filepath.Join(t.TempDir(), "mw.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestReplayerTurns: counts, turn boundaries and turn stepping, and the
// state at a position equals the state reached by stepping there.
func TestReplayerTurns(t *testing.T) {
	db := openStore(t)
	id := recordTurns(t, db, store.SourceRun, 3, 10, false)
	r, err := NewReplayer(db, id, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Len() != 30 || r.Turns() != 3 {
		t.Fatalf("%d entries, %d turns; want 30, 3", r.Len(), r.Turns())
	}
	if got := r.TurnStarts(); fmt.Sprint(got) != "[1 11 21]" {
		t.Fatalf("turn starts %v", got)
	}
	for p, want := range map[int]int{0: 0, 1: 1, 10: 1, 11: 2, 20: 2, 21: 3, 30: 3} {
		if got := r.TurnOf(p); got != want {
			t.Errorf("entry %d is in turn %d, want %d", p, got, want)
		}
	}
	if err := r.Seek(1); err != nil {
		t.Fatal(err)
	}
	if g := r.Gap(); g != 20*time.Microsecond {
		t.Errorf("gap after entry 1: %v, recorded 20µs", g)
	}
	if err := r.Seek(0); err != nil {
		t.Fatal(err)
	}
	var visited []int
	for r.Pos() < r.Len() {
		if err := r.Seek(r.NextTurn()); err != nil {
			t.Fatal(err)
		}
		visited = append(visited, r.Pos())
	}
	if fmt.Sprint(visited) != "[1 11 21 30]" {
		t.Fatalf("] visits %v", visited)
	}
	for _, want := range []int{21, 11, 1, 0} {
		if err := r.Seek(r.PrevTurn()); err != nil || r.Pos() != want {
			t.Fatalf("[ went to %d (%v), want %d", r.Pos(), err, want)
		}
	}
	// Stepping one entry at a time ends where a jump does.
	for r.Pos() < r.Len() {
		if err := r.Seek(r.Pos() + 1); err != nil {
			t.Fatal(err)
		}
	}
	if g := r.Gap(); g != 0 {
		t.Errorf("gap at the end: %v", g)
	}
	stepped := r.State()
	if len(stepped.Turns) != 3 || stepped.Status != store.StatusDone || stepped.Events != 30 {
		t.Fatalf("after stepping: %d turns, status %q, %d events", len(stepped.Turns), stepped.Status, stepped.Events)
	}
	if err := r.Seek(5); err != nil {
		t.Fatal(err)
	}
	if err := r.Seek(30); err != nil {
		t.Fatal(err)
	}
	if got := r.State(); got.Events != stepped.Events || got.Turns[2].Lanes[0].Text() != stepped.Turns[2].Lanes[0].Text() {
		t.Fatalf("a jump to the end differs from stepping there")
	}
}

// TestReplayerProxyVerdicts: a proxied conversation's verdict on each
// exchange is a verdict, not a regeneration — a failing last exchange
// shows no extra turn.
func TestReplayerProxyVerdicts(t *testing.T) {
	db := openStore(t)
	id := recordTurns(t, db, store.SourceProxy, 2, 8, true)
	r, err := NewReplayer(db, id, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Seek(r.Len()); err != nil {
		t.Fatal(err)
	}
	st := r.State()
	if len(st.Turns) != 2 || r.Turns() != 2 {
		t.Fatalf("%d turns shown, %d counted; the conversation had 2", len(st.Turns), r.Turns())
	}
	for _, turn := range st.Turns {
		if turn.Regenerates != nil {
			t.Fatalf("turn %d shown as a regeneration", turn.N)
		}
	}
	if len(st.Layers) != 2 || st.Layers[1].Status != session.Fail || st.Status != store.StatusFailed {
		t.Fatalf("last verdict %+v, status %q", st.Layers, st.Status)
	}
}

// TestReplayerMemory: replaying a session end to end — a few steps in
// each turn, then on to the next, so that every turn is folded — holds a
// window of the timeline, not the timeline: the heap in use (sampled
// every 100 turns, after a collection) of a 1,000,000-entry session is
// within a few MB of a 200,000-entry one's (what grows is per turn: the
// requests and turn records), and does not grow from early to late in
// either.
func TestReplayerMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("records a 1,000,000-entry session")
	}
	heap := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	const perTurn = 1000
	replay := func(turns int) (early, peak uint64) {
		db := openStore(t)
		id := recordTurns(t, db, store.SourceRun, turns, perTurn, false)
		r, err := NewReplayer(db, id, nil)
		if err != nil {
			t.Fatal(err)
		}
		if r.Len() != turns*perTurn || r.Turns() != turns {
			t.Fatalf("%d entries in %d turns", r.Len(), r.Turns())
		}
		for t0 := 1; r.Pos() < r.Len(); t0++ {
			for range 3 {
				if err := r.Seek(r.Pos() + 1); err != nil {
					t.Fatal(err)
				}
			}
			if err := r.Seek(r.NextTurn()); err != nil {
				t.Fatal(err)
			}
			if t0 == 10 {
				early = heap()
			}
			if t0%100 == 0 {
				peak = max(peak, heap())
			}
		}
		if st := r.State(); len(st.Turns) != turns || st.Status != store.StatusDone {
			t.Fatalf("at the end: %d turns, status %q", len(st.Turns), st.Status)
		}
		peak = max(peak, heap())
		t.Logf("%d entries: heap %.1f MB after turn 10, at most %.1f MB", r.Len(), float64(early)/(1<<20), float64(peak)/(1<<20))
		return early, peak
	}
	const bound = 8 << 20
	smallEarly, small := replay(200)
	largeEarly, large := replay(1000)
	for _, c := range []struct{ early, peak uint64 }{{smallEarly, small}, {largeEarly, large}} {
		if c.peak > c.early+2*bound {
			t.Errorf("heap grew from %d to %d bytes replaying a session (bound %d)", c.early, c.peak, 2*bound)
		}
	}
	if large > small+bound {
		t.Fatalf("replaying 1,000,000 entries took %d bytes of heap, 200,000 took %d: more than %d apart", large, small, bound)
	}
}

// BenchmarkReplayer measures the workbench's replay keys on sessions of
// 100,000 and 1,000,000 entries (turns of 1,000 entries), after one pass to
// the end, which leaves the checkpoints a replay keeps as it goes:
//
//   - forward: a step on from a random entry (reads the next entry);
//   - back: a step back after a jump (folds from the checkpoint before);
//   - back-again: the step back after that (from a fine checkpoint);
//   - seek: a jump to a random entry from the last one;
//   - next-turn: ] from a random entry;
//   - open-seek: opening the session and a jump to a random entry, cold
//     (no checkpoints yet: the fold runs from the start).
//
// Run with
//
//	go test ./timeline -run '^$' -bench Replayer -benchtime 20x
func BenchmarkReplayer(b *testing.B) {
	for _, size := range []struct {
		name  string
		turns int
	}{{"100k", 100}, {"1M", 1000}} {
		b.Run(size.name, func(b *testing.B) {
			db := openStore(b)
			id := recordTurns(b, db, store.SourceRun, size.turns, 1000, false)
			r, err := NewReplayer(db, id, nil)
			if err != nil {
				b.Fatal(err)
			}
			if err := r.Seek(r.Len()); err != nil {
				b.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(1, 2))
			pick := func() int { return 2 + rng.IntN(r.Len()-3) }
			seek := func(p int) {
				if err := r.Seek(p); err != nil {
					b.Fatal(err)
				}
			}
			b.Run("forward", func(b *testing.B) {
				for range b.N {
					b.StopTimer()
					p := pick()
					seek(p)
					b.StartTimer()
					seek(p + 1)
				}
			})
			b.Run("back", func(b *testing.B) {
				for range b.N {
					b.StopTimer()
					p := pick()
					seek(p)
					b.StartTimer()
					seek(p - 1)
				}
			})
			b.Run("back-again", func(b *testing.B) {
				for range b.N {
					b.StopTimer()
					p := pick()
					seek(p)
					seek(p - 1)
					b.StartTimer()
					seek(p - 2)
				}
			})
			b.Run("seek", func(b *testing.B) {
				for range b.N {
					seek(pick())
				}
			})
			b.Run("next-turn", func(b *testing.B) {
				for range b.N {
					b.StopTimer()
					seek(pick())
					b.StartTimer()
					seek(r.NextTurn())
				}
			})
			b.Run("open-seek", func(b *testing.B) {
				for range b.N {
					r, err := NewReplayer(db, id, nil)
					if err != nil {
						b.Fatal(err)
					}
					if err := r.Seek(pick()); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}

// dump is what a person sees of a state: its JSON and every lane's text.
func dump(t testing.TB, st *session.State) string {
	t.Helper()
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	out := string(b)
	for _, turn := range st.Turns {
		for _, l := range turn.Lanes {
			out += "\n" + l.ItemID + ": " + l.Text()
		}
	}
	return out
}

// smallCheckpoints spaces checkpoints every few entries for one test.
func smallCheckpoints(t *testing.T, every, most int) {
	e, m := checkpointEvery, maxCheckpoints
	checkpointEvery, maxCheckpoints = every, most
	t.Cleanup(func() { checkpointEvery, maxCheckpoints = e, m })
}

// TestReplayerCheckpoints: the state at every position is the same
// whether folded from the start, reached by steps back (from checkpoints,
// fine ones included), or by jumps in any order; and a state handed out
// as a clone does not change when the replayer moves on.
func TestReplayerCheckpoints(t *testing.T) {
	smallCheckpoints(t, 8, 4) // 4 at most: the spacing doubles on the way
	db := openStore(t)
	id := recordTurns(t, db, store.SourceProxy, 6, 12, true)
	want := map[int]string{}
	fresh := func(p int) string {
		r, err := NewReplayer(db, id, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Seek(p); err != nil {
			t.Fatal(err)
		}
		return dump(t, r.State())
	}
	r, err := NewReplayer(db, id, nil)
	if err != nil {
		t.Fatal(err)
	}
	for p := 0; p <= r.Len(); p++ {
		want[p] = fresh(p)
	}
	if err := r.Seek(r.Len()); err != nil {
		t.Fatal(err)
	}
	if len(r.cps) == 0 || len(r.cps) > 4 || r.every == 8 {
		t.Fatalf("%d checkpoints every %d entries after the whole session; want 1-4, spaced wider than 8", len(r.cps), r.every)
	}
	end := r.State().Clone()
	endDump := dump(t, end)
	for p := r.Len() - 1; p >= 0; p-- {
		if err := r.Seek(p); err != nil {
			t.Fatal(err)
		}
		if got := dump(t, r.State()); got != want[p] {
			t.Fatalf("stepping back to %d:\n%s\nwant\n%s", p, got, want[p])
		}
	}
	if dump(t, end) != endDump {
		t.Fatal("a cloned state changed when the replayer moved")
	}
	for _, p := range []int{40, 3, 71, 72, 13, 12, 60, 0, 59, 25} {
		if err := r.Seek(p); err != nil {
			t.Fatal(err)
		}
		if got := dump(t, r.State()); got != want[p] {
			t.Fatalf("jumping to %d:\n%s\nwant\n%s", p, got, want[p])
		}
	}
}

// TestStateClone: a clone and its original change independently, the
// turns they share included.
func TestStateClone(t *testing.T) {
	st := session.NewState()
	item := func(turn int, id string) {
		st.Apply(session.Update{Kind: session.UpStep, Turn: turn, Step: &adapters.Step{Index: 1, Events: []adapters.Event{
			{Type: adapters.EvItemStarted, ItemID: id, Kind: string(adapters.KindMessage)},
			{Type: adapters.EvTextDelta, ItemID: id, Delta: "refund "}}}})
	}
	item(1, "a")
	st.Apply(session.Update{Kind: session.UpProposal, Turn: 1, Proposal: &session.Proposal{CallID: "c1", Name: "get_order"}})
	c := st.Clone()
	before := dump(t, c)
	// The original goes on: more text, a decision, a new turn.
	st.Apply(session.Update{Kind: session.UpStep, Turn: 1, Step: &adapters.Step{Index: 2, Events: []adapters.Event{{Type: adapters.EvTextDelta, ItemID: "a", Delta: "150"}}}})
	st.Apply(session.Update{Kind: session.UpDecision, Turn: 1, Proposal: &session.Proposal{CallID: "c1"}, Decision: &session.Decision{Kind: session.Approved}})
	item(2, "b")
	if got := dump(t, c); got != before {
		t.Fatalf("the clone changed with its original:\n%s\nwas\n%s", got, before)
	}
	if st.Turns[0].Lanes[0].Text() != "refund 150" || st.Turns[0].Proposals[0].Decision == nil || len(st.Turns) != 2 {
		t.Fatalf("the original lost its updates: %s", dump(t, st))
	}
	// The clone goes on its own way.
	c.Apply(session.Update{Kind: session.UpStep, Turn: 1, Step: &adapters.Step{Index: 2, Events: []adapters.Event{{Type: adapters.EvTextDelta, ItemID: "a", Delta: "yuan"}}}})
	if c.Turns[0].Lanes[0].Text() != "refund yuan" || st.Turns[0].Lanes[0].Text() != "refund 150" {
		t.Fatalf("clone %q, original %q", c.Turns[0].Lanes[0].Text(), st.Turns[0].Lanes[0].Text())
	}
	if len(c.Turns[0].Log) != 2 || len(st.Turns[0].Log) != 2 || c.Turns[0].Log[1].Events[0].Delta != "yuan" || st.Turns[0].Log[1].Events[0].Delta != "150" {
		t.Fatal("the clone's and the original's event logs are mixed")
	}
}
