package proxy

import (
	"crypto/sha256"
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/registry"
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
// (a protocol may name the model and the streaming in it). What differs
// between the protocols — the tools' argument schemas, the output schema,
// chaining, a model in the path — is the descriptor's Declared.
func readRequest(protocol, path string, body []byte) request {
	r := request{protocol: protocol, toolSchemas: map[string]json.RawMessage{}}
	if !gjson.ValidBytes(body) {
		return r
	}
	r.key = sha256.Sum256([]byte(adapters.Canonical(string(body))))
	root := gjson.ParseBytes(body)
	if d, ok := registry.Describe(protocol); ok {
		dec := d.Declared(path, root)
		r.model, r.stream, r.previousID = dec.Model, dec.Stream, dec.PreviousID
		r.tools = adapters.RawOf(root.Get("tools"))
		r.toolSchemas = dec.Tools
		r.schema, r.schemaName, r.schemaNote = dec.Schema, dec.SchemaName, dec.SchemaNote
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
