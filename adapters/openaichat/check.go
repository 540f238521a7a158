package openaichat

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/wire"
)

// Checking a request as api.openai.com or api.deepseek.com does
// (adapters.Simulated.CheckRequest): the body read once, then each provider's
// checks in its order, with its own wording.

// ---- CheckRequest
// -------------------------------------------------------------
//
// OpenAI's checks and wording: a missing model is "you must provide a model
// parameter" (param null); missing fields "Missing required parameter:
// 'x'." (missing_required_parameter); types "Invalid type for 'x':
// expected …, but got … instead." (invalid_type); enums "Invalid value:
// 'v'. Supported values are: …" (invalid_value); ranges "Invalid 'x':
// decimal above maximum value. Expected a value <= 2, but got 3 instead."
// (decimal_above_max_value); a null content "Invalid value for 'content':
// expected a string, got null." (param messages.[i].content), checked after
// the other fields; the tool pairing "Invalid parameter: messages with role
// 'tool' must be a response to a preceeding message with 'tool_calls'."
// (sic, param messages.[i].role), "Invalid parameter: 'tool_call_id' of 'x'
// not found in 'tool_calls' of previous message." and "An assistant message
// with 'tool_calls' must be followed by tool messages responding to each
// 'tool_call_id'. The following tool_call_ids did not have response
// messages: …"; a body that does not parse "We could not parse the JSON
// body of your request. (HINT: …)". Sources: error bodies quoted in public
// issues (miurla/morphic#136, smarter-sh/smarter#264, the litellm and agno
// reports) and a live-measured rejection table of a Chat Completions proxy's
// conformance tests.
//
// DeepSeek parses the body first (serde): "Failed to parse the request body
// as JSON: …" and "Failed to deserialize the JSON body into the target
// type: messages[1]: missing field `content` at line L column C", type
// errors and unknown enum variants in document order, missing fields at the
// end of their object. Then its own checks, with param null and code
// invalid_request_error: "Invalid temperature value, the valid range of
// temperature is [0, 2]", "Invalid max_tokens value, the valid range of
// max_tokens is [1, 393216]", "Prompt must contain the word 'json' in some
// form to use 'response_format' of type 'json_object'.", the tool-call state
// machine ("Messages with role 'tool' must be a response to a preceding
// message with 'tool_calls'", "… responding to each 'tool_call_id', The
// following tool_call_ids did not have response messages: id", "…
// (insufficient tool messages following tool_calls message)") and, in
// thinking mode, when the request ends on a tool result whose issuing
// assistant message has no reasoning_content: "The `reasoning_content` in
// the thinking mode must be passed back to the API." (protocols.md §5;
// texts live-probed by a DeepSeek gateway's validation layer, and quoted in
// itmisx/deepx-code#94, JohnnyZ93/oai-compatible-copilot#215 and the
// forgecode/qwen-code deserialization reports).

// jval is one JSON value of the request body, with its byte span.
type jval struct {
	raw        string
	start, end int // end is exclusive
}

func (v jval) kind() byte {
	if v.raw == "" {
		return 0
	}
	return v.raw[0]
}

// null: absent or JSON null (both APIs treat a null optional field as unset).
func (v jval) null() bool { return v.raw == "" || v.raw == "null" }

func (v jval) str() (string, bool) {
	if v.kind() != '"' {
		return "", false
	}
	return wire.Unquote(v.raw), true
}

// jobj is a JSON object of the body: its keys in order (a repeated key
// once, holding its last value, as the parsers read it) and its end.
// Lookups scan the keys: request objects are small, and a scan is cheaper
// than building a map for each.
type jobj struct {
	keys []string
	vals []jval
	end  int // just after the closing brace
}

func (o jobj) get(k string) jval {
	if i := slices.Index(o.keys, k); i >= 0 {
		return o.vals[i]
	}
	return jval{}
}

func (o jobj) has(k string) bool { return slices.Contains(o.keys, k) }

func readObject(s string, start int) jobj {
	// Request objects rarely have more than eight members: one allocation
	// for keys and values, not one per doubling.
	room := new(struct {
		keys [8]string
		vals [8]jval
	})
	o := jobj{keys: room.keys[:0], vals: room.vals[:0]}
	m := wire.IterMembersAt(s, start)
	for {
		k, ok := m.Key()
		if !ok {
			break
		}
		vs := m.I
		v := jval{raw: m.Value(), start: vs, end: m.I}
		if i := slices.Index(o.keys, k); i >= 0 {
			o.vals[i] = v
			continue
		}
		o.keys = append(o.keys, k)
		o.vals = append(o.vals, v)
	}
	o.end = m.End()
	return o
}

