package ui

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/app"
	"github.com/modelwire/modelwire/store"
)

// recordLong records a streamed session of turns responses of perTurn
// entries each (one message of deltas) and returns the store and its id.
func recordLong(tb testing.TB, turns, perTurn int) (*store.DB, string) {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "mw.db")
	id := recordLongAt(tb, path, turns, perTurn)
	db, err := store.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db, id
}

// recordLongAt records that session into the database at path, closes it
// and returns the session's id.
func recordLongAt(tb testing.TB, path string, turns, perTurn int) string {
	tb.Helper()
	must := func(err error) {
		if err != nil {
			tb.Fatal(err)
		}
	}
	db, err := store.Open(path)
	must(err)
	w, err := db.CreateSession(store.SessionMeta{Title: "long", Protocol: adapters.OpenAIResponses, Provider: "sim", Source: store.SourceRun})
	must(err)
	for turn := 1; turn <= turns; turn++ {
		rec, err := w.StartAttempt(turn, store.AttemptMeta{Method: "POST", URL: "http://127.0.0.1/v1/responses", Stream: true})
		must(err)
		item := fmt.Sprintf("msg_%d", turn)
		off := time.Duration(0)
		app := func(st adapters.Step) {
			off += 20 * time.Microsecond
			must(rec.AppendAt(off, st))
		}
		app(adapters.Step{Index: 0, Raw: adapters.RawEvent{Event: "response.output_item.added", Data: `{}`},
			Events: []adapters.Event{{Seq: 1, Type: adapters.EvItemStarted, ItemID: item, Kind: string(adapters.KindMessage)}}})
		for i := 1; i < perTurn-1; i++ {
			app(adapters.Step{Index: i, Raw: adapters.RawEvent{Event: "response.output_text.delta", Data: `{"delta":" 退款"}`},
				Events: []adapters.Event{{Seq: i + 1, Type: adapters.EvTextDelta, ItemID: item, Delta: " 退款"}}})
		}
		app(adapters.Step{Index: perTurn - 1, Raw: adapters.RawEvent{Event: "response.completed", Data: `{}`},
			Events: []adapters.Event{adapters.Terminal(adapters.StatusCompleted, adapters.StopFinal, "completed")}})
		must(rec.Finish(nil))
	}
	must(w.Finish(store.StatusDone))
	must(db.Close())
	return w.ID()
}

// BenchmarkReplayStepFrame measures what the workbench's own goroutine
// does for a replay step in a session of 100,000 entries at 200×60: the
// key (which only starts a seek), then the landed seek folded in and the
// frame drawn — the 16 ms budget is a frame at 60 Hz. The seek itself runs
// in its command, off that goroutine, and is not timed here (timeline's
// BenchmarkReplayer measures it). Run:
// go test ./ui -run '^$' -bench ReplayStepFrame -benchtime 50x
func BenchmarkReplayStepFrame(b *testing.B) {
	db, id := recordLong(b, 100, 1000)
	m := New(Options{Library: app.Library{DB: db}})
	m.Update(tea.WindowSizeMsg{Width: 200, Height: 60})
	r, err := app.Library{DB: db}.Load(id)
	if err != nil {
		b.Fatal(err)
	}
	m.Update(replayMsg{gen: m.repGen, rep: newReplay(r)})
	if m.cur == nil {
		b.Fatal("not replaying")
	}
	for cmd := m.seek(m.rep.Entries / 2); cmd != nil; {
		_, cmd = m.Update(cmd())
	}
	_ = m.View()
	b.ResetTimer()
	for i := range b.N {
		k := "right"
		if i%2 == 1 {
			k = "left"
		}
		_, cmd := m.Update(key1(k))
		if cmd == nil {
			b.Fatal("a step started no seek")
		}
		b.StopTimer()
		msg := cmd()
		b.StartTimer()
		m.Update(msg)
		_ = m.View()
	}
}

// BenchmarkReplayLarge measures the workbench on a stored session of
// 1,000,000 entries (1,000 turns of 1,000) at 200×60 (MeasureReplay):
// open-ms, from enter to the first frame; jump-ms, the worst of three
// cold jumps (end, middle, the turn at 70%) from the key to the frame
// where it lands; frame-p99-ms and frame-max-ms, the workbench
// goroutine's work per frame playing at full speed; step-p99-ms, the step
// seek in its command beside it. Run:
// go test ./ui -run '^$' -bench ReplayLarge -benchtime 3x
func BenchmarkReplayLarge(b *testing.B) {
	db, id := recordLong(b, 1000, 1000)
	lib := app.Library{DB: db}
	var open, jumps, frames, steps []time.Duration
	b.ResetTimer()
	for range b.N {
		c, err := MeasureReplay(lib, id, 200, 60, 300, nil)
		if err != nil {
			b.Fatal(err)
		}
		open, jumps = append(open, c.Open), append(jumps, c.Jumps...)
		frames, steps = append(frames, c.Frames...), append(steps, c.Steps...)
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(Percentile(open, 50)), "open-ms")
	b.ReportMetric(ms(Percentile(jumps, 100)), "jump-ms")
	b.ReportMetric(ms(Percentile(frames, 99)), "frame-p99-ms")
	b.ReportMetric(ms(Percentile(frames, 100)), "frame-max-ms")
	b.ReportMetric(ms(Percentile(steps, 99)), "step-p99-ms")
}
