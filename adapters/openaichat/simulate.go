package openaichat

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/modelwire/modelwire/adapters"
)

// This file is the simulator's side of Chat Completions (adapters.Simulated),
// for both dialects: checking a request as api.openai.com or api.deepseek.com
// does, and writing a scripted model turn as their exact bytes. Every
// difference between the two hangs off protocol.deepseek.
//
// Byte shapes, and where they come from:
//   - the stream is data-only SSE, one chunk object per event, then
//     `data: [DONE]` (protocols.md §2.1, §2.3; the captures in testdata).
//     Chunk keys in the order the captures show: OpenAI id, object,
//     created, model, service_tier, system_fingerprint, choices, usage
//     (null on every chunk when stream_options.include_usage is set),
//     obfuscation (on by default, §2.3); DeepSeek id, object, created,
//     model, system_fingerprint, choices (and usage on the finish chunk).
//   - OpenAI's first chunk carries role with content "" and refusal null;
//     when the turn opens with a tool call the first chunk carries that
//     call instead (content null), when it opens with a refusal, content
//     null and refusal "" (testdata chat_refund_turn1.sse, chat_refusal.sse,
//     openai-go's streamaccumulator_test mock). A call starts with id,
//     type, name and arguments "", then argument fragments by index.
//   - DeepSeek's first chunk is role with content null and
//     reasoning_content "" when the model thinks, else content ""; reasoning
//     fragments carry content null, text fragments reasoning_content null;
//     the finish chunk has delta {"content":""} and the usage
//     (prompt_cache_hit/miss_tokens, completion_tokens_details) attached
//     (DS-HARNESS types.ts / translate.spec.ts, testdata deepseek_*.sse).
//     Ids: the response id is a UUID, call ids call_00_…, call_01_….
//   - a refusal: OpenAI sends delta.refusal fragments and finish_reason
//     stop (the decoder reads a refusal lane that ends with stop as a
//     refusal). DeepSeek has no refusal field; its refusals come from its
//     content filter, so the words arrive as content and the finish_reason
//     is content_filter (the decoder's terminal table: refused).
//   - OpenAI Chat has no reasoning text: reasoning items are not sent, but
//     their tokens are counted in completion_tokens_details.reasoning_tokens.
//   - non-streaming bodies are pretty-printed chat.completion objects as in
//     testdata/*.json (OpenAI: message.refusal and annotations, service_tier;
//     DeepSeek: message.reasoning_content, tool_calls[].index).
//   - errors: {"error":{"message","type","param","code"}} (§6.1); OpenAI's
//     bodies are indented by four spaces, DeepSeek's are compact with param
//     null and code "invalid_request_error". The request checks use each
//     provider's own wording (see CheckRequest).
//
// DeepSeek's SSE keep-alive comments (`: keep-alive` while a request is
// queued) are not sent: the simulator never queues, and a WireEvent is
// always written as a data line.

var _ adapters.Simulated = protocol{}

// Defaults for requests that name no model (the simulator normally passes
// the request's own).
const (
	defaultOpenAIModel   = "gpt-4.1-2025-04-14"
	defaultDeepSeekModel = "deepseek-v4-flash"
	openAIFingerprint    = "fp_b3f1157249"
	deepSeekFingerprint  = "fp_8802369eaa_prod0820_fp8_kvcache"
	// simEpoch is the created time of seed 0 (2026-01-05); a response's
	// created is simEpoch + seed, so the bytes follow the seed alone.
	simEpoch = 1767571200
)

// ---- ids ----------------------------------------------------------------

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// enc62 writes 11 base62 digits of w (62^11 > 2^64: every word is exact).
func enc62(b *strings.Builder, w uint64) {
	var d [11]byte
	for i := 10; i >= 0; i-- {
		d[i] = base62[w%62]
		w /= 62
	}
	b.Write(d[:])
}

// simID is prefix + n base62 characters (n ≥ 11): the first 11 encode a
// bijection of the seed, so two seeds never share an id of one salt.
func simID(prefix string, seed, salt uint64, n int) string {
	var b strings.Builder
	b.WriteString(prefix)
	for k := uint64(0); b.Len() < len(prefix)+n; k++ {
		enc62(&b, adapters.SimWord(seed, salt+k*0x1000193))
	}
	return b.String()[:len(prefix)+n]
}

// Salts, one per kind of id; calls are numbered from theirs.
const (
	saltResponse = 0x63686174 // "chat"
	saltCall     = 0x63616c6c // "call" + call index<<20
	saltObf      = 0x6f6266   // "obf" + chunk index<<20
)

// uuid is a version-4 UUID whose first 64 bits (minus the version and
// variant bits, which are placed around them) are a bijection of the seed.
func uuid(seed uint64) string {
	const hexd = "0123456789abcdef"
	a, b := adapters.SimWord(seed, saltResponse), adapters.SimWord(seed, saltResponse^0x5bd1e995)
	var d [32]byte
	for i := 0; i < 16; i++ {
		d[i] = byte(a >> (60 - 4*i) & 0xf)
	}
	// d[0..11] stay; the version nibble goes in at 12, pushing d[12..15]
	// along; the variant's two free bits take half of the last one.
	last := d[15]
	copy(d[13:16], d[12:15])
	d[12] = 4
	d[16] = 8 | last>>2
	d[17] = (last&3)<<2 | byte(b&3)
	for i := 18; i < 32; i++ {
		d[i] = byte(b >> (4 * (i - 16)) & 0xf)
	}
	var s strings.Builder
	for i, x := range d {
		if i == 8 || i == 12 || i == 16 || i == 20 {
			s.WriteByte('-')
		}
		s.WriteByte(hexd[x])
	}
	return s.String()
}

// ResponseID is the id a rendered response carries: chatcmpl- and 29
// base62 characters at OpenAI, a UUID at DeepSeek.
func (p protocol) ResponseID(o adapters.ResponseOptions) string {
	if p.deepseek {
		return uuid(o.Seed)
	}
	return simID("chatcmpl-", o.Seed, saltResponse, 29)
}

// callID is the id of the index-th call of a response: call_ and 24 base62
// characters at OpenAI, call_00_ (the call's index) and 24 at DeepSeek.
func (p protocol) callID(seed uint64, index int) string {
	prefix := "call_"
	if p.deepseek {
		prefix = fmt.Sprintf("call_%02d_", index)
	}
	return simID(prefix, seed, saltCall+uint64(index)<<20, 24)
}

// Request ids belong to an HTTP response, not to the rendered turn, so they
// need not follow the seed.
var (
	requestSeq   atomic.Uint64
	requestEpoch = uint64(time.Now().UnixNano())
)

// requestID is OpenAI's x-request-id (req_ and 32 hex digits) or
// DeepSeek's x-ds-trace-id (32 hex digits).
func (p protocol) requestID() string {
	n := requestSeq.Add(1)
	id := fmt.Sprintf("%016x%016x", adapters.SimWord(requestEpoch, n), adapters.SimWord(n, requestEpoch))
	if p.deepseek {
		return id
	}
	return "req_" + id
}

