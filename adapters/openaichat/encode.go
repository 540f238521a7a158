package openaichat

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelwire/modelwire/adapters"
)

// The request body. Field order follows the request reference (model and
// messages first, then tools, output, limits, streaming); MarshalBody keeps
// struct order, so the wire JSON reads in this order.
type requestBody struct {
	Model             string          `json:"model"`
	Messages          []any           `json:"messages"`
	Tools             []toolParam     `json:"tools,omitempty"`
	ToolChoice        any             `json:"tool_choice,omitempty"`
	ParallelToolCalls *bool           `json:"parallel_tool_calls,omitempty"`
	ResponseFormat    *responseFormat `json:"response_format,omitempty"`
	// Thinking is DeepSeek's top-level switch (on by default there, so it
	// is always sent); ReasoningEffort is shared by both dialects.
	Thinking            *thinking      `json:"thinking,omitempty"`
	ReasoningEffort     string         `json:"reasoning_effort,omitempty"`
	MaxCompletionTokens int            `json:"max_completion_tokens,omitempty"` // OpenAI
	MaxTokens           int            `json:"max_tokens,omitempty"`            // DeepSeek
	Temperature         *float64       `json:"temperature,omitempty"`
	Stream              bool           `json:"stream,omitempty"`
	StreamOptions       *streamOptions `json:"stream_options,omitempty"`
}

type systemMessage struct {
	Role    string `json:"role"` // "system" or "developer"
	Content string `json:"content"`
}

type textPart struct {
	Type string `json:"type"` // "text"
	Text string `json:"text"`
}

type userMessage struct {
	Role    string     `json:"role"` // "user"
	Content []textPart `json:"content"`
}

// assistantMessage is a model turn as history. Content is null for a turn
// that only called tools; ReasoningContent is DeepSeek's passback.
type assistantMessage struct {
	Role             string     `json:"role"` // "assistant"
	Content          *string    `json:"content"`
	ReasoningContent *string    `json:"reasoning_content,omitempty"`
	Refusal          *string    `json:"refusal,omitempty"`
	ToolCalls        []toolCall `json:"tool_calls,omitempty"`
}

type toolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"` // "function"
	Function functionCall `json:"function"`
}

type functionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"` // JSON text, as the model sent it
}

type toolMessage struct {
	Role       string `json:"role"` // "tool"
	ToolCallID string `json:"tool_call_id"`
	Content    string `json:"content"`
}

type toolParam struct {
	Type     string   `json:"type"` // "function"
	Function function `json:"function"`
}

type function struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
	Strict      bool            `json:"strict,omitempty"`
}

type namedToolChoice struct {
	Type     string `json:"type"` // "function"
	Function struct {
		Name string `json:"name"`
	} `json:"function"`
}

type responseFormat struct {
	Type       string      `json:"type"` // "json_schema" or "json_object"
	JSONSchema *jsonSchema `json:"json_schema,omitempty"`
}

type jsonSchema struct {
	Name   string          `json:"name"`
	Strict bool            `json:"strict"`
	Schema json.RawMessage `json:"schema"`
}

