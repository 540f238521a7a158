package openairesponses

import (
	"fmt"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/modelwire/modelwire/adapters"
)

// Diagnostic kinds this decoder adds to the shared ones.
const (
	// diagEventNameMismatch: the SSE event name differs from the JSON type
	// (protocols.md §8.4). The JSON type decides.
	diagEventNameMismatch = "event_name_mismatch"
)

// recentEvents is how many past events are kept to tell a repeated event
// (same sequence_number, same bytes) from an out-of-order one.
const recentEvents = 32

// fields are the top-level members of one event that the decoder reads,
// collected in a single pass over the JSON (scanMembers): the hot events
// (deltas) are never decoded more than once.
type fields struct {
	typ, itemID, delta                string
	seq, outIdx                       int64
	contentIdx, summaryIdx            int64
	hasSeq, hasIdx, hasType, hasDelta bool
	response, item, part, err         gjson.Result
	code, message                     gjson.Result
	text, arguments, refusal          gjson.Result
}

// lane is the decoder's state of one output item.
type lane struct {
	id, typ      string // provider item id and item type
	callID, name string // function_call only
	closed       bool
	refusal      bool // the message's refusal lane is open
	// Provider texts from the *.done events, used at close when the closed
	// item does not carry them itself.
	textDone, refusalDone []string
	argsDone              *string
	// Reasoning parts: the last part written (summary i → 2i, content i →
	// 2i+1) and whether any text was written, to separate parts.
	reasonPart int64
	reasonAny  bool
}

// decoder decodes one streamed Responses response.
type decoder struct {
	out []adapters.Event
	// general turns the fast path off, for the tests that compare the two.
	general bool

	started  bool
	terminal bool

	haveSeq bool
	lastSeq int64
	recent  [recentEvents]struct {
		seq  int64
		data string
	}
	recentPos int

	lanes   map[string]*lane
	byIndex map[int64]*lane
	callIDs map[string]string // call_id → item id
	last    *lane             // the lane of the previous delta, a lookup cache

	// Facts that decide the stop reason of a completed response.
	sawCall, sawText, sawRefusal bool
}

func newDecoder() *decoder {
	return &decoder{lanes: map[string]*lane{}, byIndex: map[int64]*lane{}, callIDs: map[string]string{}}
}

// emit appends ev to the current event's output.
func (d *decoder) emit(ev adapters.Event) { d.out = append(d.out, ev) }

// DecodeAppend is Decode building the events in dst (adapters.AppendDecoder).
func (d *decoder) DecodeAppend(dst []adapters.Event, raw adapters.RawEvent) []adapters.Event {
	return adapters.DecodeInto(&d.out, dst, func() []adapters.Event { return d.Decode(raw) })
}

// Decode handles one SSE event. It decodes by the JSON `type`, not the SSE
// event name, as the SDKs do (protocols.md §1.1). The returned slice is
// reused by the next call, as adapters.Decoder allows: Stream hands it to
// the Reducer, which copies it, so a stream allocates no events here.
func (d *decoder) Decode(raw adapters.RawEvent) []adapters.Event {
	d.out = d.out[:0]
	return d.decode(raw)
}

func (d *decoder) decode(raw adapters.RawEvent) []adapters.Event {
	data := raw.Data
	var f fields
	valid, object := true, true
	if d.general || !fastMembers(data, &f) {
		f = fields{}
		valid, object = scanMembers(data, &f)
	}
	if !valid {
		d.emit(adapters.Diag(adapters.DiagMalformedEvent, "event data is not valid JSON: "+quote(data)))
		return d.out
	}
	if !object {
		d.emit(adapters.Diag(adapters.DiagMalformedEvent, "event data is not a JSON object: "+quote(data)))
		return d.out
	}
	if f.hasSeq && d.checkSeq(f.seq, data) {
		return d.out
	}
	if raw.Event != "" && f.hasType && raw.Event != f.typ {
		d.emit(adapters.Diag(diagEventNameMismatch, fmt.Sprintf("SSE event %q carries JSON type %q; the JSON type decides", raw.Event, f.typ)))
	}
	if d.terminal {
		// Anything after the terminal changes nothing; the Reducer turns
		// this into one late_event.
		name := f.typ
		if name == "" {
			name = "untyped event"
		}
		d.emit(adapters.Event{Type: adapters.EvUnknown, RawType: name})
		return d.out
	}
	d.dispatch(&f)
	return d.out
}

