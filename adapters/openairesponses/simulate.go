package openairesponses

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

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
//     function_call_arguments.done has no "name" (recordings; openai-go
//     v3.98.0 ResponseFunctionCallArgumentsDoneEvent).
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

func simCreated(seed uint64) int64 { return simEpoch + int64(seed%(1<<24)) }

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

// simJSON is s as a JSON string, UTF-8 left as is and no HTML escaping
// (the API writes 中文 as 中文).
func simJSON(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

func simInt(n int64) string { return strconv.FormatInt(n, 10) }

// simMember is one member of an event envelope, its value raw JSON.
type simMember struct{ key, raw string }

// simEnvelope writes an event's data: "type" first, then the other members
// in alphabetical order, sequence_number among them.
func simEnvelope(typ string, seq int, members ...simMember) string {
	members = append(members, simMember{"sequence_number", strconv.Itoa(seq)})
	sort.Slice(members, func(i, j int) bool { return members[i].key < members[j].key })
	var b strings.Builder
	b.WriteString(`{"type":`)
	b.WriteString(simJSON(typ))
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
	usage     string // the usage object
}

func simRender(t adapters.ModelTurn, o adapters.ResponseOptions) simTurn {
	st := simTurn{model: o.Model, seed: o.Seed, created: simCreated(o.Seed), truncated: t.Stop == adapters.StopTruncated}
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
	return `{"type":"output_text","annotations":[],"logprobs":[],"text":` + simJSON(text) + `}`
}

func simRefusalPart(text string) string {
	return `{"type":"refusal","refusal":` + simJSON(text) + `}`
}

func simSummary(text string) string {
	if text == "" {
		return "[]"
	}
	return `[{"type":"summary_text","text":` + simJSON(text) + `}]`
}

// added is the item as output_item.added announces it; done as it closes.
func (x simItem) added() string {
	switch x.kind {
	case adapters.KindReasoning:
		return `{"id":` + simJSON(x.id) + `,"type":"reasoning","encrypted_content":` + simJSON(x.encrypted) + `,"summary":[]}`
	case adapters.KindToolCall:
		return `{"id":` + simJSON(x.id) + `,"type":"function_call","status":"in_progress","arguments":"","call_id":` +
			simJSON(x.callID) + `,"name":` + simJSON(x.name) + `}`
	}
	return `{"id":` + simJSON(x.id) + `,"type":"message","status":"in_progress","content":[],"role":"assistant"}`
}

func (x simItem) done() string {
	switch x.kind {
	case adapters.KindReasoning:
		return `{"id":` + simJSON(x.id) + `,"type":"reasoning","encrypted_content":` + simJSON(x.encrypted) + `,"summary":` + simSummary(x.text) + `}`
	case adapters.KindToolCall:
		return `{"id":` + simJSON(x.id) + `,"type":"function_call","status":` + simJSON(x.status) + `,"arguments":` + simJSON(x.text) +
			`,"call_id":` + simJSON(x.callID) + `,"name":` + simJSON(x.name) + `}`
	case adapters.KindRefusal:
		return `{"id":` + simJSON(x.id) + `,"type":"message","status":` + simJSON(x.status) + `,"content":[` + simRefusalPart(x.text) + `],"role":"assistant"}`
	}
	return `{"id":` + simJSON(x.id) + `,"type":"message","status":` + simJSON(x.status) + `,"content":[` + simOutputText(x.text) + `],"role":"assistant"}`
}

// object is the Response object: in progress (no output, usage null) or
// final (status completed or incomplete, its output and usage).
func (st simTurn) object(final bool) string {
	status, completedAt, incomplete, output, usage, tier := "in_progress", "null", "null", "[]", "null", "auto"
	if final {
		status, tier, usage = "completed", "default", st.usage
		completedAt = simInt(st.created + 1 + int64(len(st.items))/2)
		if st.truncated {
			status, completedAt, incomplete = "incomplete", "null", `{"reason":"max_output_tokens"}`
		}
		parts := make([]string, len(st.items))
		for i, x := range st.items {
			parts[i] = x.done()
		}
		output = "[" + strings.Join(parts, ",") + "]"
	}
	return `{"id":` + simJSON(st.id) + `,"object":"response","created_at":` + simInt(st.created) +
		`,"status":"` + status + `","background":false,"completed_at":` + completedAt +
		`,"error":null,"frequency_penalty":0,"incomplete_details":` + incomplete +
		`,"instructions":null,"max_output_tokens":null,"max_tool_calls":null,"model":` + simJSON(st.model) +
		`,"moderation":null,"output":` + output + `,"parallel_tool_calls":true,"presence_penalty":0` +
		`,"previous_response_id":null,"prompt_cache_key":null,"prompt_cache_retention":"in_memory"` +
		`,"reasoning":{"context":"current_turn","effort":"medium","mode":"standard","summary":"auto"}` +
		`,"safety_identifier":null,"service_tier":"` + tier + `","store":true,"temperature":1` +
		`,"text":{"format":{"type":"text"},"verbosity":"medium"},"tool_choice":"auto"` +
		`,"tool_usage":{"image_gen":{"input_tokens":0,"input_tokens_details":{"image_tokens":0,"text_tokens":0},"output_tokens":0,"output_tokens_details":{"image_tokens":0,"text_tokens":0},"total_tokens":0},"web_search":{"num_requests":0}}` +
		`,"tools":[],"top_logprobs":0,"top_p":1,"truncation":"disabled","usage":` + usage +
		`,"user":null,"metadata":{}}`
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
		return simMember{"obfuscation", simJSON(simObfuscation(st.seed, len(out), delta))}
	}
	ev("response.created", adapters.PhaseStart, simMember{"response", st.object(false)})
	ev("response.in_progress", adapters.PhaseStart, simMember{"response", st.object(false)})
	for i, x := range st.items {
		idx := simMember{"output_index", strconv.Itoa(i)}
		item := simMember{"item_id", simJSON(x.id)}
		ev("response.output_item.added", adapters.PhaseStart, idx, simMember{"item", x.added()})
		switch x.kind {
		case adapters.KindReasoning:
			if x.text != "" {
				si := simMember{"summary_index", "0"}
				ev("response.reasoning_summary_part.added", adapters.PhaseStart, item, idx, si, simMember{"part", `{"type":"summary_text","text":""}`})
				for _, d := range frag(x.text) {
					ev("response.reasoning_summary_text.delta", adapters.PhaseReasoning, simMember{"delta", simJSON(d)}, item, obf(d), idx, si)
				}
				ev("response.reasoning_summary_text.done", adapters.PhaseItemDone, item, idx, si, simMember{"text", simJSON(x.text)})
				ev("response.reasoning_summary_part.done", adapters.PhaseItemDone, item, idx, si,
					simMember{"part", `{"type":"summary_text","text":` + simJSON(x.text) + `}`})
			}
		case adapters.KindToolCall:
			for _, d := range frag(x.text) {
				ev("response.function_call_arguments.delta", adapters.PhaseArgs, simMember{"delta", simJSON(d)}, item, obf(d), idx)
			}
			ev("response.function_call_arguments.done", adapters.PhaseItemDone, simMember{"arguments", simJSON(x.text)}, item, idx)
		case adapters.KindRefusal:
			ci := simMember{"content_index", "0"}
			ev("response.content_part.added", adapters.PhaseStart, ci, item, idx, simMember{"part", simRefusalPart("")})
			for _, d := range frag(x.text) {
				ev("response.refusal.delta", adapters.PhaseText, ci, simMember{"delta", simJSON(d)}, item, obf(d), idx)
			}
			ev("response.refusal.done", adapters.PhaseItemDone, ci, item, idx, simMember{"refusal", simJSON(x.text)})
			ev("response.content_part.done", adapters.PhaseItemDone, ci, item, idx, simMember{"part", simRefusalPart(x.text)})
		default:
			ci := simMember{"content_index", "0"}
			ev("response.content_part.added", adapters.PhaseStart, ci, item, idx, simMember{"part", simOutputText("")})
			for _, d := range frag(x.text) {
				ev("response.output_text.delta", adapters.PhaseText, ci, simMember{"delta", simJSON(d)}, item,
					simMember{"logprobs", "[]"}, obf(d), idx)
			}
			ev("response.output_text.done", adapters.PhaseItemDone, ci, item, simMember{"logprobs", "[]"}, idx, simMember{"text", simJSON(x.text)})
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
	return simID("resp_", o.Seed, simSaltResponse, simCreated(o.Seed))
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
	return []byte("{\n  \"error\": {\n    \"message\": " + simJSON(message) + ",\n    \"type\": " + simJSON(typ) +
		",\n    \"param\": " + param + ",\n    \"code\": " + code + "\n  }\n}\n")
}

func simNullable(s string) string {
	if s == "" {
		return "null"
	}
	return simJSON(s)
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
	inner := `{"type":` + simJSON(typ) + `,"code":` + simNullable(code) + `,"message":` + simJSON(message) + `,"param":null}`
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

// ---- CheckRequest -----------------------------------------------------------
//
// The checks and their wording follow the API's live 400s: "Missing required
// parameter: 'x'." (missing_required_parameter), "Invalid type for 'x':
// expected …, but got … instead." (invalid_type), "Invalid 'x': decimal
// above maximum value. Expected a value <= 2, but got 3 instead."
// (decimal_above_max_value and kin), "Invalid value: 'v'. Supported values
// are: 'a', 'b', and 'c'." (invalid_value), "Unknown parameter: 'x'."
// (unknown_parameter, with a "Did you mean" hint), "The requested model 'x'
// does not exist." (model_not_found, 400), "No tool call found for function
// call output with call_id x." and "No tool output found for function call
// x." (param input, code null), and the parse failure's long HINT. Sources:
// issues in the issues corpus quoting these bodies (continuedev/continue
// #10092, microsoft/vscode#320060, skorokithakis/sysaidmin#9), this
// package's testdata/error_400.json, and a proxy project's direct-API
// measurements of 2026-08-30/31 (the field order, max_output_tokens >= 16,
// `model: null` → "got an object", input rules, the key set).

// simKnownKeys are the request members the API knows (the measured set plus
// openai-go v3.98.0 ResponseNewParams).
var simKnownKeys = []string{
	"model", "input", "instructions", "max_output_tokens", "max_tool_calls", "temperature", "top_p",
	"top_logprobs", "stream", "stream_options", "text", "tools", "tool_choice", "parallel_tool_calls",
	"reasoning", "include", "store", "background", "previous_response_id", "conversation", "truncation",
	"metadata", "user", "safety_identifier", "prompt_cache_key", "prompt_cache_retention",
	"prompt_cache_options", "service_tier", "prompt", "context_management", "moderation",
	"presence_penalty", "frequency_penalty", "access_programs", "image",
}

// simItemTypes are the input item types the API accepts (openai-go
// ResponseInputItemUnionParam).
var simItemTypes = []string{
	"message", "file_search_call", "computer_call", "computer_call_output", "web_search_call",
	"function_call", "function_call_output", "tool_search_call", "tool_search_output", "additional_tools",
	"configuration_update", "reasoning", "compaction", "compaction_trigger", "image_generation_call",
	"code_interpreter_call", "local_shell_call", "local_shell_call_output", "shell_call",
	"shell_call_output", "apply_patch_call", "apply_patch_call_output", "mcp_list_tools",
	"mcp_approval_request", "mcp_approval_response", "mcp_call", "custom_tool_call_output",
	"custom_tool_call", "item_reference", "program", "program_output",
}

func simInvalid(message, param, code string) *adapters.SimError {
	return simError(http.StatusBadRequest, message, "invalid_request_error", param, code)
}

func simMissing(param string) *adapters.SimError {
	return simInvalid("Missing required parameter: '"+param+"'.", param, "missing_required_parameter")
}

// simKind is the JSON type of a raw value: string, integer, decimal,
// boolean, null, array or object ("" when absent).
func simKind(raw json.RawMessage) string {
	s := strings.TrimSpace(string(raw))
	if s == "" {
		return ""
	}
	switch s[0] {
	case '"':
		return "string"
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	if strings.ContainsAny(s, ".eE") {
		return "decimal"
	}
	return "integer"
}

// simPresent: the member is there and not null (the API treats null as
// absent for every member but model).
func simPresent(raw json.RawMessage) bool {
	k := simKind(raw)
	return k != "" && k != "null"
}

// simGot names a value's type as the API's messages do.
func simGot(raw json.RawMessage) string {
	switch simKind(raw) {
	case "string":
		return "a string"
	case "integer":
		return "an integer"
	case "decimal":
		return "a decimal number"
	case "boolean":
		return "a boolean"
	case "array":
		return "an array"
	}
	return "an object" // objects, and null (as the API says for model: null)
}

func simWrongType(param, want string, raw json.RawMessage) *adapters.SimError {
	return simInvalid(fmt.Sprintf("Invalid type for '%s': expected %s, but got %s instead.", param, want, simGot(raw)), param, "invalid_type")
}

// simList quotes values as the API lists them: 'a' and 'b'; 'a', 'b', and 'c'.
func simList(values []string) string {
	q := make([]string, len(values))
	for i, v := range values {
		q[i] = "'" + v + "'"
	}
	switch len(q) {
	case 0:
		return ""
	case 1:
		return q[0]
	case 2:
		return q[0] + " and " + q[1]
	}
	return strings.Join(q[:len(q)-1], ", ") + ", and " + q[len(q)-1]
}

func simBadValue(param, value string, supported []string) *adapters.SimError {
	return simInvalid(fmt.Sprintf("Invalid value: '%s'. Supported values are: %s.", value, simList(supported)), param, "invalid_value")
}

func simString(raw json.RawMessage) string {
	var s string
	if simKind(raw) != "string" || json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// simNumber checks a number member's type and range; integer members must
// be whole numbers.
func simNumber(top map[string]json.RawMessage, name string, integer bool, lo, hi float64) (float64, *adapters.SimError) {
	raw := top[name]
	if !simPresent(raw) {
		return 0, nil
	}
	kind := simKind(raw)
	want, word := "a decimal", "decimal"
	if integer {
		want, word = "an integer", "integer"
	}
	if (integer && kind != "integer") || (!integer && kind != "integer" && kind != "decimal") {
		return 0, simWrongType(name, want, raw)
	}
	var f float64
	if json.Unmarshal(raw, &f) != nil {
		return 0, simWrongType(name, want, raw)
	}
	got := strings.TrimSpace(string(raw))
	if f < lo {
		return 0, simInvalid(fmt.Sprintf("Invalid '%s': %s below minimum value. Expected a value >= %s, but got %s instead.", name, word, simFloat(lo), got), name, word+"_below_min_value")
	}
	if f > hi {
		return 0, simInvalid(fmt.Sprintf("Invalid '%s': %s above maximum value. Expected a value <= %s, but got %s instead.", name, word, simFloat(hi), got), name, word+"_above_max_value")
	}
	return f, nil
}

func simFloat(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// simDistance is the edit distance of a and b, or 3 when it is more than 2.
func simDistance(a, b string) int {
	if d := len(a) - len(b); d > 2 || d < -2 {
		return 3
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return min(prev[len(b)], 3)
}

// simUnknownKey reports the first member (in body order) the API does not
// know, with its "Did you mean" hint: the nearest known key within two
// edits that the body does not already have.
func simUnknownKey(body []byte, top map[string]json.RawMessage) *adapters.SimError {
	known := map[string]bool{}
	for _, k := range simKnownKeys {
		known[k] = true
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if _, err := dec.Token(); err != nil {
		return nil
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil
		}
		key, _ := tok.(string)
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return nil
		}
		if known[key] {
			continue
		}
		if key == "messages" {
			return simInvalid("Unsupported parameter: 'messages'. In the Responses API, this parameter has moved to 'input'. Try again with the new parameter. See the API documentation for more information: https://platform.openai.com/docs/api-reference/responses/create.", "", "unsupported_parameter")
		}
		msg := "Unknown parameter: '" + key + "'."
		best, bestD := "", 3
		for _, k := range simKnownKeys {
			if _, has := top[k]; has {
				continue
			}
			if d := simDistance(key, k); d < bestD || d == bestD && d < 3 && k < best {
				best, bestD = k, d
			}
		}
		if best != "" {
			msg += " Did you mean '" + best + "'?"
		}
		return simInvalid(msg, key, "unknown_parameter")
	}
	return nil
}

// simNotJSON is the API's answer to a body it cannot parse.
func simNotJSON() *adapters.SimError {
	return simInvalid("We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON. If you have trouble figuring out how to fix this, please contact us through our help center at help.openai.com.)", "", "")
}

// simOtherFamilies are model names of other providers: the API knows none
// of them (any other name is accepted, as the simulator answers every
// model it is given).
var simOtherFamilies = []string{"claude-", "gemini-", "models/"}

var simNamePattern = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)

type simInputItem struct {
	Type      json.RawMessage `json:"type"`
	Role      json.RawMessage `json:"role"`
	Content   json.RawMessage `json:"content"`
	ID        json.RawMessage `json:"id"`
	CallID    json.RawMessage `json:"call_id"`
	Name      json.RawMessage `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Output    json.RawMessage `json:"output"`
	Summary   json.RawMessage `json:"summary"`
}

// CheckRequest checks a request as POST /v1/responses does and returns its
// facts. Any API key, or none, is accepted. With previous_response_id the
// earlier calls live in the stored chain: a function_call_output is then
// checked against the request's own calls only, and the server checks the
// chain (and store:false) itself.
func (Protocol) CheckRequest(method, path string, h http.Header, body []byte) (*adapters.Inbound, *adapters.SimError) {
	if p, _, _ := strings.Cut(path, "?"); method != http.MethodPost || p != "/v1/responses" && p != "/responses" {
		return nil, simError(http.StatusNotFound, fmt.Sprintf("Invalid URL (%s %s)", method, p), "invalid_request_error", "", "")
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return nil, simInvalid(fmt.Sprintf("Invalid type for body: expected an object, but got %s instead.", simGot(bytes.TrimSpace(body))), "", "invalid_type")
		}
		return nil, simNotJSON()
	}
	if top == nil { // the body is null
		return nil, simInvalid("Invalid type for body: expected an object, but got null instead.", "", "invalid_type")
	}
	in := &adapters.Inbound{}

	// model, then input's presence, then unknown members.
	switch simKind(top["model"]) {
	case "":
		return nil, simMissing("model")
	case "string":
		in.Model = simString(top["model"])
	default:
		return nil, simWrongType("model", "a string", top["model"])
	}
	unknownModel := strings.TrimSpace(in.Model) == ""
	for _, p := range simOtherFamilies {
		unknownModel = unknownModel || strings.HasPrefix(in.Model, p)
	}
	if unknownModel {
		return nil, simInvalid(fmt.Sprintf("The requested model '%s' does not exist.", in.Model), "model", "model_not_found")
	}
	if _, ok := top["input"]; !ok {
		return nil, simMissing("input")
	}
	if e := simUnknownKey(body, top); e != nil {
		return nil, e
	}

	// input: a string or a list of items.
	var items []json.RawMessage
	emptyInput := false
	switch raw := top["input"]; simKind(raw) {
	case "string":
		emptyInput = simString(raw) == ""
	case "array":
		if json.Unmarshal(raw, &items) != nil {
			return nil, simWrongType("input", "a string", raw)
		}
		emptyInput = len(items) == 0
	default:
		return nil, simWrongType("input", "a string", raw)
	}
	parsed := make([]simInputItem, len(items))
	kinds := make([]string, len(items))
	for i, raw := range items {
		param := fmt.Sprintf("input[%d]", i)
		if simKind(raw) != "object" {
			return nil, simWrongType(param, "an input item", raw)
		}
		var it simInputItem
		if json.Unmarshal(raw, &it) != nil {
			return nil, simWrongType(param, "an input item", raw)
		}
		typ := simString(it.Type)
		switch {
		case simPresent(it.Type) && simKind(it.Type) != "string":
			return nil, simBadValue(param, "", simItemTypes)
		case typ == "" && simPresent(it.Role):
			typ = "message"
		case typ == "" && simPresent(it.ID):
			typ = "item_reference"
		}
		known := false
		for _, t := range simItemTypes {
			known = known || t == typ
		}
		if !known {
			return nil, simBadValue(param, typ, simItemTypes)
		}
		switch typ {
		case "message":
			role := simString(it.Role)
			switch role {
			case "user", "assistant", "system", "developer":
			default:
				return nil, simBadValue(param, role, []string{"assistant", "system", "developer", "user"})
			}
			if !simPresent(it.Content) {
				return nil, simMissing(param + ".content")
			}
		case "function_call":
			for _, m := range []struct {
				name string
				raw  json.RawMessage
			}{{"arguments", it.Arguments}, {"call_id", it.CallID}, {"name", it.Name}} {
				if !simPresent(m.raw) {
					return nil, simMissing(param + "." + m.name)
				}
				if simKind(m.raw) != "string" {
					return nil, simWrongType(param+"."+m.name, "a string", m.raw)
				}
			}
		case "function_call_output":
			if !simPresent(it.CallID) {
				return nil, simMissing(param + ".call_id")
			}
			if simKind(it.CallID) != "string" {
				return nil, simWrongType(param+".call_id", "a string", it.CallID)
			}
			if !simPresent(it.Output) {
				return nil, simMissing(param + ".output")
			}
			if k := simKind(it.Output); k != "string" && k != "array" {
				return nil, simWrongType(param+".output", "one of a string or array", it.Output)
			}
		case "reasoning":
			if !simPresent(it.Summary) {
				return nil, simMissing(param + ".summary")
			}
		}
		parsed[i], kinds[i] = it, typ
	}

	// previous_response_id
	if raw := top["previous_response_id"]; simPresent(raw) {
		if simKind(raw) != "string" {
			return nil, simWrongType("previous_response_id", "a string", raw)
		}
		in.PreviousResponseID = simString(raw)
		if !strings.HasPrefix(in.PreviousResponseID, "resp") {
			return nil, simInvalid(fmt.Sprintf("Invalid 'previous_response_id': '%s'. Expected an ID that begins with 'resp'.", in.PreviousResponseID), "previous_response_id", "invalid_value")
		}
	}
	if raw := top["include"]; simPresent(raw) && simKind(raw) != "array" {
		return nil, simWrongType("include", "an array of strings", raw)
	}

	// tools: flat function tools need a name (a Chat-shaped tool, nested
	// under "function", has none).
	if raw := top["tools"]; simPresent(raw) {
		var tools []json.RawMessage
		if simKind(raw) != "array" || json.Unmarshal(raw, &tools) != nil {
			return nil, simWrongType("tools", "an array of objects", raw)
		}
		for i, t := range tools {
			param := fmt.Sprintf("tools[%d]", i)
			var tool struct {
				Type json.RawMessage `json:"type"`
				Name json.RawMessage `json:"name"`
			}
			if simKind(t) != "object" || json.Unmarshal(t, &tool) != nil {
				return nil, simWrongType(param, "an object", t)
			}
			if !simPresent(tool.Type) {
				return nil, simMissing(param + ".type")
			}
			if simString(tool.Type) != "function" {
				continue
			}
			if !simPresent(tool.Name) {
				return nil, simMissing(param + ".name")
			}
			name := simString(tool.Name)
			if simKind(tool.Name) != "string" {
				return nil, simWrongType(param+".name", "a string", tool.Name)
			}
			if !simNamePattern.MatchString(name) {
				return nil, simInvalid(fmt.Sprintf("Invalid '%s.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.", param), param+".name", "invalid_value")
			}
			in.Tools = append(in.Tools, name)
		}
	}
	if raw := top["metadata"]; simPresent(raw) && simKind(raw) != "object" {
		return nil, simWrongType("metadata", "an object", raw)
	}

	// text.format
	if raw := top["text"]; simPresent(raw) {
		var text struct {
			Format json.RawMessage `json:"format"`
		}
		if simKind(raw) != "object" || json.Unmarshal(raw, &text) != nil {
			return nil, simWrongType("text", "an object", raw)
		}
		if simPresent(text.Format) {
			var f struct {
				Type   json.RawMessage `json:"type"`
				Name   json.RawMessage `json:"name"`
				Schema json.RawMessage `json:"schema"`
			}
			if simKind(text.Format) != "object" || json.Unmarshal(text.Format, &f) != nil {
				return nil, simWrongType("text.format", "an object", text.Format)
			}
			if !simPresent(f.Type) {
				return nil, simMissing("text.format.type")
			}
			switch typ := simString(f.Type); typ {
			case "text", "json_object":
			case "json_schema":
				if !simPresent(f.Name) {
					return nil, simMissing("text.format.name")
				}
				if !simPresent(f.Schema) {
					return nil, simMissing("text.format.schema")
				}
			default:
				return nil, simBadValue("text.format.type", typ, []string{"json_object", "text", "json_schema"})
			}
		}
	}

	// sampling
	if _, e := simNumber(top, "temperature", false, 0, 2); e != nil {
		return nil, e
	}
	if _, e := simNumber(top, "top_p", false, 0, 1); e != nil {
		return nil, e
	}
	for _, name := range []string{"parallel_tool_calls", "stream"} {
		if raw := top[name]; simPresent(raw) && simKind(raw) != "boolean" {
			return nil, simWrongType(name, "a boolean", raw)
		}
	}
	_ = json.Unmarshal(top["stream"], &in.Stream)
	if raw := top["stream_options"]; simPresent(raw) {
		var so map[string]json.RawMessage
		if simKind(raw) != "object" || json.Unmarshal(raw, &so) != nil {
			return nil, simWrongType("stream_options", "an object", raw)
		}
		keys := make([]string, 0, len(so))
		for k := range so {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if k != "include_obfuscation" {
				return nil, simInvalid("Unknown parameter: 'stream_options."+k+"'.", "stream_options."+k, "unknown_parameter")
			}
		}
	}
	if raw := top["background"]; simPresent(raw) && simKind(raw) != "boolean" {
		return nil, simWrongType("background", "a boolean", raw)
	}
	maxOut, e := simNumber(top, "max_output_tokens", true, 16, math.MaxInt32)
	if e != nil {
		return nil, e
	}
	in.MaxOutputTokens = int(maxOut)
	if _, e := simNumber(top, "max_tool_calls", true, 1, math.MaxInt32); e != nil {
		return nil, e
	}
	if raw := top["reasoning"]; simPresent(raw) {
		var r struct {
			Effort  json.RawMessage `json:"effort"`
			Summary json.RawMessage `json:"summary"`
		}
		if simKind(raw) != "object" || json.Unmarshal(raw, &r) != nil {
			return nil, simWrongType("reasoning", "an object", raw)
		}
		efforts := []string{"none", "minimal", "low", "medium", "high", "xhigh", "max"}
		if simPresent(r.Effort) && !simOneOf(simString(r.Effort), efforts) {
			return nil, simBadValue("reasoning.effort", simString(r.Effort), efforts)
		}
		summaries := []string{"auto", "concise", "detailed"}
		if simPresent(r.Summary) && !simOneOf(simString(r.Summary), summaries) {
			return nil, simBadValue("reasoning.summary", simString(r.Summary), summaries)
		}
	}
	if raw := top["truncation"]; simPresent(raw) && !simOneOf(simString(raw), []string{"auto", "disabled"}) {
		return nil, simBadValue("truncation", simString(raw), []string{"auto", "disabled"})
	}
	if raw := top["instructions"]; simPresent(raw) && simKind(raw) != "string" && simKind(raw) != "array" {
		return nil, simWrongType("instructions", "a string", raw)
	}
	if raw := top["store"]; simPresent(raw) {
		if simKind(raw) != "boolean" {
			return nil, simWrongType("store", "a boolean", raw)
		}
		var s bool
		_ = json.Unmarshal(raw, &s)
		in.Store = &s
	}
	if _, e := simNumber(top, "top_logprobs", true, 0, 20); e != nil {
		return nil, e
	}

	// State: a conversation or a chain, not both; then an input to answer.
	if in.PreviousResponseID != "" && simPresent(top["conversation"]) {
		return nil, simInvalid("Mutually exclusive parameters: ''. Ensure you are only providing one of: 'pre..._id' or 'conversation'.", "", "mutually_exclusive_parameters")
	}
	if emptyInput && in.PreviousResponseID == "" && !simPresent(top["prompt"]) && !simPresent(top["conversation"]) {
		return nil, simInvalid(`One of "input" or "previous_response_id" or 'prompt' or 'conversation' must be provided.`, "", "missing_required_parameter")
	}

	// Calls and their outputs. Model turns are the runs of output items
	// (reasoning, function_call, assistant message) between other items.
	calls := map[string]string{} // call_id → name, of the calls seen so far
	var callOrder []string
	answered := map[string]bool{}
	inTurn := false
	for i, it := range parsed {
		model := false
		switch kinds[i] {
		case "function_call":
			model = true
			id := simString(it.CallID)
			if _, dup := calls[id]; !dup {
				callOrder = append(callOrder, id)
			}
			calls[id] = simString(it.Name)
		case "reasoning":
			model = true
		case "message":
			model = simString(it.Role) == "assistant"
		case "function_call_output":
			id := simString(it.CallID)
			name, ok := calls[id]
			if !ok && in.PreviousResponseID == "" {
				return nil, simInvalid("No tool call found for function call output with call_id "+id+".", "input", "")
			}
			answered[id] = true
			in.Results = append(in.Results, adapters.ToolResult{CallID: id, Name: name, Content: simOutputString(it.Output)})
		}
		if model && !inTurn {
			in.ModelTurns++
		}
		inTurn = model
	}
	for _, id := range callOrder {
		if !answered[id] {
			return nil, simInvalid("No tool output found for function call "+id+".", "input", "")
		}
	}
	readChoices(body, in)
	return in, nil
}

func simOneOf(s string, values []string) bool {
	for _, v := range values {
		if s == v {
			return true
		}
	}
	return false
}

// simOutputString is a function_call_output's output as text: the string,
// or its input_text parts joined.
func simOutputString(raw json.RawMessage) string {
	if simKind(raw) == "string" {
		return simString(raw)
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "input_text" {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}
