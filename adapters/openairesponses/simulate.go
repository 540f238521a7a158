package openairesponses

import (
	"encoding/base64"
	"encoding/binary"
	"maps"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/wire"
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
	b := make([]byte, 0, len(prefix)+len(simAccount)+34)
	b = append(append(append(b, prefix...), simAccount...), "00"...)
	b = adapters.AppendHex(b, uint64(uint32(at)), 8)
	b = adapters.AppendHex(b, adapters.SimWord(seed, salt^simSaltFrac)&0xffff, 4)
	b = adapters.AppendHex(append(b, "8190"...), adapters.SimWord(seed, salt), 16)
	return string(b)
}

// simCallID is call_ + 24 alphanumerics; the first 11 encode a bijection
// of the seed.
func simCallID(seed uint64, index int) string {
	var b strings.Builder
	b.WriteString("call_")
	salt := simSaltCall + uint64(index)<<32
	wire.Digits(&b, wire.Base62, adapters.SimWord(seed, salt), 11)
	wire.Digits(&b, wire.Base62, adapters.SimWord(seed, salt^0xa5a5a5a5a5a5a5a5), 13)
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
	b.Grow(n)
	for i := 0; i < n; i++ {
		b.WriteByte(wire.Base62[adapters.SimWord(seed, simSaltObfuscate+uint64(seq)<<24+uint64(i))%62])
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
	return adapters.SimHex("req_", adapters.SimWord(simRequestEpoch, n), adapters.SimWord(n, simRequestEpoch))
}

// ResponseID is the resp_ id a rendered response carries for the seed.
func (Protocol) ResponseID(o adapters.ResponseOptions) string {
	if o.ResponseID != "" {
		return o.ResponseID
	}
	return simID("resp_", o.Seed, simSaltResponse, simCreated(o))
}

// simLimits and simLimitsExhausted are the x-ratelimit-* headers
// (protocols.md §6.4), with requests to spare and with none left.
var (
	simLimits = adapters.NewFixedHeaders("x-ratelimit-limit-requests", "5000", "x-ratelimit-limit-tokens", "4000000",
		"x-ratelimit-remaining-requests", "4999", "x-ratelimit-remaining-tokens", "3997469",
		"x-ratelimit-reset-requests", "12ms", "x-ratelimit-reset-tokens", "37ms")
	simLimitsExhausted = adapters.NewFixedHeaders("x-ratelimit-limit-requests", "5000", "x-ratelimit-limit-tokens", "4000000",
		"x-ratelimit-remaining-requests", "0", "x-ratelimit-remaining-tokens", "0",
		"x-ratelimit-reset-requests", "1s", "x-ratelimit-reset-tokens", "1s")
	// simFixed are a successful response's headers that never change.
	simFixed = func() adapters.FixedHeaders {
		f := adapters.NewFixedHeaders("openai-version", "2020-10-01", "openai-organization", "modelwire-sim")
		maps.Copy(f, simLimits)
		return f
	}()
)

// simRateLimits sets the x-ratelimit-* headers.
func simRateLimits(h http.Header, exhausted bool) {
	if exhausted {
		maps.Copy(h, simLimitsExhausted)
		return
	}
	maps.Copy(h, simLimits)
}

// ResponseHeaders are a successful response's headers: x-request-id,
// openai-processing-ms, openai-version, openai-organization and the
// rate-limit counters (protocols.md §1.1, §6.4).
func (Protocol) ResponseHeaders(stream bool) http.Header {
	h := simFixed.Header(2)
	h["X-Request-Id"] = []string{simRequestID()}
	ms := 180 + simRequestSeq.Load()%240
	if stream {
		ms = 90 + simRequestSeq.Load()%120 // time to the first byte
	}
	h["Openai-Processing-Ms"] = []string{strconv.FormatUint(ms, 10)}
	return h
}

// LineEnd: the API ends SSE lines with \n.
func (Protocol) LineEnd() string { return "\n" }
