package session

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Schema is a compiled JSON Schema: tool arguments, the output contract,
// and the scenario file format are all checked with it.
type Schema struct {
	s *jsonschema.Schema
}

// Violation is one reason a value fails its schema, located by JSON pointer.
type Violation struct {
	Pointer string `json:"pointer"`
	Message string `json:"message"`
}

func (v Violation) String() string {
	p := v.Pointer
	if p == "" {
		p = "/"
	}
	return p + ": " + v.Message
}

var schemaCount atomic.Int64

// CompileSchema compiles a JSON Schema document (draft 2020-12 unless it
// says otherwise).
func CompileSchema(raw json.RawMessage) (*Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("schema is not valid JSON: %v", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	url := fmt.Sprintf("mem://schema/%d.json", schemaCount.Add(1))
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("schema: %v", err)
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("schema does not compile: %v", firstLine(err.Error()))
	}
	return &Schema{s: s}, nil
}

var printer = message.NewPrinter(language.English)

// Validate checks a JSON document and returns every leaf violation, in
// pointer order; nil means it is valid. A document that is not JSON is one
// violation at the root.
func (s *Schema) Validate(doc []byte) []Violation {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return []Violation{{Pointer: "", Message: "not valid JSON: " + err.Error()}}
	}
	return s.ValidateValue(v)
}

// ValidateValue checks an already-decoded value (from jsonschema.UnmarshalJSON
// or encoding/json with UseNumber).
func (s *Schema) ValidateValue(v any) []Violation {
	err := s.s.Validate(v)
	if err == nil {
		return nil
	}
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return []Violation{{Message: err.Error()}}
	}
	var out []Violation
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			out = append(out, Violation{Pointer: pointer(e.InstanceLocation), Message: e.ErrorKind.LocalizedString(printer)})
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Pointer < out[j].Pointer })
	return out
}

// pointer renders a path as a JSON pointer (RFC 6901).
func pointer(path []string) string {
	var b strings.Builder
	for _, p := range path {
		b.WriteByte('/')
		b.WriteString(strings.ReplaceAll(strings.ReplaceAll(p, "~", "~0"), "/", "~1"))
	}
	return b.String()
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// Joined renders violations as one line.
func Joined(vs []Violation) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = v.String()
	}
	return strings.Join(parts, "; ")
}
