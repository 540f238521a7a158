package gemini

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/modelwire/modelwire/adapters"
)

// The request body, in the order the REST reference lists
// GenerateContentRequest's fields (contents, tools, toolConfig,
// safetySettings, systemInstruction, generationConfig). The model is not
// in the body: it is part of the path.
type body struct {
	Contents          []content          `json:"contents"`
	Tools             []tool             `json:"tools,omitempty"`
	ToolConfig        *toolConfig        `json:"toolConfig,omitempty"`
	SystemInstruction *systemInstruction `json:"systemInstruction,omitempty"`
	GenerationConfig  *generationConfig  `json:"generationConfig,omitempty"`
}

type content struct {
	Role  string `json:"role"`
	Parts []part `json:"parts"`
}

// part is one Part; exactly one of Text, FunctionCall, FunctionResponse is
// set. ThoughtSignature is opaque base64 state echoed back as received.
type part struct {
	Text             string            `json:"text,omitempty"`
	Thought          bool              `json:"thought,omitempty"`
	FunctionCall     *functionCall     `json:"functionCall,omitempty"`
	FunctionResponse *functionResponse `json:"functionResponse,omitempty"`
	ThoughtSignature string            `json:"thoughtSignature,omitempty"`
}

type functionCall struct {
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
	ID   string          `json:"id,omitempty"`
}

type functionResponse struct {
	Name     string          `json:"name"`
	Response json.RawMessage `json:"response"`
	ID       string          `json:"id,omitempty"`
}

type systemInstruction struct {
	Parts []textPart `json:"parts"`
}

type textPart struct {
	Text string `json:"text"`
}

type tool struct {
	FunctionDeclarations []functionDeclaration `json:"functionDeclarations"`
}

// functionDeclaration sends the schema as parametersJsonSchema (full JSON
// Schema). The older `parameters` field takes Google's OpenAPI-subset
// Schema, which has no additionalProperties: the API answers 400
// INVALID_ARGUMENT "Unknown name "additionalProperties" … Cannot find
// field" for the refund tools' schemas.
type functionDeclaration struct {
	Name                 string          `json:"name"`
	Description          string          `json:"description,omitempty"`
	ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema,omitempty"`
}

type toolConfig struct {
	FunctionCallingConfig functionCallingConfig `json:"functionCallingConfig"`
}

type functionCallingConfig struct {
	Mode                 string   `json:"mode"`
	AllowedFunctionNames []string `json:"allowedFunctionNames,omitempty"`
}

type generationConfig struct {
	MaxOutputTokens    int             `json:"maxOutputTokens,omitempty"`
	Temperature        *float64        `json:"temperature,omitempty"`
	ResponseMimeType   string          `json:"responseMimeType,omitempty"`
	ResponseJSONSchema json.RawMessage `json:"responseJsonSchema,omitempty"`
	ThinkingConfig     *thinkingConfig `json:"thinkingConfig,omitempty"`
}

type thinkingConfig struct {
	IncludeThoughts bool   `json:"includeThoughts"`
	ThinkingBudget  *int   `json:"thinkingBudget,omitempty"`
	ThinkingLevel   string `json:"thinkingLevel,omitempty"`
}

// Thinking budgets (tokens) for Gemini 2.x models, which take a budget, not
// a level. 24576 is gemini-2.5-flash's maximum.
var thinkingBudgets = map[string]int{"minimal": 512, "low": 1024, "medium": 8192, "high": 24576}

// Encode builds the generateContent / streamGenerateContent request.
func (Protocol) Encode(req *adapters.Request, provider string) (*adapters.HTTPRequest, error) {
	caps, degr, parts, err := adapters.Prepare(req, provider, adapters.Gemini)
	if err != nil {
		return nil, err
	}
	model := strings.TrimPrefix(req.Model, "models/")
	if model == "" {
		return nil, fmt.Errorf("gemini: the request names no model (it goes in the path)")
	}

	r := &geminiRequest{caps: caps, gc: generationConfig{MaxOutputTokens: req.Limits.MaxOutputTokens, Temperature: req.Limits.Temperature}}
	r.user(parts)
	history, carried, err := encodeTurns(req.Turns, len(r.b.Contents))
	if err != nil {
		return nil, err
	}
	r.b.Contents = append(r.b.Contents, history...)
	r.fmap = append(r.fmap, carried...)
	if err := r.tools(req); err != nil {
		return nil, err
	}
	r.system(parts)
	if err := r.output(req.Output); err != nil {
		return nil, err
	}
	if len(r.sys) > 0 {
		r.b.SystemInstruction = &systemInstruction{Parts: r.sys}
	}
	if req.Limits.Reasoning != "" {
		tc, err := encodeThinking(model, req.Limits.Reasoning)
		if err != nil {
			return nil, err
		}
		r.gc.ThinkingConfig = tc
	}
	if gc := r.gc; gc.MaxOutputTokens != 0 || gc.Temperature != nil || gc.ResponseMimeType != "" || gc.ThinkingConfig != nil {
		r.b.GenerationConfig = &gc
	}

	raw, err := adapters.MarshalBody(r.b)
	if err != nil {
		return nil, err
	}
	path := "/v1beta/models/" + url.PathEscape(model)
	if req.Stream {
		path += ":streamGenerateContent?alt=sse"
	} else {
		path += ":generateContent"
	}
	return &adapters.HTTPRequest{
		Method:       "POST",
		Path:         path,
		Headers:      map[string]string{"Content-Type": "application/json"},
		Body:         raw,
		Map:          r.fmap,
		Degradations: degr,
	}, nil
}

