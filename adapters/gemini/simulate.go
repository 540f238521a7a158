package gemini

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"github.com/modelwire/modelwire/adapters"
)

// This file is the simulator's side of the Gemini API (adapters.Simulated):
// checking a request as generativelanguage.googleapis.com does, and writing
// a scripted model turn as its exact bytes.
//
// Byte shapes, and where they come from (the captures in testdata follow
// the same sources; SOURCES.md):
//   - the stream is data-only SSE framed with CRLF, no event names, no
//     [DONE] (protocols.md §4.1; go-genai api_client.go splits on
//     "\r\n\r\n"). go-genai fails on any block whose first field is not
//     data (a comment, id:, event:), so nothing else is ever written.
//   - every chunk is a whole GenerateContentResponse printed in Google's
//     one-line style ("key": value, no space after commas): candidates[0]
//     with content {parts, role:"model"} and index 0, usageMetadata,
//     modelVersion and responseId on every chunk (refund_turn3.sse,
//     thinking.sse). Text and thought parts are increments; thought parts
//     carry "thought": true after the text.
//   - the function calls of a turn arrive whole, args as an object, all in
//     one chunk (parallel_calls.sse, refund_turn2.sse), the
//     thoughtSignature on the first functionCall part only (GEM-DOC-SIG).
//     No functionCall id is sent: the Gemini Developer API does not send
//     one for gemini-2.x models (the captures; go-genai documents id as
//     optional), this package's decoder numbers such calls
//     (SyntheticCallIDPrefix) and its encoder sends no id back, so Gemini
//     matches results by order and name — the loop stays consistent.
//   - the last chunk is an empty text part carrying finishReason and the
//     full usageMetadata (candidatesTokenCount, thoughtsTokenCount); the
//     chunks before it carry the prompt counts only (refund_turn3.sse).
//     A text turn that thought ends with its thoughtSignature on that empty
//     part (thinking.sse, pydantic/pydantic-ai#3481). Keeping the last
//     chunk content-free lets the no-terminal fault drop it without losing
//     output.
//   - a refusal is finishReason SAFETY on a candidate without content, with
//     safetyRatings (refusal.sse; go-genai FinishReasonSafety: "content is
//     empty if content filters blocks the output"); Gemini has no refusal
//     part, so the scripted refusal text is not sent.
//   - the non-streaming body is the same response in one piece,
//     pretty-printed with two-space indentation (refund_turn*.body.json).
//   - errors: {"error":{"code","message","status","details"?}} with the
//     google.rpc status names (protocols.md §6.1-6.2; the .error.json
//     captures); an in-stream error is a data chunk holding that object
//     (error_event.sse).

var _ adapters.Simulated = Protocol{}

// simDefaultModel answers when no model was named (the simulator normally
// passes the one from the request path).
const simDefaultModel = "gemini-2.5-flash"

// ---- ids ----------------------------------------------------------------

const (
	simSaltResponse  = 0x72657370 // "resp"
	simSaltSignature = 0x736967   // "sig"
)

// simResponseID is a responseId as the API writes them: 23 characters of
// unpadded base64url (17 bytes). The first 8 bytes are a bijection of the
// seed, so two seeds never share one.
func simResponseID(seed uint64) string {
	var raw [17]byte
	binary.BigEndian.PutUint64(raw[0:], adapters.SimWord(seed, simSaltResponse))
	binary.BigEndian.PutUint64(raw[8:], adapters.SimWord(seed, simSaltResponse^0xa5a5a5a5a5a5a5a5))
	raw[16] = byte(adapters.SimWord(seed, simSaltResponse+1))
	return base64.RawURLEncoding.EncodeToString(raw[:])
}

// simSignature is an opaque thoughtSignature: standard base64 (go-genai
// decodes it as bytes) of a protobuf-like frame, field 1 with 189 bytes, as
// real signatures start "Cr…"/"Cs…".
func simSignature(seed uint64) string {
	const n = 192 // a multiple of 3: no padding
	raw := append(make([]byte, 0, n), 0x0a, 0xbd, 0x01)
	for i := uint64(0); len(raw) < n; i++ {
		w := adapters.SimWord(seed, simSaltSignature<<16+i)
		for k := 0; k < 8 && len(raw) < n; k++ {
			raw = append(raw, byte(w>>(8*k)))
		}
	}
	return base64.StdEncoding.EncodeToString(raw)
}

// ---- the wire objects, fields in the API's order ---------------------------

