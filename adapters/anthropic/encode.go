package anthropic

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelwire/modelwire/adapters"
)

// DefaultMaxTokens is sent when the request sets no output limit:
// max_tokens is required by the Messages API.
const DefaultMaxTokens = 4096

// Thinking budgets for Limits.Reasoning. budget_tokens "must be ≥1024 and
// less than max_tokens" (the SDK's ThinkingConfigEnabledParam).
var thinkingBudget = map[string]int{"low": 1024, "medium": 4096, "high": 16384}

const minThinkingBudget = 1024

// The request body, in the order the brief and the API reference list the
// fields (model first). Blocks are separate structs so that each carries
// exactly its documented fields.
type wireBody struct {
	Model        string        `json:"model"`
	MaxTokens    int           `json:"max_tokens"`
	System       []textBlock   `json:"system,omitempty"`
	Messages     []wireMessage `json:"messages"`
	Tools        []wireTool    `json:"tools,omitempty"`
	ToolChoice   *toolChoice   `json:"tool_choice,omitempty"`
	OutputConfig *outputConfig `json:"output_config,omitempty"`
	Thinking     *thinking     `json:"thinking,omitempty"`
	Temperature  *float64      `json:"temperature,omitempty"`
	Stream       bool          `json:"stream,omitempty"`
}

type wireMessage struct {
	Role    string `json:"role"`
	Content []any  `json:"content"`
}

type textBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type thinkingBlock struct {
	Type      string `json:"type"`
	Thinking  string `json:"thinking"`
	Signature string `json:"signature"`
}

type redactedThinkingBlock struct {
	Type string `json:"type"`
	Data string `json:"data"`
}

type toolUseBlock struct {
	Type  string          `json:"type"`
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

type toolResultBlock struct {
	Type      string `json:"type"`
	ToolUseID string `json:"tool_use_id"`
	Content   string `json:"content"`
	IsError   bool   `json:"is_error,omitempty"`
}

type wireTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
	Strict      bool            `json:"strict,omitempty"`
}

type toolChoice struct {
	Type                   string `json:"type"`
	Name                   string `json:"name,omitempty"`
	DisableParallelToolUse *bool  `json:"disable_parallel_tool_use,omitempty"`
}

type outputConfig struct {
	Format outputFormat `json:"format"`
}

type outputFormat struct {
	Type   string          `json:"type"`
	Schema json.RawMessage `json:"schema"`
}

type thinking struct {
	Type         string `json:"type"`
	BudgetTokens int    `json:"budget_tokens"`
}

// Encode builds POST /v1/messages for req (protocols.md §3.2).
//
// Sources: system sources, then developer sources (no developer role:
// degraded to system), each its own block of `system`; when the output
// contract cannot travel natively its instruction is one more system
// block. The user side (task, then labelled context) is the first user
// message, one text block per source. History: each model turn is replayed
// verbatim as an assistant message (thinking blocks with their signatures,
// text, tool_use), then one user message that begins with the tool_result
// blocks in call order.
func (protocol) Encode(req *adapters.Request, provider string) (*adapters.HTTPRequest, error) {
	caps, degr, parts, err := adapters.Prepare(req, provider, adapters.AnthropicMessages)
	if err != nil {
		return nil, err
	}
	r := &messagesRequest{caps: caps, degr: degr, paths: map[string]adapters.FieldMapping{},
		body: wireBody{Model: req.Model, MaxTokens: req.Limits.MaxOutputTokens, Stream: req.Stream}}
	if r.body.MaxTokens <= 0 {
		r.body.MaxTokens = DefaultMaxTokens
		r.degr = append(r.degr, fmt.Sprintf("max_tokens is required by %s and none was set: sent %d", adapters.AnthropicMessages, DefaultMaxTokens))
	}
	r.system(parts)
	if err := r.output(req.Output); err != nil {
		return nil, err
	}
	r.user(parts)
	for n, turn := range req.Turns {
		msgs, notes, err := encodeTurn(n+1, turn)
		if err != nil {
			return nil, err
		}
		r.degr = append(r.degr, notes...)
		r.carried(n+1, turn, msgs)
		r.body.Messages = append(r.body.Messages, msgs...)
	}
	r.tools(req)
	if err := r.thinking(req); err != nil {
		return nil, err
	}

	raw, err := adapters.MarshalBody(r.body)
	if err != nil {
		return nil, err
	}
	var m []adapters.FieldMapping
	for _, s := range req.Sources {
		if fm, ok := r.paths[s.ID]; ok {
			m = append(m, fm)
		}
	}
	m = append(m, r.hist...)
	m = append(m, r.extra...)
	return &adapters.HTTPRequest{
		Method: "POST",
		Path:   Path,
		Headers: map[string]string{
			"anthropic-version": APIVersion,
			"content-type":      "application/json",
		},
		Body:         raw,
		Map:          m,
		Degradations: r.degr,
	}, nil
}

