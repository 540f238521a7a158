package anthropic

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/modelwire/modelwire/adapters"
)

// This file is the simulator's side of the Messages API (adapters.Simulated):
// checking a request as api.anthropic.com does, and writing a scripted
// model turn as its exact bytes.
//
// Byte shapes, and where they come from:
//   - the stream: message_start → content_block_start of the first block →
//     ping → that block's deltas → content_block_stop → the other blocks →
//     message_delta → message_stop (ANT-DOC-STREAM's example; the recorded
//     live streams in vercel/ai packages/anthropic/src/__fixtures__, e.g.
//     anthropic-text.chunks.txt and anthropic-claude-sonnet-5-reasoning-*.chunks.txt).
//     Every payload is compact JSON except ping, which the API sends as
//     {"type": "ping"} with a space (the raw sonnet-5 recordings; proxies
//     that re-create Anthropic's pings copy it byte for byte).
//   - message keys in the API's order: model, id, type, role, content,
//     stop_reason, stop_sequence, stop_details, usage; usage with the cache
//     counts, cache_creation, service_tier and inference_geo (same
//     recordings; anthropic-sdk-go v2 Usage).
//   - message_delta usage is cumulative and repeats the input counts
//     (recordings; protocols.md §3.4), with output_tokens_details when the
//     turn thought.
//   - a tool_use block's first input_json_delta is "" (protocols.md §3.4,
//     recordings); a thinking block ends with one signature_delta.
//   - errors: {"type":"error","error":{"type","message"},"request_id"} with
//     a request-id header (protocols.md §6.1, ANT-DOC-ERR); after a 200,
//     event: error with {"type":"error","error":{…}} (§6.3).

var _ adapters.Simulated = protocol{}

// defaultSimModel answers requests that name no model (the simulator
// normally passes the request's own).
const defaultSimModel = "claude-sonnet-4-5-20250929"

// organizationID is the anthropic-organization-id the simulator reports.
const organizationID = "0c5f7e52-9a1d-4c3b-8e6f-2d4a7b9c1e30"

// ---- ids ----------------------------------------------------------------

// base58 is the alphabet of Anthropic's ids (msg_01…, toolu_01…, req_011C…:
// no 0, O, I or l after the fixed prefix in any id seen).
const base58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"

// enc58 writes n base58 digits of w (11 digits hold any uint64 exactly).
func enc58(b *strings.Builder, w uint64, n int) {
	var d [11]byte
	for i := n - 1; i >= 0; i-- {
		d[i] = base58[w%58]
		w /= 58
	}
	b.Write(d[:n])
}

// simID is prefix + 22 base58 characters from the seed and salt: the first
// 11 encode a bijection of the seed, so two seeds never share an id.
func simID(prefix string, seed, salt uint64) string {
	var b strings.Builder
	b.WriteString(prefix)
	enc58(&b, adapters.SimWord(seed, salt), 11)
	enc58(&b, adapters.SimWord(seed, salt^0xa5a5a5a5a5a5a5a5), 11)
	return b.String()
}

// Salts: one per kind of id, calls numbered from it.
const (
	saltMessage   = 0x6d7367   // "msg"
	saltTool      = 0x746f6f6c // "tool" + call index
	saltSignature = 0x736967   // "sig" + block index
)

// requestSeq numbers request ids (they are per HTTP response, not part of
// the rendered turn, so they need not follow the seed).
var (
	requestSeq   atomic.Uint64
	requestEpoch = uint64(time.Now().UnixNano())
)

// newRequestID is a fresh request id, req_011C… as the API's are.
func newRequestID() string {
	var b strings.Builder
	b.WriteString("req_011C")
	n := requestSeq.Add(1)
	enc58(&b, adapters.SimWord(requestEpoch, n), 11)
	enc58(&b, adapters.SimWord(n, requestEpoch), 9)
	return b.String()
}

