package anthropic

import (
	"encoding/base64"
	"encoding/json"
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
	return `{"model":` + adapters.JSONString(st.model) + `,"id":` + adapters.JSONString(st.id) +
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
				`,"delta":{"type":"`+typ+`","`+key+`":`+adapters.JSONString(value)+`}}`)
		}
		switch b.kind {
		case adapters.KindReasoning:
			out = append(out, ev("content_block_start", adapters.PhaseStart, start+`{"type":"thinking","thinking":"","signature":""}}`))
		case adapters.KindToolCall:
			out = append(out, ev("content_block_start", adapters.PhaseStart, start+`{"type":"tool_use","id":`+adapters.JSONString(b.id)+`,"name":`+adapters.JSONString(b.name)+`,"input":{}}}`))
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
		ev("message_delta", adapters.PhaseTerminal, `{"type":"message_delta","delta":{"stop_reason":`+adapters.JSONString(st.stopReason)+
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
			c.WriteString(`{"type":"thinking","thinking":` + adapters.JSONString(b.text) + `,"signature":` + adapters.JSONString(b.signature) + `}`)
		case adapters.KindToolCall:
			c.WriteString(`{"type":"tool_use","id":` + adapters.JSONString(b.id) + `,"name":` + adapters.JSONString(b.name) + `,"input":` + bodyInput(b.text) + `}`)
		default:
			c.WriteString(`{"type":"text","text":` + adapters.JSONString(b.text) + `}`)
		}
	}
	c.WriteByte(']')
	return []byte(st.message(c.String(), adapters.JSONString(st.stopReason), st.stopDetails, st.usage(false)))
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
	s := `{"type":"error","error":{"type":` + adapters.JSONString(typ) + `,"message":` + adapters.JSONString(message) + `}`
	if requestID != "" {
		s += `,"request_id":` + adapters.JSONString(requestID)
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
