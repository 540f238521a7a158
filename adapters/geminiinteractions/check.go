package geminiinteractions

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"sort"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/wire"
)

// simFields are CreateModelInteraction's fields (go-genai v1.77.0); any
// other top-level name is the API's parameter_unknown.
var simFields = map[string]bool{"model": true, "agent": true, "agent_config": true, "input": true, "system_instruction": true,
	"tools": true, "generation_config": true, "response_format": true, "response_mime_type": true, "response_modalities": true,
	"previous_interaction_id": true, "store": true, "stream": true, "background": true, "cached_content": true,
	"continuation_token": true, "environment": true, "labels": true, "safety_settings": true, "service_tier": true,
	"webhook_config": true}

// simModelSteps are the steps a model produces; a run of them is one model
// turn of the history.
var simModelSteps = map[string]bool{"thought": true, "model_output": true, "function_call": true,
	"google_search_call": true, "google_search_result": true, "code_execution_call": true, "code_execution_result": true,
	"url_context_call": true, "url_context_result": true, "file_search_call": true, "file_search_result": true,
	"google_maps_call": true, "google_maps_result": true, "mcp_server_tool_call": true, "mcp_server_tool_result": true,
	"retrieval_call": true, "retrieval_result": true, "processing_call": true, "processing_result": true}

// request is one request while it is checked: its body read once, and the
// facts the rules find.
type request struct {
	root, gc gjson.Result
	in       *adapters.Inbound
	// format and mime are response_format and response_mime_type, met
	// while the members are listed (a lookup of each would walk the
	// whole body again, the history included).
	format, mime gjson.Result
}

// requestRules are the API's checks in the order it applies them.
var requestRules = []wire.Rule[*request]{
	{Name: "every member is a known parameter", Check: (*request).unknown},
	{Name: "model, previous_interaction_id and system_instruction are strings; stream and store booleans", Check: (*request).scalars},
	{Name: "a model is named (agents are not simulated)", Check: func(r *request) *adapters.SimError {
		if r.in.Model != "" {
			return nil
		}
		if r.root.Get("agent").Exists() {
			return simInvalid("Agent interactions are not simulated: name a model.")
		}
		return simInvalid("Missing required parameter: 'model'.")
	}},
	{Name: "generation_config: a positive max_output_tokens, temperature in [0, 2], a known tool_choice", Check: (*request).generationConfig},
	{Name: "function tools are named", Check: (*request).tools},
	{Name: "every function_result answers a function_call, and every call is answered", Check: (*request).steps},
}

// CheckRequest validates POST /v1beta/interactions as the API does and
// returns what the simulator needs. Everything the request says is read
// here, in one pass, so new Inbound fields have one place to be filled.
//
// Checked: the path and method; a JSON object body without unknown
// parameters; a model (agents are not simulated); an input; the field
// types; every function_result answers a function_call before it in the
// input, and every function_call of the input is answered. With
// previous_interaction_id the calls live on the server, which checks the
// results against them (UnknownPrevious, UnmatchedResult). Any API key, or
// none, is accepted.
func (Protocol) CheckRequest(method, path string, _ http.Header, body []byte) (*adapters.Inbound, *adapters.SimError) {
	p, _, _ := strings.Cut(path, "?")
	if p != Path || method != http.MethodPost {
		return nil, simError(404, simErrorObj{Code: "not_found", Message: "The requested resource was not found: " + method + " " + p})
	}
	body = bytes.TrimSpace(bytes.TrimPrefix(body, []byte("\xef\xbb\xbf")))
	text := adapters.View(body)
	if !wire.Valid(text) || !gjson.Parse(text).IsObject() {
		return nil, simInvalid("Invalid JSON payload: the request body must be a JSON object.")
	}
	r := &request{root: gjson.Parse(text), in: &adapters.Inbound{}}
	if e := wire.Check(r, requestRules); e != nil {
		return nil, e
	}
	r.in.Output = readOutput(r.format, r.mime)
	return r.in, nil
}

