package ui

import (
	"net/http"
	"strings"
	"testing"

	"github.com/modelwire/modelwire/session"
)

// Where the stream panel shows an attempt's rate-limit headers it shows
// the chapter's capacity bound worked out from them and from the turns'
// measured tokens and seconds, with the term that binds; a provider that
// sends no limits gets no line.
func TestStreamPanelShowsTheCapacityBound(t *testing.T) {
	m := newLive(t, 120, 40)
	ups := scriptedSession(t, m.d.scenario, m.d.rc)
	h := http.Header{}
	for k, v := range map[string]string{"x-ratelimit-limit-requests": "60", "x-ratelimit-limit-tokens": "4000000",
		"x-ratelimit-remaining-requests": "59", "x-ratelimit-remaining-tokens": "3990000",
		"x-ratelimit-reset-requests": "1s", "x-ratelimit-reset-tokens": "6ms"} {
		h.Set(k, v)
	}
	for i := range ups {
		if ups[i].Kind == session.UpAttempt {
			ups[i].Header = h
		}
	}
	m.Update(updatesMsg{gen: m.gen, ups: ups})
	p := m.panels[panelStream].(*streamPanel)
	p.SetSize(78, 60)
	screen := screenText(strings.Join(p.lines(), "\n"))
	// 60 RPM is 1.0 requests/s; the fixture's turns take milliseconds and
	// a few thousand tokens, so the request limit binds.
	for _, want := range []string{"capacity ≤ 1.0 requests/s, RPM binds: RPM 60/60 = 1.0", "TPM 4000000/(60×", "concurrency 1/", "remaining 59 requests (reset in 1s)"} {
		if !strings.Contains(strings.Join(strings.Fields(screen), " "), want) {
			t.Errorf("the stream panel lacks %q:\n%s", want, screen)
		}
	}
	// Without limit headers, no bound.
	if got := capacityText(m.d.state, m.d.state.Current(), "gemini"); got != "" {
		t.Errorf("a provider without limits: %q", got)
	}
}
