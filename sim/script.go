package sim

import (
	"encoding/json"
	"strconv"

	"github.com/modelwire/modelwire/adapters"
)

// indexOfPhase returns the index of the event at fraction frac through the
// events of phase ph (e.g. the middle argument fragment), or -1.
func indexOfPhase(events []adapters.WireEvent, ph adapters.Phase, frac float64) int {
	var idx []int
	for i, e := range events {
		if e.Phase == ph {
			idx = append(idx, i)
		}
	}
	if len(idx) == 0 {
		return -1
	}
	return idx[int(float64(len(idx)-1)*frac)]
}

func dropPhase(events []adapters.WireEvent, ph adapters.Phase) []adapters.WireEvent {
	out := events[:0:0]
	for _, e := range events {
		if e.Phase != ph {
			out = append(out, e)
		}
	}
	return out
}

func insert(events []adapters.WireEvent, at int, e adapters.WireEvent) []adapters.WireEvent {
	at = min(at, len(events))
	out := make([]adapters.WireEvent, 0, len(events)+1)
	out = append(out, events[:at]...)
	out = append(out, e)
	return append(out, events[at:]...)
}

// duplicate sends every third delta twice, right after itself.
func duplicate(events []adapters.WireEvent, withIDs bool) []adapters.WireEvent {
	out := make([]adapters.WireEvent, 0, len(events)*4/3+1)
	deltas := 0
	for i, e := range events {
		if withIDs {
			e.ID = strconv.Itoa(i + 1)
		}
		out = append(out, e)
		if e.Phase == adapters.PhaseText || e.Phase == adapters.PhaseArgs || e.Phase == adapters.PhaseReasoning {
			deltas++
			if deltas%3 == 1 {
				out = append(out, e)
			}
		}
	}
	return out
}

// refusalTurn replaces a turn by a refusal.
func refusalTurn(mt adapters.ModelTurn) adapters.ModelTurn {
	return adapters.ModelTurn{
		Items: []adapters.OutputItem{{Kind: adapters.KindRefusal, Text: "I can't help with that request."}},
		Stop:  adapters.StopRefusal,
		Usage: mt.Usage,
	}
}

// contentFilterTurn is the provider's content filter stopping a turn: the
// text so far is kept, there is no refusal text, and each protocol says it
// its own way (Chat content_filter, Responses incomplete content_filter,
// Gemini SAFETY, Anthropic refusal).
func contentFilterTurn(mt adapters.ModelTurn) adapters.ModelTurn {
	out := adapters.ModelTurn{Stop: adapters.StopRefusal, Usage: mt.Usage}
	for _, it := range mt.Items {
		if it.Kind == adapters.KindMessage {
			it.Text = cutHalf(it.Text)
			out.Items = append(out.Items, it)
			break
		}
	}
	return out
}

// pauseTurn is Anthropic's pause_turn: a long turn (server tools) stops
// part way and the client sends the content back to let it continue.
func pauseTurn(mt adapters.ModelTurn) adapters.ModelTurn {
	return adapters.ModelTurn{
		Items: []adapters.OutputItem{{Kind: adapters.KindMessage, Text: "正在核查，请稍候。"}},
		Stop:  adapters.StopPause,
		Usage: mt.Usage,
	}
}

// truncateTurn cuts a turn as max_output_tokens would: the last item's text
// (or argument text) stops halfway, and the turn ends truncated.
func truncateTurn(mt adapters.ModelTurn) adapters.ModelTurn {
	out := adapters.ModelTurn{Stop: adapters.StopTruncated, Usage: mt.Usage}
	out.Items = append(out.Items, mt.Items...)
	if n := len(out.Items); n > 0 {
		last := out.Items[n-1]
		if last.Kind == adapters.KindToolCall {
			text := adapters.ArgumentText(last.Arguments)
			last.Arguments = jsonString(cutHalf(text))
		} else {
			last.Text = cutHalf(last.Text)
		}
		out.Items[n-1] = last
	}
	return out
}

// cutHalf cuts s at about half, at a character boundary.
func cutHalf(s string) string {
	r := []rune(s)
	return string(r[:len(r)/2])
}

func jsonString(s string) []byte {
	b, _ := json.Marshal(s)
	return b
}