// signature is an opaque thinking signature: base64 of a protobuf-like
// frame, as real signatures are (they start "Eq…"/"Er…").
func signature(seed uint64, block int) string {
	// Field 2, length 164 (varint A4 01): base64 "EqQB…", like real ones.
	raw := append(make([]byte, 0, 3+164), 0x12, 0xa4, 0x01)
	for i := uint64(0); len(raw) < cap(raw); i++ {
		w := adapters.SimWord(seed, saltSignature+uint64(block)<<16+i)
		for k := 0; k < 8 && len(raw) < cap(raw); k++ {
			raw = append(raw, byte(w>>(8*k)))
		}
	}
	return base64.StdEncoding.EncodeToString(raw)
}

// ---- rendering a turn -----------------------------------------------------

type simBlock struct {
	kind      adapters.ItemKind // message (text), reasoning (thinking), tool_call (tool_use)
	text      string            // text, thinking, or the exact argument text
	id, name  string
	signature string
}

type simTurn struct {
	model, id   string
	blocks      []simBlock
	stopReason  string
	stopDetails string // raw JSON
	in, cacheW  int64  // input_tokens (without cache), cache_creation_input_tokens
	cacheR, out int64
	thinking    *int64 // output_tokens_details.thinking_tokens
}

// stopReasonFor is the API's stop_reason for a canonical stop.
func stopReasonFor(s adapters.StopReason) string {
	switch s {
	case adapters.StopToolCall:
		return "tool_use"
	case adapters.StopTruncated:
		return "max_tokens"
	case adapters.StopRefusal:
		return "refusal"
	case adapters.StopPause:
		return "pause_turn"
	case adapters.StopStopSequence:
		return "stop_sequence"
	}
	return "end_turn"
}

func render(t adapters.ModelTurn, o adapters.ResponseOptions) simTurn {
	st := simTurn{model: o.Model, id: simID("msg_01", o.Seed, saltMessage), stopReason: stopReasonFor(t.Stop), stopDetails: "null"}
	if st.model == "" {
		st.model = defaultSimModel
	}
	if t.Stop == adapters.StopRefusal {
		// No named policy category for a scripted refusal: both null, as
		// the SDK documents for such refusals.
		st.stopDetails = `{"type":"refusal","category":null,"explanation":null}`
	}
	calls := uint64(0)
	var outChars int
	for _, it := range t.Items {
		b := simBlock{kind: it.Kind, text: it.Text}
		switch it.Kind {
		case adapters.KindReasoning:
			b.signature = it.Signature
			if b.signature == "" || strings.HasPrefix(b.signature, RedactedPrefix) {
				b.signature = signature(o.Seed, len(st.blocks))
			}
		case adapters.KindToolCall:
			b.id, b.name = it.CallID, it.Name
			if b.id == "" {
				b.id = simID("toolu_01", o.Seed, saltTool+calls<<16)
			}
			calls++
			b.text = adapters.ArgumentText(it.Arguments)
		case adapters.KindMessage, adapters.KindRefusal:
			// Anthropic has no refusal block: a refusal is text, and the
			// stop_reason says it (protocols.md §3.3).
			b.kind = adapters.KindMessage
			if b.text == "" {
				continue
			}
		default:
			continue
		}
		outChars += utf8.RuneCountInString(b.text)
		st.blocks = append(st.blocks, b)
	}
	u := t.Usage
	val := func(p *int64) int64 {
		if p == nil {
			return 0
		}
		return max(0, *p)
	}
	st.cacheR, st.cacheW = val(u.CacheReadTokens), val(u.CacheWriteTokens)
	// Anthropic's input_tokens excludes both cache counts (§3.3); the
	// script's input is every token read.
	st.in = max(0, val(u.InputTokens)-st.cacheR-st.cacheW)
	if u.OutputTokens != nil {
		st.out = val(u.OutputTokens)
	} else {
		st.out = int64(outChars/2 + 1)
	}
	if u.ReasoningTokens != nil {
		r := val(u.ReasoningTokens)
		st.thinking = &r
	}
	return st
}

