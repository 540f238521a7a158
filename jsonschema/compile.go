package jsonschema

// Compiling a schema document into nodes: the drafts, the node each
// schema location becomes, $ref resolution and the loops it refuses.

import (
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strings"
)

// The drafts tool schemas are written in: 2020-12, the default, and
// draft-07. Any other $schema is refused at compile time.
const (
	draft7    = 7
	draft2020 = 2020
)

// supported is the one line every refused $schema ends with.
const supported = "this validator reads draft 2020-12 (the default without $schema) and draft-07"

var draftOf = map[string]int{
	"json-schema.org/draft-07/schema":      draft7,
	"json-schema.org/draft/2020-12/schema": draft2020,
	"json-schema.org/schema":               draft2020, // "the latest"
}

// otherDrafts names the drafts a $schema may declare that we refuse.
var otherDrafts = map[string]string{
	"json-schema.org/draft-03/schema":      "draft-03",
	"json-schema.org/draft-04/schema":      "draft-04",
	"json-schema.org/draft-06/schema":      "draft-06",
	"json-schema.org/draft/2019-09/schema": "draft 2019-09",
	"json-schema.org/draft/next/schema":    "the unreleased draft-next",
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
	refOnly bool   // draft-07 ignores a $ref's siblings

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
	prefixItems              []*node // array-form items in draft-07
	items                    *node   // the items after prefixItems (additionalItems in draft-07)
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
	// The items contains matches count as evaluated (2020-12 is the only
	// draft with unevaluatedItems).
	unevaluatedProperties, unevaluatedItems *node
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

// compileSchema compiles a decoded schema document.
func compileSchema(doc any) (root *node, err error) {
	c := &compiler{doc: doc, draft: draft2020, nodes: map[string]*node{}, anchors: map[string]string{}}
	if obj, ok := doc.(map[string]any); ok {
		if s, ok := obj["$schema"]; ok {
			str, ok := s.(string)
			if !ok {
				return nil, &schemaError{"/$schema", "$schema must be a string"}
			}
			key := strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(str, "https://"), "http://"), "#")
			d, ok := draftOf[key]
			if !ok {
				if name, known := otherDrafts[key]; known {
					return nil, &schemaError{"/$schema", fmt.Sprintf("$schema %q is %s, which is not supported: %s", str, name, supported)}
				}
				return nil, &schemaError{"/$schema", fmt.Sprintf("$schema %q is not a draft this validator knows: %s", str, supported)}
			}
			c.draft = d
		}
		if id, ok := obj["$id"].(string); ok {
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
	is2020 := c.draft == draft2020
	// $dynamicRef, and 2019-09's $recursiveRef in a schema that does not
	// say it is 2019-09: ignoring either would check less than meant.
	if is2020 {
		for _, name := range []string{"$dynamicRef", "$recursiveRef"} {
			if _, ok := k.s[name]; ok {
				return &schemaError{k.ptr + "/" + name, name + " is not supported by this validator"}
			}
		}
	}

	if id, ok := k.s["$id"]; ok {
		str, ok := id.(string)
		if !ok {
			return k.bad("$id", "must be a string")
		}
		if !is2020 && strings.HasPrefix(str, "#") { // draft-07's anchors
			c.anchors[str[1:]] = k.ptr
		} else if k.ptr != "" {
			c.inner = append(c.inner, k.ptr)
		}
	}
	anchors := []string{}
	if is2020 {
		anchors = append(anchors, "$anchor", "$dynamicAnchor") // a plain $ref may name a dynamic one too
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
		n.refOnly = !is2020
	}

	// Locations that only hold schemas for $refs: compiled so a bad one
	// is an error, as the metaschema made it.
	defs := []string{"definitions"}
	if is2020 {
		defs = append(defs, "$defs")
	}
	for _, name := range defs {
		if _, err := k.schemaMap(name); err != nil {
			return err
		}
	}
	if is2020 {
		if x, ok := k.s["contentSchema"]; ok {
			if _, err := c.compile(x, k.ptr+"/contentSchema"); err != nil {
				return err
			}
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
	v, ok := Lookup(c.doc, ptr)
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
