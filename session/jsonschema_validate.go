package session

// Validation of a decoded instance against a compiled node. One walk does
// both jobs: with report off it only answers valid or not, stopping at
// the first failure (not, if, the branches of anyOf/oneOf); with report on
// it records every leaf violation, as the old library did, with its
// English wording.

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
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

func enumMessage(enum []any) string {
	want := make([]string, len(enum))
	for i, e := range enum {
		switch e.(type) {
		case []any, map[string]any:
			return "'enum' failed"
		}
		want[i] = display(e)
	}
	if len(want) == 1 {
		return "value must be " + want[0]
	}
	return "value must be one of " + strings.Join(want, ", ")
}

func (vd *validator) object(n *node, obj map[string]any, report bool) bool {
	ok := true
	bad := func(msg string) bool {
		ok = vd.fail(report, msg)
		return !report
	}
	if n.minProperties >= 0 && len(obj) < n.minProperties && bad("minProperties: got "+itoa(len(obj))+", want "+itoa(n.minProperties)) {
		return false
	}
	if n.maxProperties >= 0 && len(obj) > n.maxProperties && bad("maxProperties: got "+itoa(len(obj))+", want "+itoa(n.maxProperties)) {
		return false
	}
	if missing := missingOf(obj, n.required); missing != nil {
		msg := "missing properties " + joinQuoted(missing)
		if len(missing) == 1 {
			msg = "missing property " + quote(missing[0])
		}
		if bad(msg) {
			return false
		}
	}
	for _, d := range n.dependentRequired {
		if _, has := obj[d.prop]; !has {
			continue
		}
		if missing := missingOf(obj, d.required); missing != nil && bad("properties "+joinQuoted(missing)+" required, if "+quote(d.prop)+" exists") {
			return false
		}
	}
	var extra []string
	for name, val := range obj {
		matched := false
		if s, has := n.properties[name]; has {
			matched = true
			if !vd.child(s, val, step{key: name, index: -1}, report) {
				if ok = false; !report {
					return false
				}
			}
		}
		for _, pp := range n.patternProperties {
			if pp.re.MatchString(name) {
				matched = true
				if !vd.child(pp.schema, val, step{key: name, index: -1}, report) {
					if ok = false; !report {
						return false
					}
				}
			}
		}
		if matched {
			continue
		}
		if n.noMoreProperties {
			if ok = false; !report {
				return false
			}
			extra = append(extra, name)
		} else if n.additional != nil && !vd.child(n.additional, val, step{key: name, index: -1}, report) {
			if ok = false; !report {
				return false
			}
		}
	}
	if extra != nil {
		sort.Strings(extra)
		vd.fail(report, "additional properties "+joinQuoted(extra)+" not allowed")
	}
	if n.propertyNames != nil {
		for name := range obj {
			if vd.validate(n.propertyNames, name, false) {
				continue
			}
			if ok = false; !report {
				return false
			}
			// The name is not at a pointer of its own: its causes are
			// reported at the object, after the name.
			sub := validator{}
			sub.validate(n.propertyNames, name, true)
			for _, c := range sub.out {
				vd.fail(true, "invalid propertyName "+quote(name)+": "+c.Message)
			}
		}
	}
	for _, d := range n.dependentSchemas {
		if _, has := obj[d.prop]; has && !vd.validate(d.schema, obj, report) {
			if ok = false; !report {
				return false
			}
		}
	}
	return ok
}

func missingOf(obj map[string]any, required []string) []string {
	var missing []string
	for _, name := range required {
		if _, ok := obj[name]; !ok {
			missing = append(missing, name)
		}
	}
	return missing
}

