package jsonschema

// Compiling each keyword, in its draft's terms, and reading a schema
// object's keywords with their types checked as the metaschema did.

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
)

// applicators: the subschemas applied to the same instance, and
// unevaluated*.
func (c *compiler) applicators(n *node, k kw) error {
	var err error
	if n.allOf, err = k.schemaArray("allOf"); err != nil {
		return err
	}
	if n.anyOf, err = k.schemaArray("anyOf"); err != nil {
		return err
	}
	if n.oneOf, err = k.schemaArray("oneOf"); err != nil {
		return err
	}
	if n.not, err = k.schema("not"); err != nil {
		return err
	}
	if n.ifS, err = k.schema("if"); err != nil {
		return err
	}
	then, err := k.schema("then")
	if err != nil {
		return err
	}
	els, err := k.schema("else")
	if err != nil {
		return err
	}
	if n.ifS != nil {
		n.thenS, n.elseS = then, els
	}
	if c.draft == draft2020 {
		if n.unevaluatedProperties, err = k.schema("unevaluatedProperties"); err != nil {
			return err
		}
		if n.unevaluatedItems, err = k.schema("unevaluatedItems"); err != nil {
			return err
		}
	}
	return nil
}

// values: type, enum, const, and the number, string and size limits.
func (c *compiler) values(n *node, k kw) error {
	s := k.s
	if t, ok := s["type"]; ok {
		if err := n.setTypes(t, k); err != nil {
			return err
		}
	}
	if e, ok := s["enum"]; ok {
		arr, ok := e.([]any)
		if !ok {
			return k.bad("enum", "must be an array of values")
		}
		if c.draft == draft7 { // its metaschema wants a non-empty set
			if len(arr) == 0 {
				return k.bad("enum", "must not be empty in draft-07")
			}
			if i, j := duplicate(arr); i >= 0 {
				return k.bad("enum", fmt.Sprintf("lists the same value twice (at %d and %d)", i, j))
			}
		}
		n.enum = arr
	}
	if v, ok := s["const"]; ok {
		n.hasConst, n.constV = true, v
	}
	var err error
	if n.multipleOf, err = k.number("multipleOf"); err != nil {
		return err
	}
	if n.multipleOf != nil && n.multipleOf.cmp(jnum{v: json.Number("0")}) <= 0 {
		return k.bad("multipleOf", "must be greater than 0")
	}
	if n.maximum, err = k.number("maximum"); err != nil {
		return err
	}
	if n.minimum, err = k.number("minimum"); err != nil {
		return err
	}
	if n.exclusiveMaximum, err = k.number("exclusiveMaximum"); err != nil {
		return err
	}
	if n.exclusiveMinimum, err = k.number("exclusiveMinimum"); err != nil {
		return err
	}
	for _, l := range []struct {
		name string
		at   *int
	}{{"minLength", &n.minLength}, {"maxLength", &n.maxLength}, {"minItems", &n.minItems}, {"maxItems", &n.maxItems},
		{"minProperties", &n.minProperties}, {"maxProperties", &n.maxProperties}} {
		if *l.at, err = k.count(l.name); err != nil {
			return err
		}
	}
	if p, ok := s["pattern"]; ok {
		str, ok := p.(string)
		if !ok {
			return k.bad("pattern", "must be a string")
		}
		if n.pattern, err = regexp.Compile(str); err != nil {
			return k.bad("pattern", fmt.Sprintf("%q is not a regular expression this validator (Go's regexp) can compile: %v", str, regexpProblem(err)))
		}
	}
	return nil
}

// arrays compiles the array keywords.
func (c *compiler) arrays(n *node, k kw) error {
	is2020 := c.draft == draft2020
	var err error
	if is2020 {
		if n.prefixItems, err = k.schemaArray("prefixItems"); err != nil {
			return err
		}
		if n.items, err = k.schema("items"); err != nil {
			return err
		}
	} else if items, ok := k.s["items"]; ok {
		if _, isArray := items.([]any); isArray {
			if n.prefixItems, err = k.schemaArray("items"); err != nil {
				return err
			}
			if b, ok := k.s["additionalItems"].(bool); ok && !b {
				n.noMoreItems = true
			} else if n.items, err = k.schema("additionalItems"); err != nil {
				return err
			}
		} else if n.items, err = k.schema("items"); err != nil {
			return err
		}
	}
	if !is2020 && n.items == nil && !n.noMoreItems {
		// additionalItems without array items does nothing, but must be a schema.
		if _, err := k.schema("additionalItems"); err != nil {
			return err
		}
	}
	if x, ok := k.s["uniqueItems"]; ok {
		b, ok := x.(bool)
		if !ok {
			return k.bad("uniqueItems", "must be a boolean")
		}
		n.uniqueItems = b
	}
	if n.contains, err = k.schema("contains"); err != nil {
		return err
	}
	if is2020 {
		if n.minContains, err = k.count("minContains"); err != nil {
			return err
		}
		if n.maxContains, err = k.count("maxContains"); err != nil {
			return err
		}
	}
	return nil
}

