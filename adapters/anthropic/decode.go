package anthropic

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/wire"
)

// EventDecoder decodes the events of an Anthropic Messages stream into
// canonical events. It addresses content blocks by their index, because
// "delta and stop events may interleave across open content blocks"
// (messageutil.go), and keeps per block only what the protocol needs: the
// item id, the kind, the call id, whether any argument text came, and the
// thinking signature being accumulated.
//
// Why gjson: content_block_delta is almost every event of a stream. Each
// payload is validated once (gjson.Valid) and then read in place; string
// values without escapes are substrings of the payload, so a text delta
// costs no decoding allocation. encoding/json is only used for whole
// bodies.
type EventDecoder struct {
	// embedded: the events come from a claude-code transcript, which holds
	// several API responses; see NewEmbeddedDecoder.
	embedded bool

	started  bool // message_start seen (standalone)
	msgID    string
	msgCount int
	blocks   map[int64]*block
	callIDs  map[string]struct{}

	stopReason string
	startUsage string
	deltaUsage string
	terminal   bool

	// general turns the fast path off, for the tests that compare the two.
	general bool
	// hot is the block of the last delta, at hotIndex: deltas come in
	// runs of one block. Set to nil whenever blocks changes.
	hot      *block
	hotIndex int64

	// scratch backs the result of the hot path (one delta, at most one
	// event), so that a delta allocates nothing here; see DecodeEvent.
	scratch [1]adapters.Event
}

type block struct {
	itemID string
	// kind is "" for blocks that are not canonical items (server tool
	// blocks run by Anthropic): their deltas and stop are dropped.
	kind      adapters.ItemKind
	callID    string
	initInput string // a tool_use block's start input when it was not {}
	argsLen   int
	sig       []byte
	redacted  string
	isRedact  bool
}

// NewEventDecoder decodes one streamed response (the anthropic-messages
// decoder).
func NewEventDecoder() *EventDecoder {
	return &EventDecoder{blocks: map[int64]*block{}, callIDs: map[string]struct{}{}}
}

// NewEmbeddedDecoder decodes the Anthropic events embedded in a claude-code
// transcript. That transcript carries one API response per model turn, and
// the claude-code adapter decides the response boundaries itself, so this
// decoder emits no response.started, no usage and no terminal: a new
// message_start starts a new message (block indexes restart), message_stop
// only ends it, and an error event is reported as a diagnostic. StopReason
// tells the caller the last stop_reason seen.
func NewEmbeddedDecoder() *EventDecoder {
	d := NewEventDecoder()
	d.embedded = true
	return d
}

// StopReason is the last non-null stop_reason of the current message.
func (d *EventDecoder) StopReason() string { return d.stopReason }

// MessageID is the id of the current message ("" before message_start).
func (d *EventDecoder) MessageID() string { return d.msgID }

// Decode handles one SSE event; the result lives until the next call (see
// DecodeEvent).
func (d *EventDecoder) Decode(raw adapters.RawEvent) []adapters.Event {
	return d.DecodeEvent(raw.Event, raw.Data)
}

// DecodeEvent handles one event given its SSE event name ("" when it had
// none) and its JSON data. Events are routed by the event name, as the
// official SDK routes them; the JSON type must match it (the docs: each
// event "include[s] the matching event type in its data"), otherwise a
// diagnostic says so. Without a name the JSON type routes.
//
// The returned slice is only valid until the next call: for text, thinking
// and argument deltas it is backed by the decoder's own one-event array
// (adapters.Stream hands it straight to the Reducer, which copies it).
// Callers that keep events must copy them.
func (d *EventDecoder) DecodeEvent(name, data string) []adapters.Event {
	return d.decodeEvent(name, data, d.scratch[:0])
}

// DecodeAppend is Decode building the events in dst (adapters.AppendDecoder).
func (d *EventDecoder) DecodeAppend(dst []adapters.Event, raw adapters.RawEvent) []adapters.Event {
	return d.decodeEvent(raw.Event, raw.Data, dst)
}

