package geminiinteractions

import (
	"bytes"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/wire"
)

// step is one step of the interaction: one canonical item.
type step struct {
	itemID    string
	kind      adapters.ItemKind
	callID    string
	startArgs string // a function_call's arguments as step.start gave them
	gotArgs   bool   // arguments_delta events came
	sig       string
	open      bool
	skip      bool // a step that is not an output item (server tools, inputs)
}

// decoder decodes one interaction: a stream of SSE events, or (through
// DecodeBody) the steps of a whole Interaction.
type decoder struct {
	out        []adapters.Event
	started    bool
	responseID string
	model      string
	steps      map[int64]*step
	calls      int
	done       bool
	// general turns the fast path off, for the tests that compare the two.
	general bool
	// hot is the step of the last fast delta, at hotIndex: deltas come in
	// runs of one step. Set to nil whenever steps changes.
	hot      *step
	hotIndex int64
}

func (d *decoder) emit(ev adapters.Event) { d.out = append(d.out, ev) }

// DecodeAppend is Decode building the events in dst (adapters.AppendDecoder).
func (d *decoder) DecodeAppend(dst []adapters.Event, raw adapters.RawEvent) []adapters.Event {
	return adapters.DecodeInto(&d.out, dst, func() []adapters.Event { return d.Decode(raw) })
}

// Decode handles one SSE event. The event's kind is the data's event_type
// (the SSE event name says the same; `event: done` carries [DONE]).
func (d *decoder) Decode(raw adapters.RawEvent) []adapters.Event {
	d.out = d.out[:0]
	if !d.general && d.decodeFast(raw.Data) {
		return d.out
	}
	data := strings.TrimSpace(raw.Data)
	if data == "[DONE]" {
		return d.out
	}
	// One pass validates the event and reads its top-level members: a Get
	// per member would walk the object again for each, and event_type
	// comes last on the wire.
	var m members
	if valid, object := wire.Members(data, m.set); !valid || !object {
		d.emit(adapters.Diag(adapters.DiagMalformedEvent, fmt.Sprintf("event data is not a JSON object (%d bytes)", len(data))))
		return d.out
	}
	typ := m.eventType.String()
	if typ == "" {
		typ = raw.Event
	}
	switch typ {
	case "interaction.created":
		it := m.interaction.Result()
		d.announce(it.Get("id").String(), it.Get("model").String())
	case "interaction.status_update":
		d.announce(m.interactionID.String(), "")
	case "step.start":
		d.stepStart(m.index.Int(), m.step.Result())
	case "step.delta":
		d.stepDelta(m.index.Int(), m.delta)
	case "step.stop":
		d.stepStop(m.index.Int())
	case "interaction.completed":
		d.complete(m.interaction.Result())
	case "error":
		d.errorEvent(m.err.Result())
	default:
		d.emit(adapters.Event{Type: adapters.EvUnknown, RawType: typ})
	}
	return d.out
}

// members are the top-level members of an event that the decoder reads,
// from one walk; like gjson's Get, the first of a repeated key wins.
type members struct {
	eventType, index, delta, step, interaction, interactionID, err member
}

func (m *members) set(k, raw string) {
	var dst *member
	switch k {
	case "event_type":
		dst = &m.eventType
	case "index":
		dst = &m.index
	case "delta":
		dst = &m.delta
	case "step":
		dst = &m.step
	case "interaction":
		dst = &m.interaction
	case "interaction_id":
		dst = &m.interactionID
	case "error":
		dst = &m.err
	default:
		return
	}
	if *dst == "" {
		*dst = member(raw)
	}
}

// member is a member's raw JSON value, "" when absent. It is read only
// when used, as gjson would read it: parsing each member as it was found
// (gjson.Parse) was a sixth of a decode.
type member string

// String is gjson's Result.String of the value; a string without escapes
// is a sub-string of the event.
func (v member) String() string {
	if wire.IsString(string(v)) {
		return wire.Unquote(string(v))
	}
	return v.Result().String()
}

// Int is gjson's Result.Int of the value (wire.GJSONInt).
func (v member) Int() int64 {
	n, _ := wire.GJSONInt(string(v))
	return n
}

// Result is the value parsed.
func (v member) Result() gjson.Result { return gjson.Parse(string(v)) }

// Finish: a stream that ended without interaction.completed has no usage
// and no status to report; the Reducer records the cut.
func (d *decoder) Finish() []adapters.Event { return nil }

