package openairesponses

import (
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/wire"
)

// Checking a request as POST /v1/responses does (adapters.Simulated).
//
// The checks and their wording follow the API's live 400s: "Missing required
// parameter: 'x'." (missing_required_parameter), "Invalid type for 'x':
// expected …, but got … instead." (invalid_type), "Invalid 'x': decimal
// above maximum value. Expected a value <= 2, but got 3 instead."
// (decimal_above_max_value and kin), "Invalid value: 'v'. Supported values
// are: 'a', 'b', and 'c'." (invalid_value), "Unknown parameter: 'x'."
// (unknown_parameter, with a "Did you mean" hint), "The requested model 'x'
// does not exist." (model_not_found, 400), "No tool call found for function
// call output with call_id x." and "No tool output found for function call
// x." (param input, code null), and the parse failure's long HINT. Sources:
// issues in the issues corpus quoting these bodies (continuedev/continue
// #10092, microsoft/vscode#320060, skorokithakis/sysaidmin#9), this
// package's testdata/error_400.json, and a proxy project's direct-API
// measurements of 2026-08-30/31 (the field order, max_output_tokens >= 16,
// `model: null` → "got an object", input rules, the key set).

// simKnownKeys are the request members the API knows (the measured set plus
// openai-go v3.98.0 ResponseNewParams).
var simKnownKeys = []string{
	"model", "input", "instructions", "max_output_tokens", "max_tool_calls", "temperature", "top_p",
	"top_logprobs", "stream", "stream_options", "text", "tools", "tool_choice", "parallel_tool_calls",
	"reasoning", "include", "store", "background", "previous_response_id", "conversation", "truncation",
	"metadata", "user", "safety_identifier", "prompt_cache_key", "prompt_cache_retention",
	"prompt_cache_options", "service_tier", "prompt", "context_management", "moderation",
	"presence_penalty", "frequency_penalty", "access_programs", "image",
}

// simItemTypes are the input item types the API accepts (openai-go
// ResponseInputItemUnionParam).
// simItemTypes are the input item types the API accepts (openai-go
// ResponseInputItemUnionParam).
var simItemTypes = []string{
	"message", "file_search_call", "computer_call", "computer_call_output", "web_search_call",
	"function_call", "function_call_output", "tool_search_call", "tool_search_output", "additional_tools",
	"configuration_update", "reasoning", "compaction", "compaction_trigger", "image_generation_call",
	"code_interpreter_call", "local_shell_call", "local_shell_call_output", "shell_call",
	"shell_call_output", "apply_patch_call", "apply_patch_call_output", "mcp_list_tools",
	"mcp_approval_request", "mcp_approval_response", "mcp_call", "custom_tool_call_output",
	"custom_tool_call", "item_reference", "program", "program_output",
}

// request is one request while it is checked: its body read once, and the
// facts the rules find.
type request struct {
	top   wire.Object
	in    *adapters.Inbound
	items []inputItem
	// emptyInput: input is "" or [] (allowed with a chain, prompt or
	// conversation).
	emptyInput bool
}

// inputItem is one member of input, with its type as the API reads it.
type inputItem struct {
	typ string
	wire.Object
}

