package ui

import (
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/modelwire/modelwire/session"
)

// BenchmarkFrame200x60With10kEvents measures one frame at 200×60 once a
// session holds 10,000 events: the next coalesced batch folded in, then
// the whole screen rendered (the 16 ms budget is a frame at 60 Hz), with
// no colour (NO_COLOR, and the tests' profile) and with 256 colours
// (TERM=screen-256color), where every style writes its escape codes. Run:
// go test ./ui -run '^$' -bench Frame200x60 -benchtime 200x
func BenchmarkFrame200x60With10kEvents(b *testing.B) {
	for _, c := range []struct {
		name    string
		profile termenv.Profile
	}{{"nocolor", termenv.Ascii}, {"256", termenv.ANSI256}} {
		b.Run(c.name, func(b *testing.B) {
			lipgloss.SetColorProfile(c.profile)
			defer lipgloss.SetColorProfile(termenv.Ascii)
			benchFrame(b)
		})
	}
}

func benchFrame(b *testing.B) {
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