// objects compiles the object keywords.
func (c *compiler) objects(n *node, k kw) error {
	var err error
	if n.required, err = k.strings("required"); err != nil {
		return err
	}
	if n.properties, err = k.schemaMap("properties"); err != nil {
		return err
	}
	if pp, ok := k.s["patternProperties"]; ok {
		m, ok := pp.(map[string]any)
		if !ok {
			return k.bad("patternProperties", "must be an object")
		}
		for _, name := range slices.Sorted(maps.Keys(m)) {
			re, err := regexp.Compile(name)
			if err != nil {
				return &schemaError{k.ptr + "/patternProperties/" + EscapeToken(name), fmt.Sprintf("patternProperties: %q is not a regular expression this validator (Go's regexp) can compile: %v", name, regexpProblem(err))}
			}
			s, err := c.compile(m[name], k.ptr+"/patternProperties/"+EscapeToken(name))
			if err != nil {
				return err
			}
			n.patternProperties = append(n.patternProperties, patternProperty{re, s})
		}
	}
	if b, ok := k.s["additionalProperties"].(bool); ok && !b {
		n.noMoreProperties = true
	} else if n.additional, err = k.schema("additionalProperties"); err != nil {
		return err
	}
	if n.propertyNames, err = k.schema("propertyNames"); err != nil {
		return err
	}
	// dependencies: array values are dependentRequired, schema values
	// dependentSchemas. 2020-12 honours it too, as the library did.
	if x, ok := k.s["dependencies"]; ok {
		m, ok := x.(map[string]any)
		if !ok {
			return k.bad("dependencies", "must be an object")
		}
		for _, prop := range slices.Sorted(maps.Keys(m)) {
			at := k.ptr + "/dependencies/" + EscapeToken(prop)
			if arr, ok := m[prop].([]any); ok {
				req, err := stringList(arr, at, "dependencies")
				if err != nil {
					return err
				}
				n.dependentRequired = append(n.dependentRequired, dependency{prop: prop, required: req})
				continue
			}
			s, err := c.compile(m[prop], at)
			if err != nil {
				return err
			}
			n.dependentSchemas = append(n.dependentSchemas, dependency{prop: prop, schema: s})
		}
	}
	if c.draft == draft2020 {
		if x, ok := k.s["dependentRequired"]; ok {
			m, ok := x.(map[string]any)
			if !ok {
				return k.bad("dependentRequired", "must be an object")
			}
			for _, prop := range slices.Sorted(maps.Keys(m)) {
				at := k.ptr + "/dependentRequired/" + EscapeToken(prop)
				arr, ok := m[prop].([]any)
				if !ok {
					return &schemaError{at, "dependentRequired: must be an array of strings"}
				}
				req, err := stringList(arr, at, "dependentRequired")
				if err != nil {
					return err
				}
				n.dependentRequired = append(n.dependentRequired, dependency{prop: prop, required: req})
			}
		}
		ds, err := k.schemaMap("dependentSchemas")
		if err != nil {
			return err
		}
		for _, prop := range slices.Sorted(maps.Keys(ds)) {
			n.dependentSchemas = append(n.dependentSchemas, dependency{prop: prop, schema: ds[prop]})
		}
	}
	return nil
}

func (n *node) setTypes(t any, k kw) error {
	names := []string{}
	switch t := t.(type) {
	case string:
		names = append(names, t)
	case []any:
		if len(t) == 0 {
			return k.bad("type", "must not be an empty array")
		}
		for _, x := range t {
			s, ok := x.(string)
			if !ok {
				return k.bad("type", "must be a type name or an array of them")
			}
			names = append(names, s)
		}
	default:
		return k.bad("type", "must be a type name or an array of them")
	}
	for _, name := range names {
		bit, ok := typeBits[name]
		if !ok {
			return k.bad("type", fmt.Sprintf("%q is not a JSON Schema type", name))
		}
		if n.types&bit != 0 {
			return k.bad("type", fmt.Sprintf("%q is listed twice", name))
		}
		n.types |= bit
	}
	// Named in one order whatever the schema's, as the old library did.
	for _, bit := range []uint8{tNull, tBoolean, tNumber, tInteger, tString, tArray, tObject} {
		if n.types&bit != 0 {
			n.typeNames = append(n.typeNames, typeName(bit))
		}
	}
	return nil
}

