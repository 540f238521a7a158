package gemini

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/wire"
)

// Checking a generateContent / streamGenerateContent request as the API
// does (adapters.Simulated): the body must read into a
// GenerateContentRequest (ESF's "Invalid JSON payload received" errors,
// each with a BadRequest field violation), then the request must make
// sense (contents given, roles user or model, no empty parts, temperature
// in range, function responses answering the function call turn before
// them). The model is the path's. Any API key, or none, is accepted.

// request is one request while it is checked: its body read once, and the
// facts the rules find.
type request struct {
	top         wire.Object
	in          *adapters.Inbound
	contents    []wire.Value
	roles       []string
	parts       [][]wire.Object
	partsGiven  []bool
	temperature *float64
	gc          wire.Object // generationConfig
}

// requestRules are the API's checks in the order it applies them: first
// the reading of the body into the request message (every problem found,
// reported together), then what the request says (the first problem).
var requestRules = []wire.Rule[*request]{
	{Name: "the body reads into a GenerateContentRequest", Check: (*request).payload},
	{Name: "contents are given", Check: func(r *request) *adapters.SimError {
		if len(r.contents) == 0 {
			return simInvalid("* GenerateContentRequest.contents: contents is not specified\n")
		}
		return nil
	}},
	{Name: "each content has role user or model and parts with data", Check: (*request).contentParts},
	{Name: "temperature is in [0, 2.0001)", Check: func(r *request) *adapters.SimError {
		if t := r.temperature; t != nil && (*t < 0 || *t >= 2.0001) {
			return simInvalid(fmt.Sprintf("Unable to submit request because it has a temperature value of %s but the supported range is from 0 (inclusive) to 2.0001 (exclusive). Update the value and try again.",
				strconv.FormatFloat(*t, 'g', -1, 64)))
		}
		return nil
	}},
	{Name: "function calls follow a user turn and function responses answer them", Check: (*request).turns},
}

// CheckRequest validates a request (see above) and returns its facts.
//
// ModelTurns counts runs of consecutive `model` contents: go-genai's Chat
// records a streamed answer as one model content per chunk, and the API
// treats them as one turn. Results are the functionResponse parts in order;
// a response without an id gets the id this package's decoder gave its
// call (SyntheticCallIDPrefix + the call's index in its turn).
func (Protocol) CheckRequest(method, path string, _ http.Header, body []byte) (*adapters.Inbound, *adapters.SimError) {
	model, stream, serr := simPath(method, path)
	if serr != nil {
		return nil, serr
	}
	body = bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))
	if len(bytes.TrimSpace(body)) == 0 {
		body = []byte("{}")
	}
	v, ok := wire.Parse(body)
	if !ok {
		return nil, simSyntaxError(body)
	}
	top, ok := v.Members()
	if !ok {
		return nil, simPayloadError([]simViolation{{Description: `Invalid JSON payload received. Unknown name "": Root element must be a message.`}})
	}
	r := &request{top: top, in: &adapters.Inbound{Model: model, Stream: stream}}
	if e := wire.Check(r, requestRules); e != nil {
		return nil, e
	}
	readChoices(top, r.in)
	r.readPrompt()
	r.readOutput()
	return r.in, nil
}

const simTypeContent = "type.googleapis.com/google.ai.generativelanguage.v1beta.Content"