// announce emits response.started on the first id, and again when a later
// event brings the id or model the first one lacked.
func (d *decoder) announce(id, model string) {
	switch {
	case !d.started:
		d.started, d.responseID, d.model = true, id, model
	case id != "" && d.responseID != "" && id != d.responseID:
		d.emit(adapters.Diag("response_id_changed", fmt.Sprintf("event has interaction id %q, the interaction began as %q", id, d.responseID)))
		return
	case id != "" && d.responseID == "", model != "" && d.model == "":
		if id != "" {
			d.responseID = id
		}
		if model != "" {
			d.model = model
		}
	default:
		return
	}
	d.emit(adapters.Event{Type: adapters.EvResponseStarted, ResponseID: d.responseID, Model: d.model})
}

// stepKinds are the step types that are output items; the others (server
// tool calls and results, echoed inputs) are shown as provider.unknown.
var stepKinds = map[string]adapters.ItemKind{
	"model_output":  adapters.KindMessage,
	"thought":       adapters.KindReasoning,
	"function_call": adapters.KindToolCall,
}

// open starts the item of step index.
func (d *decoder) open(index int64, kind adapters.ItemKind, callID, name string) *step {
	if d.steps == nil {
		d.steps = map[int64]*step{}
	}
	if old := d.steps[index]; old != nil && old.open {
		d.emit(adapters.Diag(adapters.DiagOutOfOrder, fmt.Sprintf("step %d started again before its step.stop", index)))
		d.close(old)
	}
	st := &step{itemID: "step-" + strconv.FormatInt(index, 10), kind: kind, open: true}
	if kind == adapters.KindToolCall {
		d.calls++
		st.callID = callID
		if st.callID == "" {
			st.callID = st.itemID
			d.emit(adapters.Diag(adapters.DiagConflictingCallID, fmt.Sprintf("function_call step %d has no id; called %s here", index, st.callID)))
		}
	}
	d.steps[index], d.hot = st, nil
	ev := adapters.Event{Type: adapters.EvItemStarted, ItemID: st.itemID, Kind: string(kind)}
	if kind == adapters.KindToolCall {
		ev.CallID, ev.Name = st.callID, name
	}
	d.emit(ev)
	return st
}

func (d *decoder) stepStart(index int64, s gjson.Result) {
	if !d.started {
		d.announce("", "")
	}
	typ := s.Get("type").String()
	kind, ok := stepKinds[typ]
	if !ok {
		if d.steps == nil {
			d.steps = map[int64]*step{}
		}
		d.steps[index], d.hot = &step{skip: true}, nil
		if typ != "user_input" && typ != "function_result" {
			d.emit(adapters.Event{Type: adapters.EvUnknown, RawType: "step." + typ})
		}
		return
	}
	st := d.open(index, kind, s.Get("id").String(), s.Get("name").String())
	st.sig = s.Get("signature").String()
	switch kind {
	case adapters.KindMessage:
		s.Get("content").ForEach(func(_, c gjson.Result) bool {
			d.text(st, c)
			return true
		})
	case adapters.KindReasoning:
		s.Get("summary").ForEach(func(_, c gjson.Result) bool {
			d.text(st, c)
			return true
		})
	case adapters.KindToolCall:
		if a := s.Get("arguments"); a.Exists() {
			st.startArgs = a.Raw
		}
	}
}

// text emits one text content of a step as a delta of its item.
func (d *decoder) text(st *step, c gjson.Result) {
	var m contentMembers
	wire.Skim(c.Raw, m.set)
	d.textOf(st, m.typ.String(), m.text.String())
}

// textOf emits a content of type typ and text s as a delta of st's item.
func (d *decoder) textOf(st *step, typ, s string) {
	if typ != "text" {
		if typ != "" {
			d.emit(adapters.Event{Type: adapters.EvUnknown, RawType: "content." + typ})
		}
		return
	}
	if s != "" {
		typ := adapters.EvTextDelta
		if st.kind == adapters.KindReasoning {
			typ = adapters.EvReasoningDelta
		}
		d.emit(adapters.Event{Type: typ, ItemID: st.itemID, Delta: s})
	}
}

// contentMembers are what the decoder reads of a content or a delta, from
// one walk (a Get for each would walk it once per member).
type contentMembers struct {
	typ, text, content, signature, arguments member
}

func (m *contentMembers) set(k, raw string) {
	var dst *member
	switch k {
	case "type":
		dst = &m.typ
	case "text":
		dst = &m.text
	case "content":
		dst = &m.content
	case "signature":
		dst = &m.signature
	case "arguments":
		dst = &m.arguments
	default:
		return
	}
	if *dst == "" {
		*dst = member(raw)
	}
}