// unknown: the API names the first unknown parameter in sorted order.
func (r *request) unknown() *adapters.SimError {
	var unknown []string
	r.root.ForEach(func(k, v gjson.Result) bool {
		switch name := k.String(); {
		case !simFields[name]:
			unknown = append(unknown, name)
		case name == "response_format":
			r.format = v
		case name == "response_mime_type":
			r.mime = v
		}
		return true
	})
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return simError(400, simErrorObj{Code: "parameter_unknown", Message: "Unknown parameter: '" + unknown[0] + "'."})
	}
	return nil
}

func (r *request) scalars() *adapters.SimError {
	str := func(name string) (string, *adapters.SimError) {
		v := r.root.Get(name)
		if v.Exists() && v.Type != gjson.String && v.Type != gjson.Null {
			return "", simInvalid("Invalid value for '%s': expected a string.", name)
		}
		return v.String(), nil
	}
	boolean := func(name string) (*bool, *adapters.SimError) {
		v := r.root.Get(name)
		switch v.Type {
		case gjson.True, gjson.False:
			b := v.Bool()
			return &b, nil
		case gjson.Null:
			return nil, nil
		}
		if v.Exists() {
			return nil, simInvalid("Invalid value for '%s': expected a boolean.", name)
		}
		return nil, nil
	}
	var serr *adapters.SimError
	if r.in.Model, serr = str("model"); serr != nil {
		return serr
	}
	if r.in.PreviousResponseID, serr = str("previous_interaction_id"); serr != nil {
		return serr
	}
	system, serr := str("system_instruction")
	if serr != nil {
		return serr
	}
	if system != "" {
		r.in.AddPrompt(adapters.RoleSystem, system)
		r.in.MarkOnce(len(r.in.Prompt) - 1)
	}
	stream, serr := boolean("stream")
	if serr != nil {
		return serr
	}
	r.in.Stream = stream != nil && *stream
	r.in.Store, serr = boolean("store")
	return serr
}

func (r *request) generationConfig() *adapters.SimError {
	gc := r.root.Get("generation_config")
	r.gc = gc
	if gc.Exists() && !gc.IsObject() {
		return simInvalid("Invalid value for 'generation_config': expected an object.")
	}
	if m := gc.Get("max_output_tokens"); m.Exists() {
		if m.Type != gjson.Number || m.Num != float64(int64(m.Num)) || m.Num < 1 {
			return simInvalid("Invalid value for 'generation_config.max_output_tokens': expected a positive integer.")
		}
		r.in.MaxOutputTokens = int(m.Int())
	}
	if t := gc.Get("temperature"); t.Exists() && (t.Type != gjson.Number || t.Num < 0 || t.Num > 2) {
		return simInvalid("Invalid value for 'generation_config.temperature': must be a number from 0 to 2.")
	}
	return r.toolChoice()
}

// toolChoice reads what the request lets the model do:
// generation_config.tool_choice is "auto", "any", "none", "validated" or
// {"allowed_tools":{mode,tools}}; thinking summaries make reasoning
// visible. The API has no switch for parallel calls.
func (r *request) toolChoice() *adapters.SimError {
	in := r.in
	tc := r.gc.Get("tool_choice")
	mode := tc.String()
	if tc.IsObject() {
		mode = tc.Get("allowed_tools.mode").String()
		for _, n := range tc.Get("allowed_tools.tools").Array() {
			in.Allowed = append(in.Allowed, n.String())
		}
	}
	if m, ok := wire.ChoiceMode(mode); ok && mode == strings.ToLower(mode) {
		in.Choice.Mode = m
	} else if mode != "" {
		return simInvalid("Invalid value for 'generation_config.tool_choice': '%s' (want auto, any, none or validated).", mode)
	}
	if in.Choice.Mode == adapters.ToolChoiceRequired && len(in.Allowed) == 1 {
		in.Choice = adapters.ToolChoice{Mode: adapters.ToolChoiceNamed, Name: in.Allowed[0]}
	}
	in.Reasoning = r.gc.Get("thinking_summaries").String() == "auto"
	return nil
}

