package session

// A JSON Schema compiler of our own. The library we used before compiled
// every draft's metaschema in its package init (~12 ms, 1.7 MB at every
// start, issue 20); this one costs nothing until a schema is compiled.
//
// It covers drafts 04, 06, 07, 2019-09 and 2020-12 (the default) for every
// assertion and applicator keyword and local $refs. What it cannot do
// ($dynamicRef, $recursiveRef, remote refs, refs inside an embedded
// resource) it refuses at compile time with the keyword's
// pointer: a schema that compiles is checked in full, never partly.
// Checks on the schema's own shape stand in for the metaschema: a keyword
// of the wrong type is a compile error, as the metaschema made it.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/url"
	"regexp"
	"regexp/syntax"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Drafts, ordered so that "draft >= draft7" reads naturally.
const (
	draft4    = 4
	draft6    = 6
	draft7    = 7
	draft2019 = 2019
	draft2020 = 2020
)

var draftOf = map[string]int{
	"json-schema.org/draft-04/schema":      draft4,
	"json-schema.org/draft-06/schema":      draft6,
	"json-schema.org/draft-07/schema":      draft7,
	"json-schema.org/draft/2019-09/schema": draft2019,
	"json-schema.org/draft/2020-12/schema": draft2020,
	"json-schema.org/schema":               draft2020, // "the latest"
}

// JSON types as bits, so a node's allowed types are one mask.
const (
	tNull uint8 = 1 << iota
	tBoolean
	tNumber
	tInteger // only in masks: an instance is a number, integer or not
	tString
	tArray
	tObject
)

var typeBits = map[string]uint8{"null": tNull, "boolean": tBoolean, "number": tNumber, "integer": tInteger,
	"string": tString, "array": tArray, "object": tObject}

// node is one compiled schema. Absent integer limits are -1.
type node struct {
	ptr     string // where it sits in the schema document
	always  *bool  // a boolean schema
	refOnly bool   // drafts before 2019-09 ignore a $ref's siblings

	ref *node

	types     uint8
	typeNames []string

	hasConst bool
	constV   any
	enum     []any

	multipleOf, maximum, exclusiveMaximum, minimum, exclusiveMinimum *jnum

	minLength, maxLength int
	pattern              *regexp.Regexp

	minItems, maxItems       int
	uniqueItems              bool
	prefixItems              []*node // array-form items before 2020-12
	items                    *node   // the items after prefixItems (additionalItems before 2020-12)
	noMoreItems              bool    // additionalItems: false
	contains                 *node
	minContains, maxContains int

	minProperties, maxProperties int
	required                     []string
	dependentRequired            []dependency
	dependentSchemas             []dependency
	properties                   map[string]*node
	patternProperties            []patternProperty
	additional                   *node
	noMoreProperties             bool // additionalProperties: false
	propertyNames                *node

	allOf, anyOf, oneOf []*node
	not                 *node
	ifS, thenS, elseS   *node

	// unevaluatedProperties/Items: the members no keyword of this schema,
	// nor of a passing subschema applied in place, has looked at.
	unevaluatedProperties, unevaluatedItems *node
	containsEvaluates                       bool // 2020-12: the items contains matches count as evaluated
}

type dependency struct {
	prop     string
	required []string
	schema   *node
}

type patternProperty struct {
	re     *regexp.Regexp
	schema *node
}

// schemaError is a compile error: the pointer of the keyword at fault
// and what is wrong with it.
type schemaError struct {
	ptr, msg string
}

func (e *schemaError) Error() string {
	p := e.ptr
	if p == "" {
		p = "/"
	}
	return p + ": " + e.msg
}

type compiler struct {
	doc     any
	draft   int
	base    *url.URL // the root $id, if any
	nodes   map[string]*node
	anchors map[string]string // anchor → pointer
	refs    []pendingRef
	inner   []string // pointers of embedded resources (a nested $id)
}

type pendingRef struct {
	from *node
	ptr  string // of the $ref keyword
	ref  string
}

// ParseJSON reads one JSON value with numbers kept exact (json.Number: a
// schema's limits compare exactly, and 18000 never becomes 1.8e+04 in a
// diff) and nothing but white space after it.
func ParseJSON(data []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if rest := bytes.TrimLeft(data[d.InputOffset():], " \t\r\n"); len(rest) > 0 {
		return nil, fmt.Errorf("invalid character %q after top-level value", rest[0])
	}
	return v, nil
}

