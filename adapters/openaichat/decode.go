package openaichat

import (
	"fmt"
	"strings"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/wire"
)

// Item ids. Chat Completions gives its output no ids: one response has at
// most one text, one refusal and one reasoning lane (choice 0), and tool
// calls are told apart by tool_calls[].index. These names are unique
// within a response and stable between the stream and the body decoder.
const (
	itemMessage   = "message"
	itemReasoning = "reasoning"
	itemRefusal   = "refusal"
	itemFunction  = "function_call" // the deprecated delta.function_call
)

func toolItemID(index int64) string { return fmt.Sprintf("tool_call:%d", index) }

// diagMissingFinish: [DONE] came, but no finish_reason before it. There is
// no contract kind for it; it is named like the others.
const diagMissingFinish = "missing_finish_reason"

// lane is one output item of the response.
type lane struct {
	id     string
	kind   adapters.ItemKind
	index  int64 // tool_calls[].index
	callID string
	name   string
	open   bool
}

// decoder decodes one streamed Chat Completions response. It keeps the
// lanes it has opened, the finish_reason and the last usage object; the
// terminal waits for [DONE] because the usage-only chunk arrives between
// finish_reason and [DONE] (protocols.md §2.3).
type decoder struct {
	deepseek bool

	started           bool
	responseID, model string

	lanes                     []*lane // in the order they opened
	text, reasoning, refusal  *lane
	legacy                    *lane
	calls                     []*lane
	finish                    string // the first finish_reason of choice 0
	prefix, prefixID          string // the envelope of the last chunk, see Decode
	prefixModel               string
	usage                     string // raw JSON of the last non-null usage
	out                       []adapters.Event
	terminated                bool
	otherChoicesReported      bool
	conflictingResponseIDSeen bool
	general                   bool // no fast path, for the tests that compare the two
}

// NewDecoder starts decoding one streamed response.
func (p protocol) NewDecoder() adapters.Decoder { return &decoder{deepseek: p.deepseek} }

// isDone reports the `data: [DONE]` sentinel. openai-go ends the stream at
// any payload that starts with "[DONE]"; so does this decoder.
func isDone(data string) bool {
	return strings.HasPrefix(strings.TrimLeft(data, " \t\r\n"), "[DONE]")
}

// Decode handles one SSE event. The slice it returns is only valid until
// the next call: it is backed by the decoder's own buffer, so that a text
// delta costs no allocation here (adapters.Stream hands it straight to the
// Reducer, which copies the events). Callers that keep events must copy.
func (d *decoder) Decode(raw adapters.RawEvent) []adapters.Event {
	out := d.chunk(raw.Data, d.out[:0])
	if cap(out) <= 8 {
		d.out = out // keep a small buffer, never a large one
	}
	return out
}

// DecodeAppend is Decode building the events in dst (adapters.AppendDecoder).
func (d *decoder) DecodeAppend(dst []adapters.Event, raw adapters.RawEvent) []adapters.Event {
	return d.chunk(raw.Data, dst)
}