func (r *request) tools() *adapters.SimError {
	tools := r.root.Get("tools")
	if tools.Exists() && !tools.IsArray() {
		return simInvalid("Invalid value for 'tools': expected an array.")
	}
	list := tools.Array()
	for i, t := range list {
		if t.Get("type").String() != "function" {
			continue
		}
		name := t.Get("name").String()
		if name == "" {
			return simInvalid("Missing required parameter: 'tools[%d].name'.", i)
		}
		r.in.Tools = append(r.in.Tools, name)
		if r.in.ToolDefs == nil {
			r.in.ToolDefs = make([]adapters.Tool, 0, len(list)-i)
		}
		desc, params := wire.Value{Raw: t.Raw}.MemberPair("description", "parameters")
		r.in.ToolDefs = append(r.in.ToolDefs, adapters.Tool{Name: name, Description: desc.Str(), Parameters: adapters.RawView(params.Raw)})
	}
	return nil
}

// steps reads the input's steps: model turns are runs of model steps;
// every function_result answers a function_call before it (or, with
// previous_interaction_id, one the server checks), and every call of the
// input is answered.
func (r *request) steps() *adapters.SimError {
	in := r.in
	steps, serr := simInput(r.root.Get("input"))
	if serr != nil {
		return serr
	}
	calls := map[string]string{} // call id → name, of the calls so far
	var unanswered []string
	inModel := false
	for i, s := range steps {
		typ := s.Get("type").String()
		model := simModelSteps[typ]
		if model && !inModel {
			in.ModelTurns++
		}
		inModel = model
		switch typ {
		case "function_call":
			id := s.Get("id").String()
			if id == "" || s.Get("name").String() == "" {
				return simInvalid("Missing required parameter: 'input[%d].id' and 'input[%d].name' are required for a function_call step.", i, i)
			}
			if a := s.Get("arguments"); a.Exists() && !a.IsObject() {
				return simInvalid("Invalid value for 'input[%d].arguments': expected an object.", i)
			}
			calls[id] = s.Get("name").String()
			unanswered = append(unanswered, id)
		case "function_result":
			res, serr := functionResult(s, i, calls, in.PreviousResponseID != "")
			if serr != nil {
				return serr
			}
			if j := slices.Index(unanswered, res.CallID); j >= 0 {
				unanswered = slices.Delete(unanswered, j, j+1)
			}
			in.Results = append(in.Results, res)
		case "user_input":
			userInput(in, wire.Value{Raw: s.Raw}.Member("content"))
		case "thought", "model_output":
		default:
			if !model {
				return simInvalid("Invalid value for 'input[%d].type': unknown step type '%s'.", i, typ)
			}
		}
	}
	if len(unanswered) > 0 {
		return simInvalid("No function_result found for function_call with id %s.", unanswered[0])
	}
	return nil
}

// functionResult reads input step i, a function_result: it needs a call_id
// and a result, and answers a call of the input unless the request
// continues a chain.
func functionResult(s gjson.Result, i int, calls map[string]string, chained bool) (adapters.ToolResult, *adapters.SimError) {
	id := s.Get("call_id").String()
	if id == "" {
		return adapters.ToolResult{}, simInvalid("Missing required parameter: 'input[%d].call_id'.", i)
	}
	if !s.Get("result").Exists() {
		return adapters.ToolResult{}, simInvalid("Missing required parameter: 'input[%d].result'.", i)
	}
	name, ok := calls[id]
	if !ok && !chained {
		return adapters.ToolResult{}, Protocol{}.UnmatchedResult(id)
	}
	if n := s.Get("name").String(); n != "" {
		name = n
	}
	return adapters.ToolResult{CallID: id, Name: name, Content: simResultText(s.Get("result")), IsError: s.Get("is_error").Bool()}, nil
}

