package adapters

import (
	"encoding/json"
	"net/http"
)

// This file is the simulator's side of each wire format: reading a request
// the way the provider checks it, and writing a scripted model turn as the
// provider's exact bytes. The server itself lives in package sim.

// ModelTurn is one scripted model response, provider-neutral.
type ModelTurn struct {
	// Items in output order: reasoning, message text, tool calls (Arguments
	// is the exact argument text the model sends), refusal.
	Items []OutputItem `json:"items"`
	// Stop is final, tool_call, truncated or refusal.
	Stop StopReason `json:"stop"`
	// Usage reported for the turn; nil fields are left out where the
	// protocol allows.
	Usage Usage `json:"usage"`
}

// Phase says what a wire event carries, so faults can pick their moment
// (cut the connection in the middle of tool arguments, drop the terminal…)
// without knowing the protocol.
type Phase string

// Phases.
const (
	PhaseStart     Phase = "start"     // response created, item or block started
	PhaseText      Phase = "text"      // a text delta
	PhaseReasoning Phase = "reasoning" // a reasoning delta
	PhaseArgs      Phase = "args"      // a tool-argument delta
	PhaseItemDone  Phase = "item_done" // an item or block closed
	PhaseUsage     Phase = "usage"     // a usage-only event
	PhaseTerminal  Phase = "terminal"  // the terminal event(s), incl. [DONE]
	PhaseOther     Phase = "other"     // pings and the like
)

// WireEvent is one SSE event the simulator writes.
type WireEvent struct {
	Event string `json:"event,omitempty"` // SSE event name; "" for data-only protocols
	Data  string `json:"data"`
	Phase Phase  `json:"phase"`
}

// Inbound is what the simulator needs from a request after checking it.
type Inbound struct {
	Model  string
	Stream bool
	// IncludeUsage: Chat's stream_options.include_usage.
	IncludeUsage bool
	// ModelTurns is how many model turns the request's history carries
	// (for previous_response_id, the length of the stored chain is added
	// by the server).
	ModelTurns int
	// Results are the tool results the request carries, in order.
	Results []ToolResult
	// PreviousResponseID and Store are OpenAI Responses' chaining fields.
	PreviousResponseID string
	Store              *bool
	MaxOutputTokens    int
	// Tools are the names of the tools the request offers.
	Tools []string
}

// ResponseOptions shape one simulated response.
type ResponseOptions struct {
	Model string
	// Seed makes ids deterministic: the same seed gives the same ids.
	Seed uint64
	// IncludeUsage: Chat's usage-only chunk before [DONE].
	IncludeUsage bool
	// Fragment splits text and argument text into realistic pieces; nil
	// uses the default (a few bytes, never inside a UTF-8 character).
	Fragment func(s string) []string
}

// Simulated is implemented by every adapter the simulator can speak.
type Simulated interface {
	// CheckRequest validates a request as the real provider does and
	// returns its facts, or the provider's own error (status and body).
	CheckRequest(method, path string, h http.Header, body []byte) (*Inbound, *SimError)
	// StreamEvents renders a turn as the provider's stream events.
	StreamEvents(t ModelTurn, o ResponseOptions) []WireEvent
	// Body renders a turn as the provider's non-streaming JSON body.
	Body(t ModelTurn, o ResponseOptions) []byte
	// ErrorResponse is the provider's HTTP error for a fault (status, body,
	// headers), e.g. a 429 with Retry-After or Anthropic's 529.
	ErrorResponse(status int, kind, message string) *SimError
	// ErrorEvent is the in-stream error after a 200.
	ErrorEvent(kind, message string) []WireEvent
	// ResponseID extracts the response id a stream or body carries (the
	// server keeps it for previous_response_id).
	ResponseID(t ModelTurn, o ResponseOptions) string
}

// SimError is an HTTP error the simulator answers with.
type SimError struct {
	Status int
	Header http.Header
	Body   json.RawMessage
}

func (e *SimError) Error() string { return string(e.Body) }
