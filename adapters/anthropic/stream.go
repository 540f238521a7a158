package anthropic

import (
	"strconv"

	"github.com/modelwire/modelwire/adapters"
)

// Writing a rendered turn as the Messages API's stream: message_start, the
// content blocks' events, message_delta, message_stop.

// StreamEvents renders a turn as the API's stream (byte shapes: simulate.go).
func (protocol) StreamEvents(t adapters.ModelTurn, o adapters.ResponseOptions) []adapters.WireEvent {
	st := render(t, o)
	frag := o.Fragmenter()
	ev := func(name string, ph adapters.Phase, data string) adapters.WireEvent {
		return adapters.WireEvent{Event: name, Data: data, Phase: ph}
	}
	ping := ev("ping", adapters.PhaseOther, `{"type": "ping"}`)
	out := []adapters.WireEvent{ev("message_start", adapters.PhaseStart,
		`{"type":"message_start","message":`+st.message("[]", "null", "null", st.usage(true))+`}`)}
	if len(st.blocks) == 0 {
		out = append(out, ping)
	}
	for i, b := range st.blocks {
		idx := strconv.Itoa(i)
		start := `{"type":"content_block_start","index":` + idx + `,"content_block":`
		delta := func(ph adapters.Phase, typ, key, value string) adapters.WireEvent {
			return ev("content_block_delta", ph, `{"type":"content_block_delta","index":`+idx+
				`,"delta":{"type":"`+typ+`","`+key+`":`+adapters.JSONString(value)+`}}`)
		}
		switch b.kind {
		case adapters.KindReasoning:
			out = append(out, ev("content_block_start", adapters.PhaseStart, start+`{"type":"thinking","thinking":"","signature":""}}`))
		case adapters.KindToolCall:
			out = append(out, ev("content_block_start", adapters.PhaseStart, start+`{"type":"tool_use","id":`+adapters.JSONString(b.id)+`,"name":`+adapters.JSONString(b.name)+`,"input":{}}}`))
		default:
			out = append(out, ev("content_block_start", adapters.PhaseStart, start+`{"type":"text","text":""}}`))
		}
		if i == 0 {
			out = append(out, ping)
		}
		switch b.kind {
		case adapters.KindReasoning:
			for _, f := range frag(b.text) {
				out = append(out, delta(adapters.PhaseReasoning, "thinking_delta", "thinking", f))
			}
			// The signature is not reasoning text: PhaseOther, so that no
			// fault duplicates it into a signature the API would reject.
			out = append(out, delta(adapters.PhaseOther, "signature_delta", "signature", b.signature))
		case adapters.KindToolCall:
			out = append(out, delta(adapters.PhaseArgs, "input_json_delta", "partial_json", ""))
			for _, f := range frag(b.text) {
				out = append(out, delta(adapters.PhaseArgs, "input_json_delta", "partial_json", f))
			}
		default:
			for _, f := range frag(b.text) {
				out = append(out, delta(adapters.PhaseText, "text_delta", "text", f))
			}
		}
		out = append(out, ev("content_block_stop", adapters.PhaseItemDone, `{"type":"content_block_stop","index":`+idx+`}`))
	}
	// message_delta carries the stop_reason: with message_stop it is the
	// terminal (without it a client has no stop reason at all).
	out = append(out,
		ev("message_delta", adapters.PhaseTerminal, `{"type":"message_delta","delta":{"stop_reason":`+adapters.JSONString(st.stopReason)+
			`,"stop_sequence":null,"stop_details":`+st.stopDetails+`},"usage":`+st.deltaUsage()+`}`),
		ev("message_stop", adapters.PhaseTerminal, `{"type":"message_stop"}`))
	return out
}
