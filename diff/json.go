// Package diff says what differs between two recorded sessions — the
// second half of the prompt-debugging loop (fork, change one thing,
// re-send, diff). Differences are semantic: JSON key order and whitespace
// do not count, a string holding JSON is compared as the JSON it holds,
// and array items are matched by their id where they have one.
package diff

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/modelwire/modelwire/jsonschema"
)

// Op says how a value differs.
const (
	OpChanged = "changed"
	OpAdded   = "added"   // only in b
	OpRemoved = "removed" // only in a
)

// Change is one difference between a value in a and one in b.
type Change struct {
	// Kind is what the difference is about: session, manifest, request,
	// tool_call, tool_result, output, validation, usage, latency.
	Kind   string `json:"kind"`
	Turn   int    `json:"turn,omitempty"`
	CallID string `json:"call_id,omitempty"`
	// Path names the value: a slash-separated path, array items as their
	// index or, matched by id, as [key=value].
	Path string `json:"path"`
	Op   string `json:"op"`
	// A and B are the values (null where one side has none).
	A any `json:"a"`
	B any `json:"b"`
}

// Group is the heading a person reads the change under: its turn, the
// final object, validation, or the session.
func (c Change) Group() string {
	switch {
	case c.Turn > 0:
		return fmt.Sprintf("turn %d", c.Turn)
	case c.Kind == KindOutput:
		return "final object"
	case c.Kind == KindValidation:
		return "validation"
	case c.Kind == KindManifest:
		return "manifest"
	}
	return "session"
}

// LocalPath is Path within its group (without turns/N/, output/ or
// validation/).
func (c Change) LocalPath() string {
	path := c.Path
	if c.Turn > 0 {
		path = strings.TrimPrefix(path, fmt.Sprintf("turns/%d/", c.Turn))
	}
	return strings.TrimPrefix(strings.TrimPrefix(path, "output/"), "validation/")
}

// Values appends the differences between a and b (decoded JSON) under
// path to out.
func Values(path string, a, b any, out []Change) []Change {
	a, b = unwrap(a), unwrap(b)
	switch x := a.(type) {
	case map[string]any:
		if y, ok := b.(map[string]any); ok {
			for _, k := range jsonschema.UnionKeys(x, y) {
				va, inA := x[k]
				vb, inB := y[k]
				p := join(path, jsonschema.EscapeToken(k))
				switch {
				case !inA:
					out = append(out, Change{Path: p, Op: OpAdded, B: vb})
				case !inB:
					out = append(out, Change{Path: p, Op: OpRemoved, A: va})
				default:
					out = Values(p, va, vb, out)
				}
			}
			return out
		}
	case []any:
		if y, ok := b.([]any); ok {
			if key := idKey(x, y); key != "" {
				return byID(path, key, x, y, out)
			}
			if scalars(x) && scalars(y) && (len(x) != len(y) || !Equal(x, y)) {
				return byValue(path, x, y, out)
			}
			for i := range max(len(x), len(y)) {
				p := join(path, strconv.Itoa(i))
				switch {
				case i >= len(x):
					out = append(out, Change{Path: p, Op: OpAdded, B: y[i]})
				case i >= len(y):
					out = append(out, Change{Path: p, Op: OpRemoved, A: x[i]})
				default:
					out = Values(p, x[i], y[i], out)
				}
			}
			return out
		}
	}
	if !Equal(a, b) {
		out = append(out, Change{Path: path, Op: OpChanged, A: a, B: b})
	}
	return out
}

// unwrap reads a string holding a JSON object or array as that value:
// tool results and Chat's argument strings are JSON inside JSON, and
// their key order must not count either.
func unwrap(v any) any {
	s, ok := v.(string)
	if !ok {
		return v
	}
	t := strings.TrimSpace(s)
	if len(t) < 2 || (t[0] != '{' && t[0] != '[') {
		return v
	}
	if p, err := jsonschema.ParseJSON([]byte(t)); err == nil {
		return p
	}
	return v
}

// idKeys are the members that identify an array item, in order of
// preference: provider item ids, call ids, then names (tools).
var idKeys = []string{"id", "call_id", "tool_call_id", "tool_use_id", "name"}

// idKey is the member every item of both arrays has as a string, unique
// within each array; "" when there is none, and the arrays are matched by
// position.
func idKey(a, b []any) string {
	if len(a) == 0 || len(b) == 0 {
		return ""
	}
next:
	for _, k := range idKeys {
		for _, arr := range [][]any{a, b} {
			seen := map[string]bool{}
			for _, it := range arr {
				m, ok := it.(map[string]any)
				if !ok {
					return ""
				}
				s, ok := m[k].(string)
				if !ok || seen[s] {
					continue next
				}
				seen[s] = true
			}
		}
		return k
	}
	return ""
}

func byID(path, key string, a, b []any, out []Change) []Change {
	find := func(arr []any, id string) (any, bool) {
		for _, it := range arr {
			if it.(map[string]any)[key] == id {
				return it, true
			}
		}
		return nil, false
	}
	seg := func(id string) string { return join(path, "["+key+"="+id+"]") }
	for _, it := range a {
		id := it.(map[string]any)[key].(string)
		if other, ok := find(b, id); ok {
			out = Values(seg(id), it, other, out)
		} else {
			out = append(out, Change{Path: seg(id), Op: OpRemoved, A: it})
		}
	}
	for _, it := range b {
		id := it.(map[string]any)[key].(string)
		if _, ok := find(a, id); !ok {
			out = append(out, Change{Path: seg(id), Op: OpAdded, B: it})
		}
	}
	return out
}

// scalars reports whether every item of arr is a string, number, boolean
// or null (a list of issues, of evidence ids).
func scalars(arr []any) bool {
	for _, it := range arr {
		switch unwrap(it).(type) {
		case map[string]any, []any:
			return false
		}
	}
	return true
}

// byValue compares lists of scalars by their values: the values only one
// side has, each once (removing the first of three items is one removal,
// not three changes). Lists with the same values in another order are
// one change of the whole list.
func byValue(path string, a, b []any, out []Change) []Change {
	rest := append([]any(nil), b...)
	var removed []any
	for _, v := range a {
		i := slices.IndexFunc(rest, func(w any) bool { return Equal(v, w) })
		if i < 0 {
			removed = append(removed, v)
			continue
		}
		rest = slices.Delete(rest, i, i+1)
	}
	if len(removed) == 0 && len(rest) == 0 {
		return append(out, Change{Path: path, Op: OpChanged, A: a, B: b}) // the order changed
	}
	for _, v := range removed {
		out = append(out, Change{Path: path, Op: OpRemoved, A: v})
	}
	for _, v := range rest {
		out = append(out, Change{Path: path, Op: OpAdded, B: v})
	}
	return out
}

// Equal compares two decoded JSON values semantically: numbers by value,
// strings holding JSON by the JSON they hold.
func Equal(a, b any) bool {
	a, b = unwrap(a), unwrap(b)
	switch x := a.(type) {
	case json.Number:
		y, ok := b.(json.Number)
		if !ok {
			return false
		}
		if x == y {
			return true
		}
		fx, e1 := x.Float64()
		fy, e2 := y.Float64()
		return e1 == nil && e2 == nil && fx == fy
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !Equal(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !Equal(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	return a == b
}

func join(path, seg string) string {
	if path == "" {
		return seg
	}
	return path + "/" + seg
}