type simPart struct {
	Text             *string  `json:"text,omitempty"`
	Thought          bool     `json:"thought,omitempty"`
	FunctionCall     *simCall `json:"functionCall,omitempty"`
	ThoughtSignature string   `json:"thoughtSignature,omitempty"`
}

// simCall is a functionCall: name and args only (no id, see the top).
type simCall struct {
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

type simContent struct {
	Parts []simPart `json:"parts,omitempty"`
	Role  string    `json:"role"`
}

type simRating struct {
	Category    string `json:"category"`
	Probability string `json:"probability"`
	Blocked     bool   `json:"blocked,omitempty"`
}

type simCandidate struct {
	Content       *simContent `json:"content,omitempty"`
	FinishReason  string      `json:"finishReason,omitempty"`
	Index         int         `json:"index"`
	SafetyRatings []simRating `json:"safetyRatings,omitempty"`
}

type simModality struct {
	Modality   string `json:"modality"`
	TokenCount int64  `json:"tokenCount"`
}

// simUsage is usageMetadata; Google's JSON leaves out counters that are 0.
type simUsage struct {
	PromptTokenCount        int64         `json:"promptTokenCount,omitempty"`
	CandidatesTokenCount    int64         `json:"candidatesTokenCount,omitempty"`
	TotalTokenCount         int64         `json:"totalTokenCount,omitempty"`
	CachedContentTokenCount int64         `json:"cachedContentTokenCount,omitempty"`
	PromptTokensDetails     []simModality `json:"promptTokensDetails,omitempty"`
	CacheTokensDetails      []simModality `json:"cacheTokensDetails,omitempty"`
	ThoughtsTokenCount      int64         `json:"thoughtsTokenCount,omitempty"`
}

type simResponse struct {
	Candidates    []simCandidate `json:"candidates"`
	UsageMetadata *simUsage      `json:"usageMetadata,omitempty"`
	ModelVersion  string         `json:"modelVersion"`
	ResponseID    string         `json:"responseId"`
}

// simRatings are the safetyRatings of a blocked candidate (refusal.sse).
var simRatings = []simRating{
	{Category: "HARM_CATEGORY_DANGEROUS_CONTENT", Probability: "HIGH", Blocked: true},
	{Category: "HARM_CATEGORY_HARASSMENT", Probability: "NEGLIGIBLE"},
}

// simMarshal is compact JSON, UTF-8 and <>& left as they are.
func simMarshal(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// simStreamJSON prints v in the one-line style of Google's stream chunks: a
// space after each colon, none after commas.
func simStreamJSON(v any) string {
	compact := simMarshal(v)
	var b strings.Builder
	b.Grow(len(compact) + len(compact)/8)
	in, esc := false, false
	for _, c := range compact {
		b.WriteByte(c)
		switch {
		case esc:
			esc = false
		case in && c == '\\':
			esc = true
		case c == '"':
			in = !in
		case !in && c == ':':
			b.WriteByte(' ')
		}
	}
	return b.String()
}

// simPrettyJSON prints v as Google's bodies are: two-space indentation.
func simPrettyJSON(v any) []byte {
	var b bytes.Buffer
	_ = json.Indent(&b, simMarshal(v), "", "  ")
	b.WriteByte('\n')
	return b.Bytes()
}

// ---- rendering a turn -----------------------------------------------------

type simItem struct {
	kind adapters.ItemKind // reasoning, message or tool_call
	text string            // text, or the call's args (a JSON object)
	name string
}

type simTurn struct {
	model, id string
	items     []simItem
	finish    string
	hasCalls  bool
	thought   bool   // the turn has reasoning
	signature string // thoughtSignature of the turn
	prompt    int64
	cached    int64
	cands     int64
	thoughts  int64
}

// simFinish is the finishReason for a canonical stop.
func simFinish(s adapters.StopReason) string {
	switch s {
	case adapters.StopTruncated:
		return "MAX_TOKENS"
	case adapters.StopRefusal:
		return "SAFETY"
	}
	return "STOP" // final, tool_call, stop_sequence
}

// simArgs is a call's args as Gemini sends them: a JSON object, compact.
// Anything else (a cut or malformed argument text) cannot be sent: Gemini
// streams no partial calls.
func simArgs(args json.RawMessage) (string, bool) {
	if len(bytes.TrimSpace(args)) == 0 {
		return "{}", true
	}
	text := adapters.ArgumentText(args)
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(text), &m) != nil || m == nil {
		return "", false
	}
	var b bytes.Buffer
	if json.Compact(&b, []byte(text)) != nil {
		return "", false
	}
	return b.String(), true
}

func simRender(t adapters.ModelTurn, o adapters.ResponseOptions) simTurn {
	st := simTurn{model: strings.TrimPrefix(o.Model, "models/"), id: simResponseID(o.Seed), finish: simFinish(t.Stop), signature: simSignature(o.Seed)}
	if st.model == "" {
		st.model = simDefaultModel
	}
	outChars := 0
	for _, it := range t.Items {
		switch it.Kind {
		case adapters.KindReasoning:
			if it.Text == "" {
				continue
			}
			st.thought = true
			st.items = append(st.items, simItem{kind: it.Kind, text: it.Text})
		case adapters.KindMessage:
			if it.Text == "" {
				continue
			}
			st.items = append(st.items, simItem{kind: it.Kind, text: it.Text})
		case adapters.KindToolCall:
			args, ok := simArgs(it.Arguments)
			if !ok {
				continue
			}
			st.hasCalls = true
			st.items = append(st.items, simItem{kind: it.Kind, text: args, name: it.Name})
		default:
			// A refusal is the finishReason: Gemini has no refusal part.
			continue
		}
		outChars += utf8.RuneCountInString(st.items[len(st.items)-1].text)
	}
	val := func(p *int64) int64 {
		if p == nil {
			return 0
		}
		return max(0, *p)
	}
	u := t.Usage
	st.prompt, st.cached, st.thoughts = val(u.InputTokens), val(u.CacheReadTokens), val(u.ReasoningTokens)
	out := int64(outChars/2+1) + st.thoughts
	if u.OutputTokens != nil {
		out = val(u.OutputTokens)
	}
	st.cands = max(0, out-st.thoughts)
	return st
}

// usage is usageMetadata: the prompt counts on every chunk, the output
// counts on the last (final).
func (st simTurn) usage(final bool) *simUsage {
	u := &simUsage{PromptTokenCount: st.prompt, TotalTokenCount: st.prompt, CachedContentTokenCount: st.cached}
	if st.prompt > 0 {
		u.PromptTokensDetails = []simModality{{Modality: "TEXT", TokenCount: st.prompt}}
	}
	if st.cached > 0 {
		u.CacheTokensDetails = []simModality{{Modality: "TEXT", TokenCount: st.cached}}
	}
	if final {
		u.CandidatesTokenCount, u.ThoughtsTokenCount = st.cands, st.thoughts
		u.TotalTokenCount = st.prompt + st.cands + st.thoughts
	}
	return u
}

func (st simTurn) response(c simCandidate, final bool) simResponse {
	return simResponse{Candidates: []simCandidate{c}, UsageMetadata: st.usage(final), ModelVersion: st.model, ResponseID: st.id}
}

func simText(s string) *string { return &s }

// StreamEvents renders a turn as streamGenerateContent?alt=sse chunks (see
// the top of the file).
func (Protocol) StreamEvents(t adapters.ModelTurn, o adapters.ResponseOptions) []adapters.WireEvent {
	st := simRender(t, o)
	frag := o.Fragment
	if frag == nil {
		frag = adapters.Fragments
	}
	var out []adapters.WireEvent
	chunk := func(ph adapters.Phase, parts ...simPart) {
		c := simCandidate{Content: &simContent{Parts: parts, Role: "model"}}
		out = append(out, adapters.WireEvent{Data: simStreamJSON(st.response(c, false)), Phase: ph})
	}
	var calls []simPart
	flush := func() {
		if len(calls) > 0 {
			chunk(adapters.PhaseArgs, calls...)
			calls = nil
		}
	}
	signed := false
	for _, it := range st.items {
		switch it.kind {
		case adapters.KindToolCall:
			p := simPart{FunctionCall: &simCall{Name: it.name, Args: json.RawMessage(it.text)}}
			if !signed {
				p.ThoughtSignature, signed = st.signature, true
			}
			calls = append(calls, p)
		case adapters.KindReasoning:
			flush()
			for _, f := range frag(it.text) {
				chunk(adapters.PhaseReasoning, simPart{Text: simText(f), Thought: true})
			}
		default:
			flush()
			for _, f := range frag(it.text) {
				chunk(adapters.PhaseText, simPart{Text: simText(f)})
			}
		}
	}
	flush()

	last := simCandidate{FinishReason: st.finish}
	if st.finish == "SAFETY" {
		last.SafetyRatings = simRatings
	} else {
		p := simPart{Text: simText("")}
		if st.thought && !st.hasCalls {
			p.ThoughtSignature = st.signature
		}
		last.Content = &simContent{Parts: []simPart{p}, Role: "model"}
	}
	out = append(out, adapters.WireEvent{Data: simStreamJSON(st.response(last, true)), Phase: adapters.PhaseTerminal})
	return out
}

// Body renders a turn as the generateContent body: the same response id,
// parts and signature as StreamEvents for the same seed, one part per item.
func (Protocol) Body(t adapters.ModelTurn, o adapters.ResponseOptions) []byte {
	st := simRender(t, o)
	var parts []simPart
	answer := -1 // the first text part: it carries the signature of a text turn
	signed := false
	for _, it := range st.items {
		switch it.kind {
		case adapters.KindToolCall:
			p := simPart{FunctionCall: &simCall{Name: it.name, Args: json.RawMessage(it.text)}}
			if !signed {
				p.ThoughtSignature, signed = st.signature, true
			}
			parts = append(parts, p)
		case adapters.KindReasoning:
			parts = append(parts, simPart{Text: simText(it.text), Thought: true})
		default:
			if answer < 0 {
				answer = len(parts)
			}
			parts = append(parts, simPart{Text: simText(it.text)})
		}
	}
	if st.thought && !st.hasCalls && answer >= 0 && st.finish != "SAFETY" {
		parts[answer].ThoughtSignature = st.signature
	}
	c := simCandidate{FinishReason: st.finish}
	if len(parts) > 0 || st.finish != "SAFETY" {
		c.Content = &simContent{Parts: parts, Role: "model"}
	}
	if st.finish == "SAFETY" {
		c.SafetyRatings = simRatings
	}
	return simPrettyJSON(st.response(c, true))
}

// ResponseID is the responseId every chunk carries.
func (Protocol) ResponseID(o adapters.ResponseOptions) string { return simResponseID(o.Seed) }

// simTiming numbers responses for Server-Timing (not part of any rendered
// turn, so it need not follow the seed).
var simTiming atomic.Uint64

// simHeaders are the headers Google's front end puts on every answer. The
// Gemini API sends no request id header and no rate-limit headers
// (protocols.md §6.4).
func simHeaders() http.Header {
	h := http.Header{}
	h["Vary"] = []string{"Origin", "X-Origin", "Referer"}
	h.Set("Server", "scaffolding on HTTPServer2")
	h.Set("X-Xss-Protection", "0")
	h.Set("X-Frame-Options", "SAMEORIGIN")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Server-Timing", "gfet4t7; dur="+strconv.FormatUint(380+adapters.SimWord(simTiming.Add(1), 0x74696d65)%1400, 10))
	return h
}

// ResponseHeaders are a successful response's headers; a stream is also
// sent as an attachment, as Google's streaming front end does.
func (Protocol) ResponseHeaders(stream bool) http.Header {
	h := simHeaders()
	if stream {
		h.Set("Content-Disposition", "attachment")
	}
	return h
}

// LineEnd: the API ends SSE lines with CRLF (protocols.md §4.1).
func (Protocol) LineEnd() string { return "\r\n" }

// ---- errors ---------------------------------------------------------------

type simError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Status  string `json:"status"`
	Details []any  `json:"details,omitempty"`
}

