package openairesponses

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/modelwire/modelwire/adapters"
)

// This file is the simulator's side of the Responses API
// (adapters.Simulated): checking a request as api.openai.com checks it, and
// writing a scripted model turn as its exact bytes.
//
// Byte shapes, and where they come from:
//   - every stream event is `event: <type>` + one `data:` line whose JSON
//     starts with "type" and then lists the event's other members in
//     alphabetical order, sequence_number among them (live recordings of
//     2026-08/09: vercel/ai packages/openai/src/responses/__fixtures__/
//     issue-19493-gpt-5.1-tool-call.chunks.txt and
//     issue-20047-openai-responses.chunks.txt; older recordings put
//     sequence_number second, our decoder reads either). sequence_number
//     counts from 0; there is no [DONE] (protocols.md §1.1).
//   - the order: response.created → response.in_progress → per item
//     output_item.added, its parts and deltas, output_item.done →
//     response.completed, or response.incomplete with incomplete_details
//     {"reason":"max_output_tokens"} for a truncated turn (protocols.md
//     §1.4, §1.5; the recordings above and openai-reasoning-encrypted-
//     content.1.chunks.txt for reasoning items).
//   - delta events carry an "obfuscation" string that pads delta+padding
//     to 16 characters (" calculator" → 5, "," → 15 in the recordings);
//     output_text deltas also carry "logprobs":[].
//     function_call_arguments.done carries the call's "name" (the API
//     reference's event; the older recordings above lack it).
//   - the Response object's members in the API's order, as the 2026-08
//     recordings show them (completed_at, frequency_penalty, moderation,
//     presence_penalty, prompt_cache_retention, reasoning.context/mode,
//     tool_usage); usage is null until the terminal event, then
//     {input_tokens (cached included), input_tokens_details
//     {cache_write_tokens, cached_tokens}, output_tokens (reasoning
//     included), output_tokens_details{reasoning_tokens}, total_tokens}.
//   - ids: prefix + 50 hex digits — a 16-digit account/conversation part,
//     "00", the unix time in 8 digits, 4 more, "8190", 16 random digits
//     (resp_01830d662ab3856501693c321345c88190b0de00f3b9975691 and its
//     rs_/fc_ siblings in the recordings); call ids are call_ + 24
//     alphanumerics; encrypted_content is a Fernet token (gAAAAAB…).
//   - the non-streaming body is the same Response, pretty-printed with two
//     spaces (testdata/refund_turn*.json).
//   - errors: {"error":{"message","type","param","code"}} pretty-printed,
//     with x-request-id (protocols.md §6.1, testdata/error_*.json); the
//     request checks' wording follows live 400s (see CheckRequest).
//   - in-stream errors: `event: error` with the nested shape captured live,
//     {"type":"error","error":{"type","code","message","param"},
//     "sequence_number":n} (protocols.md §10.1; vercel/ai#20022,
//     openai/openai-dotnet#881, vercel/ai openai-error.1.chunks.txt). It
//     is the shape the API sends today, and openai-go ends the stream on it
//     with an error (the flat documented shape would be yielded as an
//     ordinary event that a careless loop skips).

var _ adapters.Simulated = Protocol{}

// simDefaultModel answers requests that name no model (the simulator
// normally passes the request's own).
const simDefaultModel = "gpt-5-mini-2025-08-07"

// simEpoch is the created_at of seed 0 (2026-12-01T00:00:00Z); each seed
// is one second later, so ids and timestamps follow the seed.
const simEpoch = 1796083200

// simAccount is the 16-hex-digit part every id of one account shares.
const simAccount = "0c7a5e9d41b3f862"

// ---- ids ------------------------------------------------------------------

// Salts, one per kind of value; item indexes are added in the high bits.
const (
	simSaltResponse  = 0x72657370 // "resp"
	simSaltItem      = 0x6974656d // "item" + index<<32
	simSaltCall      = 0x63616c6c // "call" + index<<32
	simSaltEncrypted = 0x656e6372 // "encr" + index<<32
	simSaltObfuscate = 0x6f626675 // "obfu" + sequence_number<<24
	simSaltFrac      = 0x66726163 // "frac"
)

