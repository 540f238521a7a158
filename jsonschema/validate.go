package jsonschema

// Validation of a decoded instance against a compiled node. One walk does
// both jobs: with report off it only answers valid or not, stopping at
// the first failure (not, if, the branches of anyOf/oneOf); with report on
// it records every leaf violation, as the old library did, with its
// English wording.

import (
	"fmt"
	"strconv"
	"strings"
)

// step is one token of the instance's location, kept unformatted until a
// violation needs its pointer.
type step struct {
	key   string
	index int // -1 for an object key
}

type validator struct {
	path []step
	out  []Violation
}

func (vd *validator) pointer() string {
	if len(vd.path) == 0 {
		return ""
	}
	var b strings.Builder
	for _, s := range vd.path {
		b.WriteByte('/')
		if s.index >= 0 {
			b.WriteString(strconv.Itoa(s.index))
		} else {
			b.WriteString(EscapeToken(s.key))
		}
	}
	return b.String()
}

func (vd *validator) fail(report bool, msg string) bool {
	if report {
		vd.out = append(vd.out, Violation{Pointer: vd.pointer(), Message: msg})
	}
	return false
}

// child validates a member or item of the current instance.
func (vd *validator) child(n *node, v any, s step, report bool) bool {
	vd.path = append(vd.path, s)
	ok := vd.validate(n, v, report)
	vd.path = vd.path[:len(vd.path)-1]
	return ok
}

// validate checks v against n; with report off it stops at the first
// failure and records nothing.
func (vd *validator) validate(n *node, v any, report bool) bool {
	if n.always != nil {
		if *n.always {
			return true
		}
		return vd.fail(report, "false schema")
	}
	t := typeBit(v)
	if t == 0 {
		return vd.fail(report, fmt.Sprintf("invalid jsonType %T", v))
	}
	if n.refOnly {
		return vd.validate(n.ref, v, report)
	}
	// As the old library did, a wrong type, const or enum is the only
	// thing said about the value.
	if n.types != 0 && !typeMatches(n.types, t, v) {
		return vd.fail(report, "got "+typeNames[t]+", want "+strings.Join(n.typeNames, " or "))
	}
	if n.hasConst && !equal(v, n.constV) {
		switch n.constV.(type) {
		case []any, map[string]any:
			return vd.fail(report, "'const' failed")
		}
		return vd.fail(report, "value must be "+display(n.constV))
	}
	if n.enum != nil && !inEnum(v, n.enum) {
		return vd.fail(report, enumMessage(n.enum))
	}
	ok := true
	if n.ref != nil {
		if ok = vd.validate(n.ref, v, report); !ok && !report {
			return false
		}
	}
	switch v := v.(type) {
	case map[string]any:
		ok = vd.object(n, v, report) && ok
	case []any:
		ok = vd.array(n, v, report) && ok
	case string:
		ok = vd.string(n, v, report) && ok
	case bool, nil:
	default:
		ok = vd.number(n, v, report) && ok
	}
	if !ok && !report {
		return false
	}
	ok = vd.applicators(n, v, report) && ok
	if n.unevaluatedProperties != nil || n.unevaluatedItems != nil {
		if !ok && !report {
			return false
		}
		ok = vd.unevaluated(n, v, report) && ok
	}
	return ok
}

func typeMatches(types, t uint8, v any) bool {
	if types&t != 0 {
		return true
	}
	if t == tNumber && types&tInteger != 0 {
		n, _ := numberOf(v)
		return n.isInteger()
	}
	return false
}

func inEnum(v any, enum []any) bool {
	for _, e := range enum {
		if equal(v, e) {
			return true
		}
	}
	return false
}

// applicators runs not, allOf, anyOf, oneOf and if/then/else.
func (vd *validator) applicators(n *node, v any, report bool) bool {
	ok := true
	if n.not != nil && vd.validate(n.not, v, false) {
		if ok = vd.fail(report, "'not' failed"); !report {
			return false
		}
	}
	for _, s := range n.allOf {
		if !vd.validate(s, v, report) {
			if ok = false; !report {
				return false
			}
		}
	}
	if n.anyOf != nil {
		matched := false
		for _, s := range n.anyOf {
			if vd.validate(s, v, false) {
				matched = true
				break
			}
		}
		if !matched {
			if ok = false; !report {
				return false
			}
			vd.branches(n.anyOf, v)
		}
	}
	if n.oneOf != nil {
		first := -1
		for i, s := range n.oneOf {
			if !vd.validate(s, v, false) {
				continue
			}
			if first < 0 {
				first = i
				continue
			}
			if ok = vd.fail(report, fmt.Sprintf("'oneOf' failed, subschemas %d, %d matched", first, i)); !report {
				return false
			}
			break
		}
		if first < 0 {
			if ok = false; !report {
				return false
			}
			vd.branches(n.oneOf, v)
		}
	}
	if n.ifS != nil {
		next := n.elseS
		if vd.validate(n.ifS, v, false) {
			next = n.thenS
		}
		if next != nil && !vd.validate(next, v, report) {
			ok = false
		}
	}
	return ok
}