// deltaKinds is the item a delta implies when no step.start came first
// (go-genai's own test streams send step.delta alone).
var deltaKinds = map[string]adapters.ItemKind{
	"text":              adapters.KindMessage,
	"thought_summary":   adapters.KindReasoning,
	"thought_signature": adapters.KindReasoning,
	"arguments_delta":   adapters.KindToolCall,
}

func (d *decoder) stepDelta(index int64, delta member) {
	var m contentMembers
	wire.Skim(string(delta), m.set)
	typ := m.typ.String()
	st := d.steps[index]
	if st != nil && st.skip {
		return
	}
	if st == nil || !st.open {
		kind, ok := deltaKinds[typ]
		if !ok {
			d.emit(adapters.Event{Type: adapters.EvUnknown, RawType: "delta." + typ})
			return
		}
		if st != nil {
			d.emit(adapters.Diag(adapters.DiagOutOfOrder, fmt.Sprintf("step.delta for step %d after its step.stop", index)))
		}
		if !d.started {
			d.announce("", "")
		}
		st = d.open(index, kind, "", "")
	}
	switch typ {
	case "text":
		if st.kind != adapters.KindMessage {
			d.emit(adapters.Diag(adapters.DiagOutOfOrder, fmt.Sprintf("a text delta in %s step %d", st.kind, index)))
			return
		}
		d.textOf(st, typ, m.text.String())
	case "thought_summary":
		d.text(st, m.content.Result())
	case "thought_signature":
		st.sig = m.signature.String()
	case "arguments_delta":
		if st.kind != adapters.KindToolCall {
			d.emit(adapters.Diag(adapters.DiagOutOfOrder, fmt.Sprintf("arguments_delta in %s step %d", st.kind, index)))
			return
		}
		st.gotArgs = true
		if a := m.arguments.String(); a != "" {
			d.emit(adapters.Event{Type: adapters.EvToolArgsDelta, ItemID: st.itemID, CallID: st.callID, Delta: a})
		}
	case "text_annotation_delta":
		// Citations of the text: nothing for the lanes.
	default:
		d.emit(adapters.Event{Type: adapters.EvUnknown, RawType: "delta." + typ})
	}
}

func (d *decoder) stepStop(index int64) {
	st := d.steps[index]
	switch {
	case st == nil:
		d.emit(adapters.Diag(adapters.DiagOutOfOrder, fmt.Sprintf("step.stop for step %d, which never started", index)))
	case st.skip:
	case !st.open:
		d.emit(adapters.Diag(adapters.DiagDuplicateEvent, fmt.Sprintf("step.stop for step %d again", index)))
	default:
		d.close(st)
	}
}

// close ends an item. A function_call whose arguments came whole in
// step.start (a body, or a stream without deltas) sends them now.
func (d *decoder) close(st *step) {
	st.open = false
	if st.kind == adapters.KindToolCall && !st.gotArgs {
		args := st.startArgs
		if args == "" {
			args = "{}"
		}
		d.emit(adapters.Event{Type: adapters.EvToolArgsDelta, ItemID: st.itemID, CallID: st.callID, Delta: args})
	}
	ev := adapters.Event{Type: adapters.EvItemDone, ItemID: st.itemID, Signature: st.sig}
	if st.kind == adapters.KindToolCall {
		ev.CallID = st.callID
	}
	d.emit(ev)
}

// complete handles the final Interaction: steps still open close (the
// API closes each with step.stop; a missing one changes nothing), then
// usage and the terminal.
func (d *decoder) complete(it gjson.Result) {
	d.announce(it.Get("id").String(), it.Get("model").String())
	idx := make([]int64, 0, len(d.steps))
	for i, st := range d.steps {
		if st.open {
			idx = append(idx, i)
		}
	}
	sort.Slice(idx, func(a, b int) bool { return idx[a] < idx[b] })
	for _, i := range idx {
		d.close(d.steps[i])
	}
	if u := it.Get("usage"); u.IsObject() {
		d.emit(adapters.Event{Type: adapters.EvUsage, Usage: usage(u)})
	}
	status := it.Get("status").String()
	code, message := "", ""
	if e := it.Get("errors.0"); e.Exists() {
		code, message = e.Get("code").String(), e.Get("message").String()
	}
	st, reason := stopReason(status, code, d.calls > 0)
	provider := status
	if code != "" {
		provider += ":" + code
	}
	t := adapters.Terminal(st, reason, provider)
	if st == adapters.StatusFailed {
		if message == "" {
			message = "the interaction ended " + status
		}
		t.Error = &adapters.APIError{Type: orDefault(code, status), Code: code, Message: message}
	}
	d.emit(t)
	d.done = true
}