type thinking struct {
	Type string `json:"type"` // "enabled" or "disabled"
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// Encode builds the Chat Completions request for req. Sources land as
// protocols.md §2.2 describes: each system source is one system message,
// each developer source one developer message (DeepSeek: a further system
// message, see below), and the user side one user message with a text part
// per source. History follows: each model turn as one assistant message,
// then one tool message per call, in the order of the calls.
func (p protocol) Encode(req *adapters.Request, provider string) (*adapters.HTTPRequest, error) {
	_, degr, parts, err := adapters.Prepare(req, provider, p.Name())
	if err != nil {
		return nil, err
	}
	if req.Model == "" {
		return nil, fmt.Errorf("the request names no model")
	}
	r := &chatRequest{p: p, body: requestBody{Model: req.Model}, degr: degr}
	r.instructions(parts)
	schemaField, err := r.output(req.Output)
	if err != nil {
		return nil, err
	}
	r.user(parts)
	for n, t := range req.Turns {
		if err := r.turn(n+1, t, req.Limits.Reasoning != ""); err != nil {
			return nil, err
		}
	}
	if err := r.tools(req); err != nil {
		return nil, err
	}
	if schemaField.Source != "" {
		r.fields = append(r.fields, schemaField)
	}
	if err := r.limits(req); err != nil {
		return nil, err
	}

	raw, err := adapters.MarshalBody(r.body)
	if err != nil {
		return nil, err
	}
	return &adapters.HTTPRequest{
		Method:       "POST",
		Path:         p.path(),
		Headers:      map[string]string{"Content-Type": "application/json"},
		Body:         raw,
		Map:          r.fields,
		Degradations: r.degr,
	}, nil
}

// chatRequest is a request body being built, where each source landed in
// it, and what the protocol could not carry.
type chatRequest struct {
	p      protocol
	body   requestBody
	fields []adapters.FieldMapping
	degr   []string
}

// add appends a message and returns its index.
func (r *chatRequest) add(m any) int {
	r.body.Messages = append(r.body.Messages, m)
	return len(r.body.Messages) - 1
}

// instructions puts each system source in a system message and each
// developer source in a developer message.
func (r *chatRequest) instructions(parts adapters.Parts) {
	for _, s := range parts.System {
		i := r.add(systemMessage{Role: "system", Content: s.Text})
		r.fields = append(r.fields, adapters.FieldMapping{Source: s.ID, Trust: s.Trust, Field: fmt.Sprintf("messages[%d].content", i)})
	}
	for _, s := range parts.Developer {
		// DeepSeek documents that it reads a developer message as a user
		// message (the capability table's DeveloperAsUser). A skill is an
		// instruction the application vouches for, so rather than let it
		// sink to the user's level it goes in as one more system message,
		// and the degradation from Check is recorded.
		role, note := "developer", ""
		if r.p.deepseek {
			role, note = "system", "DeepSeek reads a developer message as user; sent as a system message"
		}
		i := r.add(systemMessage{Role: role, Content: s.Text})
		r.fields = append(r.fields, adapters.FieldMapping{Source: s.ID, Trust: s.Trust, Field: fmt.Sprintf("messages[%d].content", i), Note: note})
	}
}

// output states the output contract and says where the schema went (it
// is listed after the tools). DeepSeek has JSON mode only: the schema
// travels as text in a system message of its own, after the rules and
// skills.
func (r *chatRequest) output(o adapters.OutputContract) (adapters.FieldMapping, error) {
	switch o.Mode {
	case adapters.OutputJSONSchema:
		if r.p.deepseek {
			r.body.ResponseFormat = &responseFormat{Type: "json_object"}
			i := r.add(systemMessage{Role: "system", Content: adapters.SchemaInstruction(o)})
			return adapters.FieldMapping{Source: "output_schema", Trust: adapters.TrustTrusted,
				Field: fmt.Sprintf("messages[%d].content", i), Note: "DeepSeek has JSON mode only: schema sent as text in a system message, response_format json_object"}, nil
		}
		name := o.Name
		if name == "" {
			name = "output"
		}
		r.body.ResponseFormat = &responseFormat{Type: "json_schema", JSONSchema: &jsonSchema{Name: name, Strict: o.Strict, Schema: o.Schema}}
		return adapters.FieldMapping{Source: "output_schema", Trust: adapters.TrustTrusted, Field: "response_format.json_schema.schema"}, nil
	case adapters.OutputJSON:
		r.body.ResponseFormat = &responseFormat{Type: "json_object"}
	case adapters.OutputText, "":
	default:
		return adapters.FieldMapping{}, fmt.Errorf("unknown output mode %q", o.Mode)
	}
	return adapters.FieldMapping{}, nil
}

// user puts the user side in one user message, a text part per source.
func (r *chatRequest) user(parts adapters.Parts) {
	if len(parts.User) == 0 {
		return
	}
	um := userMessage{Role: "user"}
	for _, s := range parts.User {
		um.Content = append(um.Content, textPart{Type: "text", Text: adapters.SourceText(s)})
	}
	i := r.add(um)
	for j, s := range parts.User {
		r.fields = append(r.fields, adapters.FieldMapping{Source: s.ID, Trust: s.Trust, Field: fmt.Sprintf("messages[%d].content[%d].text", i, j)})
	}
}

// turn appends model turn n as history, and the message that asked again
// after it, if any.
func (r *chatRequest) turn(n int, t adapters.Turn, thinkingOn bool) error {
	msgs, notes, err := r.p.history(n, t, thinkingOn)
	if err != nil {
		return err
	}
	names := map[string]string{}
	for _, it := range t.Items {
		names[it.CallID] = it.Name
	}
	for _, m := range msgs {
		i := len(r.body.Messages)
		switch m := m.(type) {
		case assistantMessage:
			for j, c := range m.ToolCalls {
				r.fields = append(r.fields, adapters.CarriedCall(n, c.ID, c.Function.Name, fmt.Sprintf("messages[%d].tool_calls[%d]", i, j), "tool_calls"))
			}
		case toolMessage:
			r.fields = append(r.fields, adapters.CarriedResult(n, m.ToolCallID, names[m.ToolCallID], fmt.Sprintf("messages[%d]", i), "tool message"))
		}
		r.body.Messages = append(r.body.Messages, m)
	}
	if t.FollowUp != "" {
		r.body.Messages = append(r.body.Messages, userMessage{Role: "user", Content: []textPart{{Type: "text", Text: t.FollowUp}}})
	}
	r.degr = append(r.degr, notes...)
	return nil
}

// tools declares the tools and the tool choice.
func (r *chatRequest) tools(req *adapters.Request) error {
	if len(req.Tools) == 0 {
		if req.Choice.Mode == adapters.ToolChoiceRequired || req.Choice.Mode == adapters.ToolChoiceNamed {
			return fmt.Errorf("tool_choice %s needs tools, and the request has none", req.Choice.Mode)
		}
		return nil
	}
	for i, t := range req.Tools {
		fn := function{Name: t.Name, Description: t.Description, Parameters: t.Parameters}
		// DeepSeek's strict mode exists only on its beta endpoint;
		// Check has recorded that strict is not sent.
		fn.Strict = t.Strict && !r.p.deepseek
		r.body.Tools = append(r.body.Tools, toolParam{Type: "function", Function: fn})
		r.fields = append(r.fields, adapters.FieldMapping{Source: "tool:" + t.Name, Trust: adapters.TrustTrusted, Field: fmt.Sprintf("tools[%d]", i)})
	}
	switch req.Choice.Mode {
	case adapters.ToolChoiceAuto, adapters.ToolChoiceNone, adapters.ToolChoiceRequired:
		r.body.ToolChoice = string(req.Choice.Mode)
	case adapters.ToolChoiceNamed:
		var c namedToolChoice
		c.Type, c.Function.Name = "function", req.Choice.Name
		r.body.ToolChoice = c
	case "":
	default:
		return fmt.Errorf("unknown tool choice mode %q", req.Choice.Mode)
	}
	// parallel_tool_calls is only accepted with tools, and DeepSeek
	// does not document it (Check recorded that it is ignored).
	if !r.p.deepseek {
		r.body.ParallelToolCalls = req.Limits.ParallelToolCalls
	}
	return nil
}

// limits states reasoning, the output cap, temperature and streaming.
func (r *chatRequest) limits(req *adapters.Request) error {
	body := &r.body
	if r.p.deepseek {
		// Thinking is on by default at DeepSeek, so it is always stated:
		// a request without a reasoning level gets the same answer mode
		// every time.
		if req.Limits.Reasoning == "" {
			body.Thinking = &thinking{Type: "disabled"}
		} else {
			if req.Choice.Mode == adapters.ToolChoiceRequired || req.Choice.Mode == adapters.ToolChoiceNamed {
				return fmt.Errorf("%s: thinking mode does not support a forced tool_choice (%s); DeepSeek rejects it — use auto or turn thinking off", adapters.DeepSeekChat, req.Choice.Mode)
			}
			body.Thinking = &thinking{Type: "enabled"}
			body.ReasoningEffort = deepseekEffort(req.Limits.Reasoning)
		}
		body.MaxTokens = req.Limits.MaxOutputTokens
	} else {
		body.ReasoningEffort = req.Limits.Reasoning
		body.MaxCompletionTokens = req.Limits.MaxOutputTokens
	}
	body.Temperature = req.Limits.Temperature
	if req.Stream {
		body.Stream = true
		body.StreamOptions = &streamOptions{IncludeUsage: true}
	}
	return nil
}

// deepseekEffort maps a reasoning level to DeepSeek's documented efforts
// (low, high, max). DeepSeek itself maps medium to high; saying so here
// makes the wire request show what the model will do.
func deepseekEffort(level string) string {
	if level == "medium" {
		return "high"
	}
	return level
}

// history encodes one model turn and its tool results: an assistant
// message carrying the turn's text, tool calls and (DeepSeek) reasoning,
// then one tool message per call in the order of the calls, each found by
// call_id.
func (p protocol) history(n int, t adapters.Turn, thinkingOn bool) ([]any, []string, error) {
	var notes []string
	var text, reasoning, refusal strings.Builder
	hasText, hasReasoning, hasRefusal := false, false, false
	var calls []toolCall
	for _, it := range t.Items {
		switch it.Kind {
		case adapters.KindMessage:
			hasText = true
			text.WriteString(it.Text)
		case adapters.KindReasoning:
			hasReasoning = true
			reasoning.WriteString(it.Text)
		case adapters.KindRefusal:
			hasRefusal = true
			refusal.WriteString(it.Text)
		case adapters.KindToolCall:
			args := string(it.Arguments)
			if args == "" {
				args = "{}"
			}
			calls = append(calls, toolCall{ID: it.CallID, Type: "function", Function: functionCall{Name: it.Name, Arguments: args}})
		default:
			return nil, nil, fmt.Errorf("turn %d: unknown item kind %q", n, it.Kind)
		}
	}

	var out []any
	if hasText || hasReasoning || hasRefusal || len(calls) > 0 {
		m := assistantMessage{Role: "assistant", ToolCalls: calls}
		if hasText {
			s := text.String()
			m.Content = &s
		}
		if hasReasoning {
			switch {
			case p.deepseek && len(calls) > 0:
				// Required for tool-call turns in thinking mode (a 400
				// otherwise) (protocols.md §5).
				s := reasoning.String()
				m.ReasoningContent = &s
			case p.deepseek:
				// Only the tool-call rule asks for it back; elsewhere
				// DeepSeek's reasoning does not belong in the next input.
				notes = append(notes, fmt.Sprintf("turn %d: reasoning_content not sent back (DeepSeek takes it only on a turn that called tools)", n))
			default:
				notes = append(notes, fmt.Sprintf("turn %d: reasoning not sent back (Chat Completions has no field for it)", n))
			}
		} else if p.deepseek && thinkingOn && len(calls) > 0 {
			// DeepSeek answers 400 when a tool-call turn in thinking mode
			// comes back without reasoning_content; an empty one passes.
			empty := ""
			m.ReasoningContent = &empty
		}
		if hasRefusal {
			if p.deepseek {
				notes = append(notes, fmt.Sprintf("turn %d: refusal not sent back (DeepSeek has no refusal field)", n))
			} else {
				s := refusal.String()
				m.Refusal = &s
			}
		}
		out = append(out, m)
	}

	results, err := t.ResultsInCallOrder()
	if err != nil {
		return nil, nil, fmt.Errorf("turn %d: %w", n, err)
	}
	for _, r := range results {
		if r.IsError {
			notes = append(notes, fmt.Sprintf("turn %d: result for call %s is an error; Chat Completions has no error flag, sent as plain content", n, r.CallID))
		}
		out = append(out, toolMessage{Role: "tool", ToolCallID: r.CallID, Content: r.Content})
	}
	return out, notes, nil
}