// jsonText is s as a JSON string, UTF-8 left as is and no HTML escaping
// (the API writes raw UTF-8: 中文 arrives as 中文).
func jsonText(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

func i64(n int64) string { return strconv.FormatInt(n, 10) }

func (st simTurn) cacheCreation() string {
	return `{"ephemeral_5m_input_tokens":` + i64(st.cacheW) + `,"ephemeral_1h_input_tokens":0}`
}

// usage is the Usage object of message_start (output 1) and of the body
// (final counts).
func (st simTurn) usage(start bool) string {
	out := st.out
	if start {
		out = 1
	}
	s := `{"input_tokens":` + i64(st.in) + `,"cache_creation_input_tokens":` + i64(st.cacheW) +
		`,"cache_read_input_tokens":` + i64(st.cacheR) + `,"cache_creation":` + st.cacheCreation() +
		`,"output_tokens":` + i64(out)
	if !start && st.thinking != nil {
		s += `,"output_tokens_details":{"thinking_tokens":` + i64(*st.thinking) + `}`
	}
	return s + `,"service_tier":"standard","inference_geo":"not_available"}`
}

// deltaUsage is message_delta's cumulative usage.
func (st simTurn) deltaUsage() string {
	s := `{"input_tokens":` + i64(st.in) + `,"cache_creation_input_tokens":` + i64(st.cacheW) +
		`,"cache_read_input_tokens":` + i64(st.cacheR) + `,"output_tokens":` + i64(st.out)
	if st.thinking != nil {
		s += `,"output_tokens_details":{"thinking_tokens":` + i64(*st.thinking) + `}`
	}
	return s + "}"
}

// message is the Message object; content is raw JSON.
func (st simTurn) message(content, stopReason, stopDetails, usage string) string {
	return `{"model":` + jsonText(st.model) + `,"id":` + jsonText(st.id) +
		`,"type":"message","role":"assistant","content":` + content +
		`,"stop_reason":` + stopReason + `,"stop_sequence":null,"stop_details":` + stopDetails +
		`,"usage":` + usage + `}`
}

// ---- Simulated --------------------------------------------------------------

// StreamEvents renders a turn as the API's stream (see the top of the file).
func (protocol) StreamEvents(t adapters.ModelTurn, o adapters.ResponseOptions) []adapters.WireEvent {
	st := render(t, o)
	frag := o.Fragment
	if frag == nil {
		frag = adapters.Fragments
	}
	ev := func(name string, ph adapters.Phase, data string) adapters.WireEvent {
		return adapters.WireEvent{Event: name, Data: data, Phase: ph}
	}
	ping := ev("ping", adapters.PhaseOther, `{"type": "ping"}`)
	out := []adapters.WireEvent{ev("message_start", adapters.PhaseStart,
		`{"type":"message_start","message":`+st.message("[]", "null", "null", st.usage(true))+`}`)}
	if len(st.blocks) == 0 {
		out = append(out, ping)
	}
	for i, b := range st.blocks {
		idx := strconv.Itoa(i)
		start := `{"type":"content_block_start","index":` + idx + `,"content_block":`
		delta := func(ph adapters.Phase, typ, key, value string) adapters.WireEvent {
			return ev("content_block_delta", ph, `{"type":"content_block_delta","index":`+idx+
				`,"delta":{"type":"`+typ+`","`+key+`":`+jsonText(value)+`}}`)
		}
		switch b.kind {
		case adapters.KindReasoning:
			out = append(out, ev("content_block_start", adapters.PhaseStart, start+`{"type":"thinking","thinking":"","signature":""}}`))
		case adapters.KindToolCall:
			out = append(out, ev("content_block_start", adapters.PhaseStart, start+`{"type":"tool_use","id":`+jsonText(b.id)+`,"name":`+jsonText(b.name)+`,"input":{}}}`))
		default:
			out = append(out, ev("content_block_start", adapters.PhaseStart, start+`{"type":"text","text":""}}`))
		}
		if i == 0 {
			out = append(out, ping)
		}
		switch b.kind {
		case adapters.KindReasoning:
			for _, f := range frag(b.text) {
				out = append(out, delta(adapters.PhaseReasoning, "thinking_delta", "thinking", f))
			}
			// The signature is not reasoning text: PhaseOther, so that no
			// fault duplicates it into a signature the API would reject.
			out = append(out, delta(adapters.PhaseOther, "signature_delta", "signature", b.signature))
		case adapters.KindToolCall:
			out = append(out, delta(adapters.PhaseArgs, "input_json_delta", "partial_json", ""))
			for _, f := range frag(b.text) {
				out = append(out, delta(adapters.PhaseArgs, "input_json_delta", "partial_json", f))
			}
		default:
			for _, f := range frag(b.text) {
				out = append(out, delta(adapters.PhaseText, "text_delta", "text", f))
			}
		}
		out = append(out, ev("content_block_stop", adapters.PhaseItemDone, `{"type":"content_block_stop","index":`+idx+`}`))
	}
	// message_delta carries the stop_reason: with message_stop it is the
	// terminal (without it a client has no stop reason at all).
	out = append(out,
		ev("message_delta", adapters.PhaseTerminal, `{"type":"message_delta","delta":{"stop_reason":`+jsonText(st.stopReason)+
			`,"stop_sequence":null,"stop_details":`+st.stopDetails+`},"usage":`+st.deltaUsage()+`}`),
		ev("message_stop", adapters.PhaseTerminal, `{"type":"message_stop"}`))
	return out
}

// Body renders a turn as the API's Message object: the same id, blocks and
// call ids as StreamEvents for the same seed.
func (protocol) Body(t adapters.ModelTurn, o adapters.ResponseOptions) []byte {
	st := render(t, o)
	var c strings.Builder
	c.WriteByte('[')
	for i, b := range st.blocks {
		if i > 0 {
			c.WriteByte(',')
		}
		switch b.kind {
		case adapters.KindReasoning:
			c.WriteString(`{"type":"thinking","thinking":` + jsonText(b.text) + `,"signature":` + jsonText(b.signature) + `}`)
		case adapters.KindToolCall:
			c.WriteString(`{"type":"tool_use","id":` + jsonText(b.id) + `,"name":` + jsonText(b.name) + `,"input":` + bodyInput(b.text) + `}`)
		default:
			c.WriteString(`{"type":"text","text":` + jsonText(b.text) + `}`)
		}
	}
	c.WriteByte(']')
	return []byte(st.message(c.String(), jsonText(st.stopReason), st.stopDetails, st.usage(false)))
}

// bodyInput is a tool_use block's input: the arguments when they are a JSON
// object (compacted), else {} — a body cannot carry a cut argument text.
func bodyInput(args string) string {
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(args), &m) != nil || m == nil {
		return "{}"
	}
	raw, err := adapters.MarshalBody(json.RawMessage(args))
	if err != nil {
		return "{}"
	}
	return string(raw)
}