// payload reads the body into the request message as ESF does, collecting
// every problem: unknown names, values of the wrong type, two data fields
// in one part.
func (r *request) payload() *adapters.SimError {
	var vs []simViolation
	vs = unknownNames(vs, r.top, simRequestFields, "")
	switch c := simGet(r.top, "contents"); simKind(c) {
	case wire.KindAbsent:
	case wire.KindArray:
		r.contents = c.Elements()
	default:
		vs = append(vs, simInvalidValue("contents", simTypeContent, c))
	}
	r.roles = make([]string, len(r.contents))
	r.parts = make([][]wire.Object, len(r.contents))
	r.partsGiven = make([]bool, len(r.contents))
	for i, c := range r.contents {
		vs = r.content(vs, i, c)
	}
	gcRaw := simGet(r.top, "generationConfig")
	var gc wire.Object
	if v, ok := simMessageValue(gcRaw, "generationConfig", "generation_config", "GenerationConfig"); !ok {
		vs = append(vs, v)
	} else {
		gc, _ = gcRaw.Members()
		r.gc = gc
	}
	if t := simGet(gc, "temperature"); simKind(t) != wire.KindAbsent {
		if f, ok := simNumber(t); ok {
			r.temperature = &f
		} else {
			vs = append(vs, simInvalidValue("generation_config.temperature", "TYPE_FLOAT", t))
		}
	}
	if m := simGet(gc, "maxOutputTokens"); simKind(m) != wire.KindAbsent {
		if f, ok := simNumber(m); ok && f == float64(int32(f)) {
			r.in.MaxOutputTokens = int(f)
		} else {
			vs = append(vs, simInvalidValue("generation_config.max_output_tokens", "TYPE_INT32", m))
		}
	}
	if len(vs) > 0 {
		return simPayloadError(vs)
	}
	// Tools offered (read leniently: the API validates them further).
	for _, t := range simGet(r.top, "tools").Elements() {
		tool, _ := t.Members()
		decls := simGet(tool, "functionDeclarations").Elements()
		for i, d := range decls {
			decl, _ := d.Members()
			name := decl.Get("name").Str()
			r.in.Tools = append(r.in.Tools, name)
			// parametersJsonSchema is JSON Schema, parameters the
			// OpenAPI subset; a declaration gives one of them.
			params := simGet(decl, "parametersJsonSchema")
			if simKind(params) == wire.KindAbsent {
				params = simGet(decl, "parameters")
			}
			if r.in.ToolDefs == nil {
				r.in.ToolDefs = make([]adapters.Tool, 0, len(decls)-i)
			}
			r.in.ToolDefs = append(r.in.ToolDefs, adapters.Tool{Name: name, Description: decl.Get("description").Str(),
				Parameters: adapters.RawView(params.Raw)})
		}
	}
	return nil
}

// content reads contents[i] into a Content message.
func (r *request) content(vs []simViolation, i int, c wire.Value) []simViolation {
	at := "contents[" + strconv.Itoa(i) + "]"
	obj, ok := c.Members()
	if !ok {
		return append(vs, simInvalidValue(at, simTypeContent, c))
	}
	vs = unknownNames(vs, obj, simContentFields, at)
	switch role := simGet(obj, "role"); simKind(role) {
	case wire.KindAbsent:
	case wire.KindString:
		r.roles[i] = role.Str()
	default:
		vs = append(vs, simInvalidValue(at+".role", "TYPE_STRING", role))
	}
	var praws []wire.Value
	switch p := simGet(obj, "parts"); simKind(p) {
	case wire.KindAbsent:
	case wire.KindArray:
		praws = p.Elements()
		r.partsGiven[i] = true
	default:
		vs = append(vs, simInvalidValue(at+".parts", "type.googleapis.com/google.ai.generativelanguage.v1beta.Part", p))
	}
	for j, p := range praws {
		pat := at + ".parts[" + strconv.Itoa(j) + "]"
		part, ok := p.Members()
		if !ok {
			vs = append(vs, simInvalidValue(pat, "type.googleapis.com/google.ai.generativelanguage.v1beta.Part", p))
			continue
		}
		vs = partViolations(vs, part, pat)
		r.parts[i] = append(r.parts[i], part)
	}
	return vs
}

// partMessages are a part's members whose value is a message (an object).
var partMessages = []struct{ name, snake, typ string }{
	{"functionCall", "function_call", "FunctionCall"},
	{"functionResponse", "function_response", "FunctionResponse"},
}

