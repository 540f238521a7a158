package geminiinteractions

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelwire/modelwire/adapters"
)

// The request body: CreateModelInteraction (go-genai
// models/interactions/createmodelinteraction.go), model first.
type body struct {
	Model                 string            `json:"model"`
	Input                 []any             `json:"input"`
	SystemInstruction     string            `json:"system_instruction,omitempty"`
	Tools                 []tool            `json:"tools,omitempty"`
	GenerationConfig      *generationConfig `json:"generation_config,omitempty"`
	ResponseFormat        *responseFormat   `json:"response_format,omitempty"`
	PreviousInteractionID string            `json:"previous_interaction_id,omitempty"`
	Store                 *bool             `json:"store,omitempty"`
	Stream                bool              `json:"stream,omitempty"`
}

type textContent struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// The input steps this encoder sends (Step's members).
type userInputStep struct {
	Type    string        `json:"type"`
	Content []textContent `json:"content"`
}

type thoughtStep struct {
	Type      string        `json:"type"`
	Signature string        `json:"signature,omitempty"`
	Summary   []textContent `json:"summary,omitempty"`
}

type modelOutputStep struct {
	Type    string        `json:"type"`
	Content []textContent `json:"content"`
}

type functionCallStep struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// functionResultStep carries the tool's text as the result string (the
// result union also takes an object or a list of contents).
type functionResultStep struct {
	Type    string `json:"type"`
	CallID  string `json:"call_id"`
	Name    string `json:"name,omitempty"`
	Result  string `json:"result"`
	IsError bool   `json:"is_error,omitempty"`
}

// tool is a Function declaration; parameters is full JSON Schema.
type tool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

type generationConfig struct {
	MaxOutputTokens   int      `json:"max_output_tokens,omitempty"`
	Temperature       *float64 `json:"temperature,omitempty"`
	ThinkingLevel     string   `json:"thinking_level,omitempty"`
	ThinkingSummaries string   `json:"thinking_summaries,omitempty"`
	ToolChoice        any      `json:"tool_choice,omitempty"`
}

type allowedTools struct {
	AllowedTools struct {
		Mode  string   `json:"mode"`
		Tools []string `json:"tools"`
	} `json:"allowed_tools"`
}

// responseFormat is the TextResponseFormat member of the polymorphic
// response_format (it replaced response_mime_type in 2026-05).
type responseFormat struct {
	Type     string          `json:"type"`
	MimeType string          `json:"mime_type"`
	Schema   json.RawMessage `json:"schema,omitempty"`
}

// Encode builds POST /v1beta/interactions for req (see the package doc).
func (Protocol) Encode(req *adapters.Request, provider string) (*adapters.HTTPRequest, error) {
	caps, degr, parts, err := adapters.Prepare(req, provider, adapters.GeminiInteractions)
	if err != nil {
		return nil, err
	}
	if req.Model == "" {
		return nil, fmt.Errorf("gemini-interactions: the request names no model")
	}
	e := encoder{req: req, caps: caps, b: body{Model: req.Model, Input: []any{}}}
	chained := req.History == adapters.HistoryPreviousResponse && len(req.Turns) > 0
	e.sources(parts, chained)
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
	return &adapters.HTTPRequest{
		Method:       "POST",
		Path:         Path,
		Headers:      map[string]string{"Content-Type": "application/json", "Api-Revision": APIRevision},
		Body:         raw,
		Map:          e.m,
		Degradations: degr,
	}, nil
}

type encoder struct {
	req  *adapters.Request
	caps adapters.Capabilities
	b    body
	m    []adapters.FieldMapping
	sys  []string
}

func (e *encoder) mapTo(id, trust, field, note string) {
	e.m = append(e.m, adapters.FieldMapping{Source: id, Trust: trust, Field: field, Note: note})
}

// system adds a block to system_instruction, a blank line apart.
func (e *encoder) system(text string) {
	e.sys = append(e.sys, text)
	e.b.SystemInstruction = strings.Join(e.sys, "\n\n")
}

