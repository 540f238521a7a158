package proxy

import (
	"crypto/sha256"
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/modelwire/modelwire/adapters"
)

// request is what the proxy reads from an intercepted request's body: as
// much as linking, titles, hold mode and validation need, and nothing
// more. A body it cannot read leaves the fields empty; the request is
// still forwarded and recorded.
type request struct {
	protocol string
	model    string
	stream   bool
	// history is the conversation the request carries (Chat and Anthropic
	// messages, Responses input, Gemini contents), one canonical JSON text
	// per item: keys sorted, nulls dropped, so the same item re-serialised
	// by an SDK compares equal.
	history []string
	// key identifies the whole request (canonical body): a retry of a
	// failed request has the same key.
	key [32]byte
	// previousID is Responses' previous_response_id or Interactions'
	// previous_interaction_id.
	previousID string
	// schema is the output schema the request asks for (Responses
	// text.format, Chat response_format, Anthropic output_config.format,
	// Gemini responseJsonSchema); schemaNote says why one was not used.
	schema     json.RawMessage
	schemaName string
	schemaNote string
	// tools are the tools the request offers, as sent (for the manifest);
	// toolSchemas their argument schemas by name (nil when the request
	// gives no JSON Schema, e.g. Gemini's OpenAPI `parameters`).
	tools       json.RawMessage
	toolSchemas map[string]json.RawMessage
	// firstUser is the first user text, for the session's title.
	firstUser string
}

// readRequest reads a classified request's body. path is the URL path
// (Gemini names the model and the streaming in it).
func readRequest(protocol, path string, body []byte) request {
	r := request{protocol: protocol, toolSchemas: map[string]json.RawMessage{}}
	if !gjson.ValidBytes(body) {
		return r
	}
	r.key = sha256.Sum256([]byte(adapters.Canonical(string(body))))
	root := gjson.ParseBytes(body)
	if read := requestReaders[protocol]; read != nil {
		r.model, r.stream = root.Get("model").String(), root.Get("stream").Bool()
		r.tools = raw(root.Get("tools"))
		read(&r, root, path)
	}
	r.history = adapters.HistoryItems(protocol, root)
	for _, item := range r.history {
		if it := gjson.Parse(item); r.firstUser == "" && (it.Get("role").String() == "user" || it.Get("type").String() == "user_input") {
			r.firstUser = headOf(firstText(it), 4<<10) // for a title: never the whole of a large body
		}
	}
	// What the request keeps outlives the body it was read from (the
	// session's meta, the conversation's link): no field may keep the body.
	r.model, r.previousID = strings.Clone(r.model), strings.Clone(r.previousID)
	return r
}

// requestReaders read what differs between the protocols: the tools'
// argument schemas, the output schema, chaining, and (Gemini) the model
// and streaming from the path.
var requestReaders = map[string]func(r *request, root gjson.Result, path string){
	adapters.OpenAIChat:         readChat,
	adapters.DeepSeekChat:       readChat,
	adapters.OpenAIResponses:    readResponses,
	adapters.AnthropicMessages:  readAnthropic,
	adapters.Gemini:             readGemini,
	adapters.GeminiInteractions: readInteractions,
}

func readChat(r *request, root gjson.Result, _ string) {
	for _, t := range root.Get("tools").Array() {
		if f := t.Get("function"); f.Exists() {
			r.addTool(f.Get("name").String(), f.Get("parameters"))
		}
	}
	if rf := root.Get("response_format"); rf.Get("type").String() == "json_schema" {
		r.schema, r.schemaName = raw(rf.Get("json_schema.schema")), rf.Get("json_schema.name").String()
	}
}

func readResponses(r *request, root gjson.Result, _ string) {
	r.previousID = root.Get("previous_response_id").String()
	for _, t := range root.Get("tools").Array() {
		if t.Get("type").String() == "function" {
			r.addTool(t.Get("name").String(), t.Get("parameters"))
		}
	}
	if f := root.Get("text.format"); f.Get("type").String() == "json_schema" {
		r.schema, r.schemaName = raw(f.Get("schema")), f.Get("name").String()
	}
}