// partViolations: unknown names, a second data field, function call and
// response values of the wrong type.
func partViolations(vs []simViolation, part wire.Object, pat string) []simViolation {
	vs = unknownNames(vs, part, simPartFields, pat)
	data := ""
	for i, k := range part.Keys {
		if _, isData := simPartData[k]; !isData || slices.Index(part.Keys, k) < i || simKind(part.Get(k)) == wire.KindAbsent {
			continue
		}
		if data != "" {
			vs = append(vs, simViolation{Field: pat, Description: fmt.Sprintf("Invalid JSON payload received. Oneof field 'data' is already set. Cannot set '%s'", k)})
		}
		data = k
	}
	for _, f := range partMessages {
		v := simGet(part, f.name)
		if k := simKind(v); k == wire.KindAbsent || k == wire.KindObject {
			continue // valid, and every part is checked: no path built for it
		}
		if v, ok := simMessageValue(v, f.name, pat+"."+f.snake, f.typ); !ok {
			vs = append(vs, v)
		}
	}
	if fr, ok := simGet(part, "functionResponse").Members(); ok {
		if r := simGet(fr, "response"); simKind(r) != wire.KindAbsent && simKind(r) != wire.KindObject {
			vs = append(vs, simInvalidValue(pat+".function_response.response", "type.googleapis.com/google.protobuf.Struct", r))
		}
	}
	return vs
}

// unknownNames adds a violation for each member of obj that its message
// does not have (a repeated member once).
func unknownNames(vs []simViolation, obj wire.Object, known simFields, at string) []simViolation {
	for i, k := range obj.Keys {
		if _, ok := known[k]; !ok && slices.Index(obj.Keys, k) == i {
			vs = append(vs, simUnknownName(k, at))
		}
	}
	return vs
}

// contentParts: roles are user or model (unset is user), and every part
// has a data field.
func (r *request) contentParts() *adapters.SimError {
	for i := range r.contents {
		if r.roles[i] != "" && r.roles[i] != "user" && r.roles[i] != "model" {
			return simInvalid("Please use a valid role: user, model.")
		}
		if r.roles[i] == "" {
			r.roles[i] = "user"
		}
		if !r.partsGiven[i] || len(r.parts[i]) == 0 {
			return simInvalid(fmt.Sprintf("* GenerateContentRequest.contents[%d].parts: contents.parts must not be empty.\n", i))
		}
		for j, p := range r.parts[i] {
			has := false
			for _, k := range p.Keys {
				if _, isData := simPartData[k]; isData && simKind(p.Get(k)) != wire.KindAbsent {
					has = true
				}
			}
			// A part carrying only a thoughtSignature is let through: what
			// the API does with it is not documented.
			if !has && simKind(simGet(p, "thoughtSignature")) == wire.KindAbsent {
				return simInvalid(fmt.Sprintf("* GenerateContentRequest.contents[%d].parts[%d].data: required oneof field 'data' must have one initialized field\n", i, j))
			}
		}
	}
	return nil
}

// simCallRef is a functionCall part of the history.
type simCallRef struct {
	name, id string
	used     bool
}

// turns: runs of contents of one role. A function call turn follows a user
// turn; a function response turn answers the function call turn right
// before it, one response per call.
func (r *request) turns() *adapters.SimError {
	var calls []simCallRef // the function calls of the last model turn
	prevRole := ""
	for i := 0; i < len(r.contents); {
		j := i
		for j < len(r.contents) && r.roles[j] == r.roles[i] {
			j++
		}
		if r.roles[i] == "model" {
			r.in.ModelTurns++
			calls = calls[:0]
			for k := i; k < j; k++ {
				for _, p := range r.parts[k] {
					if fc, ok := simGet(p, "functionCall").Members(); ok {
						calls = append(calls, simCallRef{name: fc.Get("name").Str(), id: fc.Get("id").Str()})
					}
				}
			}
			if len(calls) > 0 && prevRole != "user" {
				return simInvalid("Please ensure that function call turn comes immediately after a user turn or after a function response turn.")
			}
		} else {
			if e := r.responses(i, j, prevRole, calls); e != nil {
				return e
			}
			calls = calls[:0]
		}
		prevRole = r.roles[i]
		i = j
	}
	return nil
}