// simCreated is the response's created_at: the server's now, or for a
// rendering without one a time that follows the seed.
func simCreated(o adapters.ResponseOptions) int64 {
	if o.Created != 0 {
		return o.Created
	}
	return simEpoch + int64(o.Seed%(1<<24))
}

// simID is prefix + account + "00" + time + 4 digits + "8190" + 16 digits.
func simID(prefix string, seed, salt uint64, at int64) string {
	return fmt.Sprintf("%s%s00%08x%04x8190%016x", prefix, simAccount, uint32(at),
		adapters.SimWord(seed, salt^simSaltFrac)&0xffff, adapters.SimWord(seed, salt))
}

const simAlnum = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// simEnc62 writes n base-62 digits of w (11 digits hold any uint64).
func simEnc62(b *strings.Builder, w uint64, n int) {
	var d [13]byte
	for i := n - 1; i >= 0; i-- {
		d[i] = simAlnum[w%62]
		w /= 62
	}
	b.Write(d[:n])
}

// simCallID is call_ + 24 alphanumerics; the first 11 encode a bijection
// of the seed.
func simCallID(seed uint64, index int) string {
	var b strings.Builder
	b.WriteString("call_")
	salt := simSaltCall + uint64(index)<<32
	simEnc62(&b, adapters.SimWord(seed, salt), 11)
	simEnc62(&b, adapters.SimWord(seed, salt^0xa5a5a5a5a5a5a5a5), 13)
	return b.String()
}

// simEncrypted is an opaque reasoning state shaped like the API's: a
// Fernet token (version 0x80, the time, a 16-byte IV, whole AES blocks and
// a 32-byte HMAC) in URL-safe base64 with padding, "gAAAAAB…".
func simEncrypted(seed uint64, index int, at int64, textLen int) string {
	n := 1 + 8 + 16 + 16*(24+textLen/12) + 32
	raw := make([]byte, 0, n)
	raw = append(raw, 0x80)
	raw = binary.BigEndian.AppendUint64(raw, uint64(at))
	for i := uint64(0); len(raw) < n; i++ {
		w := adapters.SimWord(seed, simSaltEncrypted+uint64(index)<<32+i<<8)
		for k := 0; k < 8 && len(raw) < n; k++ {
			raw = append(raw, byte(w>>(8*k)))
		}
	}
	return base64.URLEncoding.EncodeToString(raw)
}

// simObfuscation pads a delta to 16 characters (16 more when it is a
// multiple of 16 already), in alphanumerics.
func simObfuscation(seed uint64, seq int, delta string) string {
	n := 16 - utf8.RuneCountInString(delta)%16
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteByte(simAlnum[adapters.SimWord(seed, simSaltObfuscate+uint64(seq)<<24+uint64(i))%62])
	}
	return b.String()
}

var (
	simRequestSeq   atomic.Uint64
	simRequestEpoch = uint64(time.Now().UnixNano())
)

// simRequestID is a fresh x-request-id, req_ + 32 hex digits (it belongs
// to the HTTP exchange, not to the rendered turn).
func simRequestID() string {
	n := simRequestSeq.Add(1)
	return fmt.Sprintf("req_%016x%016x", adapters.SimWord(simRequestEpoch, n), adapters.SimWord(n, simRequestEpoch))
}

// ---- JSON ---------------------------------------------------------------

func simInt(n int64) string { return strconv.FormatInt(n, 10) }

// simMember is one member of an event envelope, its value raw JSON.
type simMember struct{ key, raw string }