// ResponseID is the message id.
func (protocol) ResponseID(o adapters.ResponseOptions) string {
	return simID("msg_01", o.Seed, saltMessage)
}

// ResponseHeaders are a successful response's headers: request-id (the SDK
// keeps it as RequestID), the organization and the rate-limit counters
// (protocols.md §3.1, §6.4; resets are RFC 3339).
func (protocol) ResponseHeaders(stream bool) http.Header {
	h := http.Header{}
	h.Set("request-id", newRequestID())
	h.Set("anthropic-organization-id", organizationID)
	reset := time.Now().UTC().Add(time.Second).Format(time.RFC3339)
	for _, l := range []struct {
		name         string
		limit, spent int
	}{{"requests", 4000, 1}, {"input-tokens", 2000000, 2000}, {"output-tokens", 400000, 0}, {"tokens", 2400000, 2000}} {
		h.Set("anthropic-ratelimit-"+l.name+"-limit", strconv.Itoa(l.limit))
		h.Set("anthropic-ratelimit-"+l.name+"-remaining", strconv.Itoa(l.limit-l.spent))
		h.Set("anthropic-ratelimit-"+l.name+"-reset", reset)
	}
	return h
}

// LineEnd: the API ends SSE lines with \n.
func (protocol) LineEnd() string { return "\n" }

// errorType maps the simulator's fault kinds (and Anthropic's own names) to
// error.type and the status it goes with (protocols.md §6.2).
func errorType(status int, kind string) (string, int) {
	switch kind {
	case "rate_limit", "rate_limit_error":
		return "rate_limit_error", 429
	case "server_error", "api_error":
		return "api_error", 500
	case "overloaded", "overloaded_error":
		return "overloaded_error", 529
	case "invalid_request_error", "invalid_request":
		return "invalid_request_error", 400
	case "request_too_large":
		return "request_too_large", 413
	case "authentication_error":
		return kind, 401
	case "billing_error":
		return kind, 402
	case "permission_error":
		return kind, 403
	case "not_found_error":
		return kind, 404
	case "timeout_error":
		return kind, 504
	}
	if t := errorTypeForStatus(status); t != "" {
		return t, status
	}
	return "api_error", 500
}