// responses: the functionResponse parts of user contents i..j-1 answer
// calls, the function call turn right before, one each, matched by id
// when both have one, else by name in order.
func (r *request) responses(i, j int, prevRole string, calls []simCallRef) *adapters.SimError {
	type respRef struct {
		fr            wire.Object
		content, part int
	}
	var resps []respRef
	for k := i; k < j; k++ {
		for n, p := range r.parts[k] {
			if fr, ok := simGet(p, "functionResponse").Members(); ok {
				resps = append(resps, respRef{fr: fr, content: k, part: n})
			}
		}
	}
	if len(resps) == 0 {
		return nil
	}
	if prevRole != "model" || len(calls) == 0 {
		return simInvalid("Please ensure that function response turn comes immediately after a function call turn.")
	}
	if len(resps) != len(calls) {
		return simInvalid("Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.")
	}
	for _, rr := range resps {
		name, rid := rr.fr.Get("name").Str(), rr.fr.Get("id").Str()
		if name == "" {
			return simInvalid(fmt.Sprintf("* GenerateContentRequest.contents[%d].parts[%d].function_response.name: Name cannot be empty.\n", rr.content, rr.part))
		}
		match := -1
		for c := range calls {
			if calls[c].used {
				continue
			}
			if rid != "" && calls[c].id != "" {
				if calls[c].id == rid && calls[c].name == name {
					match = c
					break
				}
				continue
			}
			if calls[c].name == name {
				match = c
				break
			}
		}
		if match < 0 {
			return simInvalid(fmt.Sprintf("Please ensure that function response names match the function call names of the function call turn: contents[%d].parts[%d].function_response.name %q does not answer any function call.", rr.content, rr.part, name))
		}
		calls[match].used = true
		id := rid
		if id == "" {
			id = calls[match].id
		}
		if id == "" {
			id = SyntheticCallIDPrefix + strconv.Itoa(match)
		}
		content, isErr := simResultContent(rr.fr.Get("response"))
		r.in.Results = append(r.in.Results, adapters.ToolResult{CallID: id, Name: name, Content: content, IsError: isErr})
	}
	return nil
}

// simResultContent is a functionResponse.response as result text: the
// "output" (or "error") value when that is the only key — a string as it
// is, anything else as compact JSON — else the whole object.
func simResultContent(v wire.Value) (string, bool) {
	compact := func(raw string) string {
		var b bytes.Buffer
		if json.Compact(&b, []byte(raw)) != nil {
			return raw
		}
		return b.String()
	}
	obj, ok := v.Members()
	if !ok {
		return "", false
	}
	if len(obj.Keys) == 1 && (obj.Keys[0] == "output" || obj.Keys[0] == "error") {
		out := obj.Vals[0]
		if out.Kind() == wire.KindString {
			return out.Str(), obj.Keys[0] == "error"
		}
		return compact(out.Raw), obj.Keys[0] == "error"
	}
	return compact(v.Raw), false
}

// ---- the API's words and readings ---------------------------------------------

func simInvalid(message string, violations ...simViolation) *adapters.SimError {
	e := simError{Code: 400, Status: "INVALID_ARGUMENT", Message: message}
	if len(violations) > 0 {
		e.Details = []any{simBadRequest{Type: simTypePrefix + "BadRequest", FieldViolations: violations}}
	}
	return simErrorResponse(e)
}

// simPayloadError is ESF's answer to a body it cannot read into the request
// message: each problem on its own line, and one field violation each.
func simPayloadError(vs []simViolation) *adapters.SimError {
	msgs := make([]string, len(vs))
	for i, v := range vs {
		msgs[i] = v.Description
	}
	return simInvalid(strings.Join(msgs, "\n"), vs...)
}

// simKind is a value's JSON type; proto JSON reads null as unset.
func simKind(v wire.Value) wire.Kind {
	if k := v.Kind(); k != wire.KindNull {
		return k
	}
	return wire.KindAbsent
}

// simClip quotes a rejected value as ESF does (shortened).
func simClip(v wire.Value) string {
	s := v.Raw
	if len(s) > 60 {
		i := 60
		for i > 0 && !utf8.RuneStart(s[i]) {
			i--
		}
		s = s[:i] + "..."
	}
	return s
}

func simInvalidValue(path, typ string, v wire.Value) simViolation {
	return simViolation{Field: path, Description: fmt.Sprintf("Invalid value at '%s' (%s), %s", path, typ, simClip(v))}
}