// messagesRequest is a request body being built: where each source
// landed (paths, listed in the sources' order), where the schema and
// tools went (extra, after them), and what the protocol could not carry.
type messagesRequest struct {
	caps  adapters.Capabilities
	body  wireBody
	paths map[string]adapters.FieldMapping
	extra []adapters.FieldMapping
	hist  []adapters.FieldMapping // the carried calls and results, after the sources
	degr  []string
}

// system puts the rules, then the skills, each in a system block.
func (r *messagesRequest) system(parts adapters.Parts) {
	for _, s := range parts.System {
		r.paths[s.ID] = adapters.FieldMapping{Source: s.ID, Trust: s.Trust, Field: fmt.Sprintf("system[%d].text", len(r.body.System))}
		r.body.System = append(r.body.System, textBlock{Type: "text", Text: adapters.SourceText(s)})
	}
	for _, s := range parts.Developer {
		r.paths[s.ID] = adapters.FieldMapping{Source: s.ID, Trust: s.Trust, Field: fmt.Sprintf("system[%d].text", len(r.body.System)),
			Note: "no developer role in " + adapters.AnthropicMessages + ": sent as its own system block"}
		r.body.System = append(r.body.System, textBlock{Type: "text", Text: adapters.SourceText(s)})
	}
}

// output states the output contract: output_config where the provider
// has structured outputs, else the schema instruction as a last system
// block.
func (r *messagesRequest) output(o adapters.OutputContract) error {
	switch {
	case o.Mode == adapters.OutputJSONSchema && r.caps.StructuredOutput == adapters.OutputJSONSchema:
		if len(o.Schema) == 0 {
			return fmt.Errorf("output contract json_schema without a schema")
		}
		r.body.OutputConfig = &outputConfig{Format: outputFormat{Type: "json_schema", Schema: o.Schema}}
		r.extra = append(r.extra, adapters.FieldMapping{Source: "output_schema", Trust: adapters.TrustTrusted, Field: "output_config.format"})
	case o.Mode == adapters.OutputJSONSchema || o.Mode == adapters.OutputJSON:
		note := "no structured output here: the schema is sent as text in a system block"
		if o.Mode == adapters.OutputJSON {
			note = "no JSON-object mode in " + adapters.AnthropicMessages + ": the requirement is sent as text in a system block"
			if r.caps.StructuredOutput != "" {
				// Check records no degradation when the provider has
				// structured outputs, but Anthropic has no json_object mode.
				r.degr = append(r.degr, fmt.Sprintf("%s has no JSON-object mode: the JSON requirement is stated in the system prompt", adapters.AnthropicMessages))
			}
		}
		r.extra = append(r.extra, adapters.FieldMapping{Source: "output_schema", Trust: adapters.TrustTrusted, Field: fmt.Sprintf("system[%d].text", len(r.body.System)), Note: note})
		r.body.System = append(r.body.System, textBlock{Type: "text", Text: adapters.SchemaInstruction(o)})
	}
	return nil
}

// user is the first user message: one text block per user-side source.
func (r *messagesRequest) user(parts adapters.Parts) {
	if len(parts.User) == 0 {
		return
	}
	first := wireMessage{Role: "user"}
	for _, s := range parts.User {
		r.paths[s.ID] = adapters.FieldMapping{Source: s.ID, Trust: s.Trust, Field: fmt.Sprintf("messages[0].content[%d].text", len(first.Content))}
		first.Content = append(first.Content, textBlock{Type: "text", Text: adapters.SourceText(s)})
	}
	r.body.Messages = append(r.body.Messages, first)
}