// Finish reports nothing: a Responses stream has no closing marker besides
// its terminal event, and the Reducer reports a stream without one.
func (d *decoder) Finish() []adapters.Event { return nil }

func (d *decoder) dispatch(f *fields) {
	switch f.typ {
	// Hot events first.
	case "response.output_text.delta":
		delta := f.delta
		if delta != "" {
			d.sawText = true
		}
		d.emit(adapters.Event{Type: adapters.EvTextDelta, ItemID: d.itemRef(f), Delta: delta})
	case "response.function_call_arguments.delta":
		l := d.find(f)
		ev := adapters.Event{Type: adapters.EvToolArgsDelta, ItemID: d.itemRef(f), Delta: f.delta}
		if l != nil {
			ev.CallID = l.callID
		}
		d.emit(ev)
	case "response.reasoning_summary_text.delta":
		d.reasoningDelta(f, 2*f.summaryIdx)
	case "response.reasoning_text.delta":
		d.reasoningDelta(f, 2*f.contentIdx+1)
	case "response.refusal.delta":
		id := d.itemRef(f)
		if l := d.find(f); l != nil {
			d.openRefusal(l)
		}
		d.emit(adapters.Event{Type: adapters.EvRefusalDelta, ItemID: id + refusalSuffix, Delta: f.delta})

	// Lifecycle.
	case "response.created", "response.queued", "response.in_progress":
		d.ensureStarted(f.response)
	case "response.completed", "response.incomplete", "response.failed":
		d.finish(f.response, f.typ)
	case "error":
		d.errorEvent(f)

	// Items and parts.
	case "response.output_item.added":
		d.itemAdded(f)
	case "response.output_item.done":
		d.itemDone(f)
	case "response.content_part.added":
		if f.part.Get("type").Str == "refusal" {
			if l := d.find(f); l != nil {
				d.openRefusal(l)
			}
		}
	case "response.output_text.done":
		if l := d.find(f); l != nil {
			l.textDone = append(l.textDone, f.text.Str)
		}
	case "response.refusal.done":
		if l := d.find(f); l != nil {
			l.refusalDone = append(l.refusalDone, f.refusal.Str)
		}
	case "response.function_call_arguments.done":
		if l := d.find(f); l != nil && f.arguments.Type == gjson.String {
			s := f.arguments.Str
			l.argsDone = &s
		}
	case "response.content_part.done", "response.output_text.annotation.added",
		"response.reasoning_summary_part.added", "response.reasoning_summary_part.done",
		"response.reasoning_summary_text.done", "response.reasoning_text.done":
		// Known, and nothing canonical: the texts they repeat arrive again
		// in response.output_item.done.
	case "":
		if f.err.Exists() {
			// A bare {"error":{…}} payload, as Chat streams and some
			// compatible servers send it.
			d.errorEvent(f)
			return
		}
		d.emit(adapters.Diag(adapters.DiagMalformedEvent, "event has no type"))
	default:
		// Hosted-tool progress, custom tool input, audio and anything
		// newer: well-formed, not modelled.
		d.emit(adapters.Event{Type: adapters.EvUnknown, RawType: f.typ})
	}
}

// checkSeq tracks sequence_number. It reports true when the event is an
// exact repeat of an earlier one, which is dropped.
func (d *decoder) checkSeq(seq int64, data string) (drop bool) {
	switch {
	case !d.haveSeq:
		d.haveSeq = true
		if seq > 0 {
			d.emit(adapters.Diag(adapters.DiagSequenceGap, fmt.Sprintf("the first event has sequence_number %d; streams start at 0", seq)))
		}
	case seq == d.lastSeq+1:
	case seq > d.lastSeq+1:
		d.emit(adapters.Diag(adapters.DiagSequenceGap, fmt.Sprintf("sequence_number jumped from %d to %d (%d event(s) missing)", d.lastSeq, seq, seq-d.lastSeq-1)))
	default:
		for _, r := range d.recent {
			if r.seq == seq && r.data == data {
				d.emit(adapters.Diag(adapters.DiagDuplicateEvent, fmt.Sprintf("sequence_number %d repeated with the same payload; dropped", seq)))
				return true
			}
		}
		d.emit(adapters.Diag(adapters.DiagOutOfOrder, fmt.Sprintf("sequence_number %d after %d with a different payload; decoded", seq, d.lastSeq)))
		return false
	}
	d.lastSeq = seq
	d.recent[d.recentPos] = struct {
		seq  int64
		data string
	}{seq, data}
	d.recentPos = (d.recentPos + 1) % recentEvents
	return false
}

