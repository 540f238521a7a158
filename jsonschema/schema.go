package jsonschema

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Schema is a compiled JSON Schema: tool arguments, the output contract,
// and the scenario file format are all checked with it. The validator is
// our own: the package doc says what it covers and refuses.
type Schema struct {
	root *node
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

// CompileSchema compiles a JSON Schema document: draft 2020-12, or
// draft-07 when its $schema says so; a $schema naming another draft is an
// error.
func CompileSchema(raw json.RawMessage) (*Schema, error) {
	doc, err := ParseJSON(raw)
	if err != nil {
		return nil, fmt.Errorf("schema is not valid JSON: %v", err)
	}
	root, err := compileSchema(doc)
	if err != nil {
		return nil, fmt.Errorf("schema does not compile: %v", err)
	}
	return &Schema{root: root}, nil
}

// Validate checks a JSON document and returns every leaf violation, in
// pointer order; nil means it is valid. A document that is not JSON is one
// violation at the root.
func (s *Schema) Validate(doc []byte) []Violation {
	v, err := ParseJSON(doc)
	if err != nil {
		return []Violation{{Pointer: "", Message: "not valid JSON: " + err.Error()}}
	}
	return s.ValidateValue(v)
}

// ValidateValue checks an already-decoded value (encoding/json, with or
// without UseNumber).
func (s *Schema) ValidateValue(v any) []Violation {
	var vd validator
	if vd.validate(s.root, v, false) {
		return nil
	}
	vd.validate(s.root, v, true)
	sort.SliceStable(vd.out, func(i, j int) bool { return vd.out[i].Pointer < vd.out[j].Pointer })
	return vd.out
}

// Joined renders violations as one line.
func Joined(vs []Violation) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = v.String()
	}
	return strings.Join(parts, "; ")
}