type simErrorBody struct {
	Error simError `json:"error"`
}

type simViolation struct {
	Field       string `json:"field,omitempty"`
	Description string `json:"description"`
}

type simBadRequest struct {
	Type            string         `json:"@type"`
	FieldViolations []simViolation `json:"fieldViolations"`
}

type simErrorInfo struct {
	Type     string            `json:"@type"`
	Reason   string            `json:"reason"`
	Domain   string            `json:"domain"`
	Metadata map[string]string `json:"metadata"`
}

type simQuotaViolation struct {
	QuotaMetric     string            `json:"quotaMetric"`
	QuotaID         string            `json:"quotaId"`
	QuotaDimensions map[string]string `json:"quotaDimensions"`
}

type simQuotaFailure struct {
	Type       string              `json:"@type"`
	Violations []simQuotaViolation `json:"violations"`
}

type simHelpLink struct {
	Description string `json:"description"`
	URL         string `json:"url"`
}

type simHelp struct {
	Type  string        `json:"@type"`
	Links []simHelpLink `json:"links"`
}

type simRetryInfo struct {
	Type       string `json:"@type"`
	RetryDelay string `json:"retryDelay"`
}

const simTypePrefix = "type.googleapis.com/google.rpc."

// Google's own words for the failures the simulator injects (the
// .error.json captures; protocols.md §6.2).
const (
	simQuotaMessage    = "You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits."
	simInternalMessage = "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting"
	simOverloadMessage = "The model is overloaded. Please try again later."
	simTooLargeMessage = "Request payload size exceeds the limit: 20971520 bytes."
	simKeyMessage      = "API key not valid. Please pass a valid API key."
)