// simInput reads input as steps: a string or one content is one
// user_input step; a list holds steps, or contents (one user_input step).
func simInput(input gjson.Result) ([]gjson.Result, *adapters.SimError) {
	userInput := func(content string) []gjson.Result {
		return []gjson.Result{gjson.Parse(`{"type":"user_input","content":` + content + `}`)}
	}
	switch {
	case !input.Exists() || input.Type == gjson.Null:
		return nil, simInvalid("Missing required parameter: 'input'.")
	case input.Type == gjson.String:
		b, _ := json.Marshal(input.String())
		return userInput(`[{"type":"text","text":` + string(b) + `}]`), nil
	case input.IsObject():
		return userInput("[" + input.Raw + "]"), nil
	case !input.IsArray():
		return nil, simInvalid("Invalid value for 'input': expected a string, a content, or a list of steps or contents.")
	}
	list := input.Array()
	if len(list) == 0 {
		return nil, simInvalid("Invalid value for 'input': the list is empty.")
	}
	steps := 0
	for i, el := range list {
		if !el.IsObject() || el.Get("type").String() == "" {
			return nil, simInvalid("Invalid value for 'input[%d]': expected a step or a content with a type.", i)
		}
		if !simContentTypes[el.Get("type").String()] {
			steps++
		}
	}
	switch steps {
	case len(list):
		return list, nil
	case 0:
		return userInput(input.Raw), nil
	}
	return nil, simInvalid("Invalid value for 'input': a list holds steps or contents, not both.")
}

var simContentTypes = map[string]bool{"text": true, "image": true, "audio": true, "video": true, "document": true}

// simResultText is a function_result's result as text: a string as it is,
// a list of contents as their texts, anything else as compact JSON.
func simResultText(r gjson.Result) string {
	switch {
	case r.Type == gjson.String:
		return r.String()
	case r.IsArray():
		var b strings.Builder
		for _, c := range r.Array() {
			b.WriteString(c.Get("text").String())
		}
		return b.String()
	}
	var b bytes.Buffer
	if json.Compact(&b, []byte(r.Raw)) != nil {
		return r.Raw
	}
	return b.String()
}

// userInput adds a user_input step's text to the prompt: a string
// content, or each text content of its list (images, audio, video and
// documents are not text). The step is read in place with wire's scanner:
// gjson walks a value it returns once more to find its end, and decodes
// every string it passes in two allocations.
func userInput(in *adapters.Inbound, content wire.Value) {
	if content.Kind() == wire.KindString {
		in.AddPrompt(adapters.RoleUser, content.Str())
		return
	}
	for c := range content.All() {
		if typ, text := c.MemberPair("type", "text"); text.Kind() == wire.KindString && typ.Str() == "text" {
			in.AddPrompt(adapters.RoleUser, text.Str())
		}
	}
}

// readOutput is the output format a checked request asks for:
// response_format {"type":"text","mime_type":"application/json",
// "schema"?:…} (or a list holding one), as the API reads it since
// 2026-05; or, in the form it replaced, response_mime_type
// "application/json" with the schema itself as response_format. A
// schema asks for JSON only with the JSON MIME type (not text/x.enum).
// The API's schemas have no name and no strict flag.
func readOutput(f, legacy gjson.Result) adapters.OutputContract {
	format := wire.Value{Raw: f.Raw}
	var mime, schema wire.Value
	if legacy.Exists() && legacy.Type != gjson.Null {
		mime, schema = wire.Value{Raw: legacy.Raw}, format
	} else {
		for el := range format.All() {
			if el.Member("type").Str() == "text" {
				format = el
				break
			}
		}
		typ, m := format.MemberPair("type", "mime_type")
		if typ.Str() != "text" {
			return adapters.OutputContract{}
		}
		mime, schema = m, format.Member("schema")
	}
	switch {
	case mime.Str() != "application/json":
		return adapters.OutputContract{}
	case schema.Kind() != wire.KindObject:
		return adapters.OutputContract{Mode: adapters.OutputJSON}
	}
	return adapters.OutputContract{Mode: adapters.OutputJSONSchema, Schema: adapters.RawView(schema.Raw)}
}
