package adapters

import (
	"encoding/json"
	"strings"
)

// Summary is the per-response summary of the contract.
type Summary struct {
	Protocol            string           `json:"protocol"`
	Terminal            Status           `json:"terminal"`
	StopReason          StopReason       `json:"stop_reason"`
	ProviderStopReason  string           `json:"provider_stop_reason"`
	ResponseID          string           `json:"response_id"`
	Model               string           `json:"model"`
	Text                string           `json:"text"`
	Reasoning           string           `json:"reasoning"`
	Refusal             *string          `json:"refusal"`
	ToolCalls           []ToolCall       `json:"tool_calls"`
	IncompleteToolCalls []IncompleteCall `json:"incomplete_tool_calls"`
	Usage               *Usage           `json:"usage"`
	Error               *APIError        `json:"error"`
	Diagnostics         []Diagnostic     `json:"diagnostics"`
}

// ToolCall is a closed call whose arguments parsed to a JSON object.
type ToolCall struct {
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// IncompleteCall is a call that never closed, or closed as something other
// than a JSON object. It can never be proposed.
type IncompleteCall struct {
	CallID           string `json:"call_id"`
	Name             string `json:"name"`
	PartialArguments string `json:"partial_arguments"`
	Reason           string `json:"reason"`
}

// Summary builds the summary of what has been reduced so far.
func (r *Reducer) Summary() Summary {
	s := Summary{
		Protocol:            r.protocol,
		Terminal:            StatusUnknown,
		StopReason:          StopUnknown,
		ResponseID:          r.responseID,
		Model:               r.model,
		ToolCalls:           []ToolCall{},
		IncompleteToolCalls: []IncompleteCall{},
		Usage:               r.usage,
		Diagnostics:         append([]Diagnostic{}, r.diagnostics...),
	}
	if t := r.terminal; t != nil {
		s.Terminal, s.StopReason, s.ProviderStopReason, s.Error = t.Status, t.StopReason, t.ProviderStopReason, t.Error
	}
	var text, reasoning, refusal strings.Builder
	hasRefusal := false
	for _, it := range r.Items() {
		switch it.Kind {
		case KindMessage:
			text.WriteString(it.Text)
		case KindReasoning:
			reasoning.WriteString(it.Text)
		case KindRefusal:
			hasRefusal = true
			refusal.WriteString(it.Text)
		case KindToolCall:
			switch it.State {
			case ItemParsed:
				s.ToolCalls = append(s.ToolCalls, ToolCall{CallID: it.CallID, Name: it.Name, Arguments: it.Arguments})
			case ItemInvalid:
				s.IncompleteToolCalls = append(s.IncompleteToolCalls, IncompleteCall{CallID: it.CallID, Name: it.Name, PartialArguments: it.Text, Reason: "arguments_invalid"})
			default:
				s.IncompleteToolCalls = append(s.IncompleteToolCalls, IncompleteCall{CallID: it.CallID, Name: it.Name, PartialArguments: it.Text, Reason: "item_not_done"})
			}
		}
	}
	s.Text, s.Reasoning = text.String(), reasoning.String()
	if hasRefusal {
		r := refusal.String()
		s.Refusal = &r
	}
	return s
}

// Turn turns the reduced response into history for the next request:
// its closed items in output order, with their replay signatures.
func (r *Reducer) Turn() Turn {
	t := Turn{ResponseID: r.responseID}
	for _, it := range r.Items() {
		oi := OutputItem{Kind: it.Kind, ID: it.ID, CallID: it.CallID, Name: it.Name, Text: it.Text, Signature: it.Signature}
		if it.Kind == KindToolCall {
			if it.State != ItemParsed {
				continue
			}
			oi.Text, oi.Arguments = "", it.Arguments
		}
		t.Items = append(t.Items, oi)
	}
	return t
}