// errorEvent is `event: error` after a 200: the interaction failed.
// Open steps stay open, so the Reducer marks them incomplete.
func (d *decoder) errorEvent(errv gjson.Result) {
	e := &adapters.APIError{Code: errv.Get("code").String(), Message: errv.Get("message").String()}
	e.Type = orDefault(e.Code, "error")
	d.emit(adapters.Diag(adapters.DiagErrorEvent, e.Error()))
	st, reason := adapters.StatusFailed, adapters.StopError
	if blocked[e.Code] {
		st, reason = adapters.StatusRefused, adapters.StopRefusal
	}
	t := adapters.Terminal(st, reason, "error:"+e.Type)
	t.Error = e
	d.emit(t)
	d.done = true
}

// usage normalises Usage (contract "Summary object"): total_input_tokens
// plus total_tool_use_tokens (server tools' results the model read) is the
// input; total_output_tokens excludes thoughts (the docs' examples add up:
// total = input + output + thought), so output is their sum.
func usage(u gjson.Result) *adapters.Usage {
	in := u.Get("total_input_tokens").Int() + u.Get("total_tool_use_tokens").Int()
	thought := u.Get("total_thought_tokens").Int()
	return &adapters.Usage{
		InputTokens:     adapters.Int(in),
		OutputTokens:    adapters.Int(u.Get("total_output_tokens").Int() + thought),
		CacheReadTokens: adapters.Int(u.Get("total_cached_tokens").Int()),
		ReasoningTokens: adapters.Int(thought),
		ProviderUsage:   []byte(u.Raw),
	}
}

// blocked are the "blocked generation" error codes (api-errors): policy,
// safety or content limits stopped the output.
var blocked = map[string]bool{"safety": true, "recitation": true, "language": true, "prohibited_content": true,
	"spii": true, "blocklist": true, "image_safety": true, "image_prohibited_content": true,
	"image_recitation": true, "image_other": true, "content_blocked": true}

// stopReason maps the interaction status (and the first error code) to
// the canonical terminal.
func stopReason(status, code string, hasCalls bool) (adapters.Status, adapters.StopReason) {
	if blocked[code] {
		return adapters.StatusRefused, adapters.StopRefusal
	}
	switch status {
	case "completed":
		if hasCalls {
			return adapters.StatusCompleted, adapters.StopToolCall
		}
		return adapters.StatusCompleted, adapters.StopFinal
	case "requires_action":
		return adapters.StatusCompleted, adapters.StopToolCall
	case "incomplete", "budget_exceeded":
		return adapters.StatusIncomplete, adapters.StopTruncated
	case "requires_continuation":
		return adapters.StatusIncomplete, adapters.StopPause
	case "failed":
		return adapters.StatusFailed, adapters.StopError
	case "cancelled":
		return adapters.StatusCancelled, adapters.StopUnknown
	}
	// in_progress and queued (a background interaction), new values.
	return adapters.StatusUnknown, adapters.StopUnknown
}

// DecodeBody decodes a whole Interaction: its steps in order, as a stream
// would bring them, then its status. An error body decodes as an error.
func (Protocol) DecodeBody(body []byte) []adapters.Event {
	body = bytes.TrimSpace(bytes.TrimPrefix(body, []byte("\xef\xbb\xbf")))
	d := &decoder{}
	if !gjson.ValidBytes(body) || !gjson.ParseBytes(body).IsObject() {
		d.emit(adapters.Diag(adapters.DiagMalformedEvent, fmt.Sprintf("body is not a JSON object (%d bytes)", len(body))))
		return d.out
	}
	root := gjson.ParseBytes(body)
	if e := root.Get("error"); e.Exists() && !root.Get("status").Exists() {
		d.errorEvent(e)
		return d.out
	}
	d.announce(root.Get("id").String(), root.Get("model").String())
	root.Get("steps").ForEach(func(k, s gjson.Result) bool {
		i := k.Int()
		d.stepStart(i, s)
		if st := d.steps[i]; st != nil && st.open {
			d.close(st)
		}
		return true
	})
	d.complete(root)
	return d.out
}

// DecodeError decodes the Interactions API's error body {"error":{"code":
// "invalid_request","message":…}} (the code is a string: api-errors).
func (Protocol) DecodeError(status int, h http.Header, body []byte) *adapters.APIError {
	return adapters.GenericError(status, h, bytes.TrimPrefix(body, []byte("\xef\xbb\xbf")))
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