// compileSchema compiles a decoded schema document.
func compileSchema(doc any) (root *node, err error) {
	c := &compiler{doc: doc, draft: draft2020, nodes: map[string]*node{}, anchors: map[string]string{}}
	if obj, ok := doc.(map[string]any); ok {
		if s, ok := obj["$schema"]; ok {
			str, ok := s.(string)
			if !ok {
				return nil, &schemaError{"/$schema", "$schema must be a string"}
			}
			d, ok := draftOf[strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(str, "https://"), "http://"), "#")]
			if !ok {
				return nil, &schemaError{"/$schema", fmt.Sprintf("$schema %q is not a draft this validator knows (draft-04, -06, -07, 2019-09, 2020-12)", str)}
			}
			c.draft = d
		}
		if id, ok := obj[c.idKeyword()].(string); ok {
			if u, err := url.Parse(id); err == nil && u.IsAbs() {
				u.Fragment = ""
				c.base = u
			}
		}
	}
	root, err = c.compile(doc, "")
	if err != nil {
		return nil, err
	}
	// Resolving a ref may compile a new location, which may hold refs.
	for len(c.refs) > 0 {
		r := c.refs[0]
		c.refs = c.refs[1:]
		if r.from.ref, err = c.resolve(r); err != nil {
			return nil, err
		}
	}
	if err := c.checkLoops(); err != nil {
		return nil, err
	}
	return root, nil
}

func (c *compiler) idKeyword() string {
	if c.draft == draft4 {
		return "id"
	}
	return "$id"
}

// compile compiles the schema v found at ptr, once per location.
func (c *compiler) compile(v any, ptr string) (*node, error) {
	if n, ok := c.nodes[ptr]; ok {
		return n, nil
	}
	n := &node{ptr: ptr, minLength: -1, maxLength: -1, minItems: -1, maxItems: -1, minContains: -1, maxContains: -1,
		minProperties: -1, maxProperties: -1}
	c.nodes[ptr] = n
	switch s := v.(type) {
	case bool:
		n.always = &s
		return n, nil
	case map[string]any:
		return n, c.object(n, s, ptr)
	}
	return nil, &schemaError{ptr, fmt.Sprintf("a schema must be an object or a boolean, not %s", jsonTypeName(v))}
}

// object compiles the keywords of one schema object, in the draft's terms.
func (c *compiler) object(n *node, s map[string]any, ptr string) error {
	k := kw{c: c, s: s, ptr: ptr}
	if err := c.core(n, k); err != nil {
		return err
	}
	if err := c.applicators(n, k); err != nil {
		return err
	}
	if err := c.arrays(n, k); err != nil {
		return err
	}
	if err := c.objects(n, k); err != nil {
		return err
	}
	return c.values(n, k)
}

// core: what we refuse, ids, anchors, $ref, $defs, the annotations.
func (c *compiler) core(n *node, k kw) error {
	d := c.draft
	refused := []string{}
	if d >= draft2019 {
		refused = append(refused, "$recursiveRef")
	}
	if d >= draft2020 {
		refused = append(refused, "$dynamicRef")
	}
	for _, name := range refused {
		if _, ok := k.s[name]; ok {
			return &schemaError{k.ptr + "/" + name, name + " is not supported by this validator"}
		}
	}

	if id, ok := k.s[c.idKeyword()]; ok {
		str, ok := id.(string)
		if !ok {
			return k.bad(c.idKeyword(), "must be a string")
		}
		if d < draft2019 && strings.HasPrefix(str, "#") {
			c.anchors[str[1:]] = k.ptr
		} else if k.ptr != "" {
			c.inner = append(c.inner, k.ptr)
		}
	}
	anchors := []string{}
	if d >= draft2019 {
		anchors = append(anchors, "$anchor")
	}
	if d >= draft2020 {
		anchors = append(anchors, "$dynamicAnchor") // a plain $ref may name it too
	}
	for _, name := range anchors {
		if a, ok := k.s[name]; ok {
			str, ok := a.(string)
			if !ok {
				return k.bad(name, "must be a string")
			}
			c.anchors[str] = k.ptr
		}
	}
	if err := k.annotations(); err != nil {
		return err
	}
	if ref, ok := k.s["$ref"]; ok {
		str, ok := ref.(string)
		if !ok {
			return k.bad("$ref", "must be a string")
		}
		c.refs = append(c.refs, pendingRef{from: n, ptr: k.ptr + "/$ref", ref: str})
		n.refOnly = d < draft2019
	}

	// Locations that only hold schemas for $refs: compiled so a bad one
	// is an error, as the metaschema made it.
	defs := []string{"definitions"}
	if d >= draft2019 {
		defs = append(defs, "$defs")
	}
	for _, name := range defs {
		if _, err := k.schemaMap(name); err != nil {
			return err
		}
	}
	if d >= draft2019 {
		if x, ok := k.s["contentSchema"]; ok {
			if _, err := c.compile(x, k.ptr+"/contentSchema"); err != nil {
				return err
			}
		}
	}
	return nil
}

