package timeline

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/session"
	"github.com/modelwire/modelwire/store"
)

// recordTools records a run of turns responses of perTurn entries that
// each propose a tool call (its arguments in deltas), approved and
// answered, a diagnostic in turn 2, and the session's verdict at the end.
func recordTools(t testing.TB, db *store.DB, turns, perTurn int) string {
	t.Helper()
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	w, err := db.CreateSession(store.SessionMeta{Title: "tools", Protocol: adapters.OpenAIResponses, Provider: "sim", Source: store.SourceRun})
	must(err)
	for turn := 1; turn <= turns; turn++ {
		rec, err := w.StartAttempt(turn, store.AttemptMeta{Method: "POST", URL: "http://127.0.0.1/v1/responses", Stream: true})
		must(err)
		item, call := fmt.Sprintf("fc_%d", turn), fmt.Sprintf("call_%d", turn)
		args := json.RawMessage(fmt.Sprintf(`{"order_id":"A%d"}`, turn))
		off, seq, idx := time.Duration(0), 0, 0
		app := func(evs ...adapters.Event) {
			off += 30 * time.Microsecond
			for i := range evs {
				seq++
				evs[i].Seq = seq
			}
			must(rec.AppendAt(off, adapters.Step{Index: idx, Raw: adapters.RawEvent{Event: "e", Data: `{}`}, Events: evs}))
			idx++
		}
		app(adapters.Event{Type: adapters.EvResponseStarted, ResponseID: "resp", Model: "m"})
		app(adapters.Event{Type: adapters.EvItemStarted, ItemID: item, Kind: string(adapters.KindToolCall), CallID: call, Name: "get_order"})
		for i := 3; i < perTurn-2; i++ {
			if turn == 2 && i == 4 {
				app(adapters.Diag(adapters.DiagUnknownEvent, "an event the decoder does not know"))
				continue
			}
			app(adapters.Event{Type: adapters.EvToolArgsDelta, ItemID: item, Delta: " "})
		}
		app(adapters.Event{Type: adapters.EvItemDone, ItemID: item, CallID: call, Final: new(string(args))},
			adapters.Event{Type: adapters.EvToolProposed, CallID: call, Name: "get_order", Arguments: args})
		app(adapters.Event{Type: adapters.EvUsage, Usage: &adapters.Usage{InputTokens: adapters.Int(int64(10 * turn)), OutputTokens: adapters.Int(5)}},
			adapters.Terminal(adapters.StatusCompleted, adapters.StopToolCall, "tool_use"))
		must(rec.Finish(nil))
		must(w.RecordDecision(store.Decision{Turn: turn, CallID: call, Name: "get_order", Decision: store.DecisionApproved, Arguments: args}))
		must(w.RecordToolResult(store.ToolResult{Turn: turn, CallID: call, Name: "get_order", Content: `{"status":"shipped"}`}))
	}
	must(w.RecordValidation(0, []store.Validation{{Layer: string(session.LayerTransport), Status: session.Pass}, {Layer: string(session.LayerParse), Status: session.Fail, Detail: "no answer"}}))
	must(w.Finish(store.StatusFailed))
	return w.ID()
}