// simStatusNames are the google.rpc codes by HTTP status.
var simStatusNames = map[int]string{
	400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
	409: "ABORTED", 429: "RESOURCE_EXHAUSTED", 499: "CANCELLED", 500: "INTERNAL",
	501: "NOT_IMPLEMENTED", 503: "UNAVAILABLE", 504: "DEADLINE_EXCEEDED",
}

// simErrorFor maps a fault kind (or an HTTP status) to Google's error. The
// injected failures get Google's own message; the others keep the
// caller's. Anthropic's 529 does not exist here: overload is 503
// UNAVAILABLE, and a too-large request is Google's 400.
func simErrorFor(status int, kind, message string) simError {
	e := simError{Message: message}
	switch kind {
	case "rate_limit", "rate_limit_error", "RESOURCE_EXHAUSTED":
		e.Code, e.Message = 429, simQuotaMessage
		e.Details = []any{
			simQuotaFailure{Type: simTypePrefix + "QuotaFailure", Violations: []simQuotaViolation{{
				QuotaMetric:     "generativelanguage.googleapis.com/generate_content_free_tier_requests",
				QuotaID:         "GenerateRequestsPerMinutePerProjectPerModel-FreeTier",
				QuotaDimensions: map[string]string{"location": "global"},
			}}},
			simHelp{Type: simTypePrefix + "Help", Links: []simHelpLink{{Description: "Learn more about Gemini API quotas", URL: "https://ai.google.dev/gemini-api/docs/rate-limits"}}},
			// The simulator's 429 also says Retry-After: 1.
			simRetryInfo{Type: simTypePrefix + "RetryInfo", RetryDelay: "1s"},
		}
	case "server_error", "INTERNAL":
		e.Code, e.Message = 500, simInternalMessage
	case "api_error":
		e.Code = 500
	case "overloaded", "overloaded_error", "UNAVAILABLE":
		e.Code, e.Message = 503, simOverloadMessage
	case "invalid_request_error", "invalid_request", "INVALID_ARGUMENT":
		e.Code = 400
	case "request_too_large":
		e.Code, e.Message = 400, simTooLargeMessage
	case "authentication_error":
		// The Gemini API answers a bad key with 400 (protocols.md §6.2).
		e.Code, e.Message = 400, simKeyMessage
		e.Details = []any{simErrorInfo{Type: simTypePrefix + "ErrorInfo", Reason: "API_KEY_INVALID", Domain: "googleapis.com",
			Metadata: map[string]string{"service": "generativelanguage.googleapis.com"}}}
	case "permission_error":
		e.Code = 403
	case "not_found_error":
		e.Code = 404
	case "timeout_error":
		e.Code = 504
	default:
		e.Code = status
		if _, ok := simStatusNames[status]; !ok {
			e.Code = 500
		}
	}
	e.Status = simStatusNames[e.Code]
	if e.Message == "" {
		e.Message = http.StatusText(e.Code)
	}
	return e
}

