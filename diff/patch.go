package diff

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/jsonschema"
)

// Op is one edit of a JSON document: set the value at Path (segments:
// object keys, array indexes, "-" to append), or remove it.
type Op struct {
	Path   []string `json:"path"`
	Value  any      `json:"value,omitempty"`
	Remove bool     `json:"remove,omitempty"`
}

// SplitPath reads a path as the fork's --set names it: segments
// separated by "/" (tools/0/description), or by "." when the path has no
// "/" (model, tools.0.description).
func SplitPath(p string) []string {
	sep := "/"
	if !strings.Contains(p, "/") {
		sep = "."
	}
	return strings.Split(strings.Trim(p, sep), sep)
}

// Patch is the edits that turn a into b, array items by position (a
// patch must apply to the same request at a later turn, where the history
// has grown at the end): what a person changed in a whole request.
func Patch(a, b any) []Op { return patch(nil, a, b, nil) }

func patch(path []string, a, b any, out []Op) []Op {
	at := func(seg string) []string { return append(slices.Clip(path), seg) }
	switch x := a.(type) {
	case map[string]any:
		if y, ok := b.(map[string]any); ok {
			for _, k := range jsonschema.UnionKeys(x, y) {
				va, inA := x[k]
				vb, inB := y[k]
				switch {
				case !inB:
					out = append(out, Op{Path: at(k), Remove: true})
				case !inA:
					out = append(out, Op{Path: at(k), Value: vb})
				default:
					out = patch(at(k), va, vb, out)
				}
			}
			return out
		}
	case []any:
		if y, ok := b.([]any); ok && len(x) == len(y) {
			for i := range x {
				out = patch(at(strconv.Itoa(i)), x[i], y[i], out)
			}
			return out
		}
	}
	if !Equal(a, b) || fmt.Sprintf("%T", a) != fmt.Sprintf("%T", b) {
		out = append(out, Op{Path: path, Value: b})
	}
	return out
}

// Apply makes the edits on a JSON body and returns the new body. A path
// whose parent is not there is an error naming it.
func Apply(body []byte, ops []Op) ([]byte, error) {
	doc, err := jsonschema.ParseJSON(body)
	if err != nil {
		return nil, fmt.Errorf("the request body is not JSON: %v", err)
	}
	for _, op := range ops {
		if doc, err = apply(doc, op.Path, op); err != nil {
			return nil, fmt.Errorf("%s: %v", strings.Join(op.Path, "/"), err)
		}
	}
	return adapters.MarshalBody(doc)
}

func apply(v any, path []string, op Op) (any, error) {
	if len(path) == 0 {
		return op.Value, nil
	}
	seg, rest := path[0], path[1:]
	switch x := v.(type) {
	case map[string]any:
		child, ok := x[seg]
		if len(rest) == 0 {
			if op.Remove {
				delete(x, seg)
			} else {
				x[seg] = op.Value
			}
			return x, nil
		}
		if !ok {
			return nil, fmt.Errorf("no member %q", seg)
		}
		nv, err := apply(child, rest, op)
		if err != nil {
			return nil, err
		}
		x[seg] = nv
		return x, nil
	case []any:
		if seg == "-" && len(rest) == 0 && !op.Remove {
			return append(x, op.Value), nil
		}
		i, err := strconv.Atoi(seg)
		if err != nil || i < 0 || i > len(x) || (i == len(x) && (len(rest) > 0 || op.Remove)) {
			return nil, fmt.Errorf("no item %s (the array has %d)", seg, len(x))
		}
		if len(rest) == 0 {
			switch {
			case op.Remove:
				return slices.Delete(x, i, i+1), nil
			case i == len(x):
				return append(x, op.Value), nil
			}
			x[i] = op.Value
			return x, nil
		}
		nv, err := apply(x[i], rest, op)
		if err != nil {
			return nil, err
		}
		x[i] = nv
		return x, nil
	case string:
		// A string holding JSON (a tool result, Chat's arguments) is
		// edited as the JSON it holds and written back as a string.
		inner := unwrap(x)
		if _, ok := inner.(string); ok {
			return nil, fmt.Errorf("%q is inside a string, not an object or array", seg)
		}
		nv, err := apply(inner, path, op)
		if err != nil {
			return nil, err
		}
		b, err := json.Marshal(nv)
		if err != nil {
			return nil, err
		}
		return string(b), nil
	}
	return nil, fmt.Errorf("%q is inside a %s, not an object or array", seg, kindOf(v))
}

func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number, float64:
		return "number"
	case string:
		return "string"
	}
	return fmt.Sprintf("%T", v)
}