func (d *decoder) chunk(data string, out []adapters.Event) []adapters.Event {
	if !d.general {
		if out, ok := d.fast(data, out); ok {
			return out
		}
	}
	if isDone(data) {
		return d.done()
	}
	// The envelope before "choices" is the same bytes in every chunk of a
	// response: when this chunk starts with the last one's, validated
	// then, only the rest is validated, and the scan resumes at choices.
	resume := d.prefix != "" && strings.HasPrefix(data, d.prefix)
	if valid := resume && wire.ValidObjectFrom(data, len(d.prefix)) || !resume && wire.Valid(data); !valid {
		return []adapters.Event{adapters.Diag(adapters.DiagMalformedEvent, "data is not JSON: "+clip(data))}
	}
	if i := wire.SkipWS(data, 0); i >= len(data) || data[i] != '{' {
		return []adapters.Event{adapters.Diag(adapters.DiagMalformedEvent, "data is JSON but not an object: "+clip(data))}
	}

	var id, model, object, usage, errv string
	hasChoices := false
	m := wire.IterMembers(data)
	next := ""
	// The envelope before "choices" (id, object, created, model,
	// system_fingerprint …) is the same bytes in every chunk of a
	// response; when this chunk starts with the last one's envelope, the
	// scan resumes at its choices.
	envelopeOnly := true // nothing but envelope fields so far
	if resume {
		m.I, next, id, model = len(d.prefix), "choices", d.prefixID, d.prefixModel
		envelopeOnly = false // the prefix is stored already
	}
	for {
		k := next
		next = ""
		if k == "" {
			var ok bool
			if k, ok = m.Key(); !ok {
				break
			}
		}
		switch k {
		case "choices":
			hasChoices = true
			if m.Peek() == '[' {
				if envelopeOnly && (id != "" || model != "") {
					d.prefix, d.prefixID, d.prefixModel = strings.Clone(data[:m.I]), id, model
				}
				envelopeOnly = false
				// id and model come before choices in every chunk seen;
				// the response starts before its first delta.
				out = d.start(id, model, out)
				var end int
				out, end = d.choices(data, m.I, out)
				m.SkipTo(end)
				continue
			}
		case "id":
			id, _ = m.Str()
			continue
		case "model":
			model, _ = m.Str()
			continue
		case "object", "type":
			if v, _ := m.Str(); object == "" {
				object = v
			}
			continue
		case "created", "service_tier", "system_fingerprint":
		case "usage":
			usage = m.Value()
			envelopeOnly = false
			continue
		case "error":
			errv = m.Value()
			envelopeOnly = false
			continue
		default:
			envelopeOnly = false
		}
		m.Value()
	}

	// openai-go turns any payload with a top-level "error" into a stream
	// error; a null error is not one.
	if errv != "" && errv != "null" {
		return append(out, d.errorEvent(data)...)
	}
	if !hasChoices && usage == "" {
		raw := object
		if raw == "" {
			raw = "(no object, choices or usage)"
		}
		return []adapters.Event{{Type: adapters.EvUnknown, RawType: raw}}
	}
	if !d.started && (id != "" || model != "") {
		out = append(d.start(id, model, nil), out...)
	} else if id != "" && d.responseID != "" && id != d.responseID && !d.conflictingResponseIDSeen {
		d.conflictingResponseIDSeen = true
		out = append(out, adapters.Diag(adapters.DiagOutOfOrder, fmt.Sprintf("a chunk of response %s arrived inside response %s; decoded as part of it", id, d.responseID)))
	}
	if len(usage) > 0 && usage[0] == '{' {
		d.usage = usage
	}
	return out
}

// start emits response.started once its id or model is known.
func (d *decoder) start(id, model string, out []adapters.Event) []adapters.Event {
	if d.started || (id == "" && model == "") {
		return out
	}
	d.started, d.responseID, d.model = true, id, model
	return append(out, adapters.Event{Type: adapters.EvResponseStarted, ResponseID: id, Model: model})
}

// choices decodes the choices array that starts at s[i], in place, and
// returns the index after it.
func (d *decoder) choices(s string, i int, out []adapters.Event) ([]adapters.Event, int) {
	e := wire.IterElementsAt(s, i)
	for e.Start() {
		if e.Peek() != '{' {
			v := e.Value()
			if v == "" {
				break // not JSON; the decoder validates first, so never
			}
			out = append(out, adapters.Diag(adapters.DiagMalformedEvent, "a choice that is not an object: "+clip(v)))
			continue
		}
		var end int
		out, end = d.choice(s, e.I, out)
		e.SkipTo(end)
	}
	return out, e.End()
}