// TestReplayerLongJumps: in a long session (one that keeps only the shown
// turn's detail), a jump folds the turns before its own from the records
// (skeleton) and lands on the same state as stepping there entry by
// entry, in any order; and the marks are found.
func TestReplayerLongJumps(t *testing.T) {
	smallCheckpoints(t, 4, 64)
	d := detailedUpTo
	detailedUpTo = 0
	t.Cleanup(func() { detailedUpTo = d })
	db := openStore(t)
	id := recordTools(t, db, 6, 14)
	r, err := NewReplayer(db, id, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Turns() != 6 || r.Len() != 6*17+1 {
		t.Fatalf("%d turns, %d entries", r.Turns(), r.Len())
	}
	want := map[int]string{}
	for p := 0; p <= r.Len(); p++ {
		if err := r.Seek(p); err != nil {
			t.Fatal(err)
		}
		want[p] = dump(t, r.State())
	}
	if r.skipped != 0 {
		t.Fatalf("stepping folded %d skeletons", r.skipped)
	}
	end := r.State()
	if len(end.Turns) != 6 || end.Turns[0].Lanes != nil || end.Turns[0].Usage == nil || *end.Turns[0].Usage.InputTokens != 10 ||
		end.Turns[0].Terminal == nil || len(end.Turns[0].Proposals) != 1 || end.Turns[0].Proposals[0].Result == nil ||
		end.Turns[5].Lanes == nil || end.Status != store.StatusFailed {
		t.Fatalf("the end of a long session keeps the wrong detail:\n%s", want[r.Len()])
	}
	skipped := 0
	for p := 0; p <= r.Len(); p++ {
		j, err := NewReplayer(db, id, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := j.Seek(p); err != nil {
			t.Fatal(err)
		}
		if got := dump(t, j.State()); got != want[p] {
			t.Fatalf("jumping to %d:\n%s\nwant (stepping)\n%s", p, got, want[p])
		}
		skipped += j.skipped
	}
	if skipped == 0 {
		t.Fatal("no jump skipped a turn")
	}
	// From a turn start kept on the way (turn 2's: a jump to its first
	// entry), over turns 2-5.
	k, err := NewReplayer(db, id, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []int{3, 18, 19, 95} {
		if err := k.Seek(p); err != nil {
			t.Fatal(err)
		}
		if got := dump(t, k.State()); got != want[p] {
			t.Fatalf("jumping to %d from turn 2:\n%s\nwant\n%s", p, got, want[p])
		}
	}
	if k.skipped != 2 { // to turn 2, then from its start to turn 6
		t.Fatalf("%d skeletons on the way to 95, want 2", k.skipped)
	}
	order := []int{90, 3, 70, 71, 18, 50, 0, 97, 33, 34, 17, 65, 49, 81}
	for _, p := range order {
		if err := r.Seek(p); err != nil {
			t.Fatal(err)
		}
		if got := dump(t, r.State()); got != want[p] {
			t.Fatalf("jumping to %d after others:\n%s\nwant\n%s", p, got, want[p])
		}
	}
	props, errs, err := r.Marks()
	if err != nil {
		t.Fatal(err)
	}
	var wantProps []int
	for t0 := range 6 {
		wantProps = append(wantProps, t0*17+13) // item done, then the proposal
	}
	if !slices.Equal(props, wantProps) || !slices.Equal(errs, []int{21}) {
		t.Fatalf("marks: proposals %v (want %v), errors %v (want [21])", props, wantProps, errs)
	}
}

// BenchmarkReplayerOpen measures what the workbench does on a stored
// session of 1,000,000 entries (1,000 turns of 1,000) with the database
// open: opening the replayer at its first entry, and opening it and
// jumping, cold (no checkpoints), to the end, to the middle, or to the
// start of turn 700. Run with
//
//	go test ./timeline -run '^$' -bench ReplayerOpen -benchtime 10x
func BenchmarkReplayerOpen(b *testing.B) {
	db := openStore(b)
	id := recordTurns(b, db, store.SourceRun, 1000, 1000, false)
	r0, err := NewReplayer(db, id, nil)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		to   int
	}{{"first", 0}, {"end", r0.Len()}, {"middle", r0.Len() / 2}, {"turn700", r0.TurnStarts()[699]}} {
		b.Run(c.name, func(b *testing.B) {
			for range b.N {
				r, err := NewReplayer(db, id, nil)
				if err != nil {
					b.Fatal(err)
				}
				if err := r.Seek(c.to); err != nil {
					b.Fatal(err)
				}
				if r.Pos() != c.to {
					b.Fatalf("at %d, want %d", r.Pos(), c.to)
				}
			}
		})
	}
}