// tools declares the tools and the tool choice.
func (r *messagesRequest) tools(req *adapters.Request) {
	for i, t := range req.Tools {
		schema := t.Parameters
		if len(schema) == 0 {
			schema = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		r.body.Tools = append(r.body.Tools, wireTool{Name: t.Name, Description: t.Description, InputSchema: schema, Strict: t.Strict && r.caps.StrictSchemas})
		r.extra = append(r.extra, adapters.FieldMapping{Source: "tool:" + t.Name, Trust: adapters.TrustTrusted, Field: fmt.Sprintf("tools[%d]", i)})
	}
	if tc := encodeToolChoice(req, r.caps); tc != nil && (len(req.Tools) > 0 || req.Choice.Mode != "") {
		r.body.ToolChoice = tc
	}
}

// thinking states extended thinking, whose budget must fit under
// max_tokens, or else the temperature (thinking does not take one).
func (r *messagesRequest) thinking(req *adapters.Request) error {
	body := &r.body
	if req.Limits.Reasoning == "" {
		body.Temperature = req.Limits.Temperature
		return nil
	}
	budget, ok := thinkingBudget[req.Limits.Reasoning]
	if !ok {
		return fmt.Errorf("unknown reasoning level %q (want low, medium or high)", req.Limits.Reasoning)
	}
	if req.Choice.Mode == adapters.ToolChoiceRequired || req.Choice.Mode == adapters.ToolChoiceNamed {
		return fmt.Errorf("%s: thinking is not compatible with a forced tool choice (%s)", adapters.AnthropicMessages, req.Choice.Mode)
	}
	if body.MaxTokens <= minThinkingBudget {
		r.degr = append(r.degr, fmt.Sprintf("thinking needs max_tokens above %d: max_tokens raised from %d to %d", minThinkingBudget, body.MaxTokens, 2*minThinkingBudget))
		body.MaxTokens = 2 * minThinkingBudget
	}
	if budget >= body.MaxTokens {
		clamped := max(minThinkingBudget, body.MaxTokens-1)
		r.degr = append(r.degr, fmt.Sprintf("thinking budget %d must be below max_tokens %d: sent %d", budget, body.MaxTokens, clamped))
		budget = clamped
	}
	body.Thinking = &thinking{Type: "enabled", BudgetTokens: budget}
	if req.Limits.Temperature != nil {
		r.degr = append(r.degr, "temperature is not compatible with thinking: not sent")
	}
	return nil
}

func encodeToolChoice(req *adapters.Request, caps adapters.Capabilities) *toolChoice {
	tc := &toolChoice{}
	switch req.Choice.Mode {
	case adapters.ToolChoiceAuto, "":
		tc.Type = "auto"
	case adapters.ToolChoiceRequired:
		tc.Type = "any"
	case adapters.ToolChoiceNamed:
		tc.Type, tc.Name = "tool", req.Choice.Name
	case adapters.ToolChoiceNone:
		// {"type":"none"} has no other field.
		return &toolChoice{Type: "none"}
	}
	if p := req.Limits.ParallelToolCalls; p != nil && !*p && caps.ParallelControl {
		t := true
		tc.DisableParallelToolUse = &t
	}
	return tc
}

// carried maps turn n's tool_use and tool_result blocks, about to be
// appended as msgs.
func (r *messagesRequest) carried(n int, turn adapters.Turn, msgs []wireMessage) {
	names := map[string]string{}
	for _, it := range turn.Items {
		names[it.CallID] = it.Name
	}
	for k, msg := range msgs {
		i := len(r.body.Messages) + k
		for j, b := range msg.Content {
			switch b := b.(type) {
			case toolUseBlock:
				r.hist = append(r.hist, adapters.CarriedCall(n, b.ID, b.Name, fmt.Sprintf("messages[%d].content[%d]", i, j), "tool_use"))
			case toolResultBlock:
				r.hist = append(r.hist, adapters.CarriedResult(n, b.ToolUseID, names[b.ToolUseID], fmt.Sprintf("messages[%d].content[%d]", i, j), "tool_result"))
			}
		}
	}
}

// encodeTurn replays one model turn and its tool results.
func encodeTurn(n int, turn adapters.Turn) ([]wireMessage, []string, error) {
	var notes []string
	asst := wireMessage{Role: "assistant"}
	var calls []string
	for _, it := range turn.Items {
		switch it.Kind {
		case adapters.KindReasoning:
			switch {
			case strings.HasPrefix(it.Signature, RedactedPrefix):
				asst.Content = append(asst.Content, redactedThinkingBlock{Type: "redacted_thinking", Data: strings.TrimPrefix(it.Signature, RedactedPrefix)})
			case it.Signature != "":
				asst.Content = append(asst.Content, thinkingBlock{Type: "thinking", Thinking: it.Text, Signature: it.Signature})
			default:
				notes = append(notes, fmt.Sprintf("turn %d: a reasoning item without a signature cannot be replayed; left out", n))
			}
		case adapters.KindMessage, adapters.KindRefusal:
			if it.Text != "" {
				asst.Content = append(asst.Content, textBlock{Type: "text", Text: it.Text})
			}
		case adapters.KindToolCall:
			args := it.Arguments
			if len(args) == 0 {
				args = json.RawMessage(`{}`)
			}
			if !json.Valid(args) {
				return nil, nil, fmt.Errorf("turn %d: call %s has arguments that are not JSON", n, it.CallID)
			}
			asst.Content = append(asst.Content, toolUseBlock{Type: "tool_use", ID: it.CallID, Name: it.Name, Input: args})
			calls = append(calls, it.CallID)
		}
	}
	var msgs []wireMessage
	if len(asst.Content) > 0 {
		msgs = append(msgs, asst)
	}
	// A follow-up joins the results' user message: roles must alternate.
	var followUp []any
	if turn.FollowUp != "" {
		followUp = []any{textBlock{Type: "text", Text: turn.FollowUp}}
	}
	if len(calls) == 0 && len(turn.Results) == 0 {
		if followUp != nil {
			msgs = append(msgs, wireMessage{Role: "user", Content: followUp})
		}
		return msgs, notes, nil
	}
	results, err := turn.ResultsInCallOrder()
	if err != nil {
		return nil, nil, fmt.Errorf("turn %d: %w", n, err)
	}
	user := wireMessage{Role: "user"}
	for _, r := range results {
		user.Content = append(user.Content, toolResultBlock{Type: "tool_result", ToolUseID: r.CallID, Content: r.Content, IsError: r.IsError})
	}
	user.Content = append(user.Content, followUp...)
	return append(msgs, user), notes, nil
}
