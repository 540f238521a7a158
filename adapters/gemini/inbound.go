package gemini

import (
	"github.com/tidwall/gjson"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/wire"
)

// readChoices fills what a checked request lets the model do:
// toolConfig.functionCallingConfig (mode AUTO|ANY|NONE|VALIDATED,
// allowedFunctionNames) and thinkingConfig.includeThoughts. Gemini has no
// switch for parallel calls. Field names are read in both the REST
// camelCase and the proto snake_case the API also accepts.
func readChoices(top wire.Object, in *adapters.Inbound) {
	fc := first(gjson.Parse(simGet(top, "toolConfig").Raw), "functionCallingConfig", "function_calling_config")
	in.Choice.Mode, _ = wire.ChoiceMode(first(fc, "mode").String())
	for _, n := range first(fc, "allowedFunctionNames", "allowed_function_names").Array() {
		in.Allowed = append(in.Allowed, n.String())
	}
	if in.Choice.Mode == adapters.ToolChoiceRequired && len(in.Allowed) == 1 {
		in.Choice = adapters.ToolChoice{Mode: adapters.ToolChoiceNamed, Name: in.Allowed[0]}
	}
	gc := gjson.Parse(simGet(top, "generationConfig").Raw)
	in.Reasoning = first(gc, "thinkingConfig.includeThoughts", "thinking_config.include_thoughts").Bool()
}

func first(r gjson.Result, paths ...string) gjson.Result {
	for _, p := range paths {
		if v := r.Get(p); v.Exists() {
			return v
		}
	}
	return gjson.Result{}
}

// readPrompt fills the prompt of a checked request: systemInstruction's
// text parts (RoleSystem), then the text parts of the user contents in
// order. Thought parts, the model's contents and function responses are
// not prompt. systemInstruction.parts may be one part, not a list, as the
// API's own curl examples write it.
func (r *request) readPrompt() {
	si, _ := simGet(r.top, "systemInstruction").Members()
	switch parts := simGet(si, "parts"); parts.Kind() {
	case wire.KindArray:
		for p := range parts.All() {
			r.textPart(adapters.RoleSystem, p)
		}
	case wire.KindObject:
		r.textPart(adapters.RoleSystem, parts)
	}
	for i, parts := range r.parts {
		if r.roles[i] != "user" {
			continue
		}
		for _, p := range parts {
			if text := p.Get("text"); text.Kind() == wire.KindString && !p.Get("thought").Bool() {
				r.in.AddPrompt(adapters.RoleUser, text.Str())
			}
		}
	}
}

// textPart adds a part's text, when it is a text part and not a thought.
func (r *request) textPart(role adapters.SourceRole, p wire.Value) {
	if text, thought := p.MemberPair("text", "thought"); text.Kind() == wire.KindString && !thought.Bool() {
		r.in.AddPrompt(role, text.Str())
	}
}

// readOutput reads the output format from generationConfig:
// responseMimeType application/json asks for JSON, and with
// responseJsonSchema (JSON Schema) or responseSchema (the OpenAPI subset)
// for JSON of that schema. A schema with another MIME type (text/x.enum)
// does not ask for JSON. Gemini's schemas have no name and no strict flag.
func (r *request) readOutput() {
	if simGet(r.gc, "responseMimeType").Str() != "application/json" {
		return
	}
	schema := simGet(r.gc, "responseJsonSchema")
	if simKind(schema) == wire.KindAbsent {
		schema = simGet(r.gc, "responseSchema")
	}
	if simKind(schema) == wire.KindAbsent {
		r.in.Output.Mode = adapters.OutputJSON
		return
	}
	r.in.Output = adapters.OutputContract{Mode: adapters.OutputJSONSchema, Schema: adapters.RawView(schema.Raw)}
}
