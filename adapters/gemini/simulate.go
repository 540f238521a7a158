package gemini

import (
	"encoding/base64"
	"encoding/binary"
	"net/http"
	"strconv"
	"sync/atomic"

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

// ResponseID is the responseId every chunk carries.
func (Protocol) ResponseID(o adapters.ResponseOptions) string {
	if o.ResponseID != "" {
		return o.ResponseID
	}
	return simResponseID(o.Seed)
}

// simTiming numbers responses for Server-Timing (not part of any rendered
// turn, so it need not follow the seed).
var simTiming atomic.Uint64

// simHeaders are the headers Google's front end puts on every answer. The
// Gemini API sends no request id header and no rate-limit headers
// (protocols.md §6.4).
func simHeaders() http.Header {
	h := simFixed.Header(2)
	h["Server-Timing"] = []string{"gfet4t7; dur=" + strconv.FormatUint(380+adapters.SimWord(simTiming.Add(1), 0x74696d65)%1400, 10)}
	return h
}

// attachment is a stream's Content-Disposition.
var attachment = []string{"attachment"}

// simFixed are the front end's headers that never change.
var simFixed = func() adapters.FixedHeaders {
	f := adapters.NewFixedHeaders("Server", "scaffolding on HTTPServer2", "X-Xss-Protection", "0",
		"X-Frame-Options", "SAMEORIGIN", "X-Content-Type-Options", "nosniff")
	f["Vary"] = []string{"Origin", "X-Origin", "Referer"}
	return f
}()

// ResponseHeaders are a successful response's headers; a stream is also
// sent as an attachment, as Google's streaming front end does.
func (Protocol) ResponseHeaders(stream bool) http.Header {
	h := simHeaders()
	if stream {
		h["Content-Disposition"] = attachment
	}
	return h
}

// LineEnd: the API ends SSE lines with CRLF (protocols.md §4.1).
func (Protocol) LineEnd() string { return "\r\n" }
