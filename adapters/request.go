package adapters

import (
	"encoding/json"
	"fmt"
)

// SourceRole is the part a source plays in the exchange. It decides which
// field of a protocol's request the source lands in.
type SourceRole string

// The source roles.
const (
	// RoleSystem: the application's rules (OpenAI instructions, Anthropic
	// system, Gemini systemInstruction).
	RoleSystem SourceRole = "system"
	// RoleDeveloper: a trusted skill or developer instruction. Only the
	// OpenAI protocols have a developer role; elsewhere it is degraded.
	RoleDeveloper SourceRole = "developer"
	// RoleUser: the user's task.
	RoleUser SourceRole = "user"
	// RoleContext: material the model reads but must not obey (knowledge,
	// memory, unverified history). It goes into a user message, labelled.
	RoleContext SourceRole = "context"
)

// Trust labels say how far the application vouches for a source.
const (
	TrustTrusted    = "trusted"
	TrustVerified   = "verified"
	TrustUnverified = "unverified"
	TrustUntrusted  = "untrusted"
)

// Source is one piece of the request's input, in the order it is sent.
type Source struct {
	ID    string     `json:"id"`
	Role  SourceRole `json:"role"`
	Trust string     `json:"trust"`
	// Label is how the source is introduced to the model when it is
	// wrapped into a user message (context material), e.g. "知识库 KB-guide-9".
	Label string `json:"label,omitempty"`
	Text  string `json:"text"`
}

// Tool is a function the model may propose to call.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"` // JSON Schema of the argument object
	Strict      bool            `json:"strict"`
}

// ToolChoiceMode says whether and which tools the model must call.
type ToolChoiceMode string

// Tool choice modes.
const (
	ToolChoiceAuto     ToolChoiceMode = "auto"
	ToolChoiceNone     ToolChoiceMode = "none"
	ToolChoiceRequired ToolChoiceMode = "required"
	ToolChoiceNamed    ToolChoiceMode = "named"
)

// ToolChoice is the request's tool choice; Name is set for ToolChoiceNamed.
type ToolChoice struct {
	Mode ToolChoiceMode `json:"mode"`
	Name string         `json:"name,omitempty"`
}

// OutputMode is the output contract's kind.
type OutputMode string

// Output modes.
const (
	OutputText       OutputMode = "text"
	OutputJSON       OutputMode = "json_object"
	OutputJSONSchema OutputMode = "json_schema"
)

// OutputContract says what shape the final answer must take.
type OutputContract struct {
	Mode   OutputMode      `json:"mode"`
	Name   string          `json:"name,omitempty"`
	Schema json.RawMessage `json:"schema,omitempty"`
	Strict bool            `json:"strict,omitempty"`
	// Send false: the application checks answers against this contract
	// but leaves it out of the request (a forgotten response_format), so
	// the model is told nothing of it. Nil or true sends it.
	Send *bool `json:"send,omitempty"`
}

// Sent is the contract as the request carries it: free text when Send
// is false.
func (o OutputContract) Sent() OutputContract {
	if o.Send != nil && !*o.Send {
		return OutputContract{Mode: OutputText}
	}
	o.Send = nil
	return o
}

// HistoryMode says how an OpenAI Responses conversation continues.
type HistoryMode string

// History modes.
const (
	HistoryFull             HistoryMode = "full"
	HistoryPreviousResponse HistoryMode = "previous-response-id"
)

// Limits are the generation parameters.
type Limits struct {
	MaxOutputTokens int      `json:"max_output_tokens,omitempty"`
	Temperature     *float64 `json:"temperature,omitempty"`
	// Reasoning asks for reasoning/thinking ("", "low", "medium", "high").
	Reasoning string `json:"reasoning,omitempty"`
	// ParallelToolCalls nil leaves the provider default.
	ParallelToolCalls *bool `json:"parallel_tool_calls,omitempty"`
}

// Request is a provider-neutral request: what the application wants to say,
// before a protocol decides where each part goes.
type Request struct {
	Model   string         `json:"model"`
	Sources []Source       `json:"sources"`
	Tools   []Tool         `json:"tools,omitempty"`
	Choice  ToolChoice     `json:"tool_choice"`
	Output  OutputContract `json:"output"`
	Limits  Limits         `json:"limits"`
	Stream  bool           `json:"stream"`
	History HistoryMode    `json:"history,omitempty"`
	// Turns are the exchange so far, after the sources: each model turn
	// followed by the tool results the application fed back.
	Turns []Turn `json:"turns,omitempty"`
	// Store asks OpenAI Responses to keep the response (needed for
	// previous_response_id). Nil leaves the provider default.
	Store *bool `json:"store,omitempty"`
}