// choice decodes the choice object at s[i] and returns the index after
// it. Only choice 0 is decoded: the encoder never asks for n > 1. The
// delta is read in place when the index came before it, as it always does.
func (d *decoder) choice(s string, i int, out []adapters.Event) ([]adapters.Event, int) {
	var index int64
	indexSeen := false
	var delta, finish string
	m := wire.IterMembersAt(s, i)
	for {
		k, ok := m.Key()
		if !ok {
			break
		}
		switch k {
		case "index":
			index, _ = wire.Int(m.Value())
			indexSeen = true
		case "delta":
			if indexSeen && index == 0 && m.Peek() == '{' {
				var end int
				out, end = d.delta(s, m.I, out)
				m.SkipTo(end)
			} else {
				delta = m.Value()
			}
		case "finish_reason":
			finish = m.Value()
		default:
			m.Value()
		}
	}
	if index != 0 {
		if !d.otherChoicesReported {
			d.otherChoicesReported = true
			out = append(out, adapters.Diag(adapters.DiagUnknownEvent, fmt.Sprintf("choice %d ignored: only choice 0 is decoded", index)))
		}
		return out, m.End()
	}
	if len(delta) > 0 && delta[0] == '{' {
		out, _ = d.delta(delta, 0, out)
	}
	if f := wire.Unquote(finish); f != "" {
		out = d.finishReason(f, out)
	}
	return out, m.End()
}

// delta decodes the delta object at s[i] and returns the index after it.
func (d *decoder) delta(s string, i int, out []adapters.Event) ([]adapters.Event, int) {
	m := wire.IterMembersAt(s, i)
	reasoned := false
	for {
		k, ok := m.Key()
		if !ok {
			break
		}
		switch k {
		case "content":
			t, _ := m.Str()
			out = d.textDelta(&d.text, itemMessage, adapters.KindMessage, adapters.EvTextDelta, t, out)
		case "refusal":
			t, _ := m.Str()
			out = d.textDelta(&d.refusal, itemRefusal, adapters.KindRefusal, adapters.EvRefusalDelta, t, out)
		case "reasoning_content", "reasoning":
			// DeepSeek's reasoning_content; compatible servers (vLLM,
			// Ollama, OpenRouter) send it as reasoning, some as both with
			// the same text, so the first of the two in a delta counts.
			// DeepSeek's first chunk carries "", which must not open a
			// lane: textDelta skips empty strings.
			t, _ := m.Str()
			if !reasoned {
				reasoned = t != ""
				out = d.textDelta(&d.reasoning, itemReasoning, adapters.KindReasoning, adapters.EvReasoningDelta, t, out)
			}
		case "tool_calls":
			if v := m.Value(); v[0] == '[' {
				var pos int64
				for e := wire.IterElements(v); ; pos++ {
					tc, ok := e.Next()
					if !ok {
						break
					}
					out = d.toolCallDelta(pos, tc, out)
				}
			}
		case "function_call":
			if v := m.Value(); v[0] == '{' {
				out = d.functionCallDelta(v, out)
			}
		default:
			m.Value()
		}
	}
	return out, m.End()
}

// textDelta appends a text, refusal or reasoning fragment, opening its lane
// on the first non-empty one.
func (d *decoder) textDelta(l **lane, id string, kind adapters.ItemKind, typ adapters.EventType, text string, out []adapters.Event) []adapters.Event {
	if text == "" {
		return out
	}
	if *l == nil {
		*l = d.open(&lane{id: id, kind: kind})
		out = append(out, adapters.Event{Type: adapters.EvItemStarted, ItemID: id, Kind: string(kind)})
	}
	return append(out, adapters.Event{Type: typ, ItemID: id, Delta: text})
}

func (d *decoder) open(l *lane) *lane {
	l.open = true
	d.lanes = append(d.lanes, l)
	return l
}

