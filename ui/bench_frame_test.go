package ui

import (
	"testing"

	"github.com/modelwire/modelwire/session"
)

// BenchmarkFrame200x60With10kEvents measures one frame at 200×60 once a
// session holds 10,000 events: the next coalesced batch folded in, then
// the whole screen rendered (the 16 ms budget is a frame at 60 Hz). Run:
// go test ./ui -run '^$' -bench Frame200x60 -benchtime 200x
func BenchmarkFrame200x60With10kEvents(b *testing.B) {
	m := newLive(b, 200, 60)
	m.Update(updatesMsg{gen: m.gen, ups: []session.Update{
		{Kind: session.UpAssembled, Turn: 1, Request: m.d.preview},
		{Kind: session.UpAttempt, Turn: 1, Attempt: 1, HTTPStatus: 200},
	}})
	g := &synthStream{}
	for i := 0; i < 10000/eventsPerFrame; i++ {
		batch := make([]session.Update, eventsPerFrame)
		for j := range batch {
			batch[j] = g.next()
		}
		m.Update(updatesMsg{gen: m.gen, ups: batch})
	}
	_ = m.View()
	frames := make([][]session.Update, b.N)
	for i := range frames {
		frames[i] = []session.Update{g.next(), g.next()}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m.Update(updatesMsg{gen: m.gen, ups: frames[i]})
		_ = m.View()
	}
}