func (e *encoder) sources(p adapters.Parts, chained bool) {
	for _, s := range p.System {
		e.system(s.Text)
		e.mapTo(s.ID, s.Trust, "system_instruction", "")
	}
	for _, s := range p.Developer {
		e.system(s.Text)
		e.mapTo(s.ID, s.Trust, "system_instruction", "no developer role in gemini-interactions: appended to system_instruction")
	}
	if len(p.User) == 0 {
		return
	}
	if chained {
		carried := "sent in an earlier request; the server keeps it for previous_interaction_id " + e.req.Turns[len(e.req.Turns)-1].ResponseID
		for _, s := range p.User {
			e.mapTo(s.ID, s.Trust, "previous_interaction_id", carried)
		}
		return
	}
	first := userInputStep{Type: "user_input"}
	for i, s := range p.User {
		first.Content = append(first.Content, textContent{Type: "text", Text: adapters.SourceText(s)})
		e.mapTo(s.ID, s.Trust, fmt.Sprintf("input[0].content[%d].text", i), "")
	}
	e.b.Input = append(e.b.Input, first)
}

// history replays the turns (full) or chains on the last one.
func (e *encoder) history(chained bool) error {
	turns := e.req.Turns
	if chained {
		last := turns[len(turns)-1]
		if last.ResponseID == "" {
			return fmt.Errorf("gemini-interactions: turn %d has no interaction id to chain on", len(turns))
		}
		e.b.PreviousInteractionID = last.ResponseID
		// The calls (and the results before the last turn's) are kept by
		// the server; only the last turn's results are sent.
		carried := ", kept by the server for previous_interaction_id " + last.ResponseID
		for ti, t := range turns {
			for _, it := range t.Items {
				if it.Kind == adapters.KindToolCall {
					m := adapters.CarriedCall(ti+1, it.CallID, it.Name, "previous_interaction_id", "function_call")
					m.Note += carried
					e.m = append(e.m, m)
				}
			}
			if ti < len(turns)-1 {
				for _, r := range t.Results {
					m := adapters.CarriedResult(ti+1, r.CallID, r.Name, "previous_interaction_id", "function_result")
					m.Note += carried
					e.m = append(e.m, m)
				}
			}
		}
		return e.results(len(turns), last)
	}
	for ti, t := range turns {
		for _, it := range t.Items {
			switch it.Kind {
			case adapters.KindReasoning:
				if it.Text == "" && it.Signature == "" {
					continue
				}
				st := thoughtStep{Type: "thought", Signature: it.Signature}
				if it.Text != "" {
					st.Summary = []textContent{{Type: "text", Text: it.Text}}
				}
				e.b.Input = append(e.b.Input, st)
			case adapters.KindMessage:
				e.b.Input = append(e.b.Input, modelOutputStep{Type: "model_output", Content: []textContent{{Type: "text", Text: it.Text}}})
			case adapters.KindToolCall:
				args := it.Arguments
				if len(args) == 0 {
					args = json.RawMessage("{}")
				}
				if !json.Valid(args) || !strings.HasPrefix(strings.TrimSpace(string(args)), "{") {
					return fmt.Errorf("gemini-interactions: turn %d: call %s has arguments that are not a JSON object; function_call arguments must be one", ti+1, it.CallID)
				}
				e.m = append(e.m, adapters.CarriedCall(ti+1, it.CallID, it.Name, fmt.Sprintf("input[%d]", len(e.b.Input)), "function_call"))
				e.b.Input = append(e.b.Input, functionCallStep{Type: "function_call", ID: it.CallID, Name: it.Name, Arguments: args})
			case adapters.KindRefusal:
				// No refusal step exists: a refusal is the interaction's status.
			default:
				return fmt.Errorf("gemini-interactions: turn %d: output item %q has unknown kind %q", ti+1, it.ID, it.Kind)
			}
		}
		if err := e.results(ti+1, t); err != nil {
			return err
		}
	}
	return nil
}

