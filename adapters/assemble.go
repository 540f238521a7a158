package adapters

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Parts is a request's sources sorted by where every protocol puts them:
// the system side (rules, and skills where no developer role exists) and
// the user side (the task and the labelled context material), each in
// request order. Encoders place these; they never drop one.
type Parts struct {
	System    []Source
	Developer []Source
	User      []Source
	// All are the sources in request order, for protocols that keep it.
	All []Source
}

// SplitSources sorts req's sources by role. A source with an unknown role
// is an error, so nothing is dropped silently.
func SplitSources(req *Request) (Parts, error) {
	p := Parts{All: req.Sources}
	for _, s := range req.Sources {
		switch s.Role {
		case RoleSystem:
			p.System = append(p.System, s)
		case RoleDeveloper:
			p.Developer = append(p.Developer, s)
		case RoleUser, RoleContext:
			p.User = append(p.User, s)
		default:
			return p, fmt.Errorf("source %s has unknown role %q (want system, developer, user or context)", s.ID, s.Role)
		}
	}
	if len(p.User) == 0 && len(req.Turns) == 0 {
		return p, fmt.Errorf("the request has no user or context source: every protocol needs a first user message")
	}
	return p, nil
}

// SourceText is the text a source is sent as. Context material with a
// Label is wrapped in a tag that names it and its trust label, so the
// model (and a reader of the wire request) can tell material from
// instructions; without a Label its text is sent as written (the refund
// case's material carries its own tags, as the chapter prints them).
func SourceText(s Source) string {
	if s.Role != RoleContext || s.Label == "" {
		return s.Text
	}
	return fmt.Sprintf("<context source=%q trust=%q label=%q>\n%s\n</context>", s.ID, s.Trust, s.Label, s.Text)
}

// SchemaInstruction is the text used when a protocol cannot carry an
// output schema natively: the schema travels in the system prompt.
func SchemaInstruction(o OutputContract) string {
	switch o.Mode {
	case OutputJSONSchema:
		// Compact: the schema as a scenario file indents it would cost
		// the model tokens of whitespace.
		var schema bytes.Buffer
		if json.Compact(&schema, o.Schema) != nil {
			schema.Reset()
			schema.Write(o.Schema)
		}
		return fmt.Sprintf("Reply with exactly one JSON object that matches this JSON Schema (%s), and nothing else:\n%s", o.Name, schema.String())
	case OutputJSON:
		return "Reply with exactly one JSON object, and nothing else."
	}
	return ""
}

// ResultObject turns a tool result into a JSON object for protocols whose
// results must be objects (Gemini functionResponse.response): a JSON
// object result is used as {"output": …}, anything else as a string, and
// an error result as {"error": …}.
func ResultObject(r ToolResult) json.RawMessage {
	var v any = r.Content
	trimmed := strings.TrimSpace(r.Content)
	if strings.HasPrefix(trimmed, "{") || strings.HasPrefix(trimmed, "[") {
		if json.Valid([]byte(trimmed)) {
			v = json.RawMessage(trimmed)
		}
	}
	key := "output"
	if r.IsError {
		key = "error"
	}
	b, _ := json.Marshal(map[string]any{key: v})
	return b
}

// MarshalBody is json.Marshal without HTML escaping, so that the wire
// JSON shows "<" and "&" as they are (the providers accept both): compact,
// with no trailing newline. It is the module's one such marshal; every
// package that writes JSON "as canonical writes it" calls it.
func MarshalBody(v any) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// Prepare is where every encoder starts: what provider accepts on protocol,
// what req asks that it cannot carry (an error) or carries only degraded
// (the notes to record), and the sources sorted by role.
func Prepare(req *Request, provider, protocol string) (Capabilities, []string, Parts, error) {
	caps, err := CapabilitiesFor(provider, protocol)
	if err != nil {
		return caps, nil, Parts{}, err
	}
	degr, err := caps.Check(req)
	if err != nil {
		return caps, nil, Parts{}, err
	}
	if caps.StrictSchemas && (protocol == OpenAIResponses || protocol == OpenAIChat) {
		if err := checkStrict(req); err != nil {
			return caps, nil, Parts{}, err
		}
	}
	parts, err := SplitSources(req)
	return caps, degr, parts, err
}

// checkStrict checks every schema the request marks strict.
func checkStrict(req *Request) error {
	for _, t := range req.Tools {
		if t.Strict && len(t.Parameters) > 0 {
			if err := CheckStrictSchema("tool "+t.Name, t.Parameters); err != nil {
				return err
			}
		}
	}
	if o := req.Output; o.Strict && o.Mode == OutputJSONSchema && len(o.Schema) > 0 {
		return CheckStrictSchema("output "+o.Name, o.Schema)
	}
	return nil
}
