package openairesponses

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/modelwire/modelwire/adapters"
)

// The request body, in the order the API reference documents its fields
// (model first). Field shapes: protocols.md §1.2 and openai-go
// ResponseNewParams.
type body struct {
	Model              string      `json:"model"`
	Instructions       string      `json:"instructions,omitempty"`
	PreviousResponseID string      `json:"previous_response_id,omitempty"`
	Input              []any       `json:"input"`
	Tools              []tool      `json:"tools,omitempty"`
	ToolChoice         any         `json:"tool_choice,omitempty"`
	ParallelToolCalls  *bool       `json:"parallel_tool_calls,omitempty"`
	Text               *textConfig `json:"text,omitempty"`
	Reasoning          *reasoning  `json:"reasoning,omitempty"`
	MaxOutputTokens    int         `json:"max_output_tokens,omitempty"`
	Temperature        *float64    `json:"temperature,omitempty"`
	Store              *bool       `json:"store,omitempty"`
	Include            []string    `json:"include,omitempty"`
	Stream             bool        `json:"stream"`
}

// tool is the flat function tool (not nested under "function" as in
// Chat), its keys in the order the chapter prints them.
type tool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Strict      bool            `json:"strict"`
	Parameters  json.RawMessage `json:"parameters"`
}

type namedChoice struct {
	Type string `json:"type"`
	Name string `json:"name"`
}

type textConfig struct {
	Format format `json:"format"`
}

type format struct {
	Type   string          `json:"type"`
	Name   string          `json:"name,omitempty"`
	Strict *bool           `json:"strict,omitempty"`
	Schema json.RawMessage `json:"schema,omitempty"`
}

type reasoning struct {
	Effort  string `json:"effort"`
	Summary string `json:"summary"`
}

// Input items.

// easyMessage is a message of one text, as clients write it: role and a
// string content, no type (the API reads a role as a message).
type easyMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// message is a message of several parts (the context package).
type message struct {
	Role    string `json:"role"`
	Content []part `json:"content"`
}

type part struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// outputMessage replays an assistant message item.
type outputMessage struct {
	Type    string `json:"type"`
	ID      string `json:"id,omitempty"`
	Role    string `json:"role"`
	Status  string `json:"status"`
	Content []any  `json:"content"`
}

type outputText struct {
	Type        string `json:"type"`
	Text        string `json:"text"`
	Annotations []any  `json:"annotations"`
}

type refusalPart struct {
	Type    string `json:"type"`
	Refusal string `json:"refusal"`
}

