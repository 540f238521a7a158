// Package openairesponses is the OpenAI Responses API wire format
// (protocol "openai-responses"): POST /v1/responses, its typed SSE events
// and its Response object (shared/spec/protocols.md §1).
//
// Item ids. Every output item keeps the provider's item id (rs_…, fc_…,
// msg_…). A message item can carry both output_text and refusal content
// parts; the canonical model gives refusal its own lane, so the decoder
// splits such a message in two items: "<msg id>" (kind message, the
// output_text parts) and "<msg id>:refusal" (kind refusal, the refusal
// parts). The message lane opens at response.output_item.added; the
// refusal lane opens at the first refusal content part, refusal delta, or
// refusal part in the closed item. Both close at response.output_item.done.
// A reasoning item's summary parts and reasoning_text parts go to one
// reasoning lane, separated by a blank line.
package openairesponses

import (
	"net/http"

	"github.com/modelwire/modelwire/adapters"
)

// refusalSuffix names the refusal lane of a message item.
const refusalSuffix = ":refusal"

// Protocol is the OpenAI Responses adapter.
type Protocol struct{}

// New returns the OpenAI Responses adapter.
func New() adapters.Protocol { return Protocol{} }

// Name is "openai-responses".
func (Protocol) Name() string { return adapters.OpenAIResponses }

// Framing is SSE: every event is `event: <type>` plus one `data:` line.
func (Protocol) Framing() adapters.Framing { return adapters.FramingSSE }

// NewDecoder starts decoding one streamed response.
func (Protocol) NewDecoder() adapters.Decoder { return newDecoder() }

// DecodeError reads an OpenAI error body,
// {"error":{"message","type","param","code"}} (protocols.md §6.1), with
// the retry delay from Retry-After-Ms / Retry-After.
func (Protocol) DecodeError(status int, h http.Header, body []byte) *adapters.APIError {
	return adapters.GenericError(status, h, body)
}