func simUnknownName(name, at string) simViolation {
	if at == "" {
		return simViolation{Description: fmt.Sprintf("Invalid JSON payload received. Unknown name %q: Cannot find field.", name)}
	}
	return simViolation{Field: at, Description: fmt.Sprintf("Invalid JSON payload received. Unknown name %q at '%s': Cannot find field.", name, at)}
}

// simMessageValue checks that a message-typed field holds an object.
func simMessageValue(v wire.Value, key, path, typ string) (simViolation, bool) {
	switch simKind(v) {
	case wire.KindAbsent, wire.KindObject:
		return simViolation{}, true
	case wire.KindArray:
		return simViolation{Field: path, Description: fmt.Sprintf("Invalid JSON payload received. Unknown name %q at '%s': Proto field is not repeating, cannot start list.", key, path)}, false
	}
	return simInvalidValue(path, "type.googleapis.com/google.ai.generativelanguage.v1beta."+typ, v), false
}

// simNumber reads a proto JSON number (a number, or a string holding one).
func simNumber(v wire.Value) (float64, bool) {
	switch v.Kind() {
	case wire.KindNumber:
		return v.Float()
	case wire.KindString:
		f, err := strconv.ParseFloat(v.Str(), 64)
		return f, err == nil
	}
	return 0, false
}

// simSyntaxError is ESF's message for a body that is not JSON: the text
// around the bad token (20 bytes either side) and a caret under it.
func simSyntaxError(body []byte) *adapters.SimError {
	var v any
	err := json.Unmarshal(body, &v)
	var se *json.SyntaxError
	pos := len(body)
	eof := true
	if errors.As(err, &se) && se.Error() != "unexpected end of JSON input" {
		pos, eof = min(max(int(se.Offset)-1, 0), len(body)), false
	}
	if eof || pos >= len(bytes.TrimRight(body, " \t\r\n")) {
		return simPayloadError([]simViolation{{Description: "Invalid JSON payload received. Unexpected end of string. Expected a value.\n\n^"}})
	}
	isWord := func(c byte) bool { return c == '_' || 'a' <= c|0x20 && c|0x20 <= 'z' || '0' <= c && c <= '9' }
	for pos > 0 && isWord(body[pos]) && isWord(body[pos-1]) {
		pos--
	}
	start := pos
	for start > 0 && pos-start < 20 && body[start-1] != '\n' {
		start--
	}
	for start < pos && !utf8.RuneStart(body[start]) {
		start++
	}
	end := pos
	for end < len(body) && end-pos < 20 && body[end] != '\n' && body[end] != '\r' {
		end++
	}
	for end < len(body) && !utf8.RuneStart(body[end]) {
		end++
	}
	caret := strings.Repeat(" ", utf8.RuneCount(body[start:pos])) + "^"
	return simPayloadError([]simViolation{{Description: "Invalid JSON payload received. Unexpected token.\n" + string(body[start:end]) + "\n" + caret}})
}

// simNotFound is the answer for a path the API does not serve.
func simNotFound(message string) *adapters.SimError {
	return simErrorResponse(simError{Code: 404, Status: "NOT_FOUND", Message: message})
}

// simPath reads /v1beta/models/{model}:generateContent or
// :streamGenerateContent (any query: alt=sse, key=…).
func simPath(method, uri string) (string, bool, *adapters.SimError) {
	path, _, _ := strings.Cut(uri, "?")
	rest, ok := strings.CutPrefix(path, "/v1beta/models/")
	if !ok {
		rest, ok = strings.CutPrefix(path, "/v1/models/")
	}
	i := strings.LastIndexByte(rest, ':')
	if !ok || i < 0 {
		return "", false, simNotFound("Method not found.")
	}
	name, verb := rest[:i], rest[i+1:]
	if n, err := url.PathUnescape(name); err == nil {
		name = n
	}
	var stream bool
	switch verb {
	case "generateContent":
	case "streamGenerateContent":
		stream = true
	default:
		return "", false, simNotFound("Method not found.")
	}
	if method != http.MethodPost {
		return "", false, simNotFound("Method not found.")
	}
	if name == "" {
		return "", false, simNotFound("models/ is not found for API version v1beta, or is not supported for " + verb + ". Call ListModels to see the list of available models and their supported methods.")
	}
	return name, stream, nil
}