// requestRules are the API's checks in the order it applies them (the
// measured order: model, input's presence, unknown members, then the
// members one by one, then the conversation state and call pairing).
var requestRules = []wire.Rule[*request]{
	{Name: "model is a known model's name", Check: (*request).model},
	{Name: "input is given", Check: func(r *request) *adapters.SimError {
		if !r.top.Has("input") {
			return simMissing("input")
		}
		return nil
	}},
	{Name: "every member is a known parameter", Check: (*request).unknownKey},
	{Name: "input is a string or a list of valid items", Check: (*request).input},
	{Name: "previous_response_id is a response id", Check: (*request).previousResponseID},
	{Name: "include is a list", Check: func(r *request) *adapters.SimError { return r.ofKind("include", wire.KindArray, "an array of strings") }},
	{Name: "tools are named function tools", Check: (*request).tools},
	{Name: "metadata is an object", Check: func(r *request) *adapters.SimError { return r.ofKind("metadata", wire.KindObject, "an object") }},
	{Name: "text.format is a known format", Check: (*request).textFormat},
	{Name: "temperature is in [0, 2]", Check: func(r *request) *adapters.SimError { _, e := r.number("temperature", false, 0, 2); return e }},
	{Name: "top_p is in [0, 1]", Check: func(r *request) *adapters.SimError { _, e := r.number("top_p", false, 0, 1); return e }},
	{Name: "parallel_tool_calls is a boolean", Check: func(r *request) *adapters.SimError {
		return r.ofKind("parallel_tool_calls", wire.KindBool, "a boolean")
	}},
	{Name: "stream is a boolean", Check: func(r *request) *adapters.SimError {
		r.in.Stream = r.top.Get("stream").Bool()
		return r.ofKind("stream", wire.KindBool, "a boolean")
	}},
	{Name: "stream_options has only include_obfuscation", Check: (*request).streamOptions},
	{Name: "background is a boolean", Check: func(r *request) *adapters.SimError { return r.ofKind("background", wire.KindBool, "a boolean") }},
	{Name: "max_output_tokens is an integer >= 16", Check: func(r *request) *adapters.SimError {
		n, e := r.number("max_output_tokens", true, 16, math.MaxInt32)
		r.in.MaxOutputTokens = int(n)
		return e
	}},
	{Name: "max_tool_calls is an integer >= 1", Check: func(r *request) *adapters.SimError {
		_, e := r.number("max_tool_calls", true, 1, math.MaxInt32)
		return e
	}},
	{Name: "reasoning has a known effort and summary", Check: (*request).reasoning},
	{Name: "truncation is auto or disabled", Check: func(r *request) *adapters.SimError {
		if v := r.top.Get("truncation"); v.Present() && !slices.Contains(simTruncations, v.Str()) {
			return simBadValue("truncation", v.Str(), simTruncations)
		}
		return nil
	}},
	{Name: "instructions are a string or a list", Check: func(r *request) *adapters.SimError {
		if v := r.top.Get("instructions"); v.Present() && v.Kind() != wire.KindString && v.Kind() != wire.KindArray {
			return simWrongType("instructions", "a string", v)
		}
		return nil
	}},
	{Name: "store is a boolean", Check: func(r *request) *adapters.SimError {
		if v := r.top.Get("store"); v.Present() {
			if v.Kind() != wire.KindBool {
				return simWrongType("store", "a boolean", v)
			}
			s := v.Bool()
			r.in.Store = &s
		}
		return nil
	}},
	{Name: "top_logprobs is an integer in [0, 20]", Check: func(r *request) *adapters.SimError { _, e := r.number("top_logprobs", true, 0, 20); return e }},
	{Name: "a conversation or a chain, and something to answer", Check: (*request).state},
	{Name: "every call has its output and every output its call", Check: (*request).calls},
}

var (
	simTruncations = []string{"auto", "disabled"}
	simEfforts     = []string{"none", "minimal", "low", "medium", "high", "xhigh", "max"}
	simSummaries   = []string{"auto", "concise", "detailed"}
	simRoles       = []string{"assistant", "system", "developer", "user"}
)

// CheckRequest checks a request as POST /v1/responses does and returns its
// facts. Any API key, or none, is accepted. With previous_response_id the
// earlier calls live in the stored chain: a function_call_output is then
// checked against the request's own calls only, and the server checks the
// chain (and store:false) itself.
func (Protocol) CheckRequest(method, path string, h http.Header, body []byte) (*adapters.Inbound, *adapters.SimError) {
	if p, _, _ := strings.Cut(path, "?"); method != http.MethodPost || p != "/v1/responses" && p != "/responses" {
		return nil, simError(http.StatusNotFound, fmt.Sprintf("Invalid URL (%s %s)", method, p), "invalid_request_error", "", "")
	}
	v, ok := wire.Parse(body)
	switch {
	case !ok:
		return nil, simNotJSON()
	case v.Kind() == wire.KindNull:
		return nil, simInvalid("Invalid type for body: expected an object, but got null instead.", "", "invalid_type")
	case v.Kind() != wire.KindObject:
		return nil, simInvalid(fmt.Sprintf("Invalid type for body: expected an object, but got %s instead.", simGot(v)), "", "invalid_type")
	}
	top, _ := v.Members()
	r := &request{top: top, in: &adapters.Inbound{}}
	if e := wire.Check(r, requestRules); e != nil {
		return nil, e
	}
	readChoices(top, r.in)
	r.readPrompt()
	r.in.Echo = readEcho(top)
	return r.in, nil
}

// model: present, a string, and not another provider's model.
func (r *request) model() *adapters.SimError {
	m := r.top.Get("model")
	switch m.Kind() {
	case wire.KindAbsent:
		return simMissing("model")
	case wire.KindString:
		r.in.Model = m.Str()
	default:
		return simWrongType("model", "a string", m)
	}
	unknown := strings.TrimSpace(r.in.Model) == ""
	for _, p := range simOtherFamilies {
		unknown = unknown || strings.HasPrefix(r.in.Model, p)
	}
	if unknown {
		return simInvalid(fmt.Sprintf("The requested model '%s' does not exist.", r.in.Model), "model", "model_not_found")
	}
	return nil
}

// ofKind: an optional member, when given, is of kind k.
func (r *request) ofKind(name string, k wire.Kind, want string) *adapters.SimError {
	if v := r.top.Get(name); v.Present() && v.Kind() != k {
		return simWrongType(name, want, v)
	}
	return nil
}