// toolCallDelta handles one tool_calls[] fragment. Fragments are joined by
// index; id and function.name come with the first fragment of an index and
// are kept from it (protocols.md §2.3).
func (d *decoder) toolCallDelta(pos int64, tc string, out []adapters.Event) []adapters.Event {
	if len(tc) == 0 || tc[0] != '{' {
		return append(out, adapters.Diag(adapters.DiagMalformedEvent, "a tool_calls entry that is not an object: "+clip(tc)))
	}
	index := pos // a server that omits index sends calls in order
	var id, name, args string
	for m := wire.IterMembers(tc); ; {
		k, v, ok := m.Next()
		if !ok {
			break
		}
		switch k {
		case "index":
			if n, ok := wire.Int(v); ok {
				index = n
			}
		case "id":
			id = wire.Unquote(v)
		case "function":
			name, args = functionFields(v)
		}
	}
	var c *lane
	for _, l := range d.calls {
		if l.index == index {
			c = l
			break
		}
	}
	if c == nil {
		c = d.open(&lane{id: toolItemID(index), kind: adapters.KindToolCall, index: index, callID: id, name: name})
		d.calls = append(d.calls, c)
		out = append(out, adapters.Event{Type: adapters.EvItemStarted, ItemID: c.id, Kind: string(adapters.KindToolCall), CallID: id, Name: name})
	} else {
		out = d.keep(c, id, name, out)
	}
	if args != "" {
		out = append(out, adapters.Event{Type: adapters.EvToolArgsDelta, ItemID: c.id, CallID: c.callID, Delta: args})
	}
	return out
}

// keep checks a later fragment's id and name against the first ones. The
// first wins; a call whose id changes mid-stream is reported, because
// results are sent back by that id.
func (d *decoder) keep(c *lane, id, name string, out []adapters.Event) []adapters.Event {
	switch {
	case id == "" || id == c.callID:
	case c.callID == "":
		c.callID = id
	default:
		out = append(out, adapters.Diag(adapters.DiagConflictingCallID, fmt.Sprintf("tool call index %d: a later fragment has id %s, the first had %s; the first is kept", c.index, id, c.callID)))
	}
	switch {
	case name == "" || name == c.name:
	case c.name == "":
		c.name = name
	default:
		out = append(out, adapters.Diag(adapters.DiagConflictingCallID, fmt.Sprintf("tool call index %d: a later fragment names %s, the first named %s; the first is kept", c.index, name, c.name)))
	}
	return out
}

// functionCallDelta handles the deprecated delta.function_call: one call,
// without an id.
func (d *decoder) functionCallDelta(v string, out []adapters.Event) []adapters.Event {
	name, args := functionFields(v)
	if d.legacy == nil {
		d.legacy = d.open(&lane{id: itemFunction, kind: adapters.KindToolCall, index: -1, name: name})
		out = append(out, adapters.Event{Type: adapters.EvItemStarted, ItemID: itemFunction, Kind: string(adapters.KindToolCall), Name: name})
	} else {
		out = d.keep(d.legacy, "", name, out)
	}
	if args != "" {
		out = append(out, adapters.Event{Type: adapters.EvToolArgsDelta, ItemID: itemFunction, Delta: args})
	}
	return out
}

// functionFields reads name and arguments of a function object.
func functionFields(fn string) (name, args string) {
	if len(fn) == 0 || fn[0] != '{' {
		return "", ""
	}
	for m := wire.IterMembers(fn); ; {
		k, v, ok := m.Next()
		if !ok {
			return name, args
		}
		switch k {
		case "name":
			name = wire.Unquote(v)
		case "arguments":
			// a string of JSON text; a few compatible servers send the
			// object itself
			if len(v) > 0 && v[0] == '{' {
				args = v
			} else {
				args = wire.Unquote(v)
			}
		}
	}
}

// finishReason closes every open item: Chat has no per-item close, the
// finish_reason ends them all.
func (d *decoder) finishReason(reason string, out []adapters.Event) []adapters.Event {
	if d.finish != "" {
		if reason != d.finish {
			out = append(out, adapters.Diag(adapters.DiagDuplicateEvent, fmt.Sprintf("a second finish_reason %q; the first, %q, is kept", reason, d.finish)))
		}
		return out
	}
	d.finish = reason
	return d.closeAll(out)
}