// simEnvelope writes an event's data: "type" first, then the other members
// in alphabetical order, sequence_number among them.
func simEnvelope(typ string, seq int, members ...simMember) string {
	members = append(members, simMember{"sequence_number", strconv.Itoa(seq)})
	slices.SortFunc(members, func(a, b simMember) int { return strings.Compare(a.key, b.key) })
	n := 16 + len(typ)
	for _, m := range members {
		n += len(m.key) + len(m.raw) + 4
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteString(`{"type":`)
	b.WriteString(adapters.JSONString(typ))
	for _, m := range members {
		b.WriteString(`,"`)
		b.WriteString(m.key)
		b.WriteString(`":`)
		b.WriteString(m.raw)
	}
	b.WriteByte('}')
	return b.String()
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
	u := t.Usage
	val := func(p *int64) int64 {
		if p == nil {
			return 0
		}
		return max(0, *p)
	}
	in, out := val(u.InputTokens), val(u.OutputTokens)
	if u.OutputTokens == nil {
		out = int64(outChars/2 + 1)
	}
	st.usage = `{"input_tokens":` + simInt(in) +
		`,"input_tokens_details":{"cache_write_tokens":` + simInt(val(u.CacheWriteTokens)) + `,"cached_tokens":` + simInt(val(u.CacheReadTokens)) + `}` +
		`,"output_tokens":` + simInt(out) +
		`,"output_tokens_details":{"reasoning_tokens":` + simInt(val(u.ReasoningTokens)) + `}` +
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
// effort and summary. One gjson pass: this runs for every response.
func simEcho(body []byte) map[string]string {
	echo := make(map[string]string, len(simEchoed)+1)
	for k, v := range simEchoed {
		echo[k] = v
	}
	effort, summary := `"medium"`, `"auto"`
	gjson.ParseBytes(body).ForEach(func(k, v gjson.Result) bool {
		key := k.String()
		if _, ok := simEchoed[key]; ok && v.Type != gjson.Null {
			echo[key] = simCompactRaw(v.Raw)
		}
		if key == "reasoning" {
			if e := v.Get("effort"); e.Type == gjson.String {
				effort = e.Raw
			}
			if s := v.Get("summary"); s.Type == gjson.String {
				summary = s.Raw
			}
		}
		return true
	})
	if text := echo["text"]; strings.HasPrefix(text, "{") && !gjson.Get(text, "verbosity").Exists() {
		sep := ","
		if len(gjson.Parse(text).Map()) == 0 {
			sep = ""
		}
		echo["text"] = strings.TrimSuffix(text, "}") + sep + `"verbosity":"medium"}`
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

// ---- Simulated ------------------------------------------------------------

// StreamEvents renders a turn as the API's stream (see the top of the file).
func (Protocol) StreamEvents(t adapters.ModelTurn, o adapters.ResponseOptions) []adapters.WireEvent {
	st := simRender(t, o)
	frag := o.Fragment
	if frag == nil {
		frag = adapters.Fragments
	}
	var out []adapters.WireEvent
	ev := func(typ string, ph adapters.Phase, members ...simMember) {
		out = append(out, adapters.WireEvent{Event: typ, Data: simEnvelope(typ, len(out), members...), Phase: ph})
	}
	obf := func(delta string) simMember {
		return simMember{"obfuscation", adapters.JSONString(simObfuscation(st.seed, len(out), delta))}
	}
	ev("response.created", adapters.PhaseStart, simMember{"response", st.object(false)})
	ev("response.in_progress", adapters.PhaseStart, simMember{"response", st.object(false)})
	for i, x := range st.items {
		idx := simMember{"output_index", strconv.Itoa(i)}
		item := simMember{"item_id", adapters.JSONString(x.id)}
		ev("response.output_item.added", adapters.PhaseStart, idx, simMember{"item", x.added()})
		switch x.kind {
		case adapters.KindReasoning:
			if x.text != "" {
				si := simMember{"summary_index", "0"}
				ev("response.reasoning_summary_part.added", adapters.PhaseStart, item, idx, si, simMember{"part", `{"type":"summary_text","text":""}`})
				for _, d := range frag(x.text) {
					ev("response.reasoning_summary_text.delta", adapters.PhaseReasoning, simMember{"delta", adapters.JSONString(d)}, item, obf(d), idx, si)
				}
				ev("response.reasoning_summary_text.done", adapters.PhaseItemDone, item, idx, si, simMember{"text", adapters.JSONString(x.text)})
				ev("response.reasoning_summary_part.done", adapters.PhaseItemDone, item, idx, si,
					simMember{"part", `{"type":"summary_text","text":` + adapters.JSONString(x.text) + `}`})
			}
		case adapters.KindToolCall:
			for _, d := range frag(x.text) {
				ev("response.function_call_arguments.delta", adapters.PhaseArgs, simMember{"delta", adapters.JSONString(d)}, item, obf(d), idx)
			}
			ev("response.function_call_arguments.done", adapters.PhaseItemDone, simMember{"arguments", adapters.JSONString(x.text)}, item,
				simMember{"name", adapters.JSONString(x.name)}, idx)
		case adapters.KindRefusal:
			ci := simMember{"content_index", "0"}
			ev("response.content_part.added", adapters.PhaseStart, ci, item, idx, simMember{"part", simRefusalPart("")})
			for _, d := range frag(x.text) {
				ev("response.refusal.delta", adapters.PhaseText, ci, simMember{"delta", adapters.JSONString(d)}, item, obf(d), idx)
			}
			ev("response.refusal.done", adapters.PhaseItemDone, ci, item, idx, simMember{"refusal", adapters.JSONString(x.text)})
			ev("response.content_part.done", adapters.PhaseItemDone, ci, item, idx, simMember{"part", simRefusalPart(x.text)})
		default:
			ci := simMember{"content_index", "0"}
			ev("response.content_part.added", adapters.PhaseStart, ci, item, idx, simMember{"part", simOutputText("")})
			for _, d := range frag(x.text) {
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

// Body renders a turn as the API's Response object, pretty-printed: the
// same ids, items and usage as StreamEvents for the same seed.
func (Protocol) Body(t adapters.ModelTurn, o adapters.ResponseOptions) []byte {
	compact := simRender(t, o).object(true)
	var b bytes.Buffer
	if err := json.Indent(&b, []byte(compact), "", "  "); err != nil {
		return []byte(compact)
	}
	b.WriteByte('\n')
	return b.Bytes()
}

// ResponseID is the resp_ id a rendered response carries for the seed.
func (Protocol) ResponseID(o adapters.ResponseOptions) string {
	return simID("resp_", o.Seed, simSaltResponse, simCreated(o))
}

// simRateLimits sets the x-ratelimit-* headers (protocols.md §6.4).
func simRateLimits(h http.Header, exhausted bool) {
	remReq, remTok, resetReq, resetTok := "4999", "3997469", "12ms", "37ms"
	if exhausted {
		remReq, remTok, resetReq, resetTok = "0", "0", "1s", "1s"
	}
	h.Set("x-ratelimit-limit-requests", "5000")
	h.Set("x-ratelimit-limit-tokens", "4000000")
	h.Set("x-ratelimit-remaining-requests", remReq)
	h.Set("x-ratelimit-remaining-tokens", remTok)
	h.Set("x-ratelimit-reset-requests", resetReq)
	h.Set("x-ratelimit-reset-tokens", resetTok)
}

// ResponseHeaders are a successful response's headers: x-request-id,
// openai-processing-ms, openai-version, openai-organization and the
// rate-limit counters (protocols.md §1.1, §6.4).
func (Protocol) ResponseHeaders(stream bool) http.Header {
	h := http.Header{}
	h.Set("x-request-id", simRequestID())
	ms := 180 + simRequestSeq.Load()%240
	if stream {
		ms = 90 + simRequestSeq.Load()%120 // time to the first byte
	}
	h.Set("openai-processing-ms", strconv.FormatUint(ms, 10))
	h.Set("openai-version", "2020-10-01")
	h.Set("openai-organization", "modelwire-sim")
	simRateLimits(h, false)
	return h
}

// LineEnd: the API ends SSE lines with \n.
func (Protocol) LineEnd() string { return "\n" }

// simErrorBody is the API's error body, pretty-printed as it sends it.
// param and code are raw JSON (a string or null).
func simErrorBody(message, typ, param, code string) []byte {
	return []byte("{\n  \"error\": {\n    \"message\": " + adapters.JSONString(message) + ",\n    \"type\": " + adapters.JSONString(typ) +
		",\n    \"param\": " + param + ",\n    \"code\": " + code + "\n  }\n}\n")
}

func simNullable(s string) string {
	if s == "" {
		return "null"
	}
	return adapters.JSONString(s)
}

// simError is an HTTP error with x-request-id.
func simError(status int, message, typ, param, code string) *adapters.SimError {
	h := http.Header{}
	h.Set("x-request-id", simRequestID())
	return &adapters.SimError{Status: status, Header: h, Body: simErrorBody(message, typ, simNullable(param), simNullable(code))}
}

// ErrorResponse is the API's HTTP error for a fault. The simulator's kinds
// map to OpenAI's names: rate_limit → 429 type "requests" code
// rate_limit_exceeded (with the rate-limit headers spent; the server adds
// Retry-After); server_error and api_error → 500 server_error;
// overloaded_error → 503 service_unavailable_error (OpenAI has no 529);
// invalid_request_error → 400, with param/code previous_response_not_found
// for the server's "Previous response with id '…' not found.";
// request_too_large → 413.
func (Protocol) ErrorResponse(status int, kind, message string) *adapters.SimError {
	typ, param, code, def := "invalid_request_error", "", "", http.StatusBadRequest
	switch kind {
	case "rate_limit", "rate_limit_exceeded", "rate_limit_error":
		typ, code, def = "requests", "rate_limit_exceeded", http.StatusTooManyRequests
	case "insufficient_quota":
		typ, code, def = "insufficient_quota", "insufficient_quota", http.StatusTooManyRequests
	case "server_error", "api_error":
		typ, def = "server_error", http.StatusInternalServerError
	case "overloaded_error", "overloaded", "service_unavailable_error":
		typ, def = "service_unavailable_error", http.StatusServiceUnavailable
	case "request_too_large":
		code, def = "request_too_large", http.StatusRequestEntityTooLarge
	case "authentication_error", "invalid_api_key":
		code, def = "invalid_api_key", http.StatusUnauthorized
	case "not_found_error":
		def = http.StatusNotFound
	case "invalid_request_error", "":
		if strings.HasPrefix(message, "Previous response with id ") {
			param, code = "previous_response_id", "previous_response_not_found"
		}
	default:
		typ = kind
	}
	if status == 0 || status == 529 {
		status = def
	}
	e := simError(status, message, typ, param, code)
	if status == http.StatusTooManyRequests {
		simRateLimits(e.Header, true)
	}
	return e
}

// simStreamErrorType maps a fault kind to the nested error event's type and
// code as seen live: service_unavailable_error with code null (vercel/ai
// #20022), too_many_requests (openai/openai-dotnet#881), server_error with
// code null (vercel/ai openai-error-null-code.1.chunks.txt),
// insufficient_quota (openai-error.1.chunks.txt).
func simStreamErrorType(kind string) (typ, code string) {
	switch kind {
	case "overloaded_error", "overloaded", "service_unavailable_error":
		return "service_unavailable_error", ""
	case "rate_limit", "rate_limit_error", "rate_limit_exceeded", "too_many_requests":
		return "too_many_requests", "too_many_requests"
	case "server_error", "api_error", "":
		return "server_error", ""
	case "insufficient_quota":
		return "insufficient_quota", "insufficient_quota"
	}
	return kind, ""
}

// ErrorEvent is the in-stream error after a 200, in the nested shape the
// API sends (see the top of the file). It ends the stream: a terminal
// event. Its sequence_number is a placeholder, 0: ErrorEvent does not know
// where the server puts it, and Renumber gives it its place.
func (Protocol) ErrorEvent(kind, message string) []adapters.WireEvent {
	typ, code := simStreamErrorType(kind)
	inner := `{"type":` + adapters.JSONString(typ) + `,"code":` + simNullable(code) + `,"message":` + adapters.JSONString(message) + `,"param":null}`
	return []adapters.WireEvent{{Event: "error", Data: simEnvelope("error", 0, simMember{"error", inner}), Phase: adapters.PhaseTerminal}}
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

func hasKind(items []adapters.OutputItem, k adapters.ItemKind) bool {
	for _, it := range items {
		if it.Kind == k {
			return true
		}
	}
	return false
}