// input: a string, or a list of items of known types with the members
// their type requires.
func (r *request) input() *adapters.SimError {
	raw := r.top.Get("input")
	switch raw.Kind() {
	case wire.KindString:
		r.emptyInput = raw.Str() == ""
		return nil
	case wire.KindArray:
	default:
		return simWrongType("input", "a string", raw)
	}
	elems := raw.Elements()
	r.emptyInput = len(elems) == 0
	r.items = make([]inputItem, len(elems))
	for i, v := range elems {
		param := "input[" + strconv.Itoa(i) + "]"
		obj, ok := v.Members()
		if !ok {
			return simWrongType(param, "an input item", v)
		}
		it := inputItem{typ: obj.Get("type").Str(), Object: obj}
		switch t := obj.Get("type"); {
		case t.Present() && t.Kind() != wire.KindString:
			return simBadValue(param, "", simItemTypes)
		case it.typ == "" && obj.Get("role").Present():
			it.typ = "message"
		case it.typ == "" && obj.Get("id").Present():
			it.typ = "item_reference"
		}
		if !slices.Contains(simItemTypes, it.typ) {
			return simBadValue(param, it.typ, simItemTypes)
		}
		if e := it.check(param); e != nil {
			return e
		}
		r.items[i] = it
	}
	return nil
}

// check: the members an item of its type requires.
func (it inputItem) check(param string) *adapters.SimError {
	switch it.typ {
	case "message":
		if role := it.Get("role").Str(); !slices.Contains(simRoles, role) {
			return simBadValue(param, role, simRoles)
		}
		if !it.Get("content").Present() {
			return simMissing(param + ".content")
		}
	case "function_call":
		for _, name := range []string{"arguments", "call_id", "name"} {
			v := it.Get(name)
			if !v.Present() {
				return simMissing(param + "." + name)
			}
			if v.Kind() != wire.KindString {
				return simWrongType(param+"."+name, "a string", v)
			}
		}
	case "function_call_output":
		id := it.Get("call_id")
		if !id.Present() {
			return simMissing(param + ".call_id")
		}
		if id.Kind() != wire.KindString {
			return simWrongType(param+".call_id", "a string", id)
		}
		out := it.Get("output")
		if !out.Present() {
			return simMissing(param + ".output")
		}
		if k := out.Kind(); k != wire.KindString && k != wire.KindArray {
			return simWrongType(param+".output", "one of a string or array", out)
		}
	case "reasoning":
		if !it.Get("summary").Present() {
			return simMissing(param + ".summary")
		}
	}
	return nil
}

func (r *request) previousResponseID() *adapters.SimError {
	v := r.top.Get("previous_response_id")
	if !v.Present() {
		return nil
	}
	if v.Kind() != wire.KindString {
		return simWrongType("previous_response_id", "a string", v)
	}
	r.in.PreviousResponseID = v.Str()
	if !strings.HasPrefix(r.in.PreviousResponseID, "resp") {
		return simInvalid(fmt.Sprintf("Invalid 'previous_response_id': '%s'. Expected an ID that begins with 'resp'.", r.in.PreviousResponseID), "previous_response_id", "invalid_value")
	}
	return nil
}

// tools: flat function tools need a name (a Chat-shaped tool, nested under
// "function", has none).
func (r *request) tools() *adapters.SimError {
	raw := r.top.Get("tools")
	if !raw.Present() {
		return nil
	}
	if raw.Kind() != wire.KindArray {
		return simWrongType("tools", "an array of objects", raw)
	}
	elems := raw.Elements()
	for i, t := range elems {
		param := "tools[" + strconv.Itoa(i) + "]"
		tool, ok := t.Members()
		if !ok {
			return simWrongType(param, "an object", t)
		}
		typ := tool.Get("type")
		if !typ.Present() {
			return simMissing(param + ".type")
		}
		if typ.Str() != "function" {
			continue
		}
		name := tool.Get("name")
		if !name.Present() {
			return simMissing(param + ".name")
		}
		if name.Kind() != wire.KindString {
			return simWrongType(param+".name", "a string", name)
		}
		if !simValidName(name.Str()) {
			return simInvalid(fmt.Sprintf("Invalid '%s.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.", param), param+".name", "invalid_value")
		}
		r.in.Tools = append(r.in.Tools, name.Str())
		if r.in.ToolDefs == nil {
			r.in.ToolDefs = make([]adapters.Tool, 0, len(elems)-i)
		}
		r.in.ToolDefs = append(r.in.ToolDefs, adapters.Tool{Name: name.Str(), Description: tool.Get("description").Str(),
			Parameters: adapters.RawView(tool.Get("parameters").Raw), Strict: tool.Get("strict").Bool()})
	}
	return nil
}

