// Package adapters holds modelwire's provider-neutral model of an LLM
// exchange — the canonical request, the canonical stream events, the
// per-response reducer and summary — and the interface every wire-format
// adapter implements. Everything else in modelwire imports it; it imports
// nothing of the UI or the store.
package adapters

import "encoding/json"

// EventType names a canonical event. The names and fields are part of the
// external contract (shared/spec/contract.md, "Canonical events").
type EventType string

// The canonical event types.
const (
	EvResponseStarted EventType = "response.started"
	EvItemStarted     EventType = "item.started"
	EvTextDelta       EventType = "text.delta"
	EvReasoningDelta  EventType = "reasoning.delta"
	EvRefusalDelta    EventType = "refusal.delta"
	EvToolArgsDelta   EventType = "tool.args.delta"
	EvItemDone        EventType = "item.done"
	EvToolProposed    EventType = "tool.proposed"
	EvUsage           EventType = "usage"
	EvTerminal        EventType = "response.terminal"
	EvUnknown         EventType = "provider.unknown"
	EvDiagnostic      EventType = "diagnostic"
)

// ItemKind is the kind of an output item (one lane in the UI).
type ItemKind string

// The item kinds.
const (
	KindMessage   ItemKind = "message"
	KindReasoning ItemKind = "reasoning"
	KindToolCall  ItemKind = "tool_call"
	KindRefusal   ItemKind = "refusal"
)

// Diagnostic kinds. The first group is required by the contract; the rest
// name finer framing facts from protocols.md §8.4.
const (
	DiagDuplicateEvent    = "duplicate_event"
	DiagOutOfOrder        = "out_of_order"
	DiagLateEvent         = "late_event"
	DiagUnknownEvent      = "unknown_event"
	DiagMalformedEvent    = "malformed_event"
	DiagStreamCut         = "stream_cut"
	DiagToolArgsInvalid   = "tool_args_invalid"
	DiagErrorEvent        = "error_event"
	DiagMissingDone       = "missing_done_sentinel"
	DiagMissingStop       = "missing_message_stop"
	DiagConflictingCallID = "conflicting_call_id"
	DiagTextDoneMismatch  = "text_done_mismatch"
	DiagArgsDoneMismatch  = "arguments_done_mismatch"
	DiagBOMStripped       = "bom_stripped"
	DiagBareCR            = "bare_cr_line_endings"
	DiagDiscardedTail     = "eof_discarded_partial_event"
	DiagInvalidUTF8       = "invalid_utf8_replaced"
	DiagEventTooLarge     = "event_too_large"
	DiagReadError         = "read_error"
	DiagSequenceGap       = "sequence_gap"
	DiagUnknownItem       = "unknown_item"
)

// Event is one canonical event. Which fields are set depends on Type; the
// JSON form is the contract's. Kind carries the item kind for item.started
// and the diagnostic kind for diagnostic events.
type Event struct {
	Seq  int       `json:"seq"`
	Type EventType `json:"type"`

	ResponseID string `json:"response_id,omitempty"`
	Model      string `json:"model,omitempty"`

	ItemID string `json:"item_id,omitempty"`
	Kind   string `json:"kind,omitempty"`
	CallID string `json:"call_id,omitempty"`
	Name   string `json:"name,omitempty"`
	Delta  string `json:"delta,omitempty"`

	// Arguments is the parsed argument object of tool.proposed.
	Arguments json.RawMessage `json:"arguments,omitempty"`

	// Final is the provider's own full text of an item, when it sends one at
	// close (Responses `*.done` events, non-streaming bodies). When it
	// differs from the concatenated deltas the provider's text wins.
	Final *string `json:"final,omitempty"`
	// Signature is opaque provider state that must be replayed with the
	// item in later turns (Anthropic thinking signature, Responses
	// encrypted reasoning, Gemini thoughtSignature, DeepSeek keeps none).
	Signature string `json:"signature,omitempty"`

	*Usage `json:",omitempty"`

	Status             Status     `json:"status,omitempty"`
	StopReason         StopReason `json:"stop_reason,omitempty"`
	ProviderStopReason string     `json:"provider_stop_reason,omitempty"`
	// Error is set on a terminal that ended in a provider error.
	Error *APIError `json:"error,omitempty"`

	RawType string `json:"raw_type,omitempty"`
	Detail  string `json:"detail,omitempty"`
}

// Usage is token usage normalised so that no number is counted twice (see
// contract.md "Summary object"). Nil fields mean the provider gave none.
type Usage struct {
	InputTokens      *int64 `json:"input_tokens"`
	OutputTokens     *int64 `json:"output_tokens"`
	CacheReadTokens  *int64 `json:"cache_read_tokens"`
	CacheWriteTokens *int64 `json:"cache_write_tokens"`
	ReasoningTokens  *int64 `json:"reasoning_tokens"`
	// CacheWrite1hTokens is the part of CacheWriteTokens written for an
	// hour rather than five minutes (Anthropic prices the two apart).
	CacheWrite1hTokens *int64 `json:"cache_write_1h_tokens,omitempty"`
	// WebSearchCalls are server-side web searches, billed per call.
	WebSearchCalls *int64          `json:"web_search_calls,omitempty"`
	ProviderUsage  json.RawMessage `json:"provider_usage,omitempty"`
}

// Int returns a pointer to n, for building Usage values.
func Int(n int64) *int64 { return &n }

// Status is a response's terminal status.
type Status string

// Terminal statuses.
const (
	StatusCompleted  Status = "completed"
	StatusRefused    Status = "refused"
	StatusIncomplete Status = "incomplete"
	StatusFailed     Status = "failed"
	StatusCancelled  Status = "cancelled"
	StatusUnknown    Status = "unknown"
)

// StopReason is why a response stopped, in canonical terms.
type StopReason string

// Stop reasons.
const (
	StopFinal        StopReason = "final"
	StopToolCall     StopReason = "tool_call"
	StopTruncated    StopReason = "truncated"
	StopRefusal      StopReason = "refusal"
	StopPause        StopReason = "pause"
	StopStopSequence StopReason = "stop_sequence"
	StopError        StopReason = "error"
	StopUnknown      StopReason = "unknown"
)

// Diag builds a diagnostic event.
func Diag(kind, detail string) Event {
	return Event{Type: EvDiagnostic, Kind: kind, Detail: detail}
}

// Terminal builds a response.terminal event.
func Terminal(status Status, reason StopReason, provider string) Event {
	return Event{Type: EvTerminal, Status: status, StopReason: reason, ProviderStopReason: provider}
}
