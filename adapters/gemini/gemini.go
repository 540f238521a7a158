// Package gemini is the wire-format adapter for the Google Gemini API:
// POST /v1beta/models/{model}:generateContent and
// :streamGenerateContent?alt=sse (protocols.md §4).
//
// Encoding puts system sources, then developer sources (Gemini has no
// developer role), in systemInstruction parts; the task and the labelled
// context material are the parts of the first user content; tools are one
// functionDeclarations group with full JSON Schema in parametersJsonSchema;
// history is each model content replayed with its thoughtSignature, then
// one user content of functionResponse parts in call order.
//
// Decoding reads data-only SSE (CRLF framed, no [DONE]) in which every
// chunk is a whole GenerateContentResponse: text parts are increments of
// one message lane (thought parts of one reasoning lane), each functionCall
// part is a whole call, and the chunk carrying finishReason ends the
// response.
package gemini

import "github.com/modelwire/modelwire/adapters"

// SyntheticCallIDPrefix starts the call ids the decoder makes up for
// functionCall parts that carry no id (the Gemini API often sends none).
// The encoder recognises the prefix and leaves such ids out of the replayed
// functionCall and functionResponse parts, since the provider never sent
// them: Gemini then matches results to calls by order and name.
const SyntheticCallIDPrefix = "gemini-call-"

// Protocol is the Gemini adapter.
type Protocol struct{}

// New returns the Gemini protocol adapter.
func New() adapters.Protocol { return Protocol{} }

// Name is the contract name "gemini".
func (Protocol) Name() string { return adapters.Gemini }

// Framing is SSE: streamGenerateContent?alt=sse.
func (Protocol) Framing() adapters.Framing { return adapters.FramingSSE }

// NewDecoder starts decoding one streamed response.
func (Protocol) NewDecoder() adapters.Decoder { return &decoder{} }