func (r *request) textFormat() *adapters.SimError {
	raw := r.top.Get("text")
	if !raw.Present() {
		return nil
	}
	text, ok := raw.Members()
	if !ok {
		return simWrongType("text", "an object", raw)
	}
	fraw := text.Get("format")
	if !fraw.Present() {
		return nil
	}
	f, ok := fraw.Members()
	if !ok {
		return simWrongType("text.format", "an object", fraw)
	}
	if !f.Get("type").Present() {
		return simMissing("text.format.type")
	}
	switch typ := f.Get("type").Str(); typ {
	case "text":
	case "json_object":
		r.in.Output.Mode = adapters.OutputJSON
	case "json_schema":
		if !f.Get("name").Present() {
			return simMissing("text.format.name")
		}
		if !f.Get("schema").Present() {
			return simMissing("text.format.schema")
		}
		r.in.Output = adapters.OutputContract{Mode: adapters.OutputJSONSchema, Name: f.Get("name").Str(),
			Schema: adapters.RawView(f.Get("schema").Raw), Strict: f.Get("strict").Bool()}
	default:
		return simBadValue("text.format.type", typ, []string{"json_object", "text", "json_schema"})
	}
	return nil
}

func (r *request) streamOptions() *adapters.SimError {
	raw := r.top.Get("stream_options")
	if !raw.Present() {
		return nil
	}
	so, ok := raw.Members()
	if !ok {
		return simWrongType("stream_options", "an object", raw)
	}
	// The API names the first unknown option in sorted order.
	for _, k := range slices.Sorted(slices.Values(so.Keys)) {
		if k != "include_obfuscation" {
			return simInvalid("Unknown parameter: 'stream_options."+k+"'.", "stream_options."+k, "unknown_parameter")
		}
	}
	return nil
}

func (r *request) reasoning() *adapters.SimError {
	raw := r.top.Get("reasoning")
	if !raw.Present() {
		return nil
	}
	re, ok := raw.Members()
	if !ok {
		return simWrongType("reasoning", "an object", raw)
	}
	if e := re.Get("effort"); e.Present() && !slices.Contains(simEfforts, e.Str()) {
		return simBadValue("reasoning.effort", e.Str(), simEfforts)
	}
	if s := re.Get("summary"); s.Present() && !slices.Contains(simSummaries, s.Str()) {
		return simBadValue("reasoning.summary", s.Str(), simSummaries)
	}
	return nil
}

// state: a conversation or a chain, not both; then an input to answer.
func (r *request) state() *adapters.SimError {
	if r.in.PreviousResponseID != "" && r.top.Get("conversation").Present() {
		return simInvalid("Mutually exclusive parameters: ''. Ensure you are only providing one of: 'pre..._id' or 'conversation'.", "", "mutually_exclusive_parameters")
	}
	if r.emptyInput && r.in.PreviousResponseID == "" && !r.top.Get("prompt").Present() && !r.top.Get("conversation").Present() {
		return simInvalid(`One of "input" or "previous_response_id" or 'prompt' or 'conversation' must be provided.`, "", "missing_required_parameter")
	}
	return nil
}

// calls pairs calls and their outputs. Model turns are the runs of output
// items (reasoning, function_call, assistant message) between other items.
func (r *request) calls() *adapters.SimError {
	calls := map[string]string{} // call_id → name, of the calls seen so far
	var callOrder []string
	answered := map[string]bool{}
	inTurn := false
	for _, it := range r.items {
		model := false
		switch it.typ {
		case "function_call":
			model = true
			id := it.Get("call_id").Str()
			if _, dup := calls[id]; !dup {
				callOrder = append(callOrder, id)
			}
			calls[id] = it.Get("name").Str()
		case "reasoning":
			model = true
		case "message":
			model = it.Get("role").Str() == "assistant"
		case "function_call_output":
			id := it.Get("call_id").Str()
			name, ok := calls[id]
			if !ok && r.in.PreviousResponseID == "" {
				return simInvalid("No tool call found for function call output with call_id "+id+".", "input", "")
			}
			answered[id] = true
			r.in.Results = append(r.in.Results, adapters.ToolResult{CallID: id, Name: name, Content: simOutputString(it.Get("output"))})
		}
		if model && !inTurn {
			r.in.ModelTurns++
		}
		inTurn = model
	}
	for _, id := range callOrder {
		if !answered[id] {
			return simInvalid("No tool output found for function call "+id+".", "input", "")
		}
	}
	return nil
}

// simOutputString is a function_call_output's output as text: the string,
// or its input_text parts joined.
func simOutputString(v wire.Value) string {
	if v.Kind() == wire.KindString {
		return v.Str()
	}
	var b strings.Builder
	for _, p := range v.Elements() {
		if part, ok := p.Members(); ok && part.Get("type").Str() == "input_text" {
			b.WriteString(part.Get("text").Str())
		}
	}
	return b.String()
}