func simErrorResponse(e simError) *adapters.SimError {
	return &adapters.SimError{Status: e.Code, Header: simHeaders(), Body: simPrettyJSON(simErrorBody{Error: e})}
}

// ErrorResponse is the API's HTTP error: {"error":{code,message,status,
// details}} pretty-printed, with Google's headers (no request id). The 429
// carries QuotaFailure, Help and RetryInfo details; Retry-After is the
// caller's to set.
func (Protocol) ErrorResponse(status int, kind, message string) *adapters.SimError {
	return simErrorResponse(simErrorFor(status, kind, message))
}

// ErrorEvent is the in-stream error after a 200: a data chunk holding the
// error object (error_event.sse; go-genai turns it into an APIError). It
// ends the stream.
func (Protocol) ErrorEvent(kind, message string) []adapters.WireEvent {
	e := simErrorFor(0, kind, message)
	e.Details = nil
	return []adapters.WireEvent{{Data: simStreamJSON(simErrorBody{Error: e}), Phase: adapters.PhaseTerminal}}
}

// UnknownEvent is a chunk with a top-level field the API does not define
// (yet): well-formed JSON that go-genai reads as an empty response.
func (Protocol) UnknownEvent() adapters.WireEvent {
	return adapters.WireEvent{Data: `{"heartbeat": {"createTime": "2026-01-01T00:00:00.000000Z"}}`, Phase: adapters.PhaseOther}
}