func readArray(s string, v jval) []jval {
	out := make([]jval, 0, 8)
	e := wire.IterElementsAt(s, v.start)
	for e.Start() {
		vs := e.I
		raw := e.Value()
		if raw == "" {
			break
		}
		out = append(out, jval{raw: raw, start: vs, end: e.I})
	}
	return out
}

// checker holds one request while it is checked.
type checker struct {
	p    protocol
	s    string
	top  jobj
	in   adapters.Inbound
	msgs []simMsgIn
}

// simMsgIn is one message of the request.
type simMsgIn struct {
	obj        jobj
	role       string
	toolCallID string
	calls      []simCallIn
}

type simCallIn struct{ id, name string }

// jsonType is an expected type as each API names it.
type jsonType struct{ openai, serde string }

var (
	typeString  = jsonType{"a string", "a string"}
	typeArray   = jsonType{"an array of objects", "a sequence"}
	typeObject  = jsonType{"an object", "a map"}
	typeBool    = jsonType{"a boolean", "a boolean"}
	typeDecimal = jsonType{"a decimal", "f32"}
	typeInteger = jsonType{"an integer", "u32"}
	typeContent = jsonType{"one of a string or array of objects", "a string"}
)

// at is serde's position suffix for the byte index just after what it last
// read: " at line L column C" (C is the column of that last byte).
func (c *checker) at(idx int) string {
	idx = min(max(idx, 0), len(c.s))
	line := 1 + strings.Count(c.s[:idx], "\n")
	col := idx - (strings.LastIndexByte(c.s[:idx], '\n') + 1)
	return fmt.Sprintf(" at line %d column %d", line, col)
}

// invalid is a 400 invalid_request_error; DeepSeek sends param null and
// code invalid_request_error whatever the check.
func (c *checker) invalid(message, param, code string) *adapters.SimError {
	e := apiError{status: http.StatusBadRequest, message: message, typ: "invalid_request_error", param: param, code: code}
	if c.p.deepseek {
		e.param, e.code = "", "invalid_request_error"
	}
	return c.p.simError(e)
}

// deser is DeepSeek's deserialization error for path (may be "").
func (c *checker) deser(path, what string, idx int) *adapters.SimError {
	msg := "Failed to deserialize the JSON body into the target type: "
	if path != "" {
		msg += path + ": "
	}
	return c.invalid(msg+what+c.at(idx), "", "")
}

func fieldPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// missing: a required field is absent from obj (at path).
func (c *checker) missing(obj jobj, path, name string) *adapters.SimError {
	if c.p.deepseek {
		return c.deser(path, "missing field `"+name+"`", obj.end)
	}
	full := fieldPath(path, name)
	return c.invalid("Missing required parameter: '"+full+"'.", full, "missing_required_parameter")
}

// wrongType: the value at path is not of the wanted type.
func (c *checker) wrongType(path string, w jsonType, v jval) *adapters.SimError {
	if c.p.deepseek {
		idx := v.end
		if k := v.kind(); k == '[' || k == '{' {
			idx = v.start + 1 // serde stops at the opening bracket
		}
		return c.deser(path, "invalid type: "+serdeUnexpected(v.raw)+", expected "+w.serde, idx)
	}
	return c.invalid("Invalid type for '"+path+"': expected "+w.openai+", but got "+openAIKind(v.raw)+" instead.", path, "invalid_type")
}

// badValue: a string outside an enum.
func (c *checker) badValue(path, value string, allowed []string, v jval) *adapters.SimError {
	if c.p.deepseek {
		return c.deser(path, "unknown variant `"+value+"`, expected "+serdeOneOf(allowed), v.end)
	}
	q := make([]string, len(allowed))
	for i, a := range allowed {
		q[i] = "'" + a + "'"
	}
	list := strings.Join(q, ", ")
	if n := len(q); n > 1 {
		list = strings.Join(q[:n-1], ", ") + ", and " + q[n-1]
		if n == 2 {
			list = q[0] + " and " + q[1]
		}
	}
	return c.invalid("Invalid value: '"+value+"'. Supported values are: "+list+".", path, "invalid_value")
}