// geminiRequest is a request body being built: where each source landed,
// the systemInstruction's parts and the generationConfig so far.
type geminiRequest struct {
	caps adapters.Capabilities
	b    body
	fmap []adapters.FieldMapping
	sys  []textPart
	gc   generationConfig
}

// user is the first user content: one part per user-side source.
func (r *geminiRequest) user(parts adapters.Parts) {
	if len(parts.User) == 0 {
		return
	}
	first := content{Role: "user"}
	for i, s := range parts.User {
		first.Parts = append(first.Parts, part{Text: adapters.SourceText(s)})
		r.fmap = append(r.fmap, adapters.FieldMapping{Source: s.ID, Trust: s.Trust, Field: fmt.Sprintf("contents[0].parts[%d].text", i)})
	}
	r.b.Contents = append(r.b.Contents, first)
}

// tools declares the tools as one functionDeclarations group, with the
// tool choice.
func (r *geminiRequest) tools(req *adapters.Request) error {
	if len(req.Tools) == 0 {
		return nil
	}
	var decls []functionDeclaration
	for i, t := range req.Tools {
		decls = append(decls, functionDeclaration{Name: t.Name, Description: t.Description, ParametersJSONSchema: t.Parameters})
		m := adapters.FieldMapping{Source: "tool:" + t.Name, Trust: adapters.TrustTrusted, Field: fmt.Sprintf("tools[0].functionDeclarations[%d]", i)}
		if t.Strict && !r.caps.StrictSchemas {
			m.Note = "no strict flag in gemini: the schema constrains decoding but is not enforced"
		}
		r.fmap = append(r.fmap, m)
	}
	r.b.Tools = []tool{{FunctionDeclarations: decls}}
	tc, err := encodeChoice(req.Choice)
	if err != nil {
		return err
	}
	r.b.ToolConfig = tc
	return nil
}

// system puts the system sources, then the developer sources, in
// systemInstruction (output adds the contract when it cannot travel
// natively).
func (r *geminiRequest) system(parts adapters.Parts) {
	for _, s := range parts.System {
		r.fmap = append(r.fmap, adapters.FieldMapping{Source: s.ID, Trust: s.Trust, Field: fmt.Sprintf("systemInstruction.parts[%d].text", len(r.sys))})
		r.sys = append(r.sys, textPart{Text: s.Text})
	}
	for _, s := range parts.Developer {
		r.fmap = append(r.fmap, adapters.FieldMapping{Source: s.ID, Trust: s.Trust, Field: fmt.Sprintf("systemInstruction.parts[%d].text", len(r.sys)),
			Note: "no developer role in gemini: sent as a systemInstruction part after the system rules"})
		r.sys = append(r.sys, textPart{Text: s.Text})
	}
}

// output states the output contract: generationConfig's
// responseJsonSchema or responseMimeType where the provider has them,
// else the requirement as text in systemInstruction.
func (r *geminiRequest) output(o adapters.OutputContract) error {
	asText := func(note string) {
		r.fmap = append(r.fmap, adapters.FieldMapping{Source: "output_schema", Trust: adapters.TrustTrusted,
			Field: fmt.Sprintf("systemInstruction.parts[%d].text", len(r.sys)), Note: note})
		r.sys = append(r.sys, textPart{Text: adapters.SchemaInstruction(o)})
	}
	switch o.Mode {
	case adapters.OutputJSONSchema:
		if r.caps.StructuredOutput == adapters.OutputJSONSchema {
			// responseJsonSchema takes JSON Schema as it is (with
			// additionalProperties); responseSchema is the OpenAPI subset.
			r.gc.ResponseMimeType = "application/json"
			r.gc.ResponseJSONSchema = o.Schema
			m := adapters.FieldMapping{Source: "output_schema", Trust: adapters.TrustTrusted, Field: "generationConfig.responseJsonSchema"}
			if o.Strict && !r.caps.StrictSchemas {
				m.Note = "no strict flag in gemini: the schema constrains decoding but is not enforced"
			}
			r.fmap = append(r.fmap, m)
			return nil
		}
		asText("no structured output: the schema is sent as text")
		if r.caps.StructuredOutput == adapters.OutputJSON {
			r.gc.ResponseMimeType = "application/json"
		}
	case adapters.OutputJSON:
		if r.caps.StructuredOutput != "" {
			r.gc.ResponseMimeType = "application/json"
			r.fmap = append(r.fmap, adapters.FieldMapping{Source: "output_schema", Trust: adapters.TrustTrusted, Field: "generationConfig.responseMimeType"})
			return nil
		}
		asText("no JSON mode: the requirement is sent as text")
	case adapters.OutputText, "":
	default:
		return fmt.Errorf("gemini: unknown output mode %q", o.Mode)
	}
	return nil
}

