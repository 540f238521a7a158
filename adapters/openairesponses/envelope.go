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
	echo       map[string]string // the request settings the object repeats (simEcho)
}

func simRender(t adapters.ModelTurn, o adapters.ResponseOptions) simTurn {
	st := simTurn{model: o.Model, seed: o.Seed, created: simCreated(o), truncated: t.Stop == adapters.StopTruncated, incomplete: "max_output_tokens", echo: simEcho(o.Request)}
	if t.Stop == adapters.StopRefusal && !hasKind(t.Items, adapters.KindRefusal) {
		// A refusal with no refusal text is the content filter cutting
		// the response off.
		st.truncated, st.incomplete = true, "content_filter"
	}
	if st.model == "" {
		st.model = simDefaultModel
	}
	st.id = simID("resp_", o.Seed, simSaltResponse, st.created)
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

// simEcho reads the echoed members from the request body (checked
// already), compacted: an event's data is one line. text gains the
// default verbosity, and reasoning is the default with the request's
// effort and summary. This runs for every response.
func simEcho(body []byte) map[string]string {
	echo := make(map[string]string, len(simEchoed)+1)
	for k, v := range simEchoed {
		echo[k] = v
	}
	effort, summary := `"medium"`, `"auto"`
	// The body passed CheckRequest: its members are found, not validated
	// again.
	top, _ := wire.Value{Raw: strings.TrimSpace(adapters.View(body))}.Members()
	for i, key := range top.Keys {
		raw := top.Vals[i].Raw
		if _, ok := simEchoed[key]; ok && raw != "null" {
			echo[key] = simCompactRaw(raw)
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
	if t, ok := (wire.Value{Raw: echo["text"]}).Members(); ok && !t.Has("verbosity") {
		sep := ","
		if len(t.Keys) == 0 {
			sep = ""
		}
		echo["text"] = strings.TrimSuffix(echo["text"], "}") + sep + `"verbosity":"medium"}`
	}
	echo["reasoning"] = `{"context":"current_turn","effort":` + effort + `,"mode":"standard","summary":` + summary + `}`
	return echo
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

// object is the Response object: in progress (no output, usage null) or
// final (status completed or incomplete, its output and usage), with the
// request's settings echoed.
func (st simTurn) object(final bool) string {
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
	e := st.echo
	return `{"id":` + adapters.JSONString(st.id) + `,"object":"response","created_at":` + simInt(st.created) +
		`,"status":"` + status + `","background":` + e["background"] + `,"completed_at":` + completedAt +
		`,"error":null,"frequency_penalty":` + e["frequency_penalty"] + `,"incomplete_details":` + incomplete +
		`,"instructions":` + e["instructions"] + `,"max_output_tokens":` + e["max_output_tokens"] +
		`,"max_tool_calls":` + e["max_tool_calls"] + `,"model":` + adapters.JSONString(st.model) +
		`,"moderation":null,"output":` + output + `,"parallel_tool_calls":` + e["parallel_tool_calls"] +
		`,"presence_penalty":` + e["presence_penalty"] + `,"previous_response_id":` + e["previous_response_id"] +
		`,"prompt_cache_key":` + e["prompt_cache_key"] + `,"prompt_cache_retention":` + e["prompt_cache_retention"] +
		`,"reasoning":` + e["reasoning"] + `,"safety_identifier":` + e["safety_identifier"] +
		`,"service_tier":"` + tier + `","store":` + e["store"] + `,"temperature":` + e["temperature"] +
		`,"text":` + e["text"] + `,"tool_choice":` + e["tool_choice"] +
		`,"tool_usage":{"image_gen":{"input_tokens":0,"input_tokens_details":{"image_tokens":0,"text_tokens":0},"output_tokens":0,"output_tokens_details":{"image_tokens":0,"text_tokens":0},"total_tokens":0},"web_search":{"num_requests":0}}` +
		`,"tools":` + e["tools"] + `,"top_logprobs":` + e["top_logprobs"] + `,"top_p":` + e["top_p"] +
		`,"truncation":` + e["truncation"] + `,"usage":` + usage + `,"user":` + e["user"] + `,"metadata":` + e["metadata"] + `}`
}

// Body renders a turn as the API's Response object, pretty-printed: the
// same ids, items and usage as StreamEvents for the same seed.
func (Protocol) Body(t adapters.ModelTurn, o adapters.ResponseOptions) []byte {
	compact := simRender(t, o).object(true)
	b, ok := wire.AppendIndent(nil, compact)
	if !ok {
		return []byte(compact)
	}
	return append(b, '\n')
}

func hasKind(items []adapters.OutputItem, k adapters.ItemKind) bool {
	for _, it := range items {
		if it.Kind == k {
			return true
		}
	}
	return false
}