// results answers a turn's calls by call_id, in call order.
func (e *encoder) results(n int, t adapters.Turn) error {
	calls := map[string]bool{}
	for _, it := range t.Items {
		if it.Kind == adapters.KindToolCall {
			calls[it.CallID] = true
		}
	}
	for _, r := range t.Results {
		if !calls[r.CallID] {
			return fmt.Errorf("gemini-interactions: turn %d has a result for call %s, which the turn does not make", n, r.CallID)
		}
		e.m = append(e.m, adapters.CarriedResult(n, r.CallID, r.Name, fmt.Sprintf("input[%d]", len(e.b.Input)), "function_result"))
		e.b.Input = append(e.b.Input, functionResultStep{Type: "function_result", CallID: r.CallID, Name: r.Name, Result: r.Content, IsError: r.IsError})
	}
	if t.FollowUp != "" {
		// A regeneration's validation message: a user step after the turn,
		// as the other protocols send a user message.
		e.b.Input = append(e.b.Input, userInputStep{Type: "user_input", Content: []textContent{{Type: "text", Text: t.FollowUp}}})
	}
	return nil
}

func (e *encoder) options() error {
	req, caps := e.req, e.caps
	for i, t := range req.Tools {
		e.b.Tools = append(e.b.Tools, tool{Type: "function", Name: t.Name, Description: t.Description, Parameters: t.Parameters})
		note := ""
		if t.Strict && !caps.StrictSchemas {
			note = "no strict flag in gemini-interactions: the schema constrains decoding but is not enforced"
		}
		e.mapTo("tool:"+t.Name, adapters.TrustTrusted, fmt.Sprintf("tools[%d]", i), note)
	}
	gc := generationConfig{MaxOutputTokens: req.Limits.MaxOutputTokens, Temperature: req.Limits.Temperature}
	if len(req.Tools) > 0 {
		switch req.Choice.Mode {
		case "", adapters.ToolChoiceAuto:
			gc.ToolChoice = "auto"
		case adapters.ToolChoiceNone:
			gc.ToolChoice = "none"
		case adapters.ToolChoiceRequired:
			gc.ToolChoice = "any"
		case adapters.ToolChoiceNamed:
			var a allowedTools
			a.AllowedTools.Mode, a.AllowedTools.Tools = "any", []string{req.Choice.Name}
			gc.ToolChoice = a
		default:
			return fmt.Errorf("gemini-interactions: unknown tool choice mode %q", req.Choice.Mode)
		}
	}
	switch req.Limits.Reasoning {
	case "":
	case "minimal", "low", "medium", "high":
		gc.ThinkingLevel, gc.ThinkingSummaries = req.Limits.Reasoning, "auto"
	default:
		return fmt.Errorf("gemini-interactions: unknown reasoning effort %q (want minimal, low, medium or high)", req.Limits.Reasoning)
	}
	if gc.MaxOutputTokens != 0 || gc.Temperature != nil || gc.ThinkingLevel != "" || gc.ToolChoice != nil {
		e.b.GenerationConfig = &gc
	}
	o := req.Output
	switch o.Mode {
	case "", adapters.OutputText:
	case adapters.OutputJSON:
		e.b.ResponseFormat = &responseFormat{Type: "text", MimeType: "application/json"}
		e.mapTo("output_schema", adapters.TrustTrusted, "response_format", "")
	case adapters.OutputJSONSchema:
		e.b.ResponseFormat = &responseFormat{Type: "text", MimeType: "application/json", Schema: o.Schema}
		note := ""
		if o.Strict && !caps.StrictSchemas {
			note = "no strict flag in gemini-interactions: the schema constrains decoding but is not enforced"
		}
		e.mapTo("output_schema", adapters.TrustTrusted, "response_format.schema", note)
	default:
		return fmt.Errorf("gemini-interactions: unknown output mode %q", o.Mode)
	}
	e.b.Store = req.Store
	e.b.Stream = req.Stream
	return nil
}
