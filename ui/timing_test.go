package ui

import (
	"strings"
	"testing"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/session"
)

// A turn that streams steadily, stalls, then bursts: the sparkline shows
// the gap, the marks show where the call's arguments opened and closed,
// and the summary names the stall and the token rate.
func TestTurnTimelineShowsStallsAndCalls(t *testing.T) {
	turn := &session.TurnState{N: 1}
	for i := 0; i < 20; i++ { // steady: every 10 ms
		turn.Log = append(turn.Log, session.LogEntry{Attempt: 1, OffsetMS: float64(i * 10)})
	}
	for i := 0; i < 20; i++ { // after a 1.5 s stall, a burst
		turn.Log = append(turn.Log, session.LogEntry{Attempt: 1, OffsetMS: 1690 + float64(i)})
	}
	out := int64(300)
	turn.Usage = &adapters.Usage{OutputTokens: &out}
	turn.Timings = &session.Timings{FirstText: 10, Terminal: 1710}
	turn.Lanes = []*session.Lane{{Kind: adapters.KindToolCall, StartMS: 50, DoneMS: 1700}}
	spark, marks, sum := turnTimeline(turn, 40)
	if n := len([]rune(spark)); n != 40 {
		t.Fatalf("sparkline of %d cells", n)
	}
	if !strings.Contains(strings.TrimSpace(spark), "   ") || !strings.ContainsRune(spark, '█') {
		t.Errorf("the stall or the burst does not show: %q", spark)
	}
	if o, c := strings.IndexRune(marks, '('), strings.IndexRune(marks, ')'); o < 0 || c <= o {
		t.Errorf("the call's opening and closing: %q", marks)
	}
	for _, want := range []string{"40 events", "stall", "176 tok/s"} {
		if !strings.Contains(sum, want) {
			t.Errorf("summary %q lacks %q", sum, want)
		}
	}
	// A call whose arguments open and close within one cell still shows
	// both marks, at either end of the line.
	for _, at := range []float64{50, 1709} {
		turn.Lanes = []*session.Lane{{Kind: adapters.KindToolCall, StartMS: at, DoneMS: at + 0.1}}
		if _, marks, _ := turnTimeline(turn, 40); !strings.Contains(marks, "()") {
			t.Errorf("a call within one cell at %v ms: %q", at, marks)
		}
	}
	// A steady stream has no stall.
	if _, _, sum := turnTimeline(&session.TurnState{Log: turn.Log[:20]}, 40); strings.Contains(sum, "stall") {
		t.Errorf("steady stream: %q", sum)
	}
}