// find returns the lane an event addresses, by item_id or else by
// output_index, or nil.
func (d *decoder) find(f *fields) *lane {
	if f.itemID != "" {
		if d.last != nil && d.last.id == f.itemID {
			return d.last
		}
		l := d.lanes[f.itemID]
		if l != nil {
			d.last = l
		}
		return l
	}
	if f.hasIdx {
		return d.byIndex[f.outIdx]
	}
	return nil
}

// itemRef is the item id an event addresses: its item_id, else the id of
// the item at its output_index, else a name made from the index.
func (d *decoder) itemRef(f *fields) string {
	if f.itemID != "" {
		return f.itemID
	}
	if l := d.find(f); l != nil {
		return l.id
	}
	return fmt.Sprintf("output_%d", f.outIdx)
}

func (d *decoder) reasoningDelta(f *fields, part int64) {
	delta := f.delta
	if l := d.find(f); l != nil && delta != "" {
		if l.reasonAny && l.reasonPart != part {
			delta = "\n\n" + delta
		}
		l.reasonPart, l.reasonAny = part, true
	}
	d.emit(adapters.Event{Type: adapters.EvReasoningDelta, ItemID: d.itemRef(f), Delta: delta})
}

func (d *decoder) openRefusal(l *lane) {
	if l.refusal {
		return
	}
	l.refusal = true
	d.sawRefusal = true
	d.emit(adapters.Event{Type: adapters.EvItemStarted, ItemID: l.id + refusalSuffix, Kind: string(adapters.KindRefusal)})
}

func (d *decoder) ensureStarted(resp gjson.Result) {
	if d.started {
		return
	}
	id := resp.Get("id").Str
	if id == "" {
		return
	}
	d.started = true
	d.emit(adapters.Event{Type: adapters.EvResponseStarted, ResponseID: id, Model: resp.Get("model").Str})
}

func (d *decoder) itemAdded(f *fields) {
	typ, id := f.item.Get("type").Str, f.item.Get("id").Str
	if id == "" {
		id = fmt.Sprintf("output_%d", f.outIdx)
	}
	if l := d.lanes[id]; l != nil {
		d.emit(adapters.Diag(adapters.DiagDuplicateEvent, fmt.Sprintf("response.output_item.added for item %s seen before; ignored", id)))
		return
	}
	d.open(id, typ, f.outIdx, f.item, "response.output_item.added")
}

// open starts the lane of an item (from output_item.added, or from a closed
// item that was never announced).
func (d *decoder) open(id, typ string, index int64, item gjson.Result, event string) *lane {
	l := &lane{id: id, typ: typ}
	d.lanes[id] = l
	d.byIndex[index] = l
	switch typ {
	case "message":
		d.emit(adapters.Event{Type: adapters.EvItemStarted, ItemID: id, Kind: string(adapters.KindMessage)})
	case "reasoning":
		d.emit(adapters.Event{Type: adapters.EvItemStarted, ItemID: id, Kind: string(adapters.KindReasoning)})
	case "function_call":
		l.callID, l.name = item.Get("call_id").Str, item.Get("name").Str
		d.sawCall = true
		if other, dup := d.callIDs[l.callID]; dup && l.callID != "" {
			d.emit(adapters.Diag(adapters.DiagConflictingCallID, fmt.Sprintf("call_id %s is used by items %s and %s", l.callID, other, id)))
		} else if l.callID != "" {
			d.callIDs[l.callID] = id
		}
		d.emit(adapters.Event{Type: adapters.EvItemStarted, ItemID: id, Kind: string(adapters.KindToolCall), CallID: l.callID, Name: l.name})
		if args := item.Get("arguments").Str; args != "" && event == "response.output_item.added" {
			d.emit(adapters.Event{Type: adapters.EvToolArgsDelta, ItemID: id, CallID: l.callID, Delta: args})
		}
	default:
		d.emit(adapters.Event{Type: adapters.EvUnknown, RawType: event + ":" + typ})
	}
	return l
}