func errorBody(typ, message, requestID string) []byte {
	s := `{"type":"error","error":{"type":` + jsonText(typ) + `,"message":` + jsonText(message) + `}`
	if requestID != "" {
		s += `,"request_id":` + jsonText(requestID)
	}
	return []byte(s + "}")
}

// ErrorResponse is the API's HTTP error: the error body with request_id and
// the same id in the request-id header. The status is the caller's (the
// kind's own when it is 0); Retry-After is the caller's to set (the sim
// server sets it on its 429).
func (protocol) ErrorResponse(status int, kind, message string) *adapters.SimError {
	typ, def := errorType(status, kind)
	if status == 0 {
		status = def
	}
	rid := newRequestID()
	h := http.Header{}
	h.Set("request-id", rid)
	return &adapters.SimError{Status: status, Header: h, Body: errorBody(typ, message, rid)}
}

// ErrorEvent is the in-stream error after a 200: event: error with
// {"type":"error","error":{…}} (protocols.md §3.4, §6.3). It ends the
// stream, so it is a terminal event.
func (protocol) ErrorEvent(kind, message string) []adapters.WireEvent {
	typ, _ := errorType(0, kind)
	return []adapters.WireEvent{{Event: "error", Data: string(errorBody(typ, message, "")), Phase: adapters.PhaseTerminal}}
}

// UnknownEvent is an event type the API does not define (yet): well formed,
// its JSON type equal to its event name, as the docs say new types will be
// ("your code should handle unknown event types gracefully").
func (protocol) UnknownEvent() adapters.WireEvent {
	return adapters.WireEvent{Event: "message_progress", Data: `{"type":"message_progress","progress":{"output_tokens":8}}`, Phase: adapters.PhaseOther}
}

// ---- CheckRequest -------------------------------------------------------------

func invalid(format string, args ...any) *adapters.SimError {
	return protocol{}.ErrorResponse(400, "invalid_request_error", fmt.Sprintf(format, args...))
}

// jsonKind is the JSON type of a raw value: string, number, bool, null,
// array or object ("" when absent).
func jsonKind(raw json.RawMessage) string {
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
		return "bool"
	case 'n':
		return "null"
	}
	return "number"
}

// present: the field is there and not null (the API treats null optional
// fields as unset).
func present(raw json.RawMessage) bool {
	k := jsonKind(raw)
	return k != "" && k != "null"
}

// notJSON is the API's message for a body that does not parse: its parser's
// reason and position, as "The request body is not valid JSON: <reason>:
// line L column C (char N)" (the form seen in real 400s).
func notJSON(body []byte, err error) *adapters.SimError {
	reason, at := "unexpected character", 0
	var se *json.SyntaxError
	switch {
	case len(strings.TrimSpace(string(body))) == 0:
		reason = "Input is a zero-length, empty document"
	case errors.As(err, &se):
		at = max(0, int(se.Offset)-1)
		switch {
		case strings.Contains(se.Error(), "unexpected end"):
			reason, at = "unexpected end of data", len(body)
		case strings.Contains(se.Error(), "after top-level value"):
			reason = "unexpected content after document"
		}
	}
	at = min(at, len(body))
	prefix := string(body[:at])
	line := strings.Count(prefix, "\n") + 1
	col := utf8.RuneCountInString(prefix[strings.LastIndexByte(prefix, '\n')+1:]) + 1
	return invalid("The request body is not valid JSON: %s: line %d column %d (char %d)", reason, line, col, utf8.RuneCountInString(prefix))
}

type simMessage struct {
	Role    json.RawMessage `json:"role"`
	Content json.RawMessage `json:"content"`
}

