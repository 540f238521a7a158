package sim

import (
	"context"
	"sync"
	"time"
	"unicode"

	"github.com/modelwire/modelwire/adapters"
)

// DefaultPace is the workbench's pace, in words a second: slow enough to
// watch the lanes fill and read along, quick enough that the refund case's
// three turns take seconds, not minutes.
const DefaultPace = 30

// words counts what a reader takes in: runs of letters and digits, and
// each Han, kana or Hangul character on its own (Chinese has no spaces,
// and the refund case's draft reply is Chinese).
func words(s string) int {
	n, inWord := 0, false
	for _, r := range s {
		switch {
		case unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul):
			n++
			inWord = false
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if !inWord {
				n++
			}
			inWord = true
		default:
			inWord = false
		}
	}
	return n
}

// contentPause is the pause before each content event (text, reasoning
// and argument deltas) so that the turn's words arrive at pace words a
// second: the turn's words over pace, shared evenly by its content events.
// Zero when pace is zero or the stream carries no content events.
func contentPause(mt adapters.ModelTurn, events []adapters.WireEvent, pace float64) time.Duration {
	if pace <= 0 {
		return 0
	}
	n := 0
	for _, ev := range events {
		if isContent(ev.Phase) {
			n++
		}
	}
	total := 0
	for _, it := range mt.Items {
		total += words(it.Text) + words(adapters.ArgumentText(it.Arguments))
	}
	if n == 0 || total == 0 {
		return 0
	}
	return time.Duration(float64(total) / pace / float64(n) * float64(time.Second))
}

func isContent(ph adapters.Phase) bool {
	return ph == adapters.PhaseText || ph == adapters.PhaseReasoning || ph == adapters.PhaseArgs
}

// Hold stops a paced stream's clock while the person reading it is
// paused. The workbench's step mode pauses the session at the response's
// headers and at its first event; the simulator, unaware, would go on
// writing at its pace into the socket's buffer, and by the time the
// person steps on the whole stream has arrived: the lanes, tool
// arguments above all, filled in a few milliseconds instead of at the
// pace. The session holds the simulator it started for as long as it is
// paused (app.Engine), and a paced stream waits before its next paced
// event until it is let go, so it streams at its pace while watched.
type Hold struct {
	mu   sync.Mutex
	held int           // nested holds
	free chan struct{} // closed while not held
}

// NewHold returns a hold that is let go.
func NewHold() *Hold {
	free := make(chan struct{})
	close(free)
	return &Hold{free: free}
}

// Hold holds the streams until a matching Release.
func (h *Hold) Hold() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.held == 0 {
		h.free = make(chan struct{})
	}
	h.held++
}

// Release lets the streams go on once every Hold is released.
func (h *Hold) Release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.held == 0 {
		return
	}
	h.held--
	if h.held == 0 {
		close(h.free)
	}
}

// wait blocks while the hold is held (or until ctx ends); a nil hold
// never blocks.
func (h *Hold) wait(ctx context.Context) {
	if h == nil {
		return
	}
	h.mu.Lock()
	free := h.free
	h.mu.Unlock()
	select {
	case <-free:
	case <-ctx.Done():
	}
}
