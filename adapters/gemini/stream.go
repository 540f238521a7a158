package gemini

import (
	"strings"

	"github.com/modelwire/modelwire/adapters"
)

// Writing a rendered turn as streamGenerateContent chunks.

// simTextMark stands for a chunk's text while its JSON is printed.
const simTextMark = "modelwire-sim-text-mark"

// StreamEvents renders a turn as streamGenerateContent?alt=sse chunks (byte
// shapes: simulate.go).
func (Protocol) StreamEvents(t adapters.ModelTurn, o adapters.ResponseOptions) []adapters.WireEvent {
	st := simRender(t, o)
	frag := o.Fragmenter()
	// Text chunks differ only in their text: each kind is printed once
	// with a mark for the text and cut there (a marshal per fragment was
	// most of a stream's cost).
	var textChunk [2][2]string // [thought] → before, after the text
	for i, thought := range []bool{false, true} {
		c := simCandidate{Content: &simContent{Parts: []simPart{{Text: simText(simTextMark), Thought: thought}}, Role: "model"}}
		textChunk[i][0], textChunk[i][1], _ = strings.Cut(simStreamJSON(st.response(c, false)), adapters.JSONString(simTextMark))
	}
	// The events are written into one buffer (adapters.EventWriter), room
	// made for each item's fragments.
	frags := make([][]string, len(st.items))
	n := 2
	for i, it := range st.items {
		if it.kind != adapters.KindToolCall {
			frags[i] = frag(it.text)
		}
		n += len(frags[i]) + 1
	}
	w := adapters.NewEventWriter(o.Buf, n, len(textChunk[0][0])+len(textChunk[0][1])+32)
	chunk := func(ph adapters.Phase, parts ...simPart) {
		c := simCandidate{Content: &simContent{Parts: parts, Role: "model"}}
		w.Buf = append(w.Buf, simStreamJSON(st.response(c, false))...)
		w.End("", ph)
	}
	text := func(ph adapters.Phase, thought int, f string) {
		w.Buf = append(w.Buf, textChunk[thought][0]...)
		w.Buf = adapters.AppendJSONString(w.Buf, f)
		w.Buf = append(w.Buf, textChunk[thought][1]...)
		w.End("", ph)
	}
	var calls []simPart
	flush := func() {
		if len(calls) > 0 {
			chunk(adapters.PhaseArgs, calls...)
			calls = nil
		}
	}
	signed := false
	for i, it := range st.items {
		switch it.kind {
		case adapters.KindToolCall:
			calls = append(calls, st.callPart(it, &signed))
		case adapters.KindReasoning:
			flush()
			for _, f := range frags[i] {
				text(adapters.PhaseReasoning, 1, f)
			}
		default:
			flush()
			for _, f := range frags[i] {
				text(adapters.PhaseText, 0, f)
			}
		}
	}
	flush()

	last := simCandidate{FinishReason: st.finish}
	if st.finish == "SAFETY" {
		last.SafetyRatings = simRatings
	} else {
		p := simPart{Text: simText("")}
		if st.thought && !st.hasCalls {
			p.ThoughtSignature = st.signature
		}
		last.Content = &simContent{Parts: []simPart{p}, Role: "model"}
	}
	w.Buf = append(w.Buf, simStreamJSON(st.response(last, true))...)
	w.End("", adapters.PhaseTerminal)
	return w.Events()
}
