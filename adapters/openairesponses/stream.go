package openairesponses

import (
	"encoding/json"
	"regexp"
	"strconv"

	"github.com/modelwire/modelwire/adapters"
)

// Writing a rendered turn as the Responses API's stream: typed events,
// numbered by sequence_number.

// StreamEvents renders a turn as the API's stream (byte shapes: simulate.go).
func (Protocol) StreamEvents(t adapters.ModelTurn, o adapters.ResponseOptions) []adapters.WireEvent {
	st := simRender(t, o, true)
	frag := o.Fragmenter()
	// Each item's fragments first, so the events are counted and stored
	// in one array (a stream is hundreds of them).
	frags := make([][]string, len(st.items))
	n := 4
	for i, x := range st.items {
		frags[i] = frag(x.text)
		n += len(frags[i]) + 8
	}
	out := make([]adapters.WireEvent, 0, n)
	ev := func(typ string, ph adapters.Phase, members ...simMember) {
		out = append(out, adapters.WireEvent{Event: typ, Data: simEnvelope(typ, len(out), members...), Phase: ph})
	}
	obf := func(delta string) simMember {
		return simMember{"obfuscation", adapters.JSONString(simObfuscation(st.seed, len(out), delta))}
	}
	started := st.object(false)
	ev("response.created", adapters.PhaseStart, simMember{"response", started})
	ev("response.in_progress", adapters.PhaseStart, simMember{"response", started})
	for i, x := range st.items {
		idx := simMember{"output_index", strconv.Itoa(i)}
		item := simMember{"item_id", adapters.JSONString(x.id)}
		ev("response.output_item.added", adapters.PhaseStart, idx, simMember{"item", x.added()})
		switch x.kind {
		case adapters.KindReasoning:
			if x.text != "" {
				si := simMember{"summary_index", "0"}
				ev("response.reasoning_summary_part.added", adapters.PhaseStart, item, idx, si, simMember{"part", `{"type":"summary_text","text":""}`})
				for _, d := range frags[i] {
					ev("response.reasoning_summary_text.delta", adapters.PhaseReasoning, simMember{"delta", adapters.JSONString(d)}, item, obf(d), idx, si)
				}
				ev("response.reasoning_summary_text.done", adapters.PhaseItemDone, item, idx, si, simMember{"text", adapters.JSONString(x.text)})
				ev("response.reasoning_summary_part.done", adapters.PhaseItemDone, item, idx, si,
					simMember{"part", `{"type":"summary_text","text":` + adapters.JSONString(x.text) + `}`})
			}
		case adapters.KindToolCall:
			for _, d := range frags[i] {
				ev("response.function_call_arguments.delta", adapters.PhaseArgs, simMember{"delta", adapters.JSONString(d)}, item, obf(d), idx)
			}
			ev("response.function_call_arguments.done", adapters.PhaseItemDone, simMember{"arguments", adapters.JSONString(x.text)}, item,
				simMember{"name", adapters.JSONString(x.name)}, idx)
		case adapters.KindRefusal:
			ci := simMember{"content_index", "0"}
			ev("response.content_part.added", adapters.PhaseStart, ci, item, idx, simMember{"part", simRefusalPart("")})
			for _, d := range frags[i] {
				ev("response.refusal.delta", adapters.PhaseText, ci, simMember{"delta", adapters.JSONString(d)}, item, obf(d), idx)
			}
			ev("response.refusal.done", adapters.PhaseItemDone, ci, item, idx, simMember{"refusal", adapters.JSONString(x.text)})
			ev("response.content_part.done", adapters.PhaseItemDone, ci, item, idx, simMember{"part", simRefusalPart(x.text)})
		default:
			ci := simMember{"content_index", "0"}
			ev("response.content_part.added", adapters.PhaseStart, ci, item, idx, simMember{"part", simOutputText("")})
			for _, d := range frags[i] {
				ev("response.output_text.delta", adapters.PhaseText, ci, simMember{"delta", adapters.JSONString(d)}, item,
					simMember{"logprobs", "[]"}, obf(d), idx)
			}
			ev("response.output_text.done", adapters.PhaseItemDone, ci, item, simMember{"logprobs", "[]"}, idx, simMember{"text", adapters.JSONString(x.text)})
			ev("response.content_part.done", adapters.PhaseItemDone, ci, item, idx, simMember{"part", simOutputText(x.text)})
		}
		ev("response.output_item.done", adapters.PhaseItemDone, idx, simMember{"item", x.done()})
	}
	terminal := "response.completed"
	if st.truncated {
		terminal = "response.incomplete"
	}
	ev(terminal, adapters.PhaseTerminal, simMember{"response", st.object(true)})
	return out
}

// UnknownEvent is an event type the API does not define (yet), shaped as
// its events are; its sequence_number is a placeholder as in ErrorEvent.
func (Protocol) UnknownEvent() adapters.WireEvent {
	return adapters.WireEvent{Event: "response.progress",
		Data:  simEnvelope("response.progress", 0, simMember{"output_tokens", "8"}, simMember{"elapsed_ms", "412"}),
		Phase: adapters.PhaseOther}
}

var simSeqMember = regexp.MustCompile(`"sequence_number":-?[0-9]+`)

// Renumber gives a stream's events the sequence numbers a real stream would
// carry after the simulator's faults have reshaped it: 0, 1, 2… in sending
// order, an event sent twice in a row (the duplicate-events fault) keeping
// the number of the first, and data that is not JSON (the malformed-event
// fault) left as it is and not counted. Events inserted by ErrorEvent and
// UnknownEvent get their place this way; a late event gets a new number.
// The sim server calls it, when the protocol has it, right before writing.
func (Protocol) Renumber(events []adapters.WireEvent) []adapters.WireEvent {
	out := make([]adapters.WireEvent, len(events))
	n, prev := -1, ""
	for i, e := range events {
		out[i] = e
		if !json.Valid([]byte(e.Data)) {
			continue
		}
		loc := simSeqMember.FindStringIndex(e.Data)
		if loc == nil {
			continue
		}
		if e.Data != prev || n < 0 {
			n++
		}
		prev = e.Data
		out[i].Data = e.Data[:loc[0]] + `"sequence_number":` + strconv.Itoa(n) + e.Data[loc[1]:]
	}
	return out
}
