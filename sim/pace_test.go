package sim

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/modelwire/modelwire/adapters"
)

// A reader's words: runs of letters and digits, and each Chinese character.
func TestWords(t *testing.T) {
	for s, want := range map[string]int{
		"":                                     0,
		"Hello, world":                         2,
		`{"order_id":"O-2048","line_id":"L1"}`: 7,
		"您好，申请退款 150 元":                        8,
		"needs_review 13000":                   3,
	} {
		if got := words(s); got != want {
			t.Errorf("words(%q) = %d, want %d", s, got, want)
		}
	}
}

// At a pace, a turn's words are spread over its content events only, so
// the whole turn takes words/pace; no pace, no pause.
func TestContentPause(t *testing.T) {
	mt := adapters.ModelTurn{Items: []adapters.OutputItem{
		{Kind: adapters.KindMessage, Text: "one two three four five six"},
		{Kind: adapters.KindToolCall, Name: "f", Arguments: json.RawMessage(`{"a":"b c"}`)},
	}}
	events := []adapters.WireEvent{{Phase: adapters.PhaseStart}, {Phase: adapters.PhaseText}, {Phase: adapters.PhaseText},
		{Phase: adapters.PhaseArgs}, {Phase: adapters.PhaseArgs}, {Phase: adapters.PhaseTerminal}}
	// 9 words at 3 a second is 3 s over 4 content events.
	if got, want := contentPause(mt, events, 3), 750*time.Millisecond; got != want {
		t.Errorf("pause %v, want %v", got, want)
	}
	if got := contentPause(mt, events, 0); got != 0 {
		t.Errorf("no pace: pause %v", got)
	}
	if got := contentPause(mt, events[:1], 3); got != 0 {
		t.Errorf("no content events: pause %v", got)
	}
}