// applicators: the subschemas applied to the same instance, and
// unevaluated*.
func (c *compiler) applicators(n *node, k kw) error {
	d := c.draft
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
	if d >= draft7 {
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
	}
	if d >= draft2019 {
		if n.unevaluatedProperties, err = k.schema("unevaluatedProperties"); err != nil {
			return err
		}
		if n.unevaluatedItems, err = k.schema("unevaluatedItems"); err != nil {
			return err
		}
		n.containsEvaluates = d >= draft2020
	}
	return nil
}

// values: type, enum, const, and the number, string and size limits.
func (c *compiler) values(n *node, k kw) error {
	d := c.draft
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
		if d < draft2019 { // the older metaschemas want a non-empty set
			if len(arr) == 0 {
				return k.bad("enum", "must not be empty before draft 2019-09")
			}
			if i, j := duplicate(arr); i >= 0 {
				return k.bad("enum", fmt.Sprintf("lists the same value twice (at %d and %d)", i, j))
			}
		}
		n.enum = arr
	}
	if d >= draft6 {
		if v, ok := s["const"]; ok {
			n.hasConst, n.constV = true, v
		}
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
	if d == draft4 {
		// exclusiveMaximum/Minimum are booleans that make maximum/minimum strict.
		for _, b := range []struct {
			name       string
			limit, exc **jnum
		}{{"exclusiveMaximum", &n.maximum, &n.exclusiveMaximum}, {"exclusiveMinimum", &n.minimum, &n.exclusiveMinimum}} {
			x, ok := s[b.name]
			if !ok {
				continue
			}
			on, ok := x.(bool)
			if !ok {
				return k.bad(b.name, "must be a boolean in draft-04")
			}
			if on {
				*b.exc, *b.limit = *b.limit, nil
			}
		}
	} else {
		if n.exclusiveMaximum, err = k.number("exclusiveMaximum"); err != nil {
			return err
		}
		if n.exclusiveMinimum, err = k.number("exclusiveMinimum"); err != nil {
			return err
		}
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
	d := c.draft
	var err error
	if d >= draft2020 {
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
	if d < draft2020 && n.items == nil && !n.noMoreItems {
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
	if d >= draft6 {
		if n.contains, err = k.schema("contains"); err != nil {
			return err
		}
	}
	if d >= draft2019 {
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
	d := c.draft
	var err error
	if n.required, err = k.strings("required", d == draft4); err != nil {
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
	if d >= draft6 {
		if n.propertyNames, err = k.schema("propertyNames"); err != nil {
			return err
		}
	}
	// dependencies: array values are dependentRequired, schema values
	// dependentSchemas. Every draft honours it, as the library did.
	if x, ok := k.s["dependencies"]; ok {
		m, ok := x.(map[string]any)
		if !ok {
			return k.bad("dependencies", "must be an object")
		}
		for _, prop := range slices.Sorted(maps.Keys(m)) {
			at := k.ptr + "/dependencies/" + EscapeToken(prop)
			if arr, ok := m[prop].([]any); ok {
				req, err := stringList(arr, at, "dependencies", d == draft4)
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
	if d >= draft2019 {
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
				req, err := stringList(arr, at, "dependentRequired", false)
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

// resolve finds the schema a $ref names: a JSON pointer or an anchor in
// this document. Anything else is refused.
func (c *compiler) resolve(r pendingRef) (*node, error) {
	for _, in := range c.inner {
		if strings.HasPrefix(r.ptr, in+"/") {
			return nil, &schemaError{r.ptr, fmt.Sprintf("$ref %q inside the embedded resource at %s ($id) is not supported", r.ref, in)}
		}
	}
	addr, frag, _ := strings.Cut(r.ref, "#")
	if addr != "" {
		local := false
		if c.base != nil {
			if u, err := c.base.Parse(addr); err == nil {
				u.Fragment = ""
				local = u.String() == c.base.String()
			}
		}
		if !local {
			return nil, &schemaError{r.ptr, fmt.Sprintf("$ref %q: references outside this schema are not supported", r.ref)}
		}
	}
	frag, err := url.PathUnescape(frag)
	if err != nil {
		return nil, &schemaError{r.ptr, fmt.Sprintf("$ref %q: bad escape in fragment", r.ref)}
	}
	ptr := frag
	if frag != "" && !strings.HasPrefix(frag, "/") {
		p, ok := c.anchors[frag]
		if !ok {
			return nil, &schemaError{r.ptr, fmt.Sprintf("$ref %q: no anchor %q in this schema", r.ref, frag)}
		}
		ptr = p
	}
	v, ok := lookup(c.doc, ptr)
	if !ok {
		return nil, &schemaError{r.ptr, fmt.Sprintf("$ref %q: nothing at %q in this schema", r.ref, ptr)}
	}
	if in := c.insideResource(ptr); in != "" {
		return nil, &schemaError{r.ptr, fmt.Sprintf("$ref %q points into the embedded resource at %s ($id), which is not supported", r.ref, in)}
	}
	return c.compile(v, canonicalPointer(ptr))
}

func (c *compiler) insideResource(ptr string) string {
	for _, in := range c.inner {
		if ptr == in || strings.HasPrefix(ptr, in+"/") {
			return in
		}
	}
	return ""
}

// checkLoops refuses $refs that come back to the same schema without
// stepping into the instance: validating with them would never end.
func (c *compiler) checkLoops() error {
	const (
		unseen = iota
		active
		done
	)
	state := map[*node]int{}
	var visit func(n *node) error
	visit = func(n *node) error {
		switch state[n] {
		case active:
			return &schemaError{n.ptr, "$ref loops back to this schema without consuming any of the instance"}
		case done:
			return nil
		}
		state[n] = active
		for _, m := range n.inPlace() {
			if err := visit(m); err != nil {
				return err
			}
		}
		state[n] = done
		return nil
	}
	ptrs := make([]string, 0, len(c.nodes))
	for p := range c.nodes {
		ptrs = append(ptrs, p)
	}
	sort.Strings(ptrs)
	for _, p := range ptrs {
		if err := visit(c.nodes[p]); err != nil {
			return err
		}
	}
	return nil
}

// inPlace lists the subschemas that apply to the same instance.
func (n *node) inPlace() []*node {
	out := []*node{}
	if n.ref != nil {
		out = append(out, n.ref)
	}
	if n.refOnly {
		return out
	}
	out = append(out, n.allOf...)
	out = append(out, n.anyOf...)
	out = append(out, n.oneOf...)
	for _, s := range []*node{n.not, n.ifS, n.thenS, n.elseS} {
		if s != nil {
			out = append(out, s)
		}
	}
	for _, d := range n.dependentSchemas {
		out = append(out, d.schema)
	}
	return out
}

// lookup follows a JSON pointer (RFC 6901) into a document.
func lookup(doc any, ptr string) (any, bool) {
	if ptr == "" {
		return doc, true
	}
	if !strings.HasPrefix(ptr, "/") {
		return nil, false
	}
	v := doc
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = UnescapeToken(tok)
		switch x := v.(type) {
		case map[string]any:
			next, ok := x[tok]
			if !ok {
				return nil, false
			}
			v = next
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(x) || tok != strconv.Itoa(i) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// canonicalPointer re-escapes a pointer the way compile names locations,
// so a $ref and the keyword walk share one node for one place.
func canonicalPointer(ptr string) string {
	if ptr == "" {
		return ""
	}
	toks := strings.Split(ptr[1:], "/")
	for i, tok := range toks {
		toks[i] = EscapeToken(UnescapeToken(tok))
	}
	return "/" + strings.Join(toks, "/")
}

// EscapeToken writes a key as one JSON Pointer token (RFC 6901: ~ as ~0,
// / as ~1).
func EscapeToken(s string) string {
	if !strings.ContainsAny(s, "~/") {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// UnescapeToken reads a JSON Pointer token back into its key.
func UnescapeToken(tok string) string {
	if !strings.Contains(tok, "~") {
		return tok
	}
	return strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
}

// regexpProblem is the reason regexp gives, without repeating the pattern.
func regexpProblem(err error) string {
	var re *syntax.Error
	if errors.As(err, &re) {
		return re.Code.String()
	}
	return err.Error()
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
	d := k.c.draft
	for _, a := range []struct {
		name, want string
		since      int
	}{
		{"$schema", "string", draft4}, {"title", "string", draft4}, {"description", "string", draft4}, {"format", "string", draft4},
		{"$comment", "string", draft7}, {"examples", "array", draft6}, {"readOnly", "boolean", draft7}, {"writeOnly", "boolean", draft7},
		{"contentEncoding", "string", draft7}, {"contentMediaType", "string", draft7}, {"deprecated", "boolean", draft2019},
		{"$vocabulary", "object", draft2019},
	} {
		x, ok := k.s[a.name]
		if !ok || d < a.since {
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

func (k kw) strings(name string, nonEmpty bool) ([]string, error) {
	x, ok := k.s[name]
	if !ok {
		return nil, nil
	}
	arr, ok := x.([]any)
	if !ok {
		return nil, k.bad(name, "must be an array of strings")
	}
	return stringList(arr, k.ptr+"/"+name, name, nonEmpty)
}

// stringList checks an array of unique strings.
func stringList(arr []any, ptr, name string, nonEmpty bool) ([]string, error) {
	if nonEmpty && len(arr) == 0 {
		return nil, &schemaError{ptr, name + " must not be empty in draft-04"}
	}
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