// encodeChoice maps the tool choice to functionCallingConfig.mode.
func encodeChoice(c adapters.ToolChoice) (*toolConfig, error) {
	var fc functionCallingConfig
	switch c.Mode {
	case adapters.ToolChoiceAuto, "":
		fc.Mode = "AUTO"
	case adapters.ToolChoiceNone:
		fc.Mode = "NONE"
	case adapters.ToolChoiceRequired:
		fc.Mode = "ANY"
	case adapters.ToolChoiceNamed:
		fc.Mode = "ANY"
		fc.AllowedFunctionNames = []string{c.Name}
	default:
		return nil, fmt.Errorf("gemini: unknown tool choice mode %q", c.Mode)
	}
	return &toolConfig{FunctionCallingConfig: fc}, nil
}

// encodeThinking asks for thinking with thought summaries included.
// Gemini 3 models take a thinkingLevel; earlier models take a token budget
// (and reject thinkingLevel), so the model name decides.
func encodeThinking(model, effort string) (*thinkingConfig, error) {
	budget, ok := thinkingBudgets[effort]
	if !ok {
		return nil, fmt.Errorf("gemini: unknown reasoning effort %q (want minimal, low, medium or high)", effort)
	}
	if strings.HasPrefix(model, "gemini-3") {
		return &thinkingConfig{IncludeThoughts: true, ThinkingLevel: strings.ToUpper(effort)}, nil
	}
	return &thinkingConfig{IncludeThoughts: true, ThinkingBudget: &budget}, nil
}

// encodeTurns replays each model turn as a `model` content, parts in
// output order with their thought signatures, followed by one `user`
// content holding a functionResponse part per call, in call order.
// Results are matched to calls by call_id. The map rows say where each
// call and result went, the contents counted from base.
func encodeTurns(turns []adapters.Turn, base int) ([]content, []adapters.FieldMapping, error) {
	var out []content
	var fmap []adapters.FieldMapping
	for ti, t := range turns {
		model := content{Role: "model"}
		var calls []adapters.OutputItem
		for _, it := range t.Items {
			switch it.Kind {
			case adapters.KindReasoning:
				if it.Text == "" && it.Signature == "" {
					continue
				}
				model.Parts = append(model.Parts, part{Text: it.Text, Thought: true, ThoughtSignature: it.Signature})
			case adapters.KindMessage:
				if it.Text == "" && it.Signature == "" {
					continue
				}
				model.Parts = append(model.Parts, part{Text: it.Text, ThoughtSignature: it.Signature})
			case adapters.KindToolCall:
				args := it.Arguments
				if len(args) == 0 {
					args = json.RawMessage("{}")
				}
				fmap = append(fmap, adapters.CarriedCall(ti+1, wireCallID(it.CallID), it.Name,
					fmt.Sprintf("contents[%d].parts[%d]", base+len(out), len(model.Parts)), "functionCall"))
				model.Parts = append(model.Parts, part{
					FunctionCall:     &functionCall{Name: it.Name, Args: args, ID: wireCallID(it.CallID)},
					ThoughtSignature: it.Signature,
				})
				calls = append(calls, it)
			case adapters.KindRefusal:
				// Gemini has no refusal part; a refusal is a finish reason.
			}
		}
		if len(model.Parts) > 0 {
			out = append(out, model)
		}
		var followUp []part
		if t.FollowUp != "" {
			followUp = []part{{Text: t.FollowUp}}
		}
		if len(calls) == 0 && len(t.Results) == 0 {
			if followUp != nil {
				out = append(out, content{Role: "user", Parts: followUp})
			}
			continue
		}
		results, err := t.ResultsInCallOrder()
		if err != nil {
			return nil, nil, fmt.Errorf("gemini: turn %d: %w", ti+1, err)
		}
		user := content{Role: "user"}
		for i, r := range results {
			c := calls[i]
			fmap = append(fmap, adapters.CarriedResult(ti+1, wireCallID(c.CallID), c.Name,
				fmt.Sprintf("contents[%d].parts[%d]", base+len(out), len(user.Parts)), "functionResponse"))
			user.Parts = append(user.Parts, part{FunctionResponse: &functionResponse{
				Name: c.Name, Response: adapters.ResultObject(r), ID: wireCallID(c.CallID),
			}})
		}
		user.Parts = append(user.Parts, followUp...)
		out = append(out, user)
	}
	return out, fmap, nil
}

// wireCallID is the id to send for a call: none for ids the decoder made up.
func wireCallID(id string) string {
	if strings.HasPrefix(id, SyntheticCallIDPrefix) {
		return ""
	}
	return id
}