func (d *decoder) closeAll(out []adapters.Event) []adapters.Event {
	for _, l := range d.lanes {
		if !l.open {
			continue
		}
		l.open = false
		ev := adapters.Event{Type: adapters.EvItemDone, ItemID: l.id}
		if l.kind == adapters.KindToolCall {
			ev.CallID, ev.Name = l.callID, l.name
		}
		out = append(out, ev)
	}
	return out
}

// done handles [DONE]: the usage seen, then the terminal the finish_reason
// decided.
func (d *decoder) done() []adapters.Event {
	if d.terminated {
		return nil
	}
	d.terminated = true
	var out []adapters.Event
	if d.usage != "" {
		out = append(out, usageEvent(d.usage, d.deepseek))
	}
	if d.finish == "" {
		out = append(out, adapters.Diag(diagMissingFinish, "[DONE] arrived but no finish_reason before it"))
		return append(out, adapters.Terminal(adapters.StatusUnknown, adapters.StopUnknown, ""))
	}
	return append(out, terminalFor(d.finish, d.refusal != nil))
}

// Finish is called at the end of the input. A finish_reason without [DONE]
// still decides the terminal, with a diagnostic; without a finish_reason
// the Reducer reports the cut stream.
func (d *decoder) Finish() []adapters.Event {
	if d.terminated || d.finish == "" {
		return nil
	}
	d.terminated = true
	out := []adapters.Event{adapters.Diag(adapters.DiagMissingDone, fmt.Sprintf("finish_reason %q arrived but the stream ended without data: [DONE]", d.finish))}
	if d.usage != "" {
		out = append(out, usageEvent(d.usage, d.deepseek))
	}
	return append(out, terminalFor(d.finish, d.refusal != nil))
}

// errorEvent handles a payload with a top-level error object: the stream
// has failed (protocols.md §6.3). Open items stay open; the Reducer marks
// them incomplete.
func (d *decoder) errorEvent(data string) []adapters.Event {
	if d.terminated {
		return []adapters.Event{adapters.Diag(adapters.DiagErrorEvent, "an error payload after the end of the response: "+clip(data))}
	}
	d.terminated = true
	e := adapters.GenericError(0, nil, []byte(data))
	out := []adapters.Event{adapters.Diag(adapters.DiagErrorEvent, e.Error())}
	if d.usage != "" {
		out = append(out, usageEvent(d.usage, d.deepseek))
	}
	t := adapters.Terminal(adapters.StatusFailed, adapters.StopError, e.Type)
	t.Error = e
	return append(out, t)
}

// terminalFor maps a finish_reason by the contract's table. refused says a
// refusal lane was seen: a refusal that ends with stop is a refusal.
func terminalFor(reason string, refused bool) adapters.Event {
	switch reason {
	case "stop":
		if refused {
			return adapters.Terminal(adapters.StatusRefused, adapters.StopRefusal, reason)
		}
		return adapters.Terminal(adapters.StatusCompleted, adapters.StopFinal, reason)
	case "tool_calls", "function_call":
		return adapters.Terminal(adapters.StatusCompleted, adapters.StopToolCall, reason)
	case "length":
		return adapters.Terminal(adapters.StatusIncomplete, adapters.StopTruncated, reason)
	case "content_filter":
		return adapters.Terminal(adapters.StatusRefused, adapters.StopRefusal, reason)
	case "insufficient_system_resource":
		// DeepSeek: inference resources ran out mid-answer; a provider
		// failure, worth a retry (protocols.md §5).
		t := adapters.Terminal(adapters.StatusFailed, adapters.StopError, reason)
		t.Error = &adapters.APIError{Type: reason, Message: "the provider ran out of inference resources and stopped the answer"}
		return t
	}
	return adapters.Terminal(adapters.StatusUnknown, adapters.StopUnknown, reason)
}

// clip shortens text quoted in a diagnostic.
func clip(s string) string {
	const n = 120
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && s[i]&0xC0 == 0x80 {
		i--
	}
	return s[:i] + "…"
}
