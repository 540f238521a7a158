package adapters

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unsafe"
)

// ItemState is where an output item (a lane) stands.
type ItemState string

// Item states.
const (
	ItemStreaming  ItemState = "streaming"
	ItemClosed     ItemState = "closed"     // closed, not a tool call
	ItemParsed     ItemState = "parsed"     // tool call closed with an argument object
	ItemInvalid    ItemState = "invalid"    // tool call closed, arguments not an object
	ItemIncomplete ItemState = "incomplete" // never closed before the terminal or the end
)

// Item is the reducer's view of one output item.
type Item struct {
	ID        string    `json:"item_id"`
	Kind      ItemKind  `json:"kind"`
	CallID    string    `json:"call_id,omitempty"`
	Name      string    `json:"name,omitempty"`
	State     ItemState `json:"state"`
	Text      string    `json:"text"` // text, reasoning, refusal, or raw argument text
	Signature string    `json:"signature,omitempty"`
	// Arguments is the parsed argument object of a parsed tool call.
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Deltas    int             `json:"deltas"`
	// StartSeq and DoneSeq are the seqs of item.started and item.done.
	StartSeq int `json:"start_seq"`
	DoneSeq  int `json:"done_seq,omitempty"`

	buf []byte
}

// Reducer enforces the rules of a single response over canonical events
// from any decoder: sequence numbers, exactly one terminal (anything after
// it is a late_event that changes nothing), tool calls proposed only when
// their item closes with an argument object, and a cut stream ending as
// unknown. The live path and replay use the same reducer, so the state at
// step N of a replay is the live state after event N.
type Reducer struct {
	protocol string
	seq      int
	items    []*Item
	byID     map[string]*Item
	last     *Item // the item of the last lookup

	responseID, model string
	usage             *Usage
	terminal          *Event
	diagnostics       []Diagnostic

	// slab is where Apply builds its results: one allocation for many
	// events instead of one per call. An Event is ~300 bytes, so a slice
	// per call was most of a decode's allocation (issue 20's profile:
	// memory clearing 28%, GC 15%). Each result is a region of the slab
	// that no later result shares, capped at its length so that a
	// caller's append copies instead of writing into the next region.
	slab   []Event
	slabAt int
	rest   []Event // applyOwned's copy of the events it does not number in place
}

// slabEvents is the size of one slab: ~18 KB, under the 32 KB above which
// Go allocates each object from the heap under its lock (and returns its
// pages to the OS), which cost more than the smaller slabs' extra calls.
const slabEvents = 64

// Diagnostic is a diagnostic as listed in the summary.
type Diagnostic struct {
	Seq    int    `json:"seq"`
	Kind   string `json:"kind"`
	Detail string `json:"detail"`
}

// NewReducer starts the state of one response.
func NewReducer(protocol string) *Reducer {
	return &Reducer{protocol: protocol, byID: map[string]*Item{}}
}

// Apply takes events from a decoder (Seq unset) and returns what they
// become: numbered, with tool.proposed or diagnostics added after item.done
// and events after the terminal replaced by late_event diagnostics.
func (r *Reducer) Apply(in []Event) []Event {
	n := len(in) + 1 // room for one added event without growing
	if len(r.slab)-r.slabAt < n {
		r.slab, r.slabAt = make([]Event, max(slabEvents, n)), 0
	}
	out := r.slab[r.slabAt : r.slabAt : r.slabAt+n]
	for i := range in {
		out = r.apply(&in[i], out)
	}
	if cap(out) == n {
		// Built in place (not grown elsewhere): that part of the slab is
		// taken.
		r.slabAt += len(out)
	}
	return out[:len(out):len(out)]
}

// emit appends ev, numbered, to out. Events are ~300 bytes: they are
// passed by pointer and copied once, into out.
func (r *Reducer) emit(out []Event, ev *Event) []Event {
	r.seq++
	out = append(out, *ev)
	out[len(out)-1].Seq = r.seq
	if ev.Type == EvDiagnostic {
		r.diagnostics = append(r.diagnostics, Diagnostic{Seq: r.seq, Kind: ev.Kind, Detail: ev.Detail})
	}
	return out
}

// emitDiag appends a diagnostic of kind with detail.
func (r *Reducer) emitDiag(out []Event, kind, detail string) []Event {
	d := Diag(kind, detail)
	return r.emit(out, &d)
}

// region is where an AppendDecoder builds the events of the next raw
// event: the free end of the slab, with room for a few events at least.
func (r *Reducer) region() []Event {
	if len(r.slab)-r.slabAt < 8 {
		r.slab, r.slabAt = make([]Event, slabEvents), 0
	}
	return r.slab[r.slabAt:r.slabAt]
}