func (p protocol) requestIDHeader() string {
	if p.deepseek {
		return "x-ds-trace-id"
	}
	return "x-request-id"
}

// ---- rendering a turn -----------------------------------------------------

// simItem is one output item as the wire carries it.
type simItem struct {
	kind   adapters.ItemKind // message (content), reasoning, tool_call, refusal
	text   string            // text, or the exact argument text
	callID string
	name   string
	index  int // tool_calls[].index
}

type simTurn struct {
	id, model string
	created   int64
	items     []simItem
	thinks    bool   // DeepSeek: the turn has reasoning_content
	finish    string // finish_reason
	usage     string // the usage object, compact JSON
}

// jsonText is s as a JSON string, UTF-8 left as is and no HTML escaping
// (both APIs write raw UTF-8: 中文 arrives as 中文).
func jsonText(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

func i64(n int64) string { return strconv.FormatInt(n, 10) }

// finishReason is the finish_reason for a canonical stop. A refusal is
// stop after refusal text at OpenAI, content_filter where there is none.
func (p protocol) finishReason(s adapters.StopReason, refusalText bool) string {
	switch s {
	case adapters.StopToolCall:
		return "tool_calls"
	case adapters.StopTruncated:
		return "length"
	case adapters.StopRefusal:
		if refusalText && !p.deepseek {
			return "stop"
		}
		return "content_filter"
	}
	return "stop"
}

func (p protocol) render(t adapters.ModelTurn, o adapters.ResponseOptions) simTurn {
	st := simTurn{id: p.ResponseID(o), model: o.Model, created: simEpoch + int64(o.Seed%(1<<32))}
	if st.model == "" {
		st.model = defaultOpenAIModel
		if p.deepseek {
			st.model = defaultDeepSeekModel
		}
	}
	refusalText := false
	calls, outChars := 0, 0
	for _, it := range t.Items {
		item := simItem{kind: it.Kind, text: it.Text}
		switch it.Kind {
		case adapters.KindReasoning:
			outChars += utf8.RuneCountInString(it.Text)
			if !p.deepseek || it.Text == "" {
				continue // Chat Completions has no reasoning text
			}
			st.thinks = true
		case adapters.KindToolCall:
			item.callID, item.name, item.index = it.CallID, it.Name, calls
			if item.callID == "" {
				item.callID = p.callID(o.Seed, calls)
			}
			calls++
			if item.text = adapters.ArgumentText(it.Arguments); item.text == "" {
				item.text = "{}"
			}
		case adapters.KindRefusal:
			if p.deepseek {
				item.kind = adapters.KindMessage // DeepSeek has no refusal field
			} else if it.Text != "" {
				refusalText = true
			}
		case adapters.KindMessage:
		default:
			continue
		}
		outChars += utf8.RuneCountInString(item.text)
		st.items = append(st.items, item)
	}
	st.finish = p.finishReason(t.Stop, refusalText)
	st.usage = p.usage(t.Usage, outChars)
	return st
}

// usage is the usage object (protocols.md §2.5, §5): prompt_tokens counts
// every token read (the script's input), cached ones included;
// completion_tokens includes the reasoning tokens.
func (p protocol) usage(u adapters.Usage, outChars int) string {
	val := func(n *int64) int64 {
		if n == nil {
			return 0
		}
		return max(0, *n)
	}
	in, cached, reasoning := val(u.InputTokens), val(u.CacheReadTokens), val(u.ReasoningTokens)
	out := int64(outChars/2 + 1)
	if u.OutputTokens != nil {
		out = val(u.OutputTokens)
	}
	total := i64(in + out)
	if p.deepseek {
		return `{"prompt_tokens":` + i64(in) + `,"completion_tokens":` + i64(out) + `,"total_tokens":` + total +
			`,"prompt_tokens_details":{"cached_tokens":` + i64(cached) + `},"completion_tokens_details":{"reasoning_tokens":` + i64(reasoning) +
			`},"prompt_cache_hit_tokens":` + i64(cached) + `,"prompt_cache_miss_tokens":` + i64(max(0, in-cached)) + `}`
	}
	details := `{"cached_tokens":` + i64(cached) + `,"audio_tokens":0`
	if u.CacheWriteTokens != nil {
		details += `,"cache_write_tokens":` + i64(val(u.CacheWriteTokens))
	}
	return `{"prompt_tokens":` + i64(in) + `,"completion_tokens":` + i64(out) + `,"total_tokens":` + total +
		`,"prompt_tokens_details":` + details + `},"completion_tokens_details":{"reasoning_tokens":` + i64(reasoning) +
		`,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}`
}

// chunker writes the chunks of one response.
type chunker struct {
	p        protocol
	envelope string // everything before the choices array's contents
	usageNil bool   // OpenAI with include_usage: "usage":null on every chunk
	seed     uint64
	n        uint64 // chunks written, for the obfuscation padding
}

func (p protocol) newChunker(st simTurn, o adapters.ResponseOptions) *chunker {
	e := `{"id":` + jsonText(st.id) + `,"object":"chat.completion.chunk","created":` + i64(st.created) + `,"model":` + jsonText(st.model)
	if p.deepseek {
		e += `,"system_fingerprint":"` + deepSeekFingerprint + `"`
	} else {
		e += `,"service_tier":"default","system_fingerprint":"` + openAIFingerprint + `"`
	}
	return &chunker{p: p, envelope: e + `,"choices":[`, usageNil: o.IncludeUsage && !p.deepseek, seed: o.Seed}
}

// obfuscation is OpenAI's random padding: a few base62 characters that vary
// the chunk length (deterministic here, from the seed and chunk number).
func (c *chunker) obfuscation() string {
	w := adapters.SimWord(c.seed, saltObf+c.n<<20)
	c.n++
	var b strings.Builder
	enc62(&b, w)
	enc62(&b, adapters.SimWord(0, w)) // SimWord(0, w) is the plain mix of w
	return b.String()[:1+w%15]
}

// tail closes a chunk: usage, then (OpenAI) the obfuscation.
func (c *chunker) tail(usage string) string {
	s := ""
	if usage != "" {
		s = `,"usage":` + usage
	}
	if !c.p.deepseek {
		s += `,"obfuscation":"` + c.obfuscation() + `"`
	}
	return s + "}"
}

// chunk is one choices[0] chunk; finish is the raw finish_reason (null or
// a JSON string), usage the usage object to attach ("" for none).
func (c *chunker) chunk(delta, finish, usage string) string {
	if usage == "" && c.usageNil {
		usage = "null"
	}
	return c.envelope + `{"index":0,"delta":` + delta + `,"logprobs":null,"finish_reason":` + finish + `}]` + c.tail(usage)
}

// usageChunk is the chunk with "choices":[] and the usage, before [DONE].
func (c *chunker) usageChunk(usage string) string { return c.envelope + "]" + c.tail(usage) }

// callStart is a call's first tool_calls fragment; callArgs a later one.
func callStart(it simItem) string {
	return `{"index":` + strconv.Itoa(it.index) + `,"id":` + jsonText(it.callID) + `,"type":"function","function":{"name":` +
		jsonText(it.name) + `,"arguments":""}}`
}

func callArgs(index int, frag string) string {
	return `{"index":` + strconv.Itoa(index) + `,"function":{"arguments":` + jsonText(frag) + `}}`
}

// StreamEvents renders a turn as the provider's stream (see the top of the
// file): the role chunk, the items' fragments, the finish chunk, (OpenAI
// with include_usage) the usage chunk, then [DONE].
func (p protocol) StreamEvents(t adapters.ModelTurn, o adapters.ResponseOptions) []adapters.WireEvent {
	st := p.render(t, o)
	frag := o.Fragment
	if frag == nil {
		frag = adapters.Fragments
	}
	c := p.newChunker(st, o)
	var out []adapters.WireEvent
	emit := func(ph adapters.Phase, data string) {
		out = append(out, adapters.WireEvent{Data: data, Phase: ph})
	}
	delta := func(ph adapters.Phase, d string) { emit(ph, c.chunk(d, "null", "")) }

	// The role chunk.
	items := st.items
	var first adapters.ItemKind
	if len(items) > 0 {
		first = items[0].kind
	}
	switch {
	case p.deepseek && first == adapters.KindReasoning:
		delta(adapters.PhaseStart, `{"role":"assistant","content":null,"reasoning_content":""}`)
	case p.deepseek:
		delta(adapters.PhaseStart, `{"role":"assistant","content":""}`)
	case first == adapters.KindToolCall:
		delta(adapters.PhaseStart, `{"role":"assistant","content":null,"tool_calls":[`+callStart(items[0])+`],"refusal":null}`)
	case first == adapters.KindRefusal:
		delta(adapters.PhaseStart, `{"role":"assistant","content":null,"refusal":""}`)
	default:
		delta(adapters.PhaseStart, `{"role":"assistant","content":"","refusal":null}`)
	}

	for i, it := range items {
		switch it.kind {
		case adapters.KindReasoning:
			for _, f := range frag(it.text) {
				delta(adapters.PhaseReasoning, `{"content":null,"reasoning_content":`+jsonText(f)+`}`)
			}
		case adapters.KindMessage:
			after := ""
			if st.thinks {
				after = `,"reasoning_content":null`
			}
			for _, f := range frag(it.text) {
				delta(adapters.PhaseText, `{"content":`+jsonText(f)+after+`}`)
			}
		case adapters.KindRefusal:
			for _, f := range frag(it.text) {
				delta(adapters.PhaseText, `{"refusal":`+jsonText(f)+`}`)
			}
		case adapters.KindToolCall:
			if i > 0 || p.deepseek {
				delta(adapters.PhaseStart, `{"tool_calls":[`+callStart(it)+`]}`)
			}
			for _, f := range frag(it.text) {
				delta(adapters.PhaseArgs, `{"tool_calls":[`+callArgs(it.index, f)+`]}`)
			}
		}
	}

	// The finish chunk decides the stop: with [DONE] it is the terminal
	// (without it a client has no finish_reason at all).
	finish := jsonText(st.finish)
	if p.deepseek {
		emit(adapters.PhaseTerminal, c.chunk(`{"content":""}`, finish, st.usage))
	} else {
		emit(adapters.PhaseTerminal, c.chunk(`{}`, finish, ""))
		if o.IncludeUsage {
			emit(adapters.PhaseUsage, c.usageChunk(st.usage))
		}
	}
	emit(adapters.PhaseTerminal, "[DONE]")
	return out
}

// The non-streaming body, keys in the API's order.
type simCompletion struct {
	ID                string          `json:"id"`
	Object            string          `json:"object"`
	Created           int64           `json:"created"`
	Model             string          `json:"model"`
	Choices           []simChoice     `json:"choices"`
	Usage             json.RawMessage `json:"usage"`
	ServiceTier       string          `json:"service_tier,omitempty"`
	SystemFingerprint string          `json:"system_fingerprint"`
}

type simChoice struct {
	Index        int             `json:"index"`
	Message      simMessageOut   `json:"message"`
	Logprobs     json.RawMessage `json:"logprobs"`
	FinishReason string          `json:"finish_reason"`
}

type simMessageOut struct {
	Role             string          `json:"role"`
	Content          *string         `json:"content"`
	ReasoningContent *string         `json:"reasoning_content,omitempty"` // DeepSeek
	Refusal          json.RawMessage `json:"refusal,omitempty"`           // OpenAI: null or the text
	Annotations      json.RawMessage `json:"annotations,omitempty"`       // OpenAI: []
	ToolCalls        []simCallOut    `json:"tool_calls,omitempty"`
}

type simCallOut struct {
	Index    *int   `json:"index,omitempty"` // DeepSeek
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// Body renders a turn as the chat.completion object: the same id, created,
// call ids and usage as StreamEvents for the same seed.
func (p protocol) Body(t adapters.ModelTurn, o adapters.ResponseOptions) []byte {
	st := p.render(t, o)
	var text, reasoning, refusal strings.Builder
	hasText, hasRefusal := false, false
	m := simMessageOut{Role: "assistant"}
	for _, it := range st.items {
		switch it.kind {
		case adapters.KindReasoning:
			reasoning.WriteString(it.text)
		case adapters.KindMessage:
			hasText = true
			text.WriteString(it.text)
		case adapters.KindRefusal:
			hasRefusal = true
			refusal.WriteString(it.text)
		case adapters.KindToolCall:
			c := simCallOut{ID: it.callID, Type: "function"}
			c.Function.Name, c.Function.Arguments = it.name, it.text
			if p.deepseek {
				c.Index = &it.index
			}
			m.ToolCalls = append(m.ToolCalls, c)
		}
	}
	content := text.String()
	if hasText || p.deepseek {
		m.Content = &content // DeepSeek sends "" beside tool calls; OpenAI null
	}
	if st.thinks {
		r := reasoning.String()
		m.ReasoningContent = &r
	}
	if !p.deepseek {
		m.Refusal, m.Annotations = json.RawMessage("null"), json.RawMessage("[]")
		if hasRefusal {
			m.Refusal = json.RawMessage(jsonText(refusal.String()))
		}
	}
	body := simCompletion{ID: st.id, Object: "chat.completion", Created: st.created, Model: st.model,
		Choices: []simChoice{{Message: m, Logprobs: json.RawMessage("null"), FinishReason: st.finish}},
		Usage:   json.RawMessage(st.usage), SystemFingerprint: openAIFingerprint}
	if p.deepseek {
		body.SystemFingerprint = deepSeekFingerprint
	} else {
		body.ServiceTier = "default"
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	_ = enc.Encode(body)
	return b.Bytes()
}

// ResponseHeaders are a successful response's headers: OpenAI's request id,
// processing time, API version and rate-limit counters (protocols.md §6.4);
// DeepSeek's trace id.
func (p protocol) ResponseHeaders(stream bool) http.Header {
	h := http.Header{}
	h.Set(p.requestIDHeader(), p.requestID())
	if p.deepseek {
		h.Set("vary", "origin, access-control-request-method, access-control-request-headers")
		h.Set("access-control-allow-credentials", "true")
		return h
	}
	ms := "412"
	if stream {
		ms = "187" // time to the first byte
	}
	h.Set("openai-processing-ms", ms)
	h.Set("openai-version", "2020-10-01")
	h.Set("openai-organization", "user-modelwire-sim")
	h.Set("openai-project", "proj_modelwireSimulator000")
	h.Set("x-ratelimit-limit-requests", "10000")
	h.Set("x-ratelimit-limit-tokens", "30000000")
	h.Set("x-ratelimit-remaining-requests", "9999")
	h.Set("x-ratelimit-remaining-tokens", "29998000")
	h.Set("x-ratelimit-reset-requests", "6ms")
	h.Set("x-ratelimit-reset-tokens", "4ms")
	return h
}

// LineEnd: both APIs end SSE lines with \n.
func (protocol) LineEnd() string { return "\n" }

// ---- errors -------------------------------------------------------------------

// apiError is one error as {"error":{message,type,param,code}}.
type apiError struct {
	status       int
	message, typ string
	param, code  string // "" is null
}

// errorKind maps the simulator's fault kinds to the provider's status, type
// and code (protocols.md §6.2). OpenAI's 429 is type "requests" with code
// rate_limit_exceeded, its 500 server_error; DeepSeek repeats the type as
// the code, as its 400s do.
func (p protocol) errorKind(status int, kind, message string) apiError {
	e := apiError{status: status, message: message}
	def := 0
	switch kind {
	case "rate_limit", "rate_limit_error", "rate_limit_exceeded", "requests":
		def, e.typ, e.code = 429, "requests", "rate_limit_exceeded"
		if p.deepseek {
			e.typ, e.code = "rate_limit_error", "rate_limit_error"
		}
	case "server_error", "api_error":
		def, e.typ = 500, "server_error"
	case "overloaded_error", "overloaded":
		def, e.typ = 503, "server_error"
	case "request_too_large":
		def, e.typ, e.code = 413, "invalid_request_error", "request_too_large"
	case "authentication_error", "invalid_api_key":
		def, e.typ, e.code = 401, "invalid_request_error", "invalid_api_key"
		if p.deepseek {
			e.typ, e.code = "authentication_error", "invalid_request_error"
		}
	default: // invalid_request_error and anything unknown
		def, e.typ = 400, "invalid_request_error"
	}
	if e.status == 0 {
		e.status = def
	}
	if p.deepseek && e.code == "" {
		e.code = e.typ
	}
	return e
}

// body renders the error body: OpenAI indents it by four spaces (with a
// final newline), DeepSeek sends it compact.
func (p protocol) errorBody(e apiError, indent bool) []byte {
	null := func(s string) string {
		if s == "" {
			return "null"
		}
		return jsonText(s)
	}
	fields := []string{`"message":` + jsonText(e.message), `"type":` + jsonText(e.typ), `"param":` + null(e.param), `"code":` + null(e.code)}
	if !indent {
		return []byte(`{"error":{` + strings.Join(fields, ",") + `}}`)
	}
	for i, f := range fields {
		fields[i] = "        " + strings.Replace(f, `":`, `": `, 1)
	}
	return []byte("{\n    \"error\": {\n" + strings.Join(fields, ",\n") + "\n    }\n}\n")
}

func (p protocol) simError(e apiError) *adapters.SimError {
	h := http.Header{}
	h.Set(p.requestIDHeader(), p.requestID())
	return &adapters.SimError{Status: e.status, Header: h, Body: p.errorBody(e, !p.deepseek)}
}

// ErrorResponse is the provider's HTTP error with its request id header.
// The status is the caller's (the kind's own when 0); Retry-After is the
// caller's to set (the sim server sets it on its 429).
func (p protocol) ErrorResponse(status int, kind, message string) *adapters.SimError {
	return p.simError(p.errorKind(status, kind, message))
}

// ErrorEvent is the in-stream error after a 200: a data payload with a
// top-level error object, then the end of the body (protocols.md §6.3,
// testdata chat_error_event.sse). It ends the stream: a terminal event.
func (p protocol) ErrorEvent(kind, message string) []adapters.WireEvent {
	e := p.errorKind(0, kind, message)
	return []adapters.WireEvent{{Data: string(p.errorBody(e, false)), Phase: adapters.PhaseTerminal}}
}

// UnknownEvent is a well-formed payload that is not a chunk, as a newer
// server (or a proxy) might send: decoders must skip it (openai-go's
// accumulator refuses it, since its id is not the response's).
func (protocol) UnknownEvent() adapters.WireEvent {
	return adapters.WireEvent{Data: `{"object":"chat.completion.progress","progress":{"completion_tokens":8}}`, Phase: adapters.PhaseOther}
}

// ---- CheckRequest -------------------------------------------------------------
//
// OpenAI's checks and wording: a missing model is "you must provide a model
// parameter" (param null); missing fields "Missing required parameter:
// 'x'." (missing_required_parameter); types "Invalid type for 'x':
// expected …, but got … instead." (invalid_type); enums "Invalid value:
// 'v'. Supported values are: …" (invalid_value); ranges "Invalid 'x':
// decimal above maximum value. Expected a value <= 2, but got 3 instead."
// (decimal_above_max_value); a null content "Invalid value for 'content':
// expected a string, got null." (param messages.[i].content), checked after
// the other fields; the tool pairing "Invalid parameter: messages with role
// 'tool' must be a response to a preceeding message with 'tool_calls'."
// (sic, param messages.[i].role), "Invalid parameter: 'tool_call_id' of 'x'
// not found in 'tool_calls' of previous message." and "An assistant message
// with 'tool_calls' must be followed by tool messages responding to each
// 'tool_call_id'. The following tool_call_ids did not have response
// messages: …"; a body that does not parse "We could not parse the JSON
// body of your request. (HINT: …)". Sources: error bodies quoted in public
// issues (miurla/morphic#136, smarter-sh/smarter#264, the litellm and agno
// reports) and a live-measured rejection table of a Chat Completions proxy's
// conformance tests.
//
// DeepSeek parses the body first (serde): "Failed to parse the request body
// as JSON: …" and "Failed to deserialize the JSON body into the target
// type: messages[1]: missing field `content` at line L column C", type
// errors and unknown enum variants in document order, missing fields at the
// end of their object. Then its own checks, with param null and code
// invalid_request_error: "Invalid temperature value, the valid range of
// temperature is [0, 2]", "Invalid max_tokens value, the valid range of
// max_tokens is [1, 393216]", "Prompt must contain the word 'json' in some
// form to use 'response_format' of type 'json_object'.", the tool-call state
// machine ("Messages with role 'tool' must be a response to a preceding
// message with 'tool_calls'", "… responding to each 'tool_call_id', The
// following tool_call_ids did not have response messages: id", "…
// (insufficient tool messages following tool_calls message)") and, in
// thinking mode, when the request ends on a tool result whose issuing
// assistant message has no reasoning_content: "The `reasoning_content` in
// the thinking mode must be passed back to the API." (protocols.md §5;
// texts live-probed by a DeepSeek gateway's validation layer, and quoted in
// itmisx/deepx-code#94, JohnnyZ93/oai-compatible-copilot#215 and the
// forgecode/qwen-code deserialization reports).

// jval is one JSON value of the request body, with its byte span.
type jval struct {
	raw        string
	start, end int // end is exclusive
}

func (v jval) kind() byte {
	if v.raw == "" {
		return 0
	}
	return v.raw[0]
}

// null: absent or JSON null (both APIs treat a null optional field as unset).
func (v jval) null() bool { return v.raw == "" || v.raw == "null" }

func (v jval) str() (string, bool) {
	if v.kind() != '"' {
		return "", false
	}
	return unquote(v.raw), true
}

// jobj is a JSON object of the body: its keys in order and its end.
type jobj struct {
	keys []string
	vals map[string]jval
	end  int // just after the closing brace
}

func (o jobj) get(k string) jval { return o.vals[k] }

func (o jobj) has(k string) bool { _, ok := o.vals[k]; return ok }

func readObject(s string, start int) jobj {
	o := jobj{vals: map[string]jval{}}
	m := membersAt(s, start)
	for {
		k, ok := m.key()
		if !ok {
			break
		}
		vs := m.i
		raw := m.value()
		if _, dup := o.vals[k]; !dup {
			o.keys = append(o.keys, k)
		}
		o.vals[k] = jval{raw: raw, start: vs, end: m.i}
	}
	o.end = m.end()
	return o
}

func readArray(s string, v jval) []jval {
	var out []jval
	e := elementsAt(s, v.start)
	for e.start() {
		vs := e.i
		raw := e.value()
		if raw == "" {
			break
		}
		out = append(out, jval{raw: raw, start: vs, end: e.i})
	}
	return out
}

// checker holds one request while it is checked.
type checker struct {
	p    protocol
	s    string
	top  jobj
	in   adapters.Inbound
	msgs []simMsgIn
}

// simMsgIn is one message of the request.
type simMsgIn struct {
	obj        jobj
	role       string
	toolCallID string
	calls      []simCallIn
}

type simCallIn struct{ id, name string }

// jsonType is an expected type as each API names it.
type jsonType struct{ openai, serde string }

var (
	typeString  = jsonType{"a string", "a string"}
	typeArray   = jsonType{"an array of objects", "a sequence"}
	typeObject  = jsonType{"an object", "a map"}
	typeBool    = jsonType{"a boolean", "a boolean"}
	typeDecimal = jsonType{"a decimal", "f32"}
	typeInteger = jsonType{"an integer", "u32"}
	typeContent = jsonType{"one of a string or array of objects", "a string"}
)

// at is serde's position suffix for the byte index just after what it last
// read: " at line L column C" (C is the column of that last byte).
func (c *checker) at(idx int) string {
	idx = min(max(idx, 0), len(c.s))
	line := 1 + strings.Count(c.s[:idx], "\n")
	col := idx - (strings.LastIndexByte(c.s[:idx], '\n') + 1)
	return fmt.Sprintf(" at line %d column %d", line, col)
}

// invalid is a 400 invalid_request_error; DeepSeek sends param null and
// code invalid_request_error whatever the check.
func (c *checker) invalid(message, param, code string) *adapters.SimError {
	e := apiError{status: http.StatusBadRequest, message: message, typ: "invalid_request_error", param: param, code: code}
	if c.p.deepseek {
		e.param, e.code = "", "invalid_request_error"
	}
	return c.p.simError(e)
}

// deser is DeepSeek's deserialization error for path (may be "").
func (c *checker) deser(path, what string, idx int) *adapters.SimError {
	msg := "Failed to deserialize the JSON body into the target type: "
	if path != "" {
		msg += path + ": "
	}
	return c.invalid(msg+what+c.at(idx), "", "")
}

func fieldPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// missing: a required field is absent from obj (at path).
func (c *checker) missing(obj jobj, path, name string) *adapters.SimError {
	if c.p.deepseek {
		return c.deser(path, "missing field `"+name+"`", obj.end)
	}
	full := fieldPath(path, name)
	return c.invalid("Missing required parameter: '"+full+"'.", full, "missing_required_parameter")
}

// wrongType: the value at path is not of the wanted type.
func (c *checker) wrongType(path string, w jsonType, v jval) *adapters.SimError {
	if c.p.deepseek {
		idx := v.end
		if k := v.kind(); k == '[' || k == '{' {
			idx = v.start + 1 // serde stops at the opening bracket
		}
		return c.deser(path, "invalid type: "+serdeUnexpected(v.raw)+", expected "+w.serde, idx)
	}
	return c.invalid("Invalid type for '"+path+"': expected "+w.openai+", but got "+openAIKind(v.raw)+" instead.", path, "invalid_type")
}

// badValue: a string outside an enum.
func (c *checker) badValue(path, value string, allowed []string, v jval) *adapters.SimError {
	if c.p.deepseek {
		return c.deser(path, "unknown variant `"+value+"`, expected "+serdeOneOf(allowed), v.end)
	}
	q := make([]string, len(allowed))
	for i, a := range allowed {
		q[i] = "'" + a + "'"
	}
	list := strings.Join(q, ", ")
	if n := len(q); n > 1 {
		list = strings.Join(q[:n-1], ", ") + ", and " + q[n-1]
		if n == 2 {
			list = q[0] + " and " + q[1]
		}
	}
	return c.invalid("Invalid value: '"+value+"'. Supported values are: "+list+".", path, "invalid_value")
}

// openAIKind names a JSON value the way OpenAI's type errors do.
func openAIKind(raw string) string {
	switch raw[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	if _, err := strconv.ParseInt(raw, 10, 64); err == nil {
		return "an integer"
	}
	return "a decimal number"
}

// serdeUnexpected names a JSON value the way serde's invalid-type errors do.
func serdeUnexpected(raw string) string {
	switch raw[0] {
	case '"':
		return "string " + strconv.Quote(unquote(raw))
	case '{':
		return "map"
	case '[':
		return "sequence"
	case 't', 'f':
		return "boolean `" + raw + "`"
	case 'n':
		return "null"
	}
	if _, err := strconv.ParseInt(raw, 10, 64); err == nil {
		return "integer `" + raw + "`"
	}
	return "floating point `" + raw + "`"
}

func serdeOneOf(allowed []string) string {
	q := make([]string, len(allowed))
	for i, a := range allowed {
		q[i] = "`" + a + "`"
	}
	if len(q) == 2 {
		return q[0] + " or " + q[1]
	}
	return "one of " + strings.Join(q, ", ")
}

// servesPath: OpenAI serves /v1/chat/completions; DeepSeek is rooted at the
// bare host, with /v1 accepted too (and the simulator's own alias).
func (p protocol) servesPath(path string) bool {
	if path == p.path() {
		return true
	}
	return p.deepseek && (path == "/v1/chat/completions" || path == "/v1/deepseek/chat/completions")
}

// notJSON is the answer to a body that does not parse.
func (c *checker) notJSON() *adapters.SimError {
	if !c.p.deepseek {
		return c.invalid("We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON. If you have trouble figuring out how to fix this, please contact us through our help center at help.openai.com.)", "", "")
	}
	reason, at := "expected value", 0
	var v any
	err := json.Unmarshal([]byte(c.s), &v)
	var se *json.SyntaxError
	switch {
	case strings.TrimSpace(c.s) == "":
		reason, at = "EOF while parsing a value", len(c.s)
	case err != nil && strings.Contains(err.Error(), "unexpected end"):
		reason, at = "EOF while parsing a value", len(c.s)
	case errors.As(err, &se):
		at = int(se.Offset)
		if strings.Contains(se.Error(), "after top-level value") {
			reason = "trailing characters"
		}
	}
	return c.invalid("Failed to parse the request body as JSON: "+reason+c.at(at), "", "")
}

// CheckRequest checks a request as the provider does (see above) and
// returns its facts. Any API key, or none, is accepted.
func (p protocol) CheckRequest(method, path string, h http.Header, body []byte) (*adapters.Inbound, *adapters.SimError) {
	pth, _, _ := strings.Cut(path, "?")
	c := &checker{p: p, s: string(body)}
	if method != http.MethodPost || !p.servesPath(pth) {
		e := apiError{status: http.StatusNotFound, message: "Invalid URL (" + method + " " + pth + ")", typ: "invalid_request_error"}
		if p.deepseek {
			e.code = e.typ
		}
		return nil, p.simError(e)
	}
	if !gjson.Valid(c.s) {
		return nil, c.notJSON()
	}
	i := skipWS(c.s, 0)
	if c.s[i] != '{' {
		if p.deepseek {
			return nil, c.deser("", "invalid type: "+serdeUnexpected(strings.TrimSpace(c.s[i:]))+", expected struct ChatCompletionRequest", i+1)
		}
		return nil, c.notJSON()
	}
	c.top = readObject(c.s, i)

	// The fields each check reads, in the order OpenAI reports them;
	// DeepSeek's parser meets them in document order.
	fields := []struct {
		name  string
		check func(v jval) *adapters.SimError
	}{
		{"model", c.model},
		{"messages", c.messages},
		{"tools", c.tools},
		{"response_format", c.responseFormat},
		{"max_completion_tokens", c.maxTokens("max_completion_tokens")},
		{"max_tokens", c.maxTokens("max_tokens")},
		{"temperature", c.temperature},
		{"reasoning_effort", c.reasoningEffort},
		{"thinking", c.thinking},
		{"stream", c.stream},
		{"stream_options", c.streamOptions},
	}
	required := func() *adapters.SimError {
		if p.deepseek {
			for _, k := range []string{"model", "messages"} {
				if !c.top.has(k) {
					return c.missing(c.top, "", k)
				}
			}
			return nil
		}
		if m := c.top.get("model"); m.null() || m.raw == `""` {
			return c.invalid("you must provide a model parameter", "", "")
		}
		if c.top.get("messages").null() {
			return c.missing(c.top, "", "messages")
		}
		return nil
	}
	if !p.deepseek {
		if e := required(); e != nil {
			return nil, e
		}
	}
	order := make([]int, 0, len(fields))
	if p.deepseek {
		for _, k := range c.top.keys {
			for n, f := range fields {
				if f.name == k {
					order = append(order, n)
				}
			}
		}
	} else {
		for n := range fields {
			order = append(order, n)
		}
	}
	for _, n := range order {
		f := fields[n]
		v := c.top.get(f.name)
		if !c.top.has(f.name) || (v.null() && f.name != "model" && f.name != "messages") {
			continue
		}
		if e := f.check(v); e != nil {
			return nil, e
		}
	}
	if p.deepseek {
		if e := required(); e != nil {
			return nil, e
		}
	}
	for _, check := range []func() *adapters.SimError{c.deepSeekValues, c.nullContent, c.toolChain, c.passback} {
		if e := check(); e != nil {
			return nil, e
		}
	}
	p.readChoices(body, &c.in)
	if p.deepseek && c.in.Reasoning && (c.in.Choice.Mode == adapters.ToolChoiceRequired || c.in.Choice.Mode == adapters.ToolChoiceNamed) {
		// DeepSeek's thinking mode lets the model decide: a forced tool
		// choice is refused (api-docs.deepseek.com, thinking mode).
		return nil, c.invalid("deepseek-reasoner does not support this tool_choice", "", "")
	}
	return &c.in, nil
}

func (c *checker) model(v jval) *adapters.SimError {
	s, ok := v.str()
	if !ok {
		return c.wrongType("model", typeString, v)
	}
	c.in.Model = s
	return nil
}

var (
	openAIRoles   = []string{"system", "assistant", "user", "function", "tool", "developer"}
	deepSeekRoles = []string{"system", "user", "assistant", "tool", "developer"}
)

// messages checks the messages' shapes (the parser's part); the pairing
// comes later, in toolChain.
func (c *checker) messages(v jval) *adapters.SimError {
	if v.kind() != '[' {
		return c.wrongType("messages", typeArray, v)
	}
	items := readArray(c.s, v)
	if len(items) == 0 {
		if c.p.deepseek {
			return c.invalid("Empty input messages", "", "")
		}
		return c.invalid("Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.", "messages", "empty_array")
	}
	roles := openAIRoles
	if c.p.deepseek {
		roles = deepSeekRoles
	}
	for i, item := range items {
		path := fmt.Sprintf("messages[%d]", i)
		if item.kind() != '{' {
			return c.wrongType(path, typeObject, item)
		}
		m := simMsgIn{obj: readObject(c.s, item.start)}
		role := m.obj.get("role")
		if !m.obj.has("role") || (role.null() && !c.p.deepseek) {
			return c.missing(m.obj, path, "role")
		}
		r, ok := role.str()
		if !ok {
			return c.wrongType(path+".role", typeString, role)
		}
		if !slices.Contains(roles, r) {
			return c.badValue(path+".role", r, roles, role)
		}
		m.role = r
		content := m.obj.get("content")
		switch {
		case content.kind() == '"' || content.null():
		case content.kind() == '[' && (!c.p.deepseek || r == "user"):
		case c.p.deepseek && r == "user":
			return c.deser(path, "data did not match any variant of untagged enum ChatCompletionRequestContent", m.obj.end)
		default:
			// DeepSeek takes text parts in user messages only.
			return c.wrongType(path+".content", typeContent, content)
		}
		if c.p.deepseek && r != "assistant" && !m.obj.has("content") {
			return c.missing(m.obj, path, "content")
		}
		if r == "tool" {
			id := m.obj.get("tool_call_id")
			if id.null() {
				return c.missing(m.obj, path, "tool_call_id")
			}
			s, ok := id.str()
			if !ok {
				return c.wrongType(path+".tool_call_id", typeString, id)
			}
			m.toolCallID = s
		}
		if r == "assistant" {
			if e := c.toolCalls(&m, path); e != nil {
				return e
			}
		}
		c.msgs = append(c.msgs, m)
	}
	return nil
}

// toolCalls reads an assistant message's tool_calls.
func (c *checker) toolCalls(m *simMsgIn, path string) *adapters.SimError {
	tc := m.obj.get("tool_calls")
	if tc.null() {
		return nil
	}
	path += ".tool_calls"
	if tc.kind() != '[' {
		return c.wrongType(path, typeArray, tc)
	}
	calls := readArray(c.s, tc)
	if len(calls) == 0 && !c.p.deepseek {
		return c.invalid("Invalid '"+path+"': empty array. Expected an array with minimum length 1, but got an empty array instead.", path, "empty_array")
	}
	for j, call := range calls {
		cp := fmt.Sprintf("%s[%d]", path, j)
		if call.kind() != '{' {
			return c.wrongType(cp, typeObject, call)
		}
		o := readObject(c.s, call.start)
		id, ok := o.get("id").str()
		if o.get("id").null() {
			return c.missing(o, cp, "id")
		} else if !ok {
			return c.wrongType(cp+".id", typeString, o.get("id"))
		}
		fn := o.get("function")
		if fn.null() {
			return c.missing(o, cp, "function")
		}
		if fn.kind() != '{' {
			return c.wrongType(cp+".function", typeObject, fn)
		}
		fo := readObject(c.s, fn.start)
		for _, k := range []string{"name", "arguments"} {
			if fo.get(k).null() {
				return c.missing(fo, cp+".function", k)
			}
			if fo.get(k).kind() != '"' {
				return c.wrongType(cp+".function."+k, typeString, fo.get(k))
			}
		}
		name, _ := fo.get("name").str()
		m.calls = append(m.calls, simCallIn{id: id, name: name})
	}
	return nil
}

// tools reads the offered tools' names.
func (c *checker) tools(v jval) *adapters.SimError {
	if v.kind() != '[' {
		return c.wrongType("tools", typeArray, v)
	}
	for i, t := range readArray(c.s, v) {
		path := fmt.Sprintf("tools[%d]", i)
		if t.kind() != '{' {
			return c.wrongType(path, typeObject, t)
		}
		o := readObject(c.s, t.start)
		fn := o.get("function")
		if fn.null() {
			return c.missing(o, path, "function")
		}
		if fn.kind() != '{' {
			return c.wrongType(path+".function", typeObject, fn)
		}
		fo := readObject(c.s, fn.start)
		name := fo.get("name")
		if name.null() {
			return c.missing(fo, path+".function", "name")
		}
		s, ok := name.str()
		if !ok {
			return c.wrongType(path+".function.name", typeString, name)
		}
		if s == "" && !c.p.deepseek {
			return c.invalid("Invalid '"+path+".function.name': empty string. Expected a string with minimum length 1, but got an empty string instead.", path+".function.name", "empty_string")
		}
		c.in.Tools = append(c.in.Tools, s)
	}
	return nil
}

// responseFormat: OpenAI's type enum and json_schema members (DeepSeek's
// json_object rule is in deepSeekValues).
func (c *checker) responseFormat(v jval) *adapters.SimError {
	if v.kind() != '{' {
		return c.wrongType("response_format", typeObject, v)
	}
	o := readObject(c.s, v.start)
	t := o.get("type")
	if t.null() {
		return c.missing(o, "response_format", "type")
	}
	s, ok := t.str()
	if !ok {
		return c.wrongType("response_format.type", typeString, t)
	}
	allowed := []string{"json_object", "json_schema", "text"}
	if c.p.deepseek {
		allowed = []string{"text", "json_object"}
	}
	if !slices.Contains(allowed, s) {
		return c.badValue("response_format.type", s, allowed, t)
	}
	if s == "json_schema" {
		js := o.get("json_schema")
		if js.null() {
			return c.missing(o, "response_format", "json_schema")
		}
		if js.kind() != '{' {
			return c.wrongType("response_format.json_schema", typeObject, js)
		}
		if jo := readObject(c.s, js.start); jo.get("name").null() {
			return c.missing(jo, "response_format.json_schema", "name")
		}
	}
	return nil
}

// jsonNumber reads a JSON number.
func jsonNumber(v jval) (float64, bool) {
	if k := v.kind(); k != '-' && (k < '0' || k > '9') {
		return 0, false
	}
	f, err := strconv.ParseFloat(v.raw, 64)
	return f, err == nil
}

func (c *checker) maxTokens(name string) func(v jval) *adapters.SimError {
	return func(v jval) *adapters.SimError {
		if c.p.deepseek && name != "max_tokens" {
			return nil // not a DeepSeek field: its parser skips it
		}
		f, ok := jsonNumber(v)
		if !ok {
			return c.wrongType(name, typeInteger, v)
		}
		if f != math.Trunc(f) {
			if c.p.deepseek {
				return c.deser(name, "invalid type: "+serdeUnexpected(v.raw)+", expected u32", v.end)
			}
			return c.invalid("Invalid type for '"+name+"': expected an integer, but got a decimal number instead.", name, "invalid_type")
		}
		if c.p.deepseek {
			if f < 0 || f > math.MaxUint32 {
				return c.deser(name, "invalid value: integer `"+v.raw+"`, expected u32", v.end)
			}
			// The range is DeepSeek's own check, after parsing
			// (deepSeekValues).
		} else if f < 1 {
			return c.invalid(fmt.Sprintf("Invalid '%s': integer below minimum value. Expected a value >= 1, but got %s instead.", name, v.raw), name, "integer_below_min_value")
		}
		if name == "max_completion_tokens" || c.in.MaxOutputTokens == 0 {
			c.in.MaxOutputTokens = int(min(f, math.MaxInt32))
		}
		return nil
	}
}

func (c *checker) temperature(v jval) *adapters.SimError {
	f, ok := jsonNumber(v)
	if !ok {
		return c.wrongType("temperature", typeDecimal, v)
	}
	if c.p.deepseek {
		return nil // the range is checked after parsing
	}
	switch {
	case f > 2:
		return c.invalid("Invalid 'temperature': decimal above maximum value. Expected a value <= 2, but got "+v.raw+" instead.", "temperature", "decimal_above_max_value")
	case f < 0:
		return c.invalid("Invalid 'temperature': decimal below minimum value. Expected a value >= 0, but got "+v.raw+" instead.", "temperature", "decimal_below_min_value")
	}
	return nil
}

// reasoningEffort: a string; DeepSeek parses it into its enum.
func (c *checker) reasoningEffort(v jval) *adapters.SimError {
	s, ok := v.str()
	if !ok {
		return c.wrongType("reasoning_effort", typeString, v)
	}
	if efforts := []string{"none", "minimal", "low", "medium", "high", "xhigh", "max"}; c.p.deepseek && !slices.Contains(efforts, s) {
		return c.badValue("reasoning_effort", s, efforts, v)
	}
	return nil
}

// thinking is DeepSeek's switch; OpenAI does not read it.
func (c *checker) thinking(v jval) *adapters.SimError {
	if !c.p.deepseek {
		return nil
	}
	if v.kind() != '{' {
		return c.wrongType("thinking", typeObject, v)
	}
	o := readObject(c.s, v.start)
	t := o.get("type")
	if t.null() {
		return c.missing(o, "thinking", "type")
	}
	s, ok := t.str()
	if !ok {
		return c.wrongType("thinking.type", typeString, t)
	}
	if kinds := []string{"enabled", "disabled"}; !slices.Contains(kinds, s) {
		return c.badValue("thinking.type", s, kinds, t)
	}
	return nil
}

func (c *checker) stream(v jval) *adapters.SimError {
	if v.raw != "true" && v.raw != "false" {
		return c.wrongType("stream", typeBool, v)
	}
	c.in.Stream = v.raw == "true"
	return nil
}

func (c *checker) streamOptions(v jval) *adapters.SimError {
	if v.kind() != '{' {
		return c.wrongType("stream_options", typeObject, v)
	}
	o := readObject(c.s, v.start)
	if iu := o.get("include_usage"); !iu.null() {
		if iu.raw != "true" && iu.raw != "false" {
			return c.wrongType("stream_options.include_usage", typeBool, iu)
		}
		c.in.IncludeUsage = iu.raw == "true"
	}
	if !c.p.deepseek && c.top.get("stream").raw != "true" {
		return c.invalid("The 'stream_options' parameter is only allowed when 'stream' is enabled.", "stream_options", "")
	}
	return nil
}

// deepSeekValues are DeepSeek's checks after parsing, in its order.
func (c *checker) deepSeekValues() *adapters.SimError {
	if !c.p.deepseek {
		return nil
	}
	if rf := c.top.get("response_format"); rf.kind() == '{' {
		if t, _ := readObject(c.s, rf.start).get("type").str(); t == "json_object" && !c.mentionsJSON() {
			return c.invalid("Prompt must contain the word 'json' in some form to use 'response_format' of type 'json_object'.", "", "")
		}
	}
	if f, ok := jsonNumber(c.top.get("temperature")); ok && (f < 0 || f > 2) {
		return c.invalid("Invalid temperature value, the valid range of temperature is [0, 2]", "", "")
	}
	if f, ok := jsonNumber(c.top.get("max_tokens")); ok && (f < 1 || f > 393216) {
		return c.invalid("Invalid max_tokens value, the valid range of max_tokens is [1, 393216]", "", "")
	}
	return nil
}

// mentionsJSON: some message's text says "json", in any case.
func (c *checker) mentionsJSON() bool {
	for _, m := range c.msgs {
		if strings.Contains(strings.ToLower(messageText(m.obj.get("content"))), "json") {
			return true
		}
	}
	return false
}

// messageText is a message content's text: the string, or the text parts
// joined.
func messageText(v jval) string {
	switch v.kind() {
	case '"':
		s, _ := v.str()
		return s
	case '[':
		var b strings.Builder
		for _, part := range gjson.Parse(v.raw).Array() {
			if part.Get("type").String() == "text" {
				b.WriteString(part.Get("text").String())
			}
		}
		return b.String()
	}
	return ""
}

// nullContent is OpenAI's last field check: every message needs content,
// except an assistant message that carries tool_calls, a function_call or
// a refusal instead.
func (c *checker) nullContent() *adapters.SimError {
	if c.p.deepseek {
		return nil
	}
	for i, m := range c.msgs {
		if !m.obj.get("content").null() {
			continue
		}
		if m.role == "assistant" && (len(m.calls) > 0 || !m.obj.get("function_call").null() || !m.obj.get("refusal").null() || !m.obj.get("audio").null()) {
			continue
		}
		if m.role == "developer" {
			return c.missing(m.obj, fmt.Sprintf("messages[%d]", i), "content")
		}
		return c.invalid("Invalid value for 'content': expected a string, got null.", fmt.Sprintf("messages.[%d].content", i), "")
	}
	return nil
}

// toolChain checks that tool results answer calls: each role:"tool"
// message answers a call of the assistant message before its run of tool
// messages, and every call of that message is answered before the next
// other message (or the end). It counts the model turns and collects the
// results.
func (c *checker) toolChain() *adapters.SimError {
	names := map[string]string{}
	var pending []string // the open assistant message's unanswered ids
	open := -1           // that message's index; -1: none
	answered := map[string]bool{}
	unanswered := func() *adapters.SimError {
		if len(pending) == 0 {
			return nil
		}
		if c.p.deepseek {
			return c.invalid("An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. (insufficient tool messages following tool_calls message)", "", "")
		}
		return c.invalid("An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: "+strings.Join(pending, ", "),
			fmt.Sprintf("messages.[%d].role", open), "")
	}
	for i, m := range c.msgs {
		if m.role != "tool" {
			if e := unanswered(); e != nil {
				return e
			}
			pending, open, answered = nil, -1, map[string]bool{}
			if m.role == "assistant" {
				c.in.ModelTurns++
				if len(m.calls) > 0 {
					open = i
					for _, call := range m.calls {
						pending = append(pending, call.id)
						names[call.id] = call.name
					}
				}
			}
			continue
		}
		id := m.toolCallID
		isPending := slices.Contains(pending, id)
		switch {
		case (!c.p.deepseek && open < 0) || (c.p.deepseek && len(pending) == 0):
			// DeepSeek consumes a call as it is answered, so an answer
			// after the last one is an orphan too.
			if c.p.deepseek {
				return c.invalid("Messages with role 'tool' must be a response to a preceding message with 'tool_calls'", "", "")
			}
			return c.invalid("Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.", fmt.Sprintf("messages.[%d].role", i), "")
		case !isPending && (c.p.deepseek || !answered[id]):
			if c.p.deepseek {
				return c.invalid("An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id', The following tool_call_ids did not have response messages: "+id, "", "")
			}
			return c.invalid("Invalid parameter: 'tool_call_id' of '"+id+"' not found in 'tool_calls' of previous message.", fmt.Sprintf("messages.[%d].tool_call_id", i), "")
		}
		if isPending {
			answered[id] = true
			pending = slices.DeleteFunc(pending, func(x string) bool { return x == id })
		}
		c.in.Results = append(c.in.Results, adapters.ToolResult{CallID: id, Name: names[id], Content: messageText(m.obj.get("content"))})
	}
	return unanswered()
}

// passback is DeepSeek's thinking-mode rule: a request that continues a
// tool loop (it ends on a tool result) must carry the reasoning_content of
// the assistant message that made the calls. Thinking is on unless the
// request turns it off (thinking disabled, reasoning_effort none, or the
// legacy non-thinking model name deepseek-chat); the vision model does not
// enforce it. The check is on presence: "" passes, null does not.
func (c *checker) passback() *adapters.SimError {
	if !c.p.deepseek || len(c.msgs) == 0 || c.msgs[len(c.msgs)-1].role != "tool" {
		return nil
	}
	if !deepseekThinks(gjson.Parse(c.s), c.in.Model) {
		return nil
	}
	for i := len(c.msgs) - 1; i >= 0; i-- {
		if m := c.msgs[i]; m.role == "assistant" {
			if m.obj.get("reasoning_content").kind() != '"' {
				return c.invalid("The `reasoning_content` in the thinking mode must be passed back to the API.", "", "")
			}
			break
		}
	}
	return nil
}