// decodeEvent is DecodeEvent with the hot path's events built in hot.
func (d *EventDecoder) decodeEvent(name, data string, hot []adapters.Event) []adapters.Event {
	if !d.general && (name == "content_block_delta" || name == "") {
		if index, dtype, key, value, ok := fastDelta(data); ok && deltaKey(dtype) == key {
			return d.applyDelta(index, dtype, value, hot)
		}
	}
	if !wire.Valid(data) {
		return []adapters.Event{adapters.Diag(adapters.DiagMalformedEvent, fmt.Sprintf("event %s: data is not valid JSON: %s", orNone(name), quote(data)))}
	}
	typ := gjson.Get(data, "type")
	route := name
	var out []adapters.Event
	switch {
	case name == "" && typ.Type != gjson.String:
		return []adapters.Event{adapters.Diag(adapters.DiagMalformedEvent, "an event with neither an event name nor a JSON type: "+quote(data))}
	case name == "":
		route = typ.Str
	case typ.Str != name:
		out = append(out, adapters.Diag(DiagEventNameMismatch, fmt.Sprintf("SSE event %s carries JSON type %s; routed by the event name", quote(name), quote(typ.Str))))
	}
	switch route {
	case "content_block_delta":
		return d.delta(data, out)
	case "content_block_start":
		return d.blockStart(data, out)
	case "content_block_stop":
		return d.blockStop(data, out)
	case "message_start":
		return d.messageStart(data, out)
	case "message_delta":
		r := gjson.Get(data, "delta.stop_reason")
		if r.Type == gjson.String && r.Str != "" {
			d.stopReason = r.Str
		}
		if u := gjson.Get(data, "usage"); u.IsObject() {
			d.deltaUsage = u.Raw
		}
		return out
	case "message_stop":
		if d.embedded {
			return out
		}
		return d.finish(out)
	case "ping":
		// The documented keep-alive: nothing to show.
		return out
	case "error":
		return d.errorEvent(data, out)
	}
	return append(out, adapters.Event{Type: adapters.EvUnknown, RawType: route})
}

// Finish reports a stop_reason that never got its message_stop: it still
// decides the terminal, with a missing_message_stop diagnostic.
//
// A stream cut before any stop_reason still reports the usage received so
// far (message_start's input tokens): the input was billed all the same.
func (d *EventDecoder) Finish() []adapters.Event {
	if d.embedded || d.terminal {
		return nil
	}
	if d.stopReason == "" {
		if u := NormaliseUsage(MergeUsage(d.startUsage, d.deltaUsage)); u != nil {
			return []adapters.Event{{Type: adapters.EvUsage, Usage: u}}
		}
		return nil
	}
	out := []adapters.Event{adapters.Diag(adapters.DiagMissingStop, fmt.Sprintf("stop_reason %s arrived but message_stop never did", quote(d.stopReason)))}
	return d.finish(out)
}

// finish emits usage (once known) and the terminal.
func (d *EventDecoder) finish(out []adapters.Event) []adapters.Event {
	d.terminal = true
	if u := NormaliseUsage(MergeUsage(d.startUsage, d.deltaUsage)); u != nil {
		out = append(out, adapters.Event{Type: adapters.EvUsage, Usage: u})
	}
	return append(out, TerminalFor(d.stopReason)...)
}

func (d *EventDecoder) errorEvent(data string, out []adapters.Event) []adapters.Event {
	e := adapters.GenericError(0, nil, []byte(data))
	out = append(out, adapters.Diag(adapters.DiagErrorEvent, "error event in the stream: "+e.Error()))
	if d.embedded {
		return out
	}
	d.terminal = true
	if u := NormaliseUsage(MergeUsage(d.startUsage, d.deltaUsage)); u != nil {
		out = append(out, adapters.Event{Type: adapters.EvUsage, Usage: u})
	}
	t := adapters.Terminal(adapters.StatusFailed, adapters.StopError, e.Type)
	t.Error = e
	return append(out, t)
}

