package openairesponses

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/wire"
)

// Rendering a scripted turn as the Responses API's objects: items, the
// Response object (echoing the request's parameters), and the non-streaming
// body.

// ---- JSON ---------------------------------------------------------------

func simInt(n int64) string { return strconv.FormatInt(n, 10) }

// simMember is one member of an event envelope, its value raw JSON.
type simMember struct{ key, raw string }

// simEnvelope writes an event's data: "type" first, then the other members
// in alphabetical order, sequence_number among them. members is sorted in
// place (each call's own arguments); a stream is hundreds of events, so
// the data is written once into a buffer of its size. Event types are
// plain identifiers and need no escaping.
func simEnvelope(typ string, seq int, members ...simMember) string {
	slices.SortFunc(members, func(a, b simMember) int { return strings.Compare(a.key, b.key) })
	sq := simMember{"sequence_number", strconv.Itoa(seq)}
	n := 32 + len(typ) + len(sq.raw)
	for _, m := range members {
		n += len(m.key) + len(m.raw) + 4
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteString(`{"type":"`)
	b.WriteString(typ)
	b.WriteByte('"')
	for _, m := range members {
		if sq.key != "" && m.key > sq.key {
			sq.write(&b)
			sq.key = ""
		}
		m.write(&b)
	}
	if sq.key != "" {
		sq.write(&b)
	}
	b.WriteByte('}')
	return b.String()
}

// write appends the member to an object being written.
func (m simMember) write(b *strings.Builder) {
	b.WriteString(`,"`)
	b.WriteString(m.key)
	b.WriteString(`":`)
	b.WriteString(m.raw)
}

// ---- rendering a turn -----------------------------------------------------

type simItem struct {
	kind      adapters.ItemKind // reasoning, message, refusal, tool_call
	id        string            // rs_…, msg_…, fc_…
	callID    string
	name      string
	text      string // summary, text, refusal or the exact argument text
	encrypted string
	status    string // completed, or incomplete for the item a truncation cut
}

type simTurn struct {
	id, model string
	seed      uint64
	created   int64
	items     []simItem
	truncated bool
	// incomplete is incomplete_details.reason when truncated:
	// max_output_tokens, or content_filter for a refusal without text.
	incomplete string
	usage      string            // the usage object
	echo       map[string]string // the request settings the object repeats (simEcho; echoed)
}

// simRender renders a turn for writing: its object's echoed settings on
// one line when compact (the stream's events), as the request wrote them
// otherwise (the body, which is indented anyway).
func simRender(t adapters.ModelTurn, o adapters.ResponseOptions, compact bool) simTurn {
	st := simTurn{model: o.Model, seed: o.Seed, created: simCreated(o), truncated: t.Stop == adapters.StopTruncated, incomplete: "max_output_tokens", echo: simEcho(o, compact)}
	if t.Stop == adapters.StopRefusal && !hasKind(t.Items, adapters.KindRefusal) {
		// A refusal with no refusal text is the content filter cutting
		// the response off.
		st.truncated, st.incomplete = true, "content_filter"
	}
	if st.model == "" {
		st.model = simDefaultModel
	}
	st.id = Protocol{}.ResponseID(o)
	calls := 0
	outChars := 0
	for i, it := range t.Items {
		at := st.created + 1 + int64(i)/2
		salt := simSaltItem + uint64(i)<<32
		x := simItem{kind: it.Kind, text: it.Text, status: "completed"}
		switch it.Kind {
		case adapters.KindReasoning:
			x.id = simID("rs_", o.Seed, salt, at)
			x.encrypted = it.Signature
			if x.encrypted == "" {
				x.encrypted = simEncrypted(o.Seed, i, at, len(it.Text))
			}
		case adapters.KindMessage, adapters.KindRefusal:
			x.id = simID("msg_", o.Seed, salt, at)
		case adapters.KindToolCall:
			x.id = simID("fc_", o.Seed, salt, at)
			if strings.HasPrefix(it.ID, "fc_") {
				x.id = it.ID // a scripted item id, as the chapter prints it
			}
			x.callID, x.name = it.CallID, it.Name
			if x.callID == "" {
				x.callID = simCallID(o.Seed, calls)
			}
			calls++
			x.text = adapters.ArgumentText(it.Arguments)
		default:
			continue
		}
		outChars += utf8.RuneCountInString(x.text)
		st.items = append(st.items, x)
	}
	if n := len(st.items); st.truncated && n > 0 {
		st.items[n-1].status = "incomplete"
	}
	c := wire.UsageCounts(t.Usage, outChars)
	in, out := c.Input, c.Output
	st.usage = `{"input_tokens":` + simInt(in) +
		`,"input_tokens_details":{"cache_write_tokens":` + simInt(c.CacheWrite) + `,"cached_tokens":` + simInt(c.CacheRead) + `}` +
		`,"output_tokens":` + simInt(out) +
		`,"output_tokens_details":{"reasoning_tokens":` + simInt(c.Reasoning) + `}` +
		`,"total_tokens":` + simInt(in+out) + `}`
	return st
}

func simOutputText(text string) string {
	return `{"type":"output_text","annotations":[],"logprobs":[],"text":` + adapters.JSONString(text) + `}`
}

func simRefusalPart(text string) string {
	return `{"type":"refusal","refusal":` + adapters.JSONString(text) + `}`
}

func simSummary(text string) string {
	if text == "" {
		return "[]"
	}
	return `[{"type":"summary_text","text":` + adapters.JSONString(text) + `}]`
}

// added is the item as output_item.added announces it; done as it closes.
func (x simItem) added() string {
	switch x.kind {
	case adapters.KindReasoning:
		return `{"id":` + adapters.JSONString(x.id) + `,"type":"reasoning","encrypted_content":` + adapters.JSONString(x.encrypted) + `,"summary":[]}`
	case adapters.KindToolCall:
		return `{"id":` + adapters.JSONString(x.id) + `,"type":"function_call","status":"in_progress","arguments":"","call_id":` +
			adapters.JSONString(x.callID) + `,"name":` + adapters.JSONString(x.name) + `}`
	}
	return `{"id":` + adapters.JSONString(x.id) + `,"type":"message","status":"in_progress","content":[],"role":"assistant"}`
}

func (x simItem) done() string {
	switch x.kind {
	case adapters.KindReasoning:
		return `{"id":` + adapters.JSONString(x.id) + `,"type":"reasoning","encrypted_content":` + adapters.JSONString(x.encrypted) + `,"summary":` + simSummary(x.text) + `}`
	case adapters.KindToolCall:
		return `{"id":` + adapters.JSONString(x.id) + `,"type":"function_call","status":` + adapters.JSONString(x.status) + `,"arguments":` + adapters.JSONString(x.text) +
			`,"call_id":` + adapters.JSONString(x.callID) + `,"name":` + adapters.JSONString(x.name) + `}`
	case adapters.KindRefusal:
		return `{"id":` + adapters.JSONString(x.id) + `,"type":"message","status":` + adapters.JSONString(x.status) + `,"content":[` + simRefusalPart(x.text) + `],"role":"assistant"}`
	}
	return `{"id":` + adapters.JSONString(x.id) + `,"type":"message","status":` + adapters.JSONString(x.status) + `,"content":[` + simOutputText(x.text) + `],"role":"assistant"}`
}

// simEchoed are the request members the Response object repeats, each
// with what it shows when the request leaves the member out or null. The
// API echoes the request's own values (the refund request's tools, its
// json_schema text format, tool_choice, parallel_tool_calls:false…) so a
// client can see which settings the answer was made under.
var simEchoed = map[string]string{
	"background":             "false",
	"frequency_penalty":      "0",
	"instructions":           "null",
	"max_output_tokens":      "null",
	"max_tool_calls":         "null",
	"metadata":               "{}",
	"parallel_tool_calls":    "true",
	"presence_penalty":       "0",
	"previous_response_id":   "null",
	"prompt_cache_key":       "null",
	"prompt_cache_retention": `"in_memory"`,
	"safety_identifier":      "null",
	"store":                  "true",
	"temperature":            "1",
	"text":                   `{"format":{"type":"text"},"verbosity":"medium"}`,
	"tool_choice":            `"auto"`,
	"tools":                  "[]",
	"top_logprobs":           "0",
	"top_p":                  "1",
	"truncation":             `"disabled"`,
	"user":                   "null",
}

// readEcho reads the members the Response object repeats from a request's
// top-level members (checked already), as the request wrote them, by
// name; a member left out is simEchoed's (see echoed). text gains the
// default verbosity, and reasoning is the default with the request's
// effort and summary. CheckRequest reads it once (Inbound.Echo), from the
// members it has read anyway.
func readEcho(top wire.Object) map[string]string {
	echo := make(map[string]string, 8)
	effort, summary := `"medium"`, `"auto"`
	for i, key := range top.Keys {
		raw := top.Vals[i].Raw
		if _, ok := simEchoed[key]; ok && raw != "null" {
			echo[key] = raw
		}
		if key == "reasoning" {
			r, _ := top.Vals[i].Members()
			if e := r.Get("effort"); e.Kind() == wire.KindString {
				effort = e.Raw
			}
			if s := r.Get("summary"); s.Kind() == wire.KindString {
				summary = s.Raw
			}
		}
	}
	if text, ok := echo["text"]; ok {
		if t, ok := (wire.Value{Raw: text}).Members(); ok && !t.Has("verbosity") {
			sep := ","
			if len(t.Keys) == 0 {
				sep = ""
			}
			echo["text"] = strings.TrimSuffix(text, "}") + sep + `"verbosity":"medium"}`
		}
	}
	echo["reasoning"] = `{"context":"current_turn","effort":` + effort + `,"mode":"standard","summary":` + summary + `}`
	return echo
}

// simEcho is the request's echoed members: what CheckRequest read
// (o.Echo), else read from o.Request; compacted when compact, as an
// event's data is one line (the body is indented anyway).
func simEcho(o adapters.ResponseOptions, compact bool) map[string]string {
	echo := o.Echo
	if echo == nil {
		// The body passed CheckRequest: its members are found, not
		// validated again.
		top, _ := wire.Value{Raw: strings.TrimSpace(adapters.View(o.Request))}.Members()
		echo = readEcho(top)
	}
	if !compact {
		return echo
	}
	compacted := make(map[string]string, len(echo))
	for k, v := range echo {
		compacted[k] = simCompactRaw(v)
	}
	return compacted
}

// simCompactRaw is a raw JSON value on one line.
func simCompactRaw(raw string) string {
	if !strings.ContainsAny(raw, " \t\r\n") {
		return raw
	}
	var b bytes.Buffer
	if json.Compact(&b, []byte(raw)) != nil {
		return raw
	}
	return b.String()
}

// object is the Response object on one line, as an event's data (see
// appendObject).
func (st simTurn) object(final bool) string {
	return adapters.View(st.appendObject(make([]byte, 0, st.size(final)), final, false))
}

// size is about the bytes of the object on one line: its echoed settings,
// when final its output and usage, and the rest, under 1,200 bytes.
func (st simTurn) size(final bool) int {
	n := 1200
	if final {
		n += len(st.usage)
		for _, x := range st.items {
			n += 200 + len(x.id) + len(x.callID) + len(x.name) + len(x.text) + len(x.encrypted)
		}
	}
	for _, v := range st.echo {
		n += len(v)
	}
	return n
}

// appendObject appends the Response object: in progress (no output, usage
// null) or final (status completed or incomplete, its output and usage),
// with the request's settings echoed; on one line, or pretty-printed as
// the body is.
func (st simTurn) appendObject(dst []byte, final, indent bool) []byte {
	status, completedAt, incomplete, output, usage, tier := "in_progress", "null", "null", "[]", "null", "auto"
	if final {
		status, tier, usage = "completed", "default", st.usage
		completedAt = simInt(st.created + 1 + int64(len(st.items))/2)
		if st.truncated {
			status, completedAt, incomplete = "incomplete", "null", `{"reason":`+adapters.JSONString(st.incomplete)+`}`
		}
		parts := make([]string, len(st.items))
		for i, x := range st.items {
			parts[i] = x.done()
		}
		output = "[" + strings.Join(parts, ",") + "]"
	}
	o := simObject{b: append(dst, '{'), indent: indent}
	o.str("id", st.id)
	o.raw("object", `"response"`)
	o.raw("created_at", simInt(st.created))
	o.str("status", status)
	o.raw("background", st.echoed("background"))
	o.raw("completed_at", completedAt)
	o.raw("error", "null")
	o.raw("frequency_penalty", st.echoed("frequency_penalty"))
	o.raw("incomplete_details", incomplete)
	o.raw("instructions", st.echoed("instructions"))
	o.raw("max_output_tokens", st.echoed("max_output_tokens"))
	o.raw("max_tool_calls", st.echoed("max_tool_calls"))
	o.str("model", st.model)
	o.raw("moderation", "null")
	o.raw("output", output)
	o.raw("parallel_tool_calls", st.echoed("parallel_tool_calls"))
	o.raw("presence_penalty", st.echoed("presence_penalty"))
	o.raw("previous_response_id", st.echoed("previous_response_id"))
	o.raw("prompt_cache_key", st.echoed("prompt_cache_key"))
	o.raw("prompt_cache_retention", st.echoed("prompt_cache_retention"))
	o.raw("reasoning", st.echoed("reasoning"))
	o.raw("safety_identifier", st.echoed("safety_identifier"))
	o.str("service_tier", tier)
	o.raw("store", st.echoed("store"))
	o.raw("temperature", st.echoed("temperature"))
	o.raw("text", st.echoed("text"))
	o.raw("tool_choice", st.echoed("tool_choice"))
	o.raw("tool_usage", `{"image_gen":{"input_tokens":0,"input_tokens_details":{"image_tokens":0,"text_tokens":0},"output_tokens":0,"output_tokens_details":{"image_tokens":0,"text_tokens":0},"total_tokens":0},"web_search":{"num_requests":0}}`)
	o.raw("tools", st.echoed("tools"))
	o.raw("top_logprobs", st.echoed("top_logprobs"))
	o.raw("top_p", st.echoed("top_p"))
	o.raw("truncation", st.echoed("truncation"))
	o.raw("usage", usage)
	o.raw("user", st.echoed("user"))
	o.raw("metadata", st.echoed("metadata"))
	if indent {
		o.b = append(o.b, '\n')
	}
	return append(o.b, '}')
}

// echoed is the request's member key as the object repeats it, or what
// the object shows when the request leaves it out.
func (st simTurn) echoed(key string) string {
	if v, ok := st.echo[key]; ok {
		return v
	}
	return simEchoed[key]
}

// simObject writes an object's members in order, on one line or
// pretty-printed as json.Indent prints them with two spaces: the body is
// written once, in its final form, not on one line and then again
// indented.
type simObject struct {
	b      []byte
	indent bool
}

// key begins the next member.
func (o *simObject) key(k string) {
	if o.b[len(o.b)-1] != '{' {
		o.b = append(o.b, ',')
	}
	if o.indent {
		o.b = append(o.b, "\n  "...)
	}
	o.b = append(o.b, '"')
	o.b = append(o.b, k...)
	o.b = append(o.b, '"', ':')
	if o.indent {
		o.b = append(o.b, ' ')
	}
}

// raw writes a member whose value is JSON: the simulator's own, on one
// line, or the request's (checked, and on one line already when the
// object is; see simEcho).
func (o *simObject) raw(k, v string) {
	o.key(k)
	if o.indent {
		o.b = wire.AppendIndentAt(o.b, v, 1)
		return
	}
	o.b = append(o.b, v...)
}

// str writes a member whose value is a string.
func (o *simObject) str(k, v string) {
	o.key(k)
	o.b = adapters.AppendJSONString(o.b, v)
}

// Body renders a turn as the API's Response object, pretty-printed: the
// same ids, items and usage as StreamEvents for the same seed.
func (Protocol) Body(t adapters.ModelTurn, o adapters.ResponseOptions) []byte {
	st := simRender(t, o, false)
	dst := o.Buf[:0]
	if dst == nil {
		dst = make([]byte, 0, 2*st.size(true))
	}
	return append(st.appendObject(dst, true, true), '\n')
}

func hasKind(items []adapters.OutputItem, k adapters.ItemKind) bool {
	for _, it := range items {
		if it.Kind == k {
			return true
		}
	}
	return false
}