// applyOwned is Apply for events that are the caller's to change: an
// AppendDecoder's, built in region() or in an array of their own. Those
// the rules pass on unchanged (passes) are numbered where they are,
// instead of being copied into the slab (the copy of a ~300-byte event
// was a fifth of a decode); from the first other one on, the rest go
// through apply, from a copy, since its output may outgrow its input.
func (r *Reducer) applyOwned(evs []Event) []Event {
	for i := range evs {
		if r.passes(&evs[i]) {
			r.seq++
			evs[i].Seq = r.seq
			continue
		}
		rest := append(r.rest[:0], evs[i:]...)
		out := evs[:i]
		for j := range rest {
			out = r.apply(&rest[j], out)
		}
		clear(rest)
		r.rest = rest[:0]
		evs = out
		break
	}
	if evs == nil {
		return r.slab[r.slabAt:r.slabAt:r.slabAt] // empty, not nil, as Apply gives it
	}
	if len(evs) > 0 && r.slabAt < len(r.slab) && &evs[0] == &r.slab[r.slabAt] {
		r.slabAt += len(evs) // built in the region: that part of the slab is taken
	}
	return evs[:len(evs):len(evs)]
}

// passes applies ev when the rules pass it on as it is — a delta of an
// open item, the start of a new item, response.started — and reports
// whether it did; otherwise it changes nothing and apply decides.
func (r *Reducer) passes(ev *Event) bool {
	if r.terminal != nil {
		return false
	}
	switch ev.Type {
	case EvTextDelta, EvReasoningDelta, EvRefusalDelta, EvToolArgsDelta:
		it := r.item(ev.ItemID)
		if it == nil || it.State != ItemStreaming {
			return false
		}
		it.buf = append(it.buf, ev.Delta...)
		it.Deltas++
		return true
	case EvItemStarted:
		if r.byID[ev.ItemID] != nil {
			return false
		}
		r.start(ev, r.seq+1)
		return true
	case EvResponseStarted:
		if ev.ResponseID != "" {
			r.responseID = ev.ResponseID
		}
		if ev.Model != "" {
			r.model = ev.Model
		}
		return true
	}
	return false
}

func (r *Reducer) apply(ev *Event, out []Event) []Event {
	if r.passes(ev) {
		return r.emit(out, ev)
	}
	if r.terminal != nil && ev.Type != EvDiagnostic {
		return r.emitDiag(out, DiagLateEvent, fmt.Sprintf("%s after the terminal; ignored", describe(ev)))
	}
	switch ev.Type {
	case EvItemStarted: // a second start: passes took the first
		return r.emitDiag(out, DiagDuplicateEvent, fmt.Sprintf("item %s started twice", ev.ItemID))
	case EvTextDelta, EvReasoningDelta, EvRefusalDelta, EvToolArgsDelta:
		it := r.item(ev.ItemID)
		if it == nil {
			// A delta for an item that never started: open it so nothing
			// received is lost, and say so.
			out = r.emitDiag(out, DiagUnknownItem, fmt.Sprintf("%s for item %q that never started", ev.Type, ev.ItemID))
			it = r.start(&Event{ItemID: ev.ItemID, Kind: string(kindOfDelta(ev.Type)), CallID: ev.CallID}, r.seq+1)
			out = r.emit(out, &Event{Type: EvItemStarted, ItemID: it.ID, Kind: string(it.Kind), CallID: it.CallID})
		}
		if it.State != ItemStreaming {
			return r.emitDiag(out, DiagOutOfOrder, fmt.Sprintf("%s for item %s after it closed; ignored", ev.Type, ev.ItemID))
		}
		it.buf = append(it.buf, ev.Delta...)
		it.Deltas++
	case EvItemDone:
		it := r.item(ev.ItemID)
		if it == nil {
			return r.emitDiag(out, DiagUnknownItem, fmt.Sprintf("item.done for item %q that never started", ev.ItemID))
		}
		if it.State != ItemStreaming {
			return r.emitDiag(out, DiagDuplicateEvent, fmt.Sprintf("item %s closed twice", ev.ItemID))
		}
		return r.close(it, ev, out)
	case EvUsage:
		if ev.Usage != nil {
			u := *ev.Usage
			r.usage = &u
		}
	case EvTerminal:
		t := *ev
		for _, it := range r.items {
			if it.State == ItemStreaming {
				it.State = ItemIncomplete
				it.Text = string(it.buf)
			}
		}
		out = r.emit(out, &t)
		t.Seq = r.seq
		r.terminal = &t
		return out
	case EvUnknown:
		// Unknown is data: the event stays as it came, and a diagnostic
		// says that nothing of it reached the answer.
		out = r.emit(out, ev)
		return r.emitDiag(out, DiagUnknownEvent, fmt.Sprintf("provider event %s is not part of the protocol as modelwire knows it; kept verbatim, not applied", ev.RawType))
	}
	return r.emit(out, ev)
}

func (r *Reducer) start(ev *Event, seq int) *Item {
	it := &Item{ID: ev.ItemID, Kind: ItemKind(ev.Kind), CallID: ev.CallID, Name: ev.Name, State: ItemStreaming, StartSeq: seq}
	r.items = append(r.items, it)
	r.byID[ev.ItemID] = it
	r.last = it
	return it
}