type functionCall struct {
	Type      string `json:"type"`
	ID        string `json:"id,omitempty"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	Status    string `json:"status"`
}

type reasoningItem struct {
	Type             string        `json:"type"`
	ID               string        `json:"id"`
	Summary          []summaryText `json:"summary"`
	EncryptedContent string        `json:"encrypted_content,omitempty"`
}

type summaryText struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type functionCallOutput struct {
	Type   string `json:"type"`
	CallID string `json:"call_id"`
	Output string `json:"output"`
}

// Encode builds POST /v1/responses for req.
//
// Sources become input messages in source order, as the chapter's request
// (13.6.3) has them: a system, developer or user source is a message of
// its role with a string content; a run of context sources is one user
// message with one input_text part each. System and skill stay input
// items, so with previous_response_id they are carried over with the rest
// of the input (only instructions are not). History "full" resends the
// sources and every turn's output items followed by its
// function_call_output items. History "previous-response-id" chains on the
// last turn's response id and sends only that turn's results, re-sending
// tools, which are not carried over.
func (Protocol) Encode(req *adapters.Request, provider string) (*adapters.HTTPRequest, error) {
	if provider == "" {
		provider = adapters.ProviderSim
	}
	caps, degr, parts, err := adapters.Prepare(req, provider, adapters.OpenAIResponses)
	if err != nil {
		return nil, err
	}
	e := encoder{req: req, caps: caps, b: body{Model: req.Model, Input: []any{}}, degr: degr}
	chained := req.History == adapters.HistoryPreviousResponse && len(req.Turns) > 0
	if err := e.sources(parts, chained); err != nil {
		return nil, err
	}
	if err := e.history(chained); err != nil {
		return nil, err
	}
	if err := e.options(); err != nil {
		return nil, err
	}
	raw, err := adapters.MarshalBody(e.b)
	if err != nil {
		return nil, err
	}
	path := "/v1/responses"
	if provider == adapters.ProviderDeepSeek {
		// DeepSeek's base URL has no /v1 (contract.md "run"); its
		// Responses-format endpoint sits beside /chat/completions.
		path = "/responses"
	}
	return &adapters.HTTPRequest{
		Method:       "POST",
		Path:         path,
		Headers:      map[string]string{"content-type": "application/json"},
		Body:         raw,
		Map:          e.m,
		Degradations: e.degr,
		Warnings:     storeWarnings(e.b.Store, e.b.Include, e.caps),
	}, nil
}

// storeWarnings says what the request's store setting means (13.5.1,
// 13.7.4): unset, OpenAI keeps the response (store defaults to true);
// false, nothing can chain on it and reasoning comes back only encrypted.
func storeWarnings(store *bool, include []string, caps adapters.Capabilities) []string {
	if !caps.ServerState {
		return nil
	}
	if store == nil {
		return []string{"store is not set, and it defaults to true: the provider keeps this response (and its input) on its side; " +
			"send store:false to keep nothing — then previous_response_id cannot chain on it"}
	}
	if *store {
		return []string{"store:true: the provider keeps this response so previous_response_id can chain on it; the chained history is still billed as input"}
	}
	w := "store:false: nothing is kept, so previous_response_id cannot chain on this response; the full history must be sent each turn"
	if slices.Contains(include, "reasoning.encrypted_content") {
		w += ", and reasoning items travel as encrypted_content (include: [\"reasoning.encrypted_content\"])"
	} else {
		w += "; with reasoning, ask for include: [\"reasoning.encrypted_content\"] or reasoning items cannot be sent back"
	}
	return []string{w}
}

type encoder struct {
	req  *adapters.Request
	caps adapters.Capabilities
	b    body
	m    []adapters.FieldMapping
	degr []string
}

func (e *encoder) mapTo(s adapters.Source, field, note string) {
	e.m = append(e.m, adapters.FieldMapping{Source: s.ID, Trust: s.Trust, Field: field, Note: note})
}

// appendInstructions adds a block to instructions, a blank line apart.
func (e *encoder) appendInstructions(text string) {
	if e.b.Instructions != "" {
		e.b.Instructions += "\n\n"
	}
	e.b.Instructions += text
}

func (e *encoder) sources(p adapters.Parts, chained bool) error {
	carried := ""
	if chained {
		carried = fmt.Sprintf("sent in an earlier request; carried over by previous_response_id %s", e.req.Turns[len(e.req.Turns)-1].ResponseID)
	}
	var ctx *message // the context run being filled
	for _, s := range p.All {
		if chained && !(s.Role == adapters.RoleDeveloper && e.caps.Developer == adapters.DeveloperAsSystem) {
			e.mapTo(s, "previous_response_id", carried)
			continue
		}
		text := adapters.SourceText(s)
		if s.Role == adapters.RoleContext {
			if ctx == nil {
				ctx = &message{Role: "user"}
				e.b.Input = append(e.b.Input, ctx)
			}
			e.mapTo(s, fmt.Sprintf("input[%d].content[%d].text", len(e.b.Input)-1, len(ctx.Content)), "")
			ctx.Content = append(ctx.Content, part{Type: "input_text", Text: text})
			continue
		}
		ctx = nil
		role, note := string(s.Role), ""
		if s.Role == adapters.RoleDeveloper {
			switch e.caps.Developer {
			case adapters.DeveloperAsSystem:
				// Instructions are not carried over, so this is re-sent
				// even when chained.
				e.appendInstructions(text)
				e.mapTo(s, "instructions", "no developer role: appended to instructions")
				continue
			case adapters.DeveloperAsUser:
				note = e.caps.Provider + " treats developer messages as user messages"
			}
		}
		e.mapTo(s, fmt.Sprintf("input[%d].content", len(e.b.Input)), note)
		e.b.Input = append(e.b.Input, easyMessage{Role: role, Content: text})
	}
	return nil
}

func (e *encoder) history(chained bool) error {
	if chained {
		last := e.req.Turns[len(e.req.Turns)-1]
		if last.ResponseID == "" {
			return fmt.Errorf("history previous-response-id: turn %d has no response id to chain on", len(e.req.Turns))
		}
		e.b.PreviousResponseID = last.ResponseID
		// The calls (and the results before the last turn's) are carried
		// over by the id; only the last turn's results are sent.
		carried := "carried over by previous_response_id " + last.ResponseID
		for ti, t := range e.req.Turns {
			for _, it := range t.Items {
				if it.Kind == adapters.KindToolCall {
					m := adapters.CarriedCall(ti+1, it.CallID, it.Name, "previous_response_id", "function_call")
					m.Note += ", " + carried
					e.m = append(e.m, m)
				}
			}
			if ti < len(e.req.Turns)-1 {
				for _, r := range t.Results {
					m := adapters.CarriedResult(ti+1, r.CallID, r.Name, "previous_response_id", "function_call_output")
					m.Note += ", " + carried
					e.m = append(e.m, m)
				}
			}
		}
		e.results(len(e.req.Turns), last)
		return nil
	}
	for ti, t := range e.req.Turns {
		if err := e.items(ti, t); err != nil {
			return err
		}
		e.results(ti+1, t)
	}
	return nil
}

// items replays a model turn's output items in output order.
func (e *encoder) items(ti int, t adapters.Turn) error {
	var msg *outputMessage // the last message item, to merge its refusal lane
	for _, it := range t.Items {
		switch it.Kind {
		case adapters.KindToolCall:
			args := string(it.Arguments)
			if args == "" {
				args = "{}"
			}
			e.m = append(e.m, adapters.CarriedCall(ti+1, it.CallID, it.Name, fmt.Sprintf("input[%d]", len(e.b.Input)), "function_call"))
			e.b.Input = append(e.b.Input, functionCall{Type: "function_call", ID: idWithPrefix(it.ID, "fc"),
				CallID: it.CallID, Name: it.Name, Arguments: args, Status: "completed"})
			msg = nil
		case adapters.KindReasoning:
			if !strings.HasPrefix(it.ID, "rs") {
				e.degr = append(e.degr, fmt.Sprintf("turn %d: reasoning item %q is not an OpenAI reasoning item; not replayed", ti+1, it.ID))
				continue
			}
			r := reasoningItem{Type: "reasoning", ID: it.ID, Summary: []summaryText{}, EncryptedContent: it.Signature}
			if it.Text != "" {
				r.Summary = append(r.Summary, summaryText{Type: "summary_text", Text: it.Text})
			}
			e.b.Input = append(e.b.Input, r)
			msg = nil
		case adapters.KindMessage:
			m := &outputMessage{Type: "message", ID: idWithPrefix(it.ID, "msg"), Role: "assistant", Status: "completed",
				Content: []any{outputText{Type: "output_text", Text: it.Text, Annotations: []any{}}}}
			e.b.Input = append(e.b.Input, m)
			msg = m
		case adapters.KindRefusal:
			base := strings.TrimSuffix(it.ID, refusalSuffix)
			rp := refusalPart{Type: "refusal", Refusal: it.Text}
			if msg != nil && base != it.ID && msg.ID == base && base != "" {
				msg.Content = append(msg.Content, rp)
				continue
			}
			m := &outputMessage{Type: "message", ID: idWithPrefix(base, "msg"), Role: "assistant", Status: "completed", Content: []any{rp}}
			e.b.Input = append(e.b.Input, m)
			msg = m
		default:
			return fmt.Errorf("turn %d: output item %q has unknown kind %q", ti+1, it.ID, it.Kind)
		}
	}
	return nil
}

// results answers turn n's calls, each by its call_id, then sends the
// turn's follow-up as a user message.
func (e *encoder) results(n int, t adapters.Turn) {
	for _, r := range t.Results {
		e.m = append(e.m, adapters.CarriedResult(n, r.CallID, r.Name, fmt.Sprintf("input[%d]", len(e.b.Input)), "function_call_output"))
		e.b.Input = append(e.b.Input, functionCallOutput{Type: "function_call_output", CallID: r.CallID, Output: r.Content})
	}
	if t.FollowUp != "" {
		e.b.Input = append(e.b.Input, easyMessage{Role: "user", Content: t.FollowUp})
	}
}

// idWithPrefix keeps an item id only when it is an OpenAI id of the right
// kind (the API rejects e.g. a call_… or toolu_… id in the id field).
func idWithPrefix(id, prefix string) string {
	if strings.HasPrefix(id, prefix) {
		return id
	}
	return ""
}

func (e *encoder) options() error {
	req, caps := e.req, e.caps
	for i, t := range req.Tools {
		params := t.Parameters
		if len(params) == 0 {
			params = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		e.b.Tools = append(e.b.Tools, tool{Type: "function", Name: t.Name, Description: t.Description,
			Parameters: params, Strict: t.Strict && caps.StrictSchemas})
		e.m = append(e.m, adapters.FieldMapping{Source: "tool:" + t.Name, Trust: adapters.TrustTrusted, Field: fmt.Sprintf("tools[%d]", i)})
	}
	switch req.Choice.Mode {
	case "":
	case adapters.ToolChoiceAuto, adapters.ToolChoiceNone, adapters.ToolChoiceRequired:
		e.b.ToolChoice = string(req.Choice.Mode)
	case adapters.ToolChoiceNamed:
		e.b.ToolChoice = namedChoice{Type: "function", Name: req.Choice.Name}
	default:
		return fmt.Errorf("unknown tool choice mode %q", req.Choice.Mode)
	}
	if req.Limits.ParallelToolCalls != nil && caps.ParallelControl {
		e.b.ParallelToolCalls = req.Limits.ParallelToolCalls
	}
	if err := e.output(); err != nil {
		return err
	}
	if req.Limits.Reasoning != "" {
		e.b.Reasoning = &reasoning{Effort: req.Limits.Reasoning, Summary: "auto"}
	}
	e.b.MaxOutputTokens = req.Limits.MaxOutputTokens
	e.b.Temperature = req.Limits.Temperature
	e.b.Store = req.Store
	if !caps.ServerState {
		no := false
		e.b.Store = &no
	}
	if e.b.Store != nil && !*e.b.Store && caps.Provider != adapters.ProviderDeepSeek && (req.Limits.Reasoning != "" || hasReasoning(req.Turns)) {
		// Unstored reasoning can only be replayed from its encrypted
		// content, which must be asked for (protocols.md §1.2 `store`).
		e.b.Include = []string{"reasoning.encrypted_content"}
	}
	e.b.Stream = req.Stream
	return nil
}

func hasReasoning(turns []adapters.Turn) bool {
	for _, t := range turns {
		for _, it := range t.Items {
			if it.Kind == adapters.KindReasoning {
				return true
			}
		}
	}
	return false
}

// output places the output contract in text.format, or, where the
// provider lacks it, states it in instructions.
func (e *encoder) output() error {
	o, caps := e.req.Output, e.caps
	schemaMap := adapters.FieldMapping{Source: "output_schema", Trust: adapters.TrustTrusted, Field: "text.format"}
	switch o.Mode {
	case "", adapters.OutputText:
		return nil
	case adapters.OutputJSON:
		if caps.StructuredOutput == "" {
			e.appendInstructions(adapters.SchemaInstruction(o))
			schemaMap.Field, schemaMap.Note = "instructions", "no JSON mode: the requirement is stated in instructions"
		} else {
			e.b.Text = &textConfig{Format: format{Type: "json_object"}}
		}
	case adapters.OutputJSONSchema:
		switch caps.StructuredOutput {
		case adapters.OutputJSONSchema:
			strict := o.Strict && caps.StrictSchemas
			e.b.Text = &textConfig{Format: format{Type: "json_schema", Name: o.Name, Schema: o.Schema, Strict: &strict}}
		case adapters.OutputJSON:
			e.b.Text = &textConfig{Format: format{Type: "json_object"}}
			e.appendInstructions(adapters.SchemaInstruction(o))
			schemaMap.Field, schemaMap.Note = "instructions", "JSON mode only: the schema is stated in instructions"
		default:
			e.appendInstructions(adapters.SchemaInstruction(o))
			schemaMap.Field, schemaMap.Note = "instructions", "no structured output: the schema is stated in instructions"
		}
	default:
		return fmt.Errorf("unknown output mode %q", o.Mode)
	}
	e.m = append(e.m, schemaMap)
	return nil
}