// branches reports why no branch of an anyOf or oneOf matched. Branches
// that refuse the value's type outright say nothing useful when another
// branch takes that type ({"anyOf": [{"type": "object", …}, {"type":
// "null"}]} given a bad object): only the branches that accept the type
// report their causes. When every branch refuses the type, all report.
func (vd *validator) branches(bs []*node, v any) {
	t := typeBit(v)
	fitting := bs[:0:0]
	for _, b := range bs {
		if !refusesType(b, t, v) {
			fitting = append(fitting, b)
		}
	}
	if len(fitting) == 0 {
		fitting = bs
	}
	for _, b := range fitting {
		vd.validate(b, v, true)
	}
}

// refusesType reports a schema (or the $ref it starts with) whose type
// keyword rules the value out, or a false schema.
func refusesType(n *node, t uint8, v any) bool {
	for hops := 0; n != nil && hops < 64; hops++ {
		if n.always != nil {
			return !*n.always
		}
		if n.types != 0 && !typeMatches(n.types, t, v) {
			return true
		}
		n = n.ref
	}
	return false
}

// unevaluated applies unevaluatedProperties and unevaluatedItems to the
// members that nothing else evaluated.
func (vd *validator) unevaluated(n *node, v any, report bool) bool {
	ok := true
	switch x := v.(type) {
	case map[string]any:
		if n.unevaluatedProperties == nil {
			return true
		}
		seen := make(map[string]bool, len(x))
		vd.evaluatedProperties(n, x, seen, true)
		for name, val := range x {
			if !seen[name] && !vd.child(n.unevaluatedProperties, val, step{key: name, index: -1}, report) {
				if ok = false; !report {
					return false
				}
			}
		}
	case []any:
		if n.unevaluatedItems == nil {
			return true
		}
		seen := make([]bool, len(x))
		vd.evaluatedItems(n, x, seen, true)
		for i, item := range x {
			if !seen[i] && !vd.child(n.unevaluatedItems, item, step{index: i}, report) {
				if ok = false; !report {
					return false
				}
			}
		}
	}
	return ok
}

// inPlaceApplied calls f for each subschema applied in place whose
// annotations count: $ref, allOf, the passing anyOf/oneOf branches, if
// with then or else, the dependentSchemas that apply. A failing subschema
// fails n itself or contributes nothing.
func (vd *validator) inPlaceApplied(n *node, v any, f func(*node)) {
	if n.ref != nil {
		f(n.ref)
	}
	if n.refOnly {
		return
	}
	for _, s := range n.allOf {
		f(s)
	}
	for _, bs := range [][]*node{n.anyOf, n.oneOf} {
		for _, s := range bs {
			if vd.validate(s, v, false) {
				f(s)
			}
		}
	}
	if n.ifS != nil {
		if vd.validate(n.ifS, v, false) {
			f(n.ifS)
			if n.thenS != nil {
				f(n.thenS)
			}
		} else if n.elseS != nil {
			f(n.elseS)
		}
	}
	if obj, ok := v.(map[string]any); ok {
		for _, d := range n.dependentSchemas {
			if _, has := obj[d.prop]; has {
				f(d.schema)
			}
		}
	}
}

// evaluatedProperties marks the members that n (and what it applies in
// place) evaluates; self leaves out n's own unevaluatedProperties.
func (vd *validator) evaluatedProperties(n *node, obj map[string]any, seen map[string]bool, self bool) {
	if n.always != nil {
		return
	}
	all := !n.refOnly && (n.additional != nil || n.noMoreProperties || !self && n.unevaluatedProperties != nil)
	if !n.refOnly {
		for name := range obj {
			if all {
				seen[name] = true
				continue
			}
			if _, ok := n.properties[name]; ok {
				seen[name] = true
				continue
			}
			for _, pp := range n.patternProperties {
				if pp.re.MatchString(name) {
					seen[name] = true
					break
				}
			}
		}
	}
	vd.inPlaceApplied(n, obj, func(s *node) { vd.evaluatedProperties(s, obj, seen, false) })
}

// evaluatedItems marks the items that n (and what it applies in place)
// evaluates; self leaves out n's own unevaluatedItems.
func (vd *validator) evaluatedItems(n *node, arr []any, seen []bool, self bool) {
	if n.always != nil {
		return
	}
	if !n.refOnly {
		upto := min(len(n.prefixItems), len(arr))
		if n.items != nil || n.noMoreItems || !self && n.unevaluatedItems != nil {
			upto = len(arr)
		}
		for i := range upto {
			seen[i] = true
		}
		if n.contains != nil {
			for i, item := range arr {
				if !seen[i] && vd.validate(n.contains, item, false) {
					seen[i] = true
				}
			}
		}
	}
	vd.inPlaceApplied(n, arr, func(s *node) { vd.evaluatedItems(s, arr, seen, false) })
}