func (d *EventDecoder) messageStart(data string, out []adapters.Event) []adapters.Event {
	msg := gjson.Get(data, "message")
	if !d.embedded {
		if d.started {
			return append(out, adapters.Diag(adapters.DiagDuplicateEvent, "a second message_start in one response; ignored"))
		}
		d.started = true
	} else {
		// A new API response inside a transcript: block indexes restart.
		d.blocks, d.hot = map[int64]*block{}, nil
		d.stopReason, d.deltaUsage = "", ""
	}
	d.msgCount++
	d.msgID = msg.Get("id").String()
	if u := msg.Get("usage"); u.IsObject() {
		d.startUsage = u.Raw
	} else {
		d.startUsage = ""
	}
	if d.embedded {
		return out
	}
	return append(out, adapters.Event{Type: adapters.EvResponseStarted, ResponseID: d.msgID, Model: msg.Get("model").String()})
}

// ItemID is the canonical item id of a non-tool block: "<message id>#<index>".
func ItemID(msgID string, index int64) string {
	return msgID + "#" + strconv.FormatInt(index, 10)
}

func (d *EventDecoder) itemID(index int64) string {
	key := d.msgID
	if key == "" {
		key = "message" + strconv.Itoa(d.msgCount)
	}
	return ItemID(key, index)
}

func (d *EventDecoder) blockStart(data string, out []adapters.Event) []adapters.Event {
	idx := gjson.Get(data, "index")
	if idx.Type != gjson.Number {
		return append(out, adapters.Diag(adapters.DiagMalformedEvent, "content_block_start without an index: "+quote(data)))
	}
	i := idx.Int()
	if _, dup := d.blocks[i]; dup {
		return append(out, adapters.Diag(adapters.DiagDuplicateEvent, fmt.Sprintf("content_block_start for index %d seen twice; ignored", i)))
	}
	cb := gjson.Get(data, "content_block")
	ct := cb.Get("type").String()
	b := &block{itemID: d.itemID(i)}
	d.blocks[i], d.hot = b, nil
	switch ct {
	case "text":
		b.kind = adapters.KindMessage
		out = append(out, adapters.Event{Type: adapters.EvItemStarted, ItemID: b.itemID, Kind: string(b.kind)})
		if t := cb.Get("text").String(); t != "" {
			out = append(out, adapters.Event{Type: adapters.EvTextDelta, ItemID: b.itemID, Delta: t})
		}
	case "thinking":
		b.kind = adapters.KindReasoning
		out = append(out, adapters.Event{Type: adapters.EvItemStarted, ItemID: b.itemID, Kind: string(b.kind)})
		if t := cb.Get("thinking").String(); t != "" {
			out = append(out, adapters.Event{Type: adapters.EvReasoningDelta, ItemID: b.itemID, Delta: t})
		}
		b.sig = append(b.sig, cb.Get("signature").String()...)
	case "redacted_thinking":
		b.kind = adapters.KindReasoning
		b.isRedact = true
		b.redacted = cb.Get("data").String()
		out = append(out, adapters.Event{Type: adapters.EvItemStarted, ItemID: b.itemID, Kind: string(b.kind)})
	case "tool_use":
		b.kind = adapters.KindToolCall
		b.callID = cb.Get("id").String()
		if b.callID != "" {
			if _, seen := d.callIDs[b.callID]; seen {
				out = append(out, adapters.Diag(adapters.DiagConflictingCallID, fmt.Sprintf("tool_use id %s used by a second block (index %d); that block is item %s", b.callID, i, b.itemID)))
			} else {
				d.callIDs[b.callID] = struct{}{}
				b.itemID = b.callID
			}
		}
		if in := cb.Get("input"); in.Exists() && strings.TrimSpace(in.Raw) != "{}" {
			b.initInput = in.Raw
		}
		out = append(out, adapters.Event{Type: adapters.EvItemStarted, ItemID: b.itemID, Kind: string(b.kind), CallID: b.callID, Name: cb.Get("name").String()})
	default:
		// server_tool_use, web_search_tool_result, …: run by Anthropic,
		// never a call for the application to make.
		if ct == "" {
			ct = "(none)"
		}
		out = append(out, adapters.Event{Type: adapters.EvUnknown, RawType: "content_block_start/" + ct})
	}
	return out
}

