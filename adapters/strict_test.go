package adapters

import (
	"strings"
	"testing"
)

// OpenAI's strict rules are checked before sending, naming the schema and
// the pointer of the object that breaks them.
func TestCheckStrictSchema(t *testing.T) {
	for _, c := range []struct{ schema, want string }{
		{`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"],"additionalProperties":false}`, ""},
		{`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`, "/: additionalProperties must be false"},
		{`{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}},"required":["a"],"additionalProperties":false}`, "not required: b"},
		{`{"type":"object","properties":{"n":{"type":"object","properties":{"x":{"type":"string"}},"required":["x"],"additionalProperties":true}},"required":["n"],"additionalProperties":false}`,
			"/properties/n: additionalProperties must be false"},
		{`{"type":"object","properties":{"l":{"type":"array","items":{"type":"object","properties":{"x":{"type":"string"}},"additionalProperties":false}}},"required":["l"],"additionalProperties":false}`,
			"/properties/l/items: every property must be required"},
	} {
		err := CheckStrictSchema("tool t", []byte(c.schema))
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.schema, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "tool t: ")):
			t.Errorf("%s: %v, want %q", c.schema, err, c.want)
		}
	}
}