// item is the item with id, nil if none. Deltas come in runs for one
// item: the last one found answers most lookups without hashing.
func (r *Reducer) item(id string) *Item {
	if r.last != nil && r.last.ID == id {
		return r.last
	}
	it := r.byID[id]
	if it != nil {
		r.last = it
	}
	return it
}

func (r *Reducer) close(it *Item, ev *Event, out []Event) []Event {
	if ev.Final != nil && *ev.Final != string(it.buf) {
		kind := DiagTextDoneMismatch
		if it.Kind == KindToolCall {
			kind = DiagArgsDoneMismatch
		}
		if len(it.buf) > 0 {
			out = r.emitDiag(out, kind, fmt.Sprintf("item %s: the provider's final text differs from its deltas; the final text wins", it.ID))
		}
		it.buf = append(it.buf[:0], *ev.Final...)
	}
	if ev.Signature != "" {
		it.Signature = ev.Signature
	}
	if ev.CallID != "" && it.CallID == "" {
		it.CallID = ev.CallID
	}
	if ev.Name != "" && it.Name == "" {
		it.Name = ev.Name
	}
	// The text shares buf's bytes: a closed item's buf is never written
	// again (deltas after the close are refused, close comes once), and
	// copying every item's whole text was a copy of most of the stream.
	it.Text = unsafe.String(unsafe.SliceData(it.buf), len(it.buf))
	it.State = ItemClosed
	out = r.emit(out, ev)
	it.DoneSeq = r.seq
	if it.Kind != KindToolCall {
		return out
	}
	args, problem := parseArguments(it.buf)
	if problem != "" {
		it.State = ItemInvalid
		return r.emitDiag(out, DiagToolArgsInvalid, fmt.Sprintf("call %s (%s): %s", it.CallID, it.Name, problem))
	}
	it.State = ItemParsed
	it.Arguments = args
	return r.emit(out, &Event{Type: EvToolProposed, CallID: it.CallID, Name: it.Name, Arguments: args})
}

// parseArguments accepts only a JSON object and returns it compacted.
func parseArguments(raw []byte) (json.RawMessage, string) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 {
		return nil, "arguments are empty"
	}
	if !json.Valid(trimmed) {
		return nil, "arguments are not valid JSON"
	}
	if trimmed[0] != '{' {
		return nil, "arguments are JSON but not an object"
	}
	if compact(trimmed) { // as models send them: Compact would copy them unchanged
		return bytes.Clone(trimmed), ""
	}
	var b bytes.Buffer
	if err := json.Compact(&b, trimmed); err != nil {
		return nil, "arguments are not valid JSON"
	}
	return b.Bytes(), ""
}

// compact reports whether valid JSON b has no white space outside its
// strings, the only bytes json.Compact removes.
func compact(b []byte) bool {
	in := false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case in && c == '\\':
			i++ // the escaped byte, which may be a quote
		case c == '"':
			in = !in
		case !in && (c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			return false
		}
	}
	return true
}

// End is called when the input ends. Without a terminal it reports the
// cut stream and ends the response as unknown.
func (r *Reducer) End() []Event {
	if r.terminal != nil {
		return nil
	}
	var out []Event
	open := 0
	for _, it := range r.items {
		if it.State == ItemStreaming {
			open++
		}
	}
	detail := "the stream ended with no terminal event"
	if open > 0 {
		detail += fmt.Sprintf(" (%d item(s) still open)", open)
	}
	out = r.emitDiag(out, DiagStreamCut, detail)
	t := Terminal(StatusUnknown, StopUnknown, "")
	return r.apply(&t, out)
}

// Done reports whether the response has its terminal.
func (r *Reducer) Done() bool { return r.terminal != nil }

// Seq is the seq of the last event emitted.
func (r *Reducer) Seq() int { return r.seq }

// Items returns the output items in output order. Callers must not modify
// them; an open item's Text is filled in by Snapshot.
func (r *Reducer) Items() []*Item {
	for _, it := range r.items {
		if it.State == ItemStreaming {
			it.Text = string(it.buf)
		}
	}
	return r.items
}

// Terminal returns the terminal event, or nil while the response runs.
func (r *Reducer) Terminal() *Event { return r.terminal }

// Usage returns the last usage reported, or nil.
func (r *Reducer) Usage() *Usage { return r.usage }

func kindOfDelta(t EventType) ItemKind {
	switch t {
	case EvReasoningDelta:
		return KindReasoning
	case EvRefusalDelta:
		return KindRefusal
	case EvToolArgsDelta:
		return KindToolCall
	}
	return KindMessage
}

func describe(ev *Event) string {
	if ev.Type == EvUnknown {
		return "provider event " + ev.RawType
	}
	if ev.Type == EvTerminal {
		return fmt.Sprintf("a second terminal (%s/%s)", ev.Status, ev.StopReason)
	}
	return string(ev.Type)
}
