package jsonschema

// The assertions on an instance by its type: object, array, string and
// number keywords.

import (
	"sort"
	"unicode/utf8"
)

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
