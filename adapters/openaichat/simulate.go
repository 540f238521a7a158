package openaichat

import (
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/wire"
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
	// simEpoch is the created time of seed 0 (2026-01-05) when the server
	// gives no time: created is then simEpoch + seed, so the bytes follow
	// the seed alone.
	simEpoch = 1767571200
)

// ---- ids ----------------------------------------------------------------

// simID is prefix + n base62 characters (n ≥ 11): the first 11 encode a
// bijection of the seed, so two seeds never share an id of one salt.
func simID(prefix string, seed, salt uint64, n int) string {
	var b strings.Builder
	b.WriteString(prefix)
	for k := uint64(0); b.Len() < len(prefix)+n; k++ {
		wire.Digits(&b, wire.Base62, adapters.SimWord(seed, salt+k*0x1000193), 11)
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
	if o.ResponseID != "" {
		return o.ResponseID
	}
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
	prefix := "req_"
	if p.deepseek {
		prefix = ""
	}
	return adapters.SimHex(prefix, adapters.SimWord(requestEpoch, n), adapters.SimWord(n, requestEpoch))
}

func (p protocol) requestIDHeader() string {
	if p.deepseek {
		return "x-ds-trace-id"
	}
	return "x-request-id"
}

// The headers of a successful response that never change: OpenAI's API
// version and rate-limit counters (protocols.md §6.4), DeepSeek's CORS
// answer.
var (
	fixedHeaders = adapters.NewFixedHeaders("openai-version", "2020-10-01",
		"openai-organization", "user-modelwire-sim", "openai-project", "proj_modelwireSimulator000",
		"x-ratelimit-limit-requests", "10000", "x-ratelimit-limit-tokens", "30000000",
		"x-ratelimit-remaining-requests", "9999", "x-ratelimit-remaining-tokens", "29998000",
		"x-ratelimit-reset-requests", "6ms", "x-ratelimit-reset-tokens", "4ms")
	deepseekFixedHeaders = adapters.NewFixedHeaders("vary", "origin, access-control-request-method, access-control-request-headers",
		"access-control-allow-credentials", "true")
	processingMS       = []string{"412"}
	processingMSStream = []string{"187"} // time to the first byte
)

// ResponseHeaders are a successful response's headers: OpenAI's request id,
// processing time, API version and rate-limit counters;
// DeepSeek's trace id.
func (p protocol) ResponseHeaders(stream bool) http.Header {
	if p.deepseek {
		h := deepseekFixedHeaders.Header(1)
		h["X-Ds-Trace-Id"] = []string{p.requestID()}
		return h
	}
	h := fixedHeaders.Header(2)
	h["X-Request-Id"] = []string{p.requestID()}
	h["Openai-Processing-Ms"] = processingMS
	if stream {
		h["Openai-Processing-Ms"] = processingMSStream
	}
	return h
}

// LineEnd: both APIs end SSE lines with \n.
func (protocol) LineEnd() string { return "\n" }
