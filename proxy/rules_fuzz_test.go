package proxy

import (
	"strings"
	"testing"
)

// A rules file never panics the loader, and what loads names its errors
// by line; an edit it accepts never panics on a request body either.
func FuzzParseRules(f *testing.F) {
	f.Add(`{"rules": [{"match": {"direction": "response", "tool": "a*"}, "edit": {"arguments": {"a": {"x": 1}}, "text": "t", "stop": "final"}}]}`, `{"a": [1, {"b": 2}]}`)
	f.Add(`{"rules": [{"edit": {"merge": {"a": null, "b": {"c": 1}}, "patch": [{"pointer": "/a/-", "value": 1}, {"pointer": "/x~1y/0", "value": 2}]}}]}`, `{"a": [], "x/y": [0]}`)
	f.Add(`{"rules": [{"fault": "disconnect"}, {"delay": "1ms"}, {"hold": true}, {"replace": {"session": "s"}}]}`, `[]`)
	f.Add("{\n\"rules\": [1, \"x\", {\"match\": []}]\n}", `null`)
	f.Fuzz(func(t *testing.T, doc, body string) {
		rs, err := ParseRules("f.json", []byte(doc))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.json:") {
				t.Fatalf("error without its place: %v", err)
			}
			return
		}
		for _, r := range rs.List {
			if r.Edit == nil {
				continue
			}
			if len(r.Edit.Merge) > 0 || len(r.Edit.Patch) > 0 {
				_, _ = editRequest([]byte(body), r.Edit)
			}
			for _, patch := range r.Edit.Arguments {
				_, _ = mergeArguments([]byte(body), patch)
			}
		}
	})
}
