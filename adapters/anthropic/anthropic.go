// Package anthropic is the anthropic-messages wire format: Anthropic's
// Messages API (POST /v1/messages), both directions.
//
// Encode builds the request body (system blocks, the first user message,
// replayed assistant turns with their thinking signatures, tool results,
// tools, tool_choice, output_config, thinking). The stream decoder turns the
// SSE events (message_start, content_block_*, message_delta, message_stop,
// ping, error) into canonical events; DecodeBody does the same for a whole
// Message object. protocols.md §3 and §6 are the reference.
//
// EventDecoder is exported so that the claude-code adapter, whose
// stream_event lines wrap raw Anthropic stream events, decodes them with
// exactly the same code.
package anthropic

import (
	"net/http"

	"github.com/modelwire/modelwire/adapters"
)

// APIVersion is the anthropic-version header the official SDK sends.
const APIVersion = "2023-06-01"

// Path is the Messages endpoint as the server sees it.
const Path = "/v1/messages"

// RedactedPrefix marks the Signature of a reasoning item that came from a
// redacted_thinking block: the rest is the block's opaque data. The
// canonical OutputItem has no flag for it, and a thinking signature is
// base64 (it never contains ':'), so the prefix cannot be confused with a
// real signature. Encode turns such an item back into a redacted_thinking
// block.
const RedactedPrefix = "redacted_thinking:"

// Diagnostic kinds this adapter adds to the shared ones (protocols.md §8.4).
const (
	// DiagEventNameMismatch: the SSE event name differs from the JSON type.
	DiagEventNameMismatch = "event_name_mismatch"
	// DiagMissingStopReason: message_stop arrived without any stop_reason.
	DiagMissingStopReason = "missing_stop_reason"
)

type protocol struct{}

// New returns the anthropic-messages protocol.
func New() adapters.Protocol { return protocol{} }

func (protocol) Name() string                 { return adapters.AnthropicMessages }
func (protocol) Framing() adapters.Framing    { return adapters.FramingSSE }
func (protocol) NewDecoder() adapters.Decoder { return NewEventDecoder() }

// DecodeError decodes an Anthropic error response:
// {"type":"error","error":{"type","message"},"request_id"}, with
// Retry-After. A body that is not Anthropic's JSON (a proxy's HTML page, an
// empty 529) still gets the error type the status stands for (§6.2).
func (protocol) DecodeError(status int, h http.Header, body []byte) *adapters.APIError {
	e := adapters.GenericError(status, h, body)
	if e.Type == "http_error" || e.Type == "error" {
		if t := errorTypeForStatus(status); t != "" {
			e.Type = t
		}
	}
	return e
}

// errorTypeForStatus is Anthropic's error.type for each documented status
// (protocols.md §6.2, ANT-DOC-ERR and the SDK's enum).
func errorTypeForStatus(status int) string {
	switch status {
	case 400:
		return "invalid_request_error"
	case 401:
		return "authentication_error"
	case 402:
		return "billing_error"
	case 403:
		return "permission_error"
	case 404:
		return "not_found_error"
	case 413:
		return "request_too_large"
	case 429:
		return "rate_limit_error"
	case 500:
		return "api_error"
	case 504:
		return "timeout_error"
	case 529:
		return "overloaded_error"
	}
	return ""
}

// StopFor maps an Anthropic stop_reason to the canonical status and stop
// reason (contract.md, "Terminal status and stop reason"). ok is false for
// a stop_reason this adapter does not know.
func StopFor(reason string) (status adapters.Status, stop adapters.StopReason, ok bool) {
	switch reason {
	case "end_turn":
		return adapters.StatusCompleted, adapters.StopFinal, true
	case "tool_use":
		return adapters.StatusCompleted, adapters.StopToolCall, true
	case "stop_sequence":
		return adapters.StatusCompleted, adapters.StopStopSequence, true
	case "max_tokens", "model_context_window_exceeded":
		return adapters.StatusIncomplete, adapters.StopTruncated, true
	case "pause_turn":
		return adapters.StatusIncomplete, adapters.StopPause, true
	case "refusal":
		return adapters.StatusRefused, adapters.StopRefusal, true
	}
	return adapters.StatusUnknown, adapters.StopUnknown, false
}

// TerminalFor builds the terminal for a stop_reason, preceded by a
// diagnostic when the reason is missing or unknown.
func TerminalFor(reason string) []adapters.Event {
	status, stop, ok := StopFor(reason)
	if ok {
		return []adapters.Event{adapters.Terminal(status, stop, reason)}
	}
	var d adapters.Event
	if reason == "" {
		d = adapters.Diag(DiagMissingStopReason, "the message ended without a stop_reason")
	} else {
		d = adapters.Diag(adapters.DiagUnknownEvent, "unknown stop_reason "+quote(reason))
	}
	return []adapters.Event{d, adapters.Terminal(status, stop, reason)}
}
