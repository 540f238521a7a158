package adapters

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// CheckStrictSchema applies OpenAI's rules for strict schemas (Structured
// Outputs, strict function calling) before a request is sent, so the
// mistake is named here rather than by a 400: every object lists all its
// properties in required and sets additionalProperties to false. where
// names the schema in the error ("tool get_order_line", "output
// refund_assessment").
func CheckStrictSchema(where string, schema json.RawMessage) error {
	var doc any
	if err := json.Unmarshal(schema, &doc); err != nil {
		return fmt.Errorf("%s: strict schema is not JSON: %v", where, err)
	}
	if p := strictProblem(doc, ""); p != "" {
		return fmt.Errorf("%s: strict schema: %s", where, p)
	}
	return nil
}

// strictProblem finds the first rule a (sub)schema breaks, by JSON pointer.
func strictProblem(v any, ptr string) string {
	switch x := v.(type) {
	case []any:
		for i, e := range x {
			if p := strictProblem(e, fmt.Sprintf("%s/%d", ptr, i)); p != "" {
				return p
			}
		}
	case map[string]any:
		props, isObject := x["properties"].(map[string]any)
		if t, _ := x["type"].(string); t == "object" || isObject {
			at := ptr
			if at == "" {
				at = "/"
			}
			if ap, ok := x["additionalProperties"].(bool); !ok || ap {
				return fmt.Sprintf("%s: additionalProperties must be false", at)
			}
			var required []string
			if rs, ok := x["required"].([]any); ok {
				for _, r := range rs {
					if s, ok := r.(string); ok {
						required = append(required, s)
					}
				}
			}
			var missing []string
			for name := range props {
				if !slices.Contains(required, name) {
					missing = append(missing, name)
				}
			}
			if len(missing) > 0 {
				sort.Strings(missing)
				return fmt.Sprintf("%s: every property must be required (use a null type for optional ones); not required: %s", at, strings.Join(missing, ", "))
			}
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if p := strictProblem(x[k], ptr+"/"+strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")); p != "" {
				return p
			}
		}
	}
	return ""
}