// Turn is one model response and the tool results answering it.
type Turn struct {
	// ResponseID is the provider's id of the model response
	// (previous_response_id chains on it).
	ResponseID string `json:"response_id,omitempty"`
	// Items are the model's output items in output order.
	Items []OutputItem `json:"items"`
	// Results answer the turn's tool calls, by call_id.
	Results []ToolResult `json:"results,omitempty"`
	// FollowUp is a user message the application sends after the turn
	// (and after its results): a regeneration's validation error.
	FollowUp string `json:"follow_up,omitempty"`
}

// OutputItem is one closed item of a model response, as history.
type OutputItem struct {
	Kind      ItemKind        `json:"kind"`
	ID        string          `json:"id,omitempty"`
	CallID    string          `json:"call_id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Text      string          `json:"text,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Signature string          `json:"signature,omitempty"`
}

// ToolResult is the application's answer to one tool call.
type ToolResult struct {
	CallID  string `json:"call_id"`
	Name    string `json:"name"`
	Content string `json:"content"`
	IsError bool   `json:"is_error,omitempty"`
}

// FieldMapping records where one source landed in a wire request.
type FieldMapping struct {
	Source string `json:"source"`
	Trust  string `json:"trust"`
	Field  string `json:"field"`
	// Note explains a degradation, e.g. "developer role sent as system".
	Note string `json:"note,omitempty"`
}

// Carried history in the source map: a request after the first carries
// the earlier turns' tool calls and their results (13.6.4: the second
// request holds the first call and its result, linked by call_id). Each
// encoder adds a row for each, where it put it, named by the turn and the
// call: "history:turn1 call_order", the call's name where it has no id
// (Gemini). Both are verified: the application ran the call and observed
// the result; neither is a summary or a claim.

// CarriedSource names a carried call (and its result) in the source map.
func CarriedSource(turn int, callID, name string) string {
	id := callID
	if id == "" {
		id = name
	}
	return fmt.Sprintf("history:turn%d %s", turn, id)
}

// CarriedCall is the map row of turn's call carried at field, as the
// protocol's kind of item ("function_call", "tool_use", …).
func CarriedCall(turn int, callID, name, field, kind string) FieldMapping {
	return FieldMapping{Source: CarriedSource(turn, callID, name), Trust: TrustVerified, Field: field, Note: kind + " " + name}
}

// CarriedResult is the map row of the result of turn's call carried at
// field, as the protocol's kind of item ("function_call_output", …).
func CarriedResult(turn int, callID, name, field, kind string) FieldMapping {
	return FieldMapping{Source: CarriedSource(turn, callID, name), Trust: TrustVerified, Field: field, Note: kind + " of " + name}
}

// HTTPRequest is an encoded wire request.
type HTTPRequest struct {
	Method  string            `json:"method"`
	Path    string            `json:"path"`
	Headers map[string]string `json:"headers"`
	Body    json.RawMessage   `json:"body"`
	Map     []FieldMapping    `json:"map"`
	// Degradations lists every place the protocol could not carry what was
	// asked and something else was sent instead.
	Degradations []string `json:"degradations,omitempty"`
	// Warnings say what a request implies that it does not spell out
	// (a provider default it relies on, state kept on the server).
	Warnings []string `json:"warnings,omitempty"`
}

// ResultsInCallOrder pairs the turn's results with its tool calls, in the
// order of the calls (result i answers the turn's i-th call): every call
// answered once, and no result for a call the turn did not make. Chat,
// Anthropic and Gemini reject a request that breaks either rule.
func (t Turn) ResultsInCallOrder() ([]ToolResult, error) {
	byCall := make(map[string]ToolResult, len(t.Results))
	for _, r := range t.Results {
		if _, dup := byCall[r.CallID]; dup {
			return nil, fmt.Errorf("two results for call %s", r.CallID)
		}
		byCall[r.CallID] = r
	}
	var out []ToolResult
	for _, it := range t.Items {
		if it.Kind != KindToolCall {
			continue
		}
		r, ok := byCall[it.CallID]
		if !ok {
			return nil, fmt.Errorf("call %s (%s) has no tool result; every call must be answered", it.CallID, it.Name)
		}
		delete(byCall, it.CallID)
		out = append(out, r)
	}
	for _, r := range t.Results {
		if _, left := byCall[r.CallID]; left {
			return nil, fmt.Errorf("a result for call %s, which the turn did not make", r.CallID)
		}
	}
	return out, nil
}