type simBlockIn struct {
	Type      json.RawMessage `json:"type"`
	Text      json.RawMessage `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	ToolUseID json.RawMessage `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

// CheckRequest checks a request as POST /v1/messages does: the
// anthropic-version header (any value: the SDK sends its own date, curl
// users 2023-06-01), JSON, the required model/max_tokens/messages, field
// types and ranges, roles (no "system" message), tool_result/tool_use
// pairing and the thinking constraints, each with the API's own message.
// Any API key, or none, is accepted.
func (protocol) CheckRequest(method, path string, h http.Header, body []byte) (*adapters.Inbound, *adapters.SimError) {
	if p, _, _ := strings.Cut(path, "?"); method != http.MethodPost || p != Path {
		return nil, protocol{}.ErrorResponse(404, "not_found_error", "Not Found")
	}
	if strings.TrimSpace(h.Get("anthropic-version")) == "" {
		return nil, invalid("anthropic-version: header is required")
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) || json.Valid(body) {
			return nil, invalid("Input should be a valid dictionary or object to extract fields from")
		}
		return nil, notJSON(body, err)
	}
	if top == nil {
		return nil, invalid("Input should be a valid dictionary or object to extract fields from")
	}
	in := &adapters.Inbound{}

	// model
	switch jsonKind(top["model"]) {
	case "":
		return nil, invalid("model: Field required")
	case "string":
		_ = json.Unmarshal(top["model"], &in.Model)
	default:
		return nil, invalid("model: Input should be a valid string")
	}

	// max_tokens
	if jsonKind(top["max_tokens"]) == "" {
		return nil, invalid("max_tokens: Field required")
	}
	maxTokens, ok := integer(top["max_tokens"])
	if !ok {
		return nil, invalid("max_tokens: Input should be a valid integer")
	}
	if maxTokens < 1 {
		return nil, invalid("max_tokens: Input should be greater than or equal to 1")
	}
	in.MaxOutputTokens = int(min(maxTokens, math.MaxInt32))

	// stream
	if raw := top["stream"]; present(raw) {
		if jsonKind(raw) != "bool" {
			return nil, invalid("stream: Input should be a valid boolean")
		}
		_ = json.Unmarshal(raw, &in.Stream)
	}

	// sampling
	var temperature *float64
	for _, name := range []string{"temperature", "top_p"} {
		raw := top[name]
		if !present(raw) {
			continue
		}
		var f float64
		if jsonKind(raw) != "number" || json.Unmarshal(raw, &f) != nil {
			return nil, invalid("%s: Input should be a valid number", name)
		}
		if f < 0 {
			return nil, invalid("%s: Input should be greater than or equal to 0", name)
		}
		if f > 1 {
			return nil, invalid("%s: Input should be less than or equal to 1", name)
		}
		if name == "temperature" {
			temperature = &f
		}
	}

	// system: a string or a list of text blocks.
	if raw := top["system"]; present(raw) {
		switch jsonKind(raw) {
		case "string":
		case "array":
			var blocks []map[string]json.RawMessage
			if json.Unmarshal(raw, &blocks) != nil {
				return nil, invalid("system: Input should be a valid list")
			}
			for i, b := range blocks {
				if t := jsonString(b["type"]); t != "text" {
					return nil, invalid("system.%d.type: Input should be 'text'", i)
				}
				if jsonKind(b["text"]) != "string" {
					return nil, invalid("system.%d.text: Field required", i)
				}
			}
		default:
			return nil, invalid("system: Input should be a valid string")
		}
	}

	// tools: the names offered.
	if raw := top["tools"]; present(raw) {
		var tools []map[string]json.RawMessage
		if jsonKind(raw) != "array" || json.Unmarshal(raw, &tools) != nil {
			return nil, invalid("tools: Input should be a valid list")
		}
		for i, t := range tools {
			if t == nil {
				return nil, invalid("tools.%d: Input should be a valid dictionary or object to extract fields from", i)
			}
			name := jsonString(t["name"])
			if name == "" {
				return nil, invalid("tools.%d.name: Field required", i)
			}
			in.Tools = append(in.Tools, name)
		}
	}

	// thinking and its constraints.
	var thinking struct {
		Type   string          `json:"type"`
		Budget json.RawMessage `json:"budget_tokens"`
	}
	if raw := top["thinking"]; present(raw) {
		if jsonKind(raw) != "object" || json.Unmarshal(raw, &thinking) != nil {
			return nil, invalid("thinking: Input should be a valid dictionary or object to extract fields from")
		}
		switch thinking.Type {
		case "enabled":
			if jsonKind(thinking.Budget) == "" {
				return nil, invalid("thinking.enabled.budget_tokens: Field required")
			}
			budget, ok := integer(thinking.Budget)
			if !ok {
				return nil, invalid("thinking.enabled.budget_tokens: Input should be a valid integer")
			}
			if budget < 1024 {
				return nil, invalid("thinking.enabled.budget_tokens: Input should be greater than or equal to 1024")
			}
			if budget >= maxTokens {
				return nil, invalid("`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size")
			}
		case "disabled", "adaptive":
		default:
			return nil, invalid("thinking: Input tag '%s' found using 'type' does not match any of the expected tags: 'adaptive', 'disabled', 'enabled'", thinking.Type)
		}
	}
	if on := thinking.Type == "enabled" || thinking.Type == "adaptive"; on {
		var tc struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal(top["tool_choice"], &tc)
		if tc.Type == "any" || tc.Type == "tool" {
			return nil, invalid("Thinking may not be enabled when tool_choice forces tool use.")
		}
		if temperature != nil && *temperature != 1 {
			return nil, invalid("`temperature` may only be set to 1 when thinking is enabled. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#feature-compatibility")
		}
	}

	// messages
	switch jsonKind(top["messages"]) {
	case "":
		return nil, invalid("messages: Field required")
	case "array":
	default:
		return nil, invalid("messages: Input should be a valid list")
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(top["messages"], &raws); err != nil {
		return nil, invalid("messages: Input should be a valid list")
	}
	if len(raws) == 0 {
		return nil, invalid("messages: at least one message is required")
	}
	msgs := make([]simMessage, len(raws))
	roles := make([]string, len(raws))
	blocks := make([][]simBlockIn, len(raws))
	for i, raw := range raws {
		if jsonKind(raw) != "object" || json.Unmarshal(raw, &msgs[i]) != nil {
			return nil, invalid("messages.%d: Input should be a valid dictionary or object to extract fields from", i)
		}
		m := msgs[i]
		switch jsonKind(m.Role) {
		case "":
			return nil, invalid("messages.%d.role: Field required", i)
		case "string":
			roles[i] = jsonString(m.Role)
		}
		switch roles[i] {
		case "user", "assistant":
		case "system":
			return nil, invalid(`messages: Unexpected role "system". The Messages API accepts a top-level ` + "`system`" + ` parameter, not "system" as an input message role.`)
		default:
			return nil, invalid("messages.%d.role: Input should be 'user' or 'assistant'", i)
		}
		finalAssistant := i == len(raws)-1 && roles[i] == "assistant"
		switch jsonKind(m.Content) {
		case "":
			return nil, invalid("messages.%d.content: Field required", i)
		case "string":
			text := jsonString(m.Content)
			if text == "" && !finalAssistant {
				return nil, invalid("messages: text content blocks must be non-empty")
			}
			if strings.TrimSpace(text) == "" && text != "" && !finalAssistant {
				return nil, invalid("messages: text content blocks must contain non-whitespace text")
			}
			blocks[i] = []simBlockIn{{Type: json.RawMessage(`"text"`), Text: m.Content}}
		case "array":
			var items []json.RawMessage
			_ = json.Unmarshal(m.Content, &items)
			if len(items) == 0 && !finalAssistant {
				return nil, invalid("messages.%d: all messages must have non-empty content except for the optional final assistant message", i)
			}
			for j, item := range items {
				var b simBlockIn
				if jsonKind(item) != "object" || json.Unmarshal(item, &b) != nil {
					return nil, invalid("messages.%d.content.%d: Input should be a valid dictionary or object to extract fields from", i, j)
				}
				if jsonKind(b.Type) == "" {
					return nil, invalid("messages.%d.content.%d.type: Field required", i, j)
				}
				switch jsonString(b.Type) {
				case "text":
					if jsonKind(b.Text) != "string" {
						return nil, invalid("messages.%d.content.%d.text: Input should be a valid string", i, j)
					}
					text := jsonString(b.Text)
					if text == "" {
						return nil, invalid("messages: text content blocks must be non-empty")
					}
					if strings.TrimSpace(text) == "" && !finalAssistant {
						return nil, invalid("messages: text content blocks must contain non-whitespace text")
					}
				case "tool_use":
					if b.ID == "" {
						return nil, invalid("messages.%d.content.%d.id: Field required", i, j)
					}
					if b.Name == "" {
						return nil, invalid("messages.%d.content.%d.name: Field required", i, j)
					}
				case "tool_result":
					if jsonKind(b.ToolUseID) != "string" {
						return nil, invalid("messages.%d.content.%d.tool_use_id: Field required", i, j)
					}
				}
				blocks[i] = append(blocks[i], b)
			}
		default:
			return nil, invalid("messages.%d.content: Input should be a valid list", i)
		}
	}

	// Pairing: every tool_use of an assistant turn needs its tool_result in
	// the next (user) message, and a tool_result needs its tool_use in the
	// assistant turn right before it. Consecutive messages of one role are
	// one turn, as the API merges them.
	names := map[string]string{}
	for i := 0; i < len(raws); {
		j := i
		for j < len(raws) && roles[j] == roles[i] {
			j++
		}
		if roles[i] == "assistant" {
			// Messages i..j-1 are one model turn; j, if any, answers it.
			if j < len(raws) {
				in.ModelTurns++
			}
			var ids []string
			firstAt := -1
			for k := i; k < j; k++ {
				for _, b := range blocks[k] {
					if jsonString(b.Type) == "tool_use" {
						ids = append(ids, b.ID)
						names[b.ID] = b.Name
						if firstAt < 0 {
							firstAt = k
						}
					}
				}
			}
			if len(ids) > 0 && j < len(raws) {
				answered := map[string]bool{}
				for _, b := range blocks[j] {
					if jsonString(b.Type) == "tool_result" {
						answered[jsonString(b.ToolUseID)] = true
					}
				}
				var missing []string
				for _, id := range ids {
					if !answered[id] {
						missing = append(missing, id)
					}
				}
				if len(missing) > 0 {
					return nil, invalid("messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after: %s. Each `tool_use` block must have a corresponding `tool_result` block in the next message.", firstAt, strings.Join(missing, ", "))
				}
			}
		} else {
			// User messages i..j-1: their tool_results answer the assistant
			// turn right before (the first user message only).
			prev := map[string]bool{}
			for k := i - 1; k >= 0 && roles[k] == "assistant"; k-- {
				for _, b := range blocks[k] {
					if jsonString(b.Type) == "tool_use" {
						prev[b.ID] = true
					}
				}
			}
			for k := i; k < j; k++ {
				for n, b := range blocks[k] {
					if jsonString(b.Type) != "tool_result" {
						continue
					}
					id := jsonString(b.ToolUseID)
					if k != i || !prev[id] {
						return nil, invalid("messages.%d.content.%d: unexpected `tool_use_id` found in `tool_result` blocks: %s. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.", k, n, id)
					}
					in.Results = append(in.Results, adapters.ToolResult{CallID: id, Name: names[id], Content: resultText(b.Content), IsError: b.IsError})
				}
			}
		}
		i = j
	}
	readChoices(body, in)
	return in, nil
}

// integer reads a JSON integer (1024 or 1024.0, not "1024").
func integer(raw json.RawMessage) (int64, bool) {
	if jsonKind(raw) != "number" {
		return 0, false
	}
	var f float64
	if json.Unmarshal(raw, &f) != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, false
	}
	return int64(f), true
}

// jsonString is a raw JSON string's value ("" for anything else).
func jsonString(raw json.RawMessage) string {
	var s string
	if jsonKind(raw) != "string" || json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// resultText is a tool_result's content as text: the string, or its text
// blocks joined.
func resultText(raw json.RawMessage) string {
	switch jsonKind(raw) {
	case "string":
		return jsonString(raw)
	case "array":
		var parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		_ = json.Unmarshal(raw, &parts)
		var b strings.Builder
		for _, p := range parts {
			if p.Type == "text" {
				b.WriteString(p.Text)
			}
		}
		return b.String()
	}
	return ""
}