func (d *decoder) itemDone(f *fields) {
	typ, id := f.item.Get("type").Str, f.item.Get("id").Str
	if id == "" {
		if l := d.byIndex[f.outIdx]; l != nil && f.hasIdx {
			id = l.id
		} else {
			id = fmt.Sprintf("output_%d", f.outIdx)
		}
	}
	l := d.lanes[id]
	if l == nil {
		l = d.open(id, typ, f.outIdx, f.item, "response.output_item.done")
		if !modelled(typ) {
			l.closed = true // open reported it as provider.unknown
			return
		}
	} else if l.closed {
		d.emit(adapters.Diag(adapters.DiagDuplicateEvent, fmt.Sprintf("response.output_item.done for item %s seen before; ignored", id)))
		return
	}
	d.close(l, f.item, "response.output_item.done")
}

// close ends a lane with the provider's closed item: its full text (Final)
// and its replay state (Signature).
func (d *decoder) close(l *lane, item gjson.Result, event string) {
	l.closed = true
	switch l.typ {
	case "message":
		c := messageContent(item)
		if c.text != "" {
			d.sawText = true
		}
		var final *string
		if c.hasText {
			final = &c.text
		} else if len(l.textDone) > 0 {
			s := strings.Join(l.textDone, "")
			final = &s
		}
		d.emit(adapters.Event{Type: adapters.EvItemDone, ItemID: l.id, Final: final})
		if c.hasRefusal || l.refusal {
			d.openRefusal(l)
			var rf *string
			if c.hasRefusal {
				rf = &c.refusal
			} else if len(l.refusalDone) > 0 {
				s := strings.Join(l.refusalDone, "")
				rf = &s
			}
			d.emit(adapters.Event{Type: adapters.EvItemDone, ItemID: l.id + refusalSuffix, Final: rf})
		}
	case "function_call":
		ev := adapters.Event{Type: adapters.EvItemDone, ItemID: l.id, CallID: l.callID, Name: l.name}
		if callID := item.Get("call_id").Str; callID != "" && callID != l.callID {
			if l.callID != "" {
				d.emit(adapters.Diag(adapters.DiagConflictingCallID, fmt.Sprintf("item %s opened with call_id %s and closed with %s; the first is kept", l.id, l.callID, callID)))
			}
			ev.CallID = callID
		}
		if name := item.Get("name").Str; name != "" && ev.Name == "" {
			ev.Name = name
		}
		if a := item.Get("arguments"); a.Type == gjson.String {
			s := a.Str
			ev.Final = &s
		} else if l.argsDone != nil {
			ev.Final = l.argsDone
		}
		d.emit(ev)
	case "reasoning":
		ev := adapters.Event{Type: adapters.EvItemDone, ItemID: l.id, Signature: item.Get("encrypted_content").Str}
		if text := reasoningText(item); text != "" {
			ev.Final = &text
		}
		d.emit(ev)
	default:
		d.emit(adapters.Event{Type: adapters.EvUnknown, RawType: event + ":" + l.typ})
	}
}

// modelled reports whether an item type has a canonical lane.
func modelled(typ string) bool {
	return typ == "message" || typ == "function_call" || typ == "reasoning"
}

// content is what a message item's content parts say.
type content struct {
	text, refusal       string
	hasText, hasRefusal bool
}

func messageContent(item gjson.Result) content {
	var c content
	var text, refusal strings.Builder
	item.Get("content").ForEach(func(_, p gjson.Result) bool {
		switch p.Get("type").Str {
		case "output_text":
			c.hasText = true
			text.WriteString(p.Get("text").Str)
		case "refusal":
			c.hasRefusal = true
			refusal.WriteString(p.Get("refusal").Str)
		}
		return true
	})
	c.text, c.refusal = text.String(), refusal.String()
	return c
}

// reasoningText joins a reasoning item's summary texts, then its
// reasoning_text parts, with a blank line between parts: the same text the
// streamed deltas build.
func reasoningText(item gjson.Result) string {
	var parts []string
	for _, key := range []string{"summary", "content"} {
		item.Get(key).ForEach(func(_, p gjson.Result) bool {
			if t := p.Get("text").Str; t != "" {
				parts = append(parts, t)
			}
			return true
		})
	}
	return strings.Join(parts, "\n\n")
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// quote shows at most 120 bytes of data, cut at a character boundary.
func quote(s string) string {
	const n = 120
	if len(s) <= n {
		return fmt.Sprintf("%q", s)
	}
	i := n
	for i > 0 && s[i]&0xC0 == 0x80 {
		i--
	}
	return fmt.Sprintf("%q…", s[:i])
}