// kw reads one schema object's keywords, naming the keyword in errors.
type kw struct {
	c   *compiler
	s   map[string]any
	ptr string
}

func (k kw) bad(name, msg string) error {
	return &schemaError{k.ptr + "/" + EscapeToken(name), name + " " + msg}
}

// annotations checks the types of the keywords that assert nothing, as
// each draft's metaschema does.
func (k kw) annotations() error {
	for _, a := range []struct {
		name, want string
		only2020   bool
	}{
		{"$schema", "string", false}, {"title", "string", false}, {"description", "string", false}, {"format", "string", false},
		{"$comment", "string", false}, {"examples", "array", false}, {"readOnly", "boolean", false}, {"writeOnly", "boolean", false},
		{"contentEncoding", "string", false}, {"contentMediaType", "string", false}, {"deprecated", "boolean", true},
		{"$vocabulary", "object", true},
	} {
		x, ok := k.s[a.name]
		if !ok || a.only2020 && k.c.draft != draft2020 {
			continue
		}
		if got := jsonTypeName(x); got != a.want {
			return k.bad(a.name, "must be a"+map[bool]string{true: "n", false: ""}[a.want == "array" || a.want == "object"]+" "+a.want)
		}
	}
	return nil
}

func (k kw) schema(name string) (*node, error) {
	x, ok := k.s[name]
	if !ok {
		return nil, nil
	}
	return k.c.compile(x, k.ptr+"/"+name)
}

func (k kw) schemaArray(name string) ([]*node, error) {
	x, ok := k.s[name]
	if !ok {
		return nil, nil
	}
	arr, ok := x.([]any)
	if !ok || len(arr) == 0 {
		return nil, k.bad(name, "must be a non-empty array of schemas")
	}
	out := make([]*node, len(arr))
	for i, s := range arr {
		var err error
		if out[i], err = k.c.compile(s, k.ptr+"/"+name+"/"+strconv.Itoa(i)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (k kw) schemaMap(name string) (map[string]*node, error) {
	x, ok := k.s[name]
	if !ok {
		return nil, nil
	}
	m, ok := x.(map[string]any)
	if !ok {
		return nil, k.bad(name, "must be an object of schemas")
	}
	out := make(map[string]*node, len(m))
	for _, key := range slices.Sorted(maps.Keys(m)) {
		var err error
		if out[key], err = k.c.compile(m[key], k.ptr+"/"+name+"/"+EscapeToken(key)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (k kw) number(name string) (*jnum, error) {
	x, ok := k.s[name]
	if !ok {
		return nil, nil
	}
	n, ok := numberOf(x)
	if !ok {
		return nil, k.bad(name, "must be a number")
	}
	return &n, nil
}

// count reads a non-negative integer keyword; -1 when absent.
func (k kw) count(name string) (int, error) {
	x, ok := k.s[name]
	if !ok {
		return -1, nil
	}
	n, ok := numberOf(x)
	if !ok || !n.isInteger() || n.f < 0 {
		return 0, k.bad(name, "must be a non-negative integer")
	}
	if n.f > math.MaxInt32 {
		return math.MaxInt32, nil // no string, array or object is that long
	}
	return int(n.f), nil
}

func (k kw) strings(name string) ([]string, error) {
	x, ok := k.s[name]
	if !ok {
		return nil, nil
	}
	arr, ok := x.([]any)
	if !ok {
		return nil, k.bad(name, "must be an array of strings")
	}
	return stringList(arr, k.ptr+"/"+name, name)
}

// stringList checks an array of unique strings.
func stringList(arr []any, ptr, name string) ([]string, error) {
	out := make([]string, len(arr))
	seen := make(map[string]bool, len(arr))
	for i, x := range arr {
		s, ok := x.(string)
		if !ok {
			return nil, &schemaError{ptr, name + " must be an array of strings"}
		}
		if seen[s] {
			return nil, &schemaError{ptr, fmt.Sprintf("%s lists %q twice", name, s)}
		}
		seen[s] = true
		out[i] = s
	}
	return out, nil
}