func (vd *validator) array(n *node, arr []any, report bool) bool {
	ok := true
	bad := func(msg string) bool {
		ok = vd.fail(report, msg)
		return !report
	}
	if n.minItems >= 0 && len(arr) < n.minItems && bad("minItems: got "+itoa(len(arr))+", want "+itoa(n.minItems)) {
		return false
	}
	if n.maxItems >= 0 && len(arr) > n.maxItems && bad("maxItems: got "+itoa(len(arr))+", want "+itoa(n.maxItems)) {
		return false
	}
	if n.uniqueItems && len(arr) > 1 {
		if i, j := duplicate(arr); i >= 0 && bad("items at "+itoa(i)+" and "+itoa(j)+" are equal") {
			return false
		}
	}
	for i, item := range arr {
		s := n.items
		if i < len(n.prefixItems) {
			s = n.prefixItems[i]
		}
		if s != nil && !vd.child(s, item, step{index: i}, report) {
			if ok = false; !report {
				return false
			}
		}
	}
	if n.noMoreItems && len(arr) > len(n.prefixItems) && bad("last "+itoa(len(arr)-len(n.prefixItems))+" additionalItem(s) not allowed") {
		return false
	}
	if n.contains != nil {
		var matched []int
		for i, item := range arr {
			if vd.child(n.contains, item, step{index: i}, false) {
				matched = append(matched, i)
			}
		}
		min := 1
		if n.minContains >= 0 {
			min = n.minContains
		}
		if len(matched) < min {
			if ok = false; !report {
				return false
			}
			// As the old library: the items that do not match say why.
			before := len(vd.out)
			for i, item := range arr {
				if len(matched) == 0 || !containsInt(matched, i) {
					vd.child(n.contains, item, step{index: i}, true)
				}
			}
			if len(vd.out) == before {
				if n.minContains >= 0 {
					vd.fail(true, containsMessage("min", n.minContains, matched))
				} else {
					vd.fail(true, "no items match contains schema")
				}
			}
		}
		if n.maxContains >= 0 && len(matched) > n.maxContains && bad(containsMessage("max", n.maxContains, matched)) {
			return false
		}
	}
	return ok
}

func containsInt(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func containsMessage(which string, want int, matched []int) string {
	if len(matched) == 0 {
		return fmt.Sprintf("%s %s items required to match contains schema, but none matched", which, itoa(want))
	}
	at := make([]string, len(matched))
	for i, m := range matched {
		at[i] = itoa(m)
	}
	return fmt.Sprintf("%s %s items required to match contains schema, but matched %s items at %s", which, itoa(want), itoa(len(matched)), strings.Join(at, " "))
}

func (vd *validator) string(n *node, s string, report bool) bool {
	ok := true
	if n.minLength >= 0 || n.maxLength >= 0 {
		l := utf8.RuneCountInString(s)
		if n.minLength >= 0 && l < n.minLength {
			if ok = vd.fail(report, "minLength: got "+itoa(l)+", want "+itoa(n.minLength)); !report {
				return false
			}
		}
		if n.maxLength >= 0 && l > n.maxLength {
			if ok = vd.fail(report, "maxLength: got "+itoa(l)+", want "+itoa(n.maxLength)); !report {
				return false
			}
		}
	}
	if n.pattern != nil && !n.pattern.MatchString(s) {
		ok = vd.fail(report, quote(s)+" does not match pattern "+quote(n.pattern.String()))
	}
	return ok
}

func (vd *validator) number(n *node, v any, report bool) bool {
	if n.minimum == nil && n.maximum == nil && n.exclusiveMinimum == nil && n.exclusiveMaximum == nil && n.multipleOf == nil {
		return true
	}
	x, _ := numberOf(v)
	ok := true
	check := func(failed bool, name string, limit *jnum) bool {
		if failed {
			ok = vd.fail(report, name+": got "+x.display()+", want "+limit.display())
		}
		return failed && !report
	}
	if n.minimum != nil && check(x.cmp(*n.minimum) < 0, "minimum", n.minimum) {
		return false
	}
	if n.maximum != nil && check(x.cmp(*n.maximum) > 0, "maximum", n.maximum) {
		return false
	}
	if n.exclusiveMinimum != nil && check(x.cmp(*n.exclusiveMinimum) <= 0, "exclusiveMinimum", n.exclusiveMinimum) {
		return false
	}
	if n.exclusiveMaximum != nil && check(x.cmp(*n.exclusiveMaximum) >= 0, "exclusiveMaximum", n.exclusiveMaximum) {
		return false
	}
	if n.multipleOf != nil && check(!x.multipleOf(*n.multipleOf), "multipleOf", n.multipleOf) {
		return false
	}
	return ok
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
		if n.contains != nil && n.containsEvaluates {
			for i, item := range arr {
				if !seen[i] && vd.validate(n.contains, item, false) {
					seen[i] = true
				}
			}
		}
	}
	vd.inPlaceApplied(n, arr, func(s *node) { vd.evaluatedItems(s, arr, seen, false) })
}