func readAnthropic(r *request, root gjson.Result, _ string) {
	for _, t := range root.Get("tools").Array() {
		if s := t.Get("input_schema"); s.Exists() {
			r.addTool(t.Get("name").String(), s)
		}
	}
	for _, p := range []string{"output_config.format", "output_format"} {
		if f := root.Get(p); f.Get("type").String() == "json_schema" {
			r.schema, r.schemaName = raw(f.Get("schema")), p
			break
		}
	}
}

func readGemini(r *request, root gjson.Result, path string) {
	seg := path[strings.LastIndexByte(path, '/')+1:]
	model, action, _ := strings.Cut(seg, ":")
	r.model, r.stream = model, action == "streamGenerateContent"
	for _, t := range root.Get("tools").Array() {
		for _, d := range first(t, "functionDeclarations", "function_declarations").Array() {
			r.addTool(d.Get("name").String(), first(d, "parametersJsonSchema", "parameters_json_schema"))
		}
	}
	gc := first(root, "generationConfig", "generation_config")
	if s := first(gc, "responseJsonSchema", "response_json_schema"); s.Exists() {
		r.schema, r.schemaName = raw(s), "responseJsonSchema"
	} else if first(gc, "responseSchema", "response_schema").Exists() {
		r.schemaNote = "responseSchema is Google's OpenAPI subset, not JSON Schema: not checked"
	}
}

func readInteractions(r *request, root gjson.Result, _ string) {
	r.previousID = root.Get("previous_interaction_id").String()
	for _, t := range root.Get("tools").Array() {
		if t.Get("type").String() == "function" {
			r.addTool(t.Get("name").String(), t.Get("parameters"))
		}
	}
	// response_format is one format or a list of them (text, image…).
	formats := root.Get("response_format")
	if !formats.IsArray() {
		formats = gjson.Parse("[" + formats.Raw + "]")
	}
	for _, f := range formats.Array() {
		if f.Get("type").String() == "text" && f.Get("schema").Exists() {
			r.schema, r.schemaName = raw(f.Get("schema")), "response_format"
		}
	}
}

// addTool notes a tool the request offers; schema may be absent.
func (r *request) addTool(name string, schema gjson.Result) {
	if name == "" {
		return
	}
	r.toolSchemas[name] = raw(schema)
}

// first is the first of several spellings of a field that is present
// (Google's REST API takes camelCase and snake_case).
func first(r gjson.Result, paths ...string) gjson.Result {
	for _, p := range paths {
		if v := r.Get(p); v.Exists() {
			return v
		}
	}
	return gjson.Result{}
}

func raw(r gjson.Result) json.RawMessage {
	if !r.Exists() || r.Type == gjson.Null {
		return nil
	}
	return json.RawMessage(r.Raw)
}

// firstText is the first text of a message, whatever its shape (a string
// content, content parts, Gemini parts).
func firstText(it gjson.Result) string {
	c := it.Get("content")
	if c.Type == gjson.String {
		return c.String()
	}
	for _, arr := range []gjson.Result{c, it.Get("parts")} {
		for _, p := range arr.Array() {
			if t := p.Get("text"); t.Type == gjson.String {
				return t.String()
			}
		}
	}
	return ""
}

// Contract is what an application's request declares, as the proxy
// judges its answers by: the tools it offers (argument schemas by name;
// nil where a tool gives none as JSON Schema) and the output schema it
// asks for. A fork that re-sends the request judges by the same.
func Contract(protocol, path string, body []byte) (tools map[string]json.RawMessage, schema json.RawMessage, schemaName string) {
	r := readRequest(protocol, path, body)
	return r.toolSchemas, r.schema, r.schemaName
}

// headOf is s's first n bytes or so (cut at a rune), copied so that it
// does not keep a large body alive.
func headOf(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return strings.Clone(s[:n])
}