// deltaKey is the field that carries each delta type's text, "" for
// other types (a switch: a map lookup hashed the type of every delta).
func deltaKey(dtype string) string {
	switch dtype {
	case "text_delta":
		return "text"
	case "thinking_delta":
		return "thinking"
	case "input_json_delta":
		return "partial_json"
	case "signature_delta":
		return "signature"
	}
	return ""
}

// delta is the general path for content_block_delta: any valid JSON.
func (d *EventDecoder) delta(data string, out []adapters.Event) []adapters.Event {
	idx := gjson.Get(data, "index")
	if idx.Type != gjson.Number {
		return append(out, adapters.Diag(adapters.DiagMalformedEvent, "content_block_delta without an index: "+quote(data)))
	}
	delta := gjson.Get(data, "delta")
	dt := delta.Get("type").String()
	value := ""
	if k := deltaKey(dt); k != "" {
		value = delta.Get(k).String()
	}
	return d.applyDelta(idx.Int(), dt, value, out)
}

// applyDelta turns one delta of block index into canonical events.
func (d *EventDecoder) applyDelta(i int64, dt, value string, out []adapters.Event) []adapters.Event {
	b := d.hot
	if b == nil || d.hotIndex != i {
		b = d.blocks[i]
		d.hot, d.hotIndex = b, i
	}
	if b != nil && b.kind == "" {
		return out // a server tool block
	}
	var id, callID string
	if b != nil {
		id, callID = b.itemID, b.callID
	} else {
		// Never started: the Reducer opens the item and reports it.
		id = d.itemID(i)
	}
	switch dt {
	case "text_delta":
		if value != "" {
			out = append(out, adapters.Event{Type: adapters.EvTextDelta, ItemID: id, Delta: value})
		}
	case "thinking_delta":
		if value != "" {
			out = append(out, adapters.Event{Type: adapters.EvReasoningDelta, ItemID: id, Delta: value})
		}
	case "input_json_delta":
		// The first fragment is often "": it carries nothing.
		if value != "" {
			if b != nil {
				b.argsLen += len(value)
			}
			out = append(out, adapters.Event{Type: adapters.EvToolArgsDelta, ItemID: id, CallID: callID, Delta: value})
		}
	case "signature_delta":
		if b != nil {
			b.sig = append(b.sig, value...)
		}
	case "citations_delta":
		// Citation metadata for a text block: not part of the canonical model.
	default:
		if dt == "" {
			dt = "(none)"
		}
		out = append(out, adapters.Event{Type: adapters.EvUnknown, RawType: "content_block_delta/" + dt})
	}
	return out
}

func (d *EventDecoder) blockStop(data string, out []adapters.Event) []adapters.Event {
	idx := gjson.Get(data, "index")
	if idx.Type != gjson.Number {
		return append(out, adapters.Diag(adapters.DiagMalformedEvent, "content_block_stop without an index: "+quote(data)))
	}
	b := d.blocks[idx.Int()]
	if b == nil {
		// The Reducer reports an item.done for an item that never started.
		return append(out, adapters.Event{Type: adapters.EvItemDone, ItemID: d.itemID(idx.Int())})
	}
	if b.kind == "" {
		return out
	}
	done := adapters.Event{Type: adapters.EvItemDone, ItemID: b.itemID, CallID: b.callID}
	switch b.kind {
	case adapters.KindToolCall:
		if b.argsLen == 0 {
			// No input_json_delta at all: the input is the start block's,
			// {} as the SDK keeps it.
			final := "{}"
			if b.initInput != "" {
				final = b.initInput
			}
			done.Final = &final
		}
	case adapters.KindReasoning:
		if b.isRedact {
			done.Signature = RedactedPrefix + b.redacted
		} else {
			done.Signature = string(b.sig)
		}
	}
	return append(out, done)
}

func orNone(name string) string {
	if name == "" {
		return "(no event name)"
	}
	return quote(name)
}