// openAIKind names a JSON value the way OpenAI's type errors do.
func openAIKind(raw string) string {
	switch raw[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	if _, err := strconv.ParseInt(raw, 10, 64); err == nil {
		return "an integer"
	}
	return "a decimal number"
}

// serdeUnexpected names a JSON value the way serde's invalid-type errors do.
func serdeUnexpected(raw string) string {
	switch raw[0] {
	case '"':
		return "string " + strconv.Quote(wire.Unquote(raw))
	case '{':
		return "map"
	case '[':
		return "sequence"
	case 't', 'f':
		return "boolean `" + raw + "`"
	case 'n':
		return "null"
	}
	if _, err := strconv.ParseInt(raw, 10, 64); err == nil {
		return "integer `" + raw + "`"
	}
	return "floating point `" + raw + "`"
}

func serdeOneOf(allowed []string) string {
	q := make([]string, len(allowed))
	for i, a := range allowed {
		q[i] = "`" + a + "`"
	}
	if len(q) == 2 {
		return q[0] + " or " + q[1]
	}
	return "one of " + strings.Join(q, ", ")
}

// servesPath: OpenAI serves /v1/chat/completions; DeepSeek is rooted at the
// bare host, with /v1 accepted too (and the simulator's own alias).
func (p protocol) servesPath(path string) bool {
	if path == p.path() {
		return true
	}
	return p.deepseek && (path == "/v1/chat/completions" || path == "/v1/deepseek/chat/completions")
}

// notJSON is the answer to a body that does not parse.
func (c *checker) notJSON() *adapters.SimError {
	if !c.p.deepseek {
		return c.invalid("We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON. If you have trouble figuring out how to fix this, please contact us through our help center at help.openai.com.)", "", "")
	}
	reason, at := "expected value", 0
	var v any
	err := json.Unmarshal([]byte(c.s), &v)
	var se *json.SyntaxError
	switch {
	case strings.TrimSpace(c.s) == "":
		reason, at = "EOF while parsing a value", len(c.s)
	case err != nil && strings.Contains(err.Error(), "unexpected end"):
		reason, at = "EOF while parsing a value", len(c.s)
	case errors.As(err, &se):
		at = int(se.Offset)
		if strings.Contains(se.Error(), "after top-level value") {
			reason = "trailing characters"
		}
	}
	return c.invalid("Failed to parse the request body as JSON: "+reason+c.at(at), "", "")
}

// CheckRequest checks a request as the provider does (see above) and
// returns its facts. Any API key, or none, is accepted.
func (p protocol) CheckRequest(method, path string, h http.Header, body []byte) (*adapters.Inbound, *adapters.SimError) {
	pth, _, _ := strings.Cut(path, "?")
	c := &checker{p: p, s: adapters.View(body)}
	if method != http.MethodPost || !p.servesPath(pth) {
		e := apiError{status: http.StatusNotFound, message: "Invalid URL (" + method + " " + pth + ")", typ: "invalid_request_error"}
		if p.deepseek {
			e.code = e.typ
		}
		return nil, p.simError(e)
	}
	if !wire.Valid(c.s) {
		return nil, c.notJSON()
	}
	i := wire.SkipWS(c.s, 0)
	if c.s[i] != '{' {
		if p.deepseek {
			return nil, c.deser("", "invalid type: "+serdeUnexpected(strings.TrimSpace(c.s[i:]))+", expected struct ChatCompletionRequest", i+1)
		}
		return nil, c.notJSON()
	}
	c.top = readObject(c.s, i)
	rules := openAIRules
	if p.deepseek {
		rules = deepSeekRules
	}
	if e := wire.Check(c, rules); e != nil {
		return nil, e
	}
	return &c.in, nil
}

// fieldCheck checks one member of the request, when it is there and not
// null (model and messages are checked even when null).
type fieldCheck struct {
	name  string
	check func(c *checker, v jval) *adapters.SimError
}

// fieldChecks are the members the checks read, in the order OpenAI
// reports them; DeepSeek's parser meets them in document order.
var fieldChecks = []fieldCheck{
	{"model", (*checker).model},
	{"messages", (*checker).messages},
	{"tools", (*checker).tools},
	{"response_format", (*checker).responseFormat},
	{"max_completion_tokens", func(c *checker, v jval) *adapters.SimError { return c.maxTokens("max_completion_tokens")(v) }},
	{"max_tokens", func(c *checker, v jval) *adapters.SimError { return c.maxTokens("max_tokens")(v) }},
	{"temperature", (*checker).temperature},
	{"reasoning_effort", (*checker).reasoningEffort},
	{"thinking", (*checker).thinking},
	{"stream", (*checker).stream},
	{"stream_options", (*checker).streamOptions},
}

// openAIRules are api.openai.com's checks in the order it applies them.
var openAIRules = []wire.Rule[*checker]{
	{Name: "model and messages are given", Check: (*checker).required},
	{Name: "every member is a known parameter", Check: (*checker).unrecognized},
	{Name: "each member is of its type and range", Check: func(c *checker) *adapters.SimError {
		for _, f := range fieldChecks {
			if e := c.field(f); e != nil {
				return e
			}
		}
		return nil
	}},
	{Name: "DeepSeek's own values", Check: (*checker).deepSeekValues},
	{Name: "no message content is null", Check: (*checker).nullContent},
	{Name: "tool messages answer the tool calls before them", Check: (*checker).toolChain},
	{Name: "thinking mode's reasoning_content is passed back", Check: (*checker).passback},
	{Name: "the tool choice is read", Check: (*checker).toolChoice},
}

// deepSeekRules are api.deepseek.com's: its parser reads the members in
// document order and reports missing ones at the end; then its checks.
var deepSeekRules = []wire.Rule[*checker]{
	{Name: "each member is of its type and range, in document order", Check: func(c *checker) *adapters.SimError {
		for _, k := range c.top.keys {
			for _, f := range fieldChecks {
				if f.name != k {
					continue
				}
				if e := c.field(f); e != nil {
					return e
				}
			}
		}
		return nil
	}},
	{Name: "model and messages are given", Check: (*checker).required},
	{Name: "DeepSeek's own values", Check: (*checker).deepSeekValues},
	{Name: "no message content is null", Check: (*checker).nullContent},
	{Name: "tool messages answer the tool calls before them", Check: (*checker).toolChain},
	{Name: "thinking mode's reasoning_content is passed back", Check: (*checker).passback},
	{Name: "the tool choice is one thinking mode allows", Check: (*checker).toolChoice},
}

// toolChoice reads what the request lets the model do; DeepSeek's
// thinking mode lets the model decide, so a forced tool choice is refused
// there (api-docs.deepseek.com, thinking mode).
func (c *checker) toolChoice() *adapters.SimError {
	c.p.readChoices(c.s, &c.in)
	if c.p.deepseek && c.in.Reasoning && (c.in.Choice.Mode == adapters.ToolChoiceRequired || c.in.Choice.Mode == adapters.ToolChoiceNamed) {
		return c.invalid("deepseek-reasoner does not support this tool_choice", "", "")
	}
	return nil
}

// field runs f when its member is there and not null (model and messages
// even when null: their checks say so themselves).
func (c *checker) field(f fieldCheck) *adapters.SimError {
	v := c.top.get(f.name)
	if !c.top.has(f.name) || (v.null() && f.name != "model" && f.name != "messages") {
		return nil
	}
	return f.check(c, v)
}

// required: model and messages are given, in each provider's words.
func (c *checker) required() *adapters.SimError {
	if c.p.deepseek {
		for _, k := range []string{"model", "messages"} {
			if !c.top.has(k) {
				return c.missing(c.top, "", k)
			}
		}
		return nil
	}
	if m := c.top.get("model"); m.null() || m.raw == `""` {
		return c.invalid("you must provide a model parameter", "", "")
	}
	if c.top.get("messages").null() {
		return c.missing(c.top, "", "messages")
	}
	return nil
}

// openAIMembers are the request members api.openai.com's Chat Completions
// reads (openai-go v3.98.0 ChatCompletionNewParams, plus stream).
var openAIMembers = map[string]bool{
	"model": true, "messages": true, "audio": true, "frequency_penalty": true, "function_call": true,
	"functions": true, "logit_bias": true, "logprobs": true, "max_completion_tokens": true,
	"max_tokens": true, "metadata": true, "modalities": true, "moderation": true, "n": true,
	"parallel_tool_calls": true, "prediction": true, "presence_penalty": true, "prompt_cache_key": true,
	"prompt_cache_options": true, "prompt_cache_retention": true, "reasoning_effort": true,
	"response_format": true, "safety_identifier": true, "seed": true, "service_tier": true, "stop": true,
	"store": true, "stream": true, "stream_options": true, "temperature": true, "tool_choice": true,
	"tools": true, "top_logprobs": true, "top_p": true, "user": true, "verbosity": true,
	"web_search_options": true,
}

// unrecognized is OpenAI's answer to the first member (in body order) it
// does not know, e.g. DeepSeek's thinking sent to OpenAI. DeepSeek's
// parser skips members it does not know, so only OpenAI has it.
func (c *checker) unrecognized() *adapters.SimError {
	for _, k := range c.top.keys {
		if !openAIMembers[k] {
			return c.invalid("Unrecognized request argument supplied: "+k, "", "")
		}
	}
	return nil
}

func (c *checker) model(v jval) *adapters.SimError {
	s, ok := v.str()
	if !ok {
		return c.wrongType("model", typeString, v)
	}
	c.in.Model = s
	return nil
}

var (
	openAIRoles   = []string{"system", "assistant", "user", "function", "tool", "developer"}
	deepSeekRoles = []string{"system", "user", "assistant", "tool", "developer"}
)
