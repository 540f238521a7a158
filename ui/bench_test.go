package ui

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/session"
)

// synthStream makes the updates of a long stream: one raw event with one
// canonical event each, text deltas into message lanes that close every
// 1,000 events (so finished lanes pile up, as in a long session), with
// reasoning and tool-argument lanes in between.
type synthStream struct {
	seq, lane, inLane int
	off               float64
}

func (g *synthStream) next() session.Update {
	var evs []adapters.Event
	id := fmt.Sprintf("it_%d", g.lane)
	kinds := []adapters.ItemKind{adapters.KindMessage, adapters.KindReasoning, adapters.KindToolCall}
	kind := kinds[g.lane%len(kinds)]
	switch {
	case g.inLane == 0:
		ev := adapters.Event{Type: adapters.EvItemStarted, ItemID: id, Kind: string(kind)}
		if kind == adapters.KindToolCall {
			ev.CallID, ev.Name = "call_"+id, "get_order_line"
		}
		evs = append(evs, ev)
	case g.inLane == 999:
		evs = append(evs, adapters.Event{Type: adapters.EvItemDone, ItemID: id})
		g.lane++
		g.inLane = -1
	default:
		t := adapters.EvTextDelta
		delta := "退款上限 13000 分，需要人工复核。 "
		switch kind {
		case adapters.KindReasoning:
			t = adapters.EvReasoningDelta
		case adapters.KindToolCall:
			t, delta = adapters.EvToolArgsDelta, `"order_id":"O-2048",`
		}
		evs = append(evs, adapters.Event{Type: t, ItemID: id, Delta: delta})
	}
	g.inLane++
	for i := range evs {
		g.seq++
		evs[i].Seq = g.seq
	}
	g.off += 0.2 // 5,000 events a second
	st := &adapters.Step{Index: g.seq, Raw: adapters.RawEvent{Event: string(evs[0].Type), Data: `{"delta":"…"}`}, Events: evs}
	return session.Update{Kind: session.UpStep, Turn: 1, Attempt: 1, Step: st, OffsetMS: g.off}
}

// eventsPerFrame is 5,000 events a second in 33 ms frames.
const eventsPerFrame = 5000 * 33 / 1000

// BenchmarkStream5000 feeds a synthetic 5,000-events/s stream through the
// model one coalesced frame at a time (Update with the frame's batch, then
// View, as the program does), and reports the time per frame and the
// allocations per event.
func BenchmarkStream5000(b *testing.B) {
	for _, size := range [][2]int{{80, 24}, {200, 60}} {
		b.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(b *testing.B) {
			m := newLive(b, size[0], size[1])
			m.Update(updatesMsg{gen: m.gen, ups: []session.Update{
				{Kind: session.UpAssembled, Turn: 1, Request: m.d.preview},
				{Kind: session.UpAttempt, Turn: 1, Attempt: 1, HTTPStatus: 200},
			}})
			g := &synthStream{}
			frames := make([][]session.Update, b.N)
			for i := range frames {
				frames[i] = make([]session.Update, eventsPerFrame)
				for j := range frames[i] {
					frames[i][j] = g.next()
				}
			}
			var ms0, ms1 runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&ms0)
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				m.Update(updatesMsg{gen: m.gen, ups: frames[i]})
				_ = m.View()
			}
			elapsed := time.Since(start)
			b.StopTimer()
			runtime.ReadMemStats(&ms1)
			events := float64(b.N * eventsPerFrame)
			b.ReportMetric(float64(elapsed.Microseconds())/float64(b.N)/1000, "ms/frame")
			b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/events, "allocs/event")
			b.ReportMetric(float64(ms1.TotalAlloc-ms0.TotalAlloc)/events, "B/event")
		})
	}
}

// streamBackend streams 5,000 events a second for a while, through the
// real coalescer and bridge.
type streamBackend struct{ d time.Duration }

func (b *streamBackend) Run(ctx context.Context, sc *session.Scenario, rc RunConfig, h Hooks) error {
	h.Observe(session.Update{Kind: session.UpAssembled, Turn: 1, Request: preview(sc, rc)})
	h.Observe(session.Update{Kind: session.UpAttempt, Turn: 1, Attempt: 1, HTTPStatus: 200})
	g := &synthStream{}
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	end := time.Now().Add(b.d)
	for time.Now().Before(end) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
		for range 5 {
			h.Observe(g.next())
		}
	}
	return nil
}

// BenchmarkKeyFrameUnderStream measures what a key costs the screen in
// the middle of a long 5,000-events/s stream: the key's Update and the
// frame after it, for help opening and closing (two keys per op), with
// a frame of stream events folded in between as the program would.
func BenchmarkKeyFrameUnderStream(b *testing.B) {
	m := newLive(b, 120, 40)
	m.Update(updatesMsg{gen: m.gen, ups: []session.Update{
		{Kind: session.UpAssembled, Turn: 1, Request: m.d.preview},
		{Kind: session.UpAttempt, Turn: 1, Attempt: 1, HTTPStatus: 200},
	}})
	g := &synthStream{}
	for range 60 { // about two seconds of stream already on screen
		frame := make([]session.Update, eventsPerFrame)
		for j := range frame {
			frame[j] = g.next()
		}
		m.Update(updatesMsg{gen: m.gen, ups: frame})
	}
	frame := make([]session.Update, eventsPerFrame)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		for j := range frame {
			frame[j] = g.next()
		}
		m.Update(updatesMsg{gen: m.gen, ups: frame})
		_ = m.View()
		b.StartTimer()
		m.Update(key1("?"))
		if !strings.Contains(m.View(), "Keys active now") {
			b.Fatal("help did not open")
		}
		m.Update(key1("esc"))
		_ = m.View()
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(2*b.N)/1000, "ms/key")
}

// TestTypingStaysResponsiveUnderStream: while 5,000 events a second
// stream, keys are answered (help opens and closes) before the stream
// ends. The latency is logged, not asserted: tests never assert wall time
// (BenchmarkKeyFrameUnderStream measures it).
func TestTypingStaysResponsiveUnderStream(t *testing.T) {
	rc := DefaultRunConfig()
	rc.StepMode = false
	// The stream outlasts the test; the flow's cleanup cancels it.
	f := startFlow(t, Options{Backend: &streamBackend{d: 10 * time.Minute}, Run: rc}, 120, 40)
	f.waitFor("the stream", func(s string) bool { return strings.Contains(s, "streaming") })
	var worst time.Duration
	for range 5 {
		start := time.Now()
		f.key("?")
		f.waitText("Keys active now")
		worst = max(worst, time.Since(start))
		f.key("esc")
		f.waitFor("help to close", func(s string) bool { return !strings.Contains(s, "Keys active now") })
	}
	t.Logf("worst key-to-frame latency under a 5,000 events/s stream: %v", worst)
}
