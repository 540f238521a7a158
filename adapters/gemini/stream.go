package gemini

import (
	"encoding/json"

	"github.com/modelwire/modelwire/adapters"
)

// Writing a rendered turn as streamGenerateContent chunks.

// StreamEvents renders a turn as streamGenerateContent?alt=sse chunks (byte
// shapes: simulate.go).
func (Protocol) StreamEvents(t adapters.ModelTurn, o adapters.ResponseOptions) []adapters.WireEvent {
	st := simRender(t, o)
	frag := o.Fragment
	if frag == nil {
		frag = adapters.Fragments
	}
	var out []adapters.WireEvent
	chunk := func(ph adapters.Phase, parts ...simPart) {
		c := simCandidate{Content: &simContent{Parts: parts, Role: "model"}}
		out = append(out, adapters.WireEvent{Data: simStreamJSON(st.response(c, false)), Phase: ph})
	}
	var calls []simPart
	flush := func() {
		if len(calls) > 0 {
			chunk(adapters.PhaseArgs, calls...)
			calls = nil
		}
	}
	signed := false
	for _, it := range st.items {
		switch it.kind {
		case adapters.KindToolCall:
			p := simPart{FunctionCall: &simCall{Name: it.name, Args: json.RawMessage(it.text)}}
			if !signed {
				p.ThoughtSignature, signed = st.signature, true
			}
			calls = append(calls, p)
		case adapters.KindReasoning:
			flush()
			for _, f := range frag(it.text) {
				chunk(adapters.PhaseReasoning, simPart{Text: simText(f), Thought: true})
			}
		default:
			flush()
			for _, f := range frag(it.text) {
				chunk(adapters.PhaseText, simPart{Text: simText(f)})
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
	out = append(out, adapters.WireEvent{Data: simStreamJSON(st.response(last, true)), Phase: adapters.PhaseTerminal})
	return out
}
