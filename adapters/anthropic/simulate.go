package anthropic

import (
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/wire"
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

// simID is prefix + 22 base58 characters from the seed and salt: the first
// 11 encode a bijection of the seed, so two seeds never share an id.
func simID(prefix string, seed, salt uint64) string {
	var b strings.Builder
	b.WriteString(prefix)
	wire.Digits(&b, base58, adapters.SimWord(seed, salt), 11)
	wire.Digits(&b, base58, adapters.SimWord(seed, salt^0xa5a5a5a5a5a5a5a5), 11)
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
	wire.Digits(&b, base58, adapters.SimWord(requestEpoch, n), 11)
	wire.Digits(&b, base58, adapters.SimWord(n, requestEpoch), 9)
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

// ---- Simulated --------------------------------------------------------------

// ResponseID is the message id.
func (protocol) ResponseID(o adapters.ResponseOptions) string {
	if o.ResponseID != "" {
		return o.ResponseID
	}
	return simID("msg_01", o.Seed, saltMessage)
}

// ResponseHeaders are a successful response's headers: request-id (the SDK
// keeps it as RequestID), the organization and the rate-limit counters
// (protocols.md §3.1, §6.4; resets are RFC 3339).
func (protocol) ResponseHeaders(stream bool) http.Header {
	h := fixedHeaders.Header(len(resetHeaders) + 1)
	h["Request-Id"] = []string{newRequestID()}
	reset := []string{time.Now().UTC().Add(time.Second).Format(time.RFC3339)}
	for _, k := range resetHeaders {
		h[k] = reset
	}
	return h
}

// fixedHeaders are the headers of a successful response that never
// change: the organization and the rate limits; resetHeaders are the
// limits' reset times, a second from now.
var fixedHeaders, resetHeaders = func() (adapters.FixedHeaders, []string) {
	pairs := []string{"anthropic-organization-id", organizationID}
	var resets []string
	for _, l := range []struct {
		name         string
		limit, spent int
	}{{"requests", 4000, 1}, {"input-tokens", 2000000, 2000}, {"output-tokens", 400000, 0}, {"tokens", 2400000, 2000}} {
		pairs = append(pairs, "anthropic-ratelimit-"+l.name+"-limit", strconv.Itoa(l.limit),
			"anthropic-ratelimit-"+l.name+"-remaining", strconv.Itoa(l.limit-l.spent))
		resets = append(resets, http.CanonicalHeaderKey("anthropic-ratelimit-"+l.name+"-reset"))
	}
	return adapters.NewFixedHeaders(pairs...), resets
}()

// LineEnd: the API ends SSE lines with \n.
func (protocol) LineEnd() string { return "\n" }
