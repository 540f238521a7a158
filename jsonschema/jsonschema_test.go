package jsonschema

// The validator is proved against the library it replaced
// (santhosh-tekuri/jsonschema/v6, now a test dependency only): every
// schema in the repository and a hand-written set covering each keyword,
// with valid and invalid instances, must get the same verdict and the
// same violating pointers from both. Deliberate differences:
//   - anyOf/oneOf with no match: branches that refuse the value's type
//     are left out when another branch takes it, so our pointers are a
//     subset of v6's (never empty);
//   - propertyNames: v6 puts the causes at the document root whatever the
//     object's depth; we put them at the object;
//   - format: v6 asserts it for draft-07 schemas; we never do;
//   - a $ref loop that consumes nothing: v6 fails every instance at
//     validation, we refuse the schema at compile time;
//   - a $schema naming draft-04, -06 or 2019-09: v6 reads it, we refuse
//     the schema at compile time (2020-12 and draft-07 only).

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/modelwire/modelwire/internal/e2e"
	v6 "github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// oracle is v6 as schema.go used it before.
type oracle struct{ s *v6.Schema }

var oracleCount int

func compileOracle(raw []byte) (*oracle, error) {
	doc, err := v6.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	c := v6.NewCompiler()
	c.DefaultDraft(v6.Draft2020)
	oracleCount++
	url := fmt.Sprintf("mem://oracle/%d.json", oracleCount)
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, err
	}
	return &oracle{s}, nil
}

var oraclePrinter = message.NewPrinter(language.English)

func (o *oracle) violations(v any) []Violation {
	err := o.s.Validate(v)
	if err == nil {
		return nil
	}
	ve, ok := err.(*v6.ValidationError)
	if !ok {
		return []Violation{{Message: err.Error()}}
	}
	var out []Violation
	var walk func(e *v6.ValidationError)
	walk = func(e *v6.ValidationError) {
		if len(e.Causes) == 0 {
			out = append(out, Violation{Pointer: pointerOf(e.InstanceLocation), Message: e.ErrorKind.LocalizedString(oraclePrinter)})
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Pointer < out[j].Pointer })
	return out
}

func pointerOf(path []string) string {
	var b strings.Builder
	for _, p := range path {
		b.WriteByte('/')
		b.WriteString(EscapeToken(p))
	}
	return b.String()
}

func pointers(vs []Violation) []string {
	var out []string
	for _, v := range vs {
		if !slices.Contains(out, v.Pointer) {
			out = append(out, v.Pointer)
		}
	}
	sort.Strings(out)
	return out
}

// agree compares ours with v6 on one instance, within the documented
// differences; it returns what differs.
func agree(schema []byte, ours *Schema, theirs *oracle, instance []byte) string {
	v, err := ParseJSON(instance)
	if err != nil {
		return ""
	}
	got, want := ours.ValidateValue(v), theirs.violations(v)
	if (got == nil) != (want == nil) {
		return fmt.Sprintf("verdicts differ on %s: ours %v, v6 %v", instance, got, want)
	}
	if got == nil || bytes.Contains(schema, []byte(`"propertyNames"`)) {
		return ""
	}
	gp, wp := pointers(got), pointers(want)
	if bytes.Contains(schema, []byte(`"anyOf"`)) || bytes.Contains(schema, []byte(`"oneOf"`)) {
		for _, p := range gp {
			if !slices.Contains(wp, p) {
				return fmt.Sprintf("pointer %q on %s is not among v6's %q: ours %v, v6 %v", p, instance, wp, got, want)
			}
		}
		return ""
	}
	if !slices.Equal(gp, wp) {
		return fmt.Sprintf("pointers differ on %s: ours %q, v6 %q\nours %v\nv6   %v", instance, gp, wp, got, want)
	}
	return ""
}

type schemaCase struct {
	schema    string
	valid     []string
	invalid   []string
	sameWords bool // the messages must read exactly as v6's
}

// schemaCases covers every keyword the validator supports, valid and not.
var schemaCases = []schemaCase{
	{`{"type":"integer"}`, []string{`1`, `1.0`, `-0`, `1e2`, `10e-1`, `0.1e1`, `12345678901234567890`}, []string{`1.5`, `"1"`, `null`, `0.1e-1`, `1.0000000000000000001`}, true},
	{`{"type":["string","null"]}`, []string{`"a"`, `null`}, []string{`1`, `{}`, `[]`, `true`}, true},
	{`{"type":"number"}`, []string{`1`, `-1.5e-3`}, []string{`"1"`, `true`}, true},
	{`{"type":"boolean"}`, []string{`true`}, []string{`0`, `"true"`}, true},
	{`{"type":"array"}`, []string{`[]`}, []string{`{}`}, true},
	{`{"type":"object"}`, []string{`{}`}, []string{`[]`}, true},
	{`{"enum":["a",1,null,{"x":[1]}]}`, []string{`"a"`, `1.0`, `null`, `{"x":[1.0]}`}, []string{`"b"`, `2`, `{"x":[2]}`, `[1]`}, true},
	{`{"enum":["needs_review","unable_to_assess"]}`, []string{`"needs_review"`}, []string{`"x"`, `1`}, true},
	{`{"enum":[7]}`, []string{`7`}, []string{`8`}, true},
	{`{"const":{"a":1,"b":[1,2]}}`, []string{`{"b":[1,2.0],"a":1}`}, []string{`{"a":1}`, `{"a":1,"b":[2,1]}`}, true},
	{`{"const":1}`, []string{`1`, `1.0`, `1e0`}, []string{`"1"`, `true`, `1.1`}, true},
	{`{"const":false}`, []string{`false`}, []string{`0`, `null`}, true},
	{`{"const":null}`, []string{`null`}, []string{`0`, `false`}, true},
	{`{"multipleOf":0.1}`, []string{`0.3`, `1`, `0`, `-2.5`}, []string{`0.35`, `1e-5`}, false},
	{`{"multipleOf":3}`, []string{`9`, `-3`, `0`, `3e3`}, []string{`10`, `1.5`, `9.000000000000000001`}, true},
	{`{"multipleOf":1.5}`, []string{`4.5`, `3`}, []string{`4`}, true},
	{`{"multipleOf":1e-400}`, []string{`0`, `1`}, []string{`1e-401`}, false},
	{`{"maximum":3}`, []string{`3`, `-10`, `"x"`}, []string{`3.0000001`, `4`}, true},
	{`{"maximum":1000}`, []string{`1000`}, []string{`1500`, `12345.5`}, true},
	{`{"exclusiveMaximum":3}`, []string{`2.999`}, []string{`3`, `3.0`}, true},
	{`{"minimum":1.1}`, []string{`1.1`, `2`}, []string{`1.09`, `-1`}, true},
	{`{"exclusiveMinimum":0}`, []string{`0.0001`}, []string{`0`, `-0`, `-1`}, true},
	{`{"minimum":9007199254740993}`, []string{`9007199254740993`, `9007199254740994`}, []string{`9007199254740992`}, false},
	{`{"maximum":1e400}`, []string{`1e399`, `1`}, []string{`1e401`}, false},
	{`{"maxLength":2,"minLength":1}`, []string{`"ab"`, `"退款"`, `"😀😀"`, `3`}, []string{`""`, `"abc"`, `"退款单"`}, true},
	{`{"pattern":"^[a-z]+$"}`, []string{`"abc"`, `1`}, []string{`"aBc"`, `""`}, true},
	{`{"pattern":"b"}`, []string{`"abc"`}, []string{`"xyz"`}, true},
	{`{"maxItems":2,"minItems":1}`, []string{`[1]`, `[1,2]`}, []string{`[]`, `[1,2,3]`}, true},
	{`{"uniqueItems":true}`, []string{`[1,2]`, `[{"a":1},{"a":2}]`, `[[1],[true]]`, `[0,false]`, `[1,"1"]`}, []string{`[1,1.0]`, `[{"a":1,"b":2},{"b":2,"a":1}]`, `[null,null]`, `["a","b","a"]`}, true},
	{`{"uniqueItems":true}`, []string{`[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22]`}, []string{`[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,5.0]`, `[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,{"a":[1]},{"a":[1.0]}]`}, true},
	{`{"contains":{"type":"integer"}}`, []string{`[1]`, `["a",2]`, `{}`}, []string{`[]`, `["a","b"]`}, true},
	{`{"contains":{"const":1},"minContains":2,"maxContains":3}`, []string{`[1,1]`, `[1,2,1,1]`}, []string{`[1]`, `[1,1,1,1]`, `[]`}, true},
	{`{"contains":{"const":1},"minContains":0}`, []string{`[]`, `[2]`}, nil, true},
	{`{"maxProperties":1,"minProperties":1}`, []string{`{"a":1}`, `[]`}, []string{`{}`, `{"a":1,"b":2}`}, true},
	{`{"required":["a","b"]}`, []string{`{"a":1,"b":2}`, `[]`}, []string{`{}`, `{"a":1}`}, true},
	{`{"dependentRequired":{"a":["b","c"]}}`, []string{`{"a":1,"b":1,"c":1}`, `{"b":1}`}, []string{`{"a":1}`, `{"a":1,"b":1}`}, true},
	{`{"properties":{"a":{"type":"string"},"b":{"properties":{"c":{"type":"integer"}}}}}`, []string{`{"a":"x","b":{"c":1}}`, `{}`}, []string{`{"a":1}`, `{"b":{"c":"x"}}`, `{"a":1,"b":{"c":1.5}}`}, true},
	{`{"properties":{"a/b":{"type":"string"},"c~d":{"type":"string"}}}`, nil, []string{`{"a/b":1}`, `{"c~d":1}`}, true},
	{`{"patternProperties":{"^x-":{"type":"integer"},"y$":{"minimum":0}}}`, []string{`{"x-a":1,"ay":2,"b":"c"}`}, []string{`{"x-a":"1"}`, `{"x-y":-1}`}, true},
	{`{"properties":{"a":true},"additionalProperties":false}`, []string{`{"a":1}`, `{}`}, []string{`{"b":1}`, `{"a":1,"c":[]}`}, true},
	{`{"properties":{"a":true},"patternProperties":{"^p":true},"additionalProperties":{"type":"boolean"}}`, []string{`{"a":1,"pq":2,"z":true}`}, []string{`{"z":1}`}, true},
	{`{"propertyNames":{"maxLength":3}}`, []string{`{"abc":1}`, `{}`}, []string{`{"abcd":1}`}, false},
	{`{"properties":{"o":{"propertyNames":{"pattern":"^[a-z]+$"}}}}`, []string{`{"o":{"ab":1}}`}, []string{`{"o":{"a1":1}}`}, false},
	{`{"propertyNames":false}`, []string{`{}`}, []string{`{"a":1}`}, false},
	{`{"items":{"type":"integer"}}`, []string{`[1,2]`, `[]`}, []string{`[1,"a",2.5]`}, true},
	{`{"prefixItems":[{"type":"string"},{"type":"integer"}],"items":false}`, []string{`["a",1]`, `["a"]`}, []string{`[1]`, `["a",1,2]`}, true},
	{`{"prefixItems":[{"type":"string"}],"items":{"type":"boolean"}}`, []string{`["a",true,false]`}, []string{`["a",1]`}, true},
	{`{"allOf":[{"minimum":1},{"maximum":3}]}`, []string{`2`}, []string{`0`, `4`}, true},
	{`{"anyOf":[{"type":"string"},{"type":"integer","minimum":5}]}`, []string{`"a"`, `6`}, []string{`1`, `1.5`, `null`}, false},
	{`{"anyOf":[{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]},{"type":"null"}]}`, []string{`null`, `{"a":1}`}, []string{`{"a":"x"}`, `{}`, `3`}, false},
	{`{"oneOf":[{"type":"integer"},{"minimum":2}]}`, []string{`1`, `2.5`}, []string{`3`, `1.5`}, false},
	{`{"oneOf":[{"properties":{"kind":{"const":"a"},"x":{"type":"string"}},"required":["kind"]},{"properties":{"kind":{"const":"b"},"y":{"type":"integer"}},"required":["kind","y"]}]}`, []string{`{"kind":"a","x":"1"}`, `{"kind":"b","y":1}`}, []string{`{"kind":"c"}`, `{"kind":"b"}`, `{"kind":"a","x":1}`}, false},
	{`{"not":{"type":"string"}}`, []string{`1`}, []string{`"a"`}, true},
	{`{"if":{"properties":{"a":{"const":1}}},"then":{"required":["b"]},"else":{"required":["c"]}}`, []string{`{"a":1,"b":1}`, `{"b":1}`, `{"a":2,"c":1}`}, []string{`{"a":1}`, `{"a":2}`, `{"c":1}`}, true},
	{`{"then":{"required":["b"]}}`, []string{`{}`}, nil, true},
	{`{"dependentSchemas":{"a":{"required":["b"]}}}`, []string{`{"b":1}`, `{"a":1,"b":1}`}, []string{`{"a":1}`}, true},
	{`true`, []string{`1`, `null`}, nil, true},
	{`false`, nil, []string{`1`, `null`, `{}`}, true},
	{`{"properties":{"a":false}}`, []string{`{}`}, []string{`{"a":null}`}, true},
	{`{"$defs":{"pos":{"type":"integer","minimum":1}},"properties":{"n":{"$ref":"#/$defs/pos"}}}`, []string{`{"n":2}`}, []string{`{"n":0}`, `{"n":"a"}`}, true},
	{`{"definitions":{"s":{"type":"string"}},"items":{"$ref":"#/definitions/s"}}`, []string{`["a"]`}, []string{`[1]`}, true},
	{`{"$defs":{"a b":{"type":"string"},"c/d":{"type":"integer"}},"properties":{"x":{"$ref":"#/$defs/a%20b"},"y":{"$ref":"#/$defs/c~1d"}}}`, []string{`{"x":"s","y":1}`}, []string{`{"x":1}`, `{"y":"s"}`}, true},
	{`{"type":"object","properties":{"child":{"$ref":"#"},"v":{"type":"integer"}}}`, []string{`{"child":{"child":{"v":1}}}`}, []string{`{"child":{"child":{"v":"x"}}}`, `{"child":3}`}, true},
	{`{"$defs":{"node":{"type":"object","properties":{"next":{"anyOf":[{"$ref":"#/$defs/node"},{"type":"null"}]},"v":{"type":"integer"}}}},"$ref":"#/$defs/node"}`, []string{`{"v":1,"next":{"v":2,"next":null}}`}, []string{`{"v":1,"next":{"v":"x","next":null}}`}, false},
	{`{"$ref":"#/$defs/a","maxLength":2,"$defs":{"a":{"type":"string"}}}`, []string{`"ab"`}, []string{`"abc"`, `1`}, true},
	{`{"$defs":{"a":{"$anchor":"A","type":"string"}},"properties":{"x":{"$ref":"#A"}}}`, []string{`{"x":"s"}`}, []string{`{"x":1}`}, true},
	{`{"$defs":{"a":{"$dynamicAnchor":"A","type":"string"}},"properties":{"x":{"$ref":"#A"}}}`, []string{`{"x":"s"}`}, []string{`{"x":1}`}, true},
	{`{"$id":"https://example.com/s.json","$defs":{"a":{"type":"string"}},"properties":{"x":{"$ref":"https://example.com/s.json#/$defs/a"},"y":{"$ref":"s.json#/$defs/a"}}}`, []string{`{"x":"s","y":"t"}`}, []string{`{"x":1}`, `{"y":1}`}, true},
	{`{"description":"d","title":"t","default":1,"examples":[1],"format":"email","x-vendor":{"type":"integer"},"deprecated":true,"readOnly":true}`, []string{`"not an email"`, `"a"`}, nil, true},
	{`{"unknownKeyword":{"$ref":"#/nowhere"},"type":"string"}`, []string{`"a"`}, []string{`1`}, true},
	{`{"dependencies":{"a":["b"],"c":{"required":["d"]}}}`, []string{`{"a":1,"b":1}`, `{"c":1,"d":1}`}, []string{`{"a":1}`, `{"c":1}`}, true},
	{`{"properties":{"a":true},"allOf":[{"properties":{"b":true}}],"unevaluatedProperties":false}`, []string{`{"a":1,"b":2}`, `{}`}, []string{`{"c":1}`, `{"a":1,"c":1,"d":2}`}, true},
	{`{"anyOf":[{"properties":{"a":true},"required":["a"]},{"properties":{"b":true},"required":["b"]}],"unevaluatedProperties":false}`, []string{`{"a":1}`, `{"a":1,"b":1}`}, []string{`{"a":1,"c":1}`, `{"c":1}`}, false},
	{`{"if":{"properties":{"k":{"const":"a"}}},"then":{"properties":{"x":true}},"else":{"properties":{"y":true}},"unevaluatedProperties":false}`, []string{`{"k":"a","x":1}`, `{"k":"a"}`}, []string{`{"y":1}`, `{"k":"a","y":1}`, `{"k":"b","x":1}`, `{"k":"b","y":1}`}, true},
	{`{"$ref":"#/$defs/base","properties":{"extra":true},"unevaluatedProperties":{"type":"string"},"$defs":{"base":{"properties":{"id":{"type":"integer"}}}}}`, []string{`{"id":1,"extra":[],"other":"s"}`}, []string{`{"id":"x"}`, `{"other":1}`}, true},
	{`{"properties":{"o":{"properties":{"a":true},"unevaluatedProperties":false}},"unevaluatedProperties":false}`, []string{`{"o":{"a":1}}`}, []string{`{"o":{"b":1}}`, `{"p":1}`}, true},
	{`{"prefixItems":[true],"unevaluatedItems":false}`, []string{`[1]`, `[]`}, []string{`[1,2]`}, true},
	{`{"contains":{"const":1},"unevaluatedItems":{"type":"string"}}`, []string{`[1,"a",1]`}, []string{`[1,2]`}, true},
	{`{"allOf":[{"prefixItems":[true,true]}],"items":false,"unevaluatedItems":false}`, []string{`[]`}, []string{`[1]`}, true},
	// draft-07: what differs.
	{`{"$schema":"http://json-schema.org/draft-07/schema#","items":[{"type":"string"}],"additionalItems":false}`, []string{`["a"]`, `[]`}, []string{`["a",1]`, `[1]`}, true},
	{`{"$schema":"http://json-schema.org/draft-07/schema#","items":[{"type":"string"}],"additionalItems":{"type":"integer"}}`, []string{`["a",1,2]`}, []string{`["a","b"]`}, true},
	{`{"$schema":"http://json-schema.org/draft-07/schema#","items":{"type":"string"},"additionalItems":false}`, []string{`["a","b"]`}, []string{`[1]`}, true},
	{`{"$schema":"http://json-schema.org/draft-07/schema#","definitions":{"a":{"type":"integer"}},"properties":{"x":{"$ref":"#/definitions/a","type":"string"}}}`, []string{`{"x":1}`}, []string{`{"x":"s"}`}, true},
	{`{"$schema":"http://json-schema.org/draft-07/schema#","dependencies":{"a":["b"],"c":{"required":["d"]}}}`, []string{`{"a":1,"b":1}`}, []string{`{"a":1}`, `{"c":1}`}, true},
	{`{"$schema":"http://json-schema.org/draft-07/schema#","if":{"type":"string"},"then":{"minLength":2}}`, []string{`"ab"`, `1`}, []string{`"a"`}, true},
	{`{"$schema":"http://json-schema.org/draft-07/schema#","definitions":{"a":{"$id":"#A","type":"integer"}},"items":{"$ref":"#A"}}`, []string{`[1]`}, []string{`["x"]`}, true},
	{`{"$schema":"http://json-schema.org/draft-07/schema#","items":[{"type":"string"}],"additionalItems":{"const":1},"dependentRequired":{"a":["b"]},"minContains":2,"contains":{"const":1}}`, []string{`{"a":1}`, `"x"`, `["a",1]`}, []string{`["a",2]`, `["a"]`, `[2]`}, false},
	{`{"$schema":"http://json-schema.org/draft-07/schema#","properties":{"a":true},"unevaluatedProperties":false,"unevaluatedItems":false,"dependentSchemas":{"a":false},"$anchor":"A","$defs":{"x":{"type":"string"}}}`, []string{`{"a":1,"b":2}`, `[1]`}, nil, true},
	{`{"$schema":"http://json-schema.org/draft-07/schema","type":"integer"}`, []string{`1`}, []string{`1.5`}, true},
	{`{"$schema":"http://json-schema.org/schema#","prefixItems":[{"type":"integer"}]}`, []string{`[1]`}, []string{`[1.5]`}, true},
}

func TestSchemaAgreesWithV6OnEveryKeyword(t *testing.T) {
	for _, c := range schemaCases {
		ours, err := CompileSchema([]byte(c.schema))
		if err != nil {
			t.Errorf("%s: %v", c.schema, err)
			continue
		}
		theirs, err := compileOracle([]byte(c.schema))
		if err != nil {
			t.Fatalf("v6 does not compile %s: %v", c.schema, err)
		}
		for _, inst := range c.valid {
			if vs := ours.Validate([]byte(inst)); vs != nil {
				t.Errorf("%s: %s should be valid: %v", c.schema, inst, vs)
			}
		}
		for _, inst := range c.invalid {
			if vs := ours.Validate([]byte(inst)); vs == nil {
				t.Errorf("%s: %s should be invalid", c.schema, inst)
			}
		}
		for _, inst := range append(slices.Clone(c.valid), c.invalid...) {
			if d := agree([]byte(c.schema), ours, theirs, []byte(inst)); d != "" {
				t.Errorf("%s: %s", c.schema, d)
			}
			if c.sameWords {
				v, _ := ParseJSON([]byte(inst))
				got, want := fmt.Sprint(ours.ValidateValue(v)), fmt.Sprint(theirs.violations(v))
				if got != want {
					t.Errorf("%s on %s: ours say %s, v6 said %s", c.schema, inst, got, want)
				}
			}
		}
	}
}

// TestSchemaValueKinds: values decoded without UseNumber (float64) or
// built in Go (int) are numbers too.
func TestSchemaValueKinds(t *testing.T) {
	s, err := CompileSchema([]byte(`{"properties":{"n":{"type":"integer","maximum":5}},"items":{"multipleOf":2}}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		v     any
		valid bool
	}{
		{map[string]any{"n": 3.0}, true}, {map[string]any{"n": 3}, true}, {map[string]any{"n": int64(9)}, false},
		{map[string]any{"n": 2.5}, false}, {map[string]any{"n": uint8(5)}, true}, {[]any{4, 6.0, json.Number("8")}, true},
		{[]any{float32(3)}, false},
	} {
		if got := s.ValidateValue(c.v) == nil; got != c.valid {
			t.Errorf("%#v: valid %v, want %v", c.v, got, c.valid)
		}
	}
	if vs := s.ValidateValue(map[string]any{"n": []string{"x"}}); len(vs) != 1 || vs[0].Pointer != "/n" || !strings.Contains(vs[0].Message, "invalid jsonType") {
		t.Errorf("a Go value that is not JSON: %v", vs)
	}
}

// TestSchemaHugeExponents checks numbers whose exponent big.Rat refuses
// (past 10^6), where v6 cannot answer and so the fuzz target does not ask
// it: 1E1000001 is a whole number, larger than 1e400 and smaller than
// 2E1000001.
func TestSchemaHugeExponents(t *testing.T) {
	for _, c := range []struct {
		schema         string
		valid, invalid []string
	}{
		{`{"type":"integer"}`, []string{`1E1000001`, `1.5E1000001`, `-2e+1000001`, `0E-99999999999999999999999`, `1e99999999999999999999999`},
			[]string{`1E-1000001`, `1.5e-99999999999999999999999`, `12345E-1000001`}},
		{`{"minimum":1e400,"maximum":2E1000001}`, []string{`1E1000001`, `2E1000001`, `19.99E1000000`}, []string{`2.0000001E1000001`, `-1E1000001`, `1E-1000001`}},
		{`{"exclusiveMaximum":-1E1000001}`, []string{`-2E1000001`}, []string{`-1E1000001`, `0`, `-0.1E1000001`}},
		{`{"const":1E1000001}`, []string{`10E1000000`, `0.1E1000002`}, []string{`1E1000002`}},
		{`{"multipleOf":3}`, []string{`3e999999`, `0.3e1000001`}, []string{`1e999999`, `3e-999999`}},
		{`{"multipleOf":6}`, []string{`3e1000001`}, []string{`3e-1000001`, `1.5e-999999`}},
		{`{"multipleOf":0.007}`, []string{`7e1000000`, `0.014`}, []string{`0.0071`}},
		{`{"multipleOf":1e-1000001}`, []string{`3e-1000000`, `1`}, []string{`1e-1000002`}},
		{`{"multipleOf":1e1000000}`, []string{`0`, `2e1000000`}, []string{`1e999999`, `1`}},
	} {
		s, err := CompileSchema([]byte(c.schema))
		if err != nil {
			t.Fatal(err)
		}
		for _, inst := range c.valid {
			if vs := s.Validate([]byte(inst)); vs != nil {
				t.Errorf("%s: %s refused: %v", c.schema, inst, vs)
			}
		}
		for _, inst := range c.invalid {
			if s.Validate([]byte(inst)) == nil {
				t.Errorf("%s: %s passed", c.schema, inst)
			}
		}
	}
	s, _ := CompileSchema([]byte(`{"maximum":1E1000001}`))
	if vs := s.Validate([]byte(`2E1000001`)); len(vs) != 1 || vs[0].Message != "maximum: got 2E1000001, want 1E1000001" {
		t.Errorf("the numbers as written: %v", vs)
	}
	// The work follows the digits, not the exponent: big.Rat allocated
	// megabytes (and took 100 ms) for one multipleOf of 1.5e-999999.
	s, _ = CompileSchema([]byte(`{"items":{"multipleOf":7,"maximum":1}}`))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	s.Validate([]byte(`[1.5e-999999,3e999999,1e1000000]`))
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > 64<<10 {
		t.Errorf("validating three short numbers allocated %d bytes", n)
	}
}

func TestSchemaNotJSON(t *testing.T) {
	s, _ := CompileSchema([]byte(`{}`))
	for _, doc := range []string{``, `{`, `{} {}`, `[1,]`} {
		if vs := s.Validate([]byte(doc)); len(vs) != 1 || !strings.HasPrefix(vs[0].Message, "not valid JSON: ") {
			t.Errorf("%q: %v", doc, vs)
		}
	}
	if _, err := CompileSchema([]byte(`{"type":`)); err == nil || !strings.HasPrefix(err.Error(), "schema is not valid JSON") {
		t.Errorf("a schema that is not JSON: %v", err)
	}
}

// TestSchemaRefusals: what the validator cannot check it refuses at
// compile time, one line naming the keyword's pointer; a bad schema is an
// error, never a panic.
func TestSchemaRefusals(t *testing.T) {
	for _, c := range []struct{ schema, want string }{
		{`{"$dynamicRef":"#meta"}`, "/$dynamicRef: $dynamicRef is not supported"},
		{`{"properties":{"a":{"$recursiveRef":"#"}}}`, "/properties/a/$recursiveRef: $recursiveRef is not supported"},
		{`{"unevaluatedProperties":3}`, "/unevaluatedProperties: a schema must be an object or a boolean"},
		{`{"$ref":"http://example.com/s.json"}`, `/$ref: $ref "http://example.com/s.json": references outside this schema are not supported`},
		{`{"$ref":"other.json#/a"}`, `/$ref: $ref "other.json#/a": references outside this schema`},
		{`{"items":{"$ref":"https://json-schema.org/draft/2020-12/schema"}}`, `/items/$ref: $ref "https://json-schema.org/draft/2020-12/schema": references outside`},
		{`{"$ref":"#/$defs/missing"}`, `/$ref: $ref "#/$defs/missing": nothing at "/$defs/missing"`},
		{`{"$ref":"#nowhere"}`, `/$ref: $ref "#nowhere": no anchor "nowhere"`},
		{`{"$defs":{"a":{"$id":"a.json","$ref":"#/$defs/b","$defs":{"b":true}}}}`, `/$defs/a/$ref: $ref "#/$defs/b" inside the embedded resource at /$defs/a`},
		{`{"$ref":"#"}`, "$ref loops back to this schema"},
		{`{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"allOf":[{"$ref":"#/$defs/a"}]}},"properties":{"x":{"$ref":"#/$defs/a"}}}`, "loops back"},
		{`{"pattern":"(?=lookahead)"}`, `/pattern: pattern "(?=lookahead)" is not a regular expression this validator (Go's regexp) can compile`},
		{`{"patternProperties":{"\\p{Letter}(?<!x)":{}}}`, `patternProperties: "\\p{Letter}(?<!x)" is not a regular expression`},
		{`{"minLength":-1}`, "/minLength: minLength must be a non-negative integer"},
		{`{"maxItems":1.5}`, "/maxItems: maxItems must be a non-negative integer"},
		{`{"properties":{"a":{"minProperties":"1"}}}`, "/properties/a/minProperties: minProperties must be a non-negative integer"},
		{`{"type":"str"}`, `/type: type "str" is not a JSON Schema type`},
		{`{"type":["string","string"]}`, `/type: type "string" is listed twice`},
		{`{"type":[]}`, "/type: type must not be an empty array"},
		{`{"type":3}`, "/type: type must be a type name"},
		{`{"required":"a"}`, "/required: required must be an array of strings"},
		{`{"required":["a","a"]}`, `/required: required lists "a" twice`},
		{`{"properties":[]}`, "/properties: properties must be an object of schemas"},
		{`{"properties":{"a":3}}`, "/properties/a: a schema must be an object or a boolean, not number"},
		{`{"items":[{}]}`, "/items: a schema must be an object or a boolean, not array"},
		{`{"allOf":[]}`, "/allOf: allOf must be a non-empty array of schemas"},
		{`{"anyOf":{}}`, "/anyOf: anyOf must be a non-empty array of schemas"},
		{`{"multipleOf":0}`, "/multipleOf: multipleOf must be greater than 0"},
		{`{"maximum":"3"}`, "/maximum: maximum must be a number"},
		{`{"exclusiveMinimum":true}`, "/exclusiveMinimum: exclusiveMinimum must be a number"},
		{`{"$schema":"http://json-schema.org/draft-04/schema#","exclusiveMinimum":true}`, `/$schema: $schema "http://json-schema.org/draft-04/schema#" is draft-04, which is not supported: this validator reads draft 2020-12 (the default without $schema) and draft-07`},
		{`{"$schema":"http://json-schema.org/draft-06/schema#"}`, `/$schema: $schema "http://json-schema.org/draft-06/schema#" is draft-06, which is not supported: this validator reads draft 2020-12`},
		{`{"$schema":"https://json-schema.org/draft/2019-09/schema","$recursiveRef":"#"}`, `/$schema: $schema "https://json-schema.org/draft/2019-09/schema" is draft 2019-09, which is not supported: this validator reads draft 2020-12`},
		{`{"$schema":"http://json-schema.org/draft-03/schema#"}`, `is draft-03, which is not supported`},
		{`{"$schema":"http://json-schema.org/draft-07/schema#","enum":[]}`, "/enum: enum must not be empty"},
		{`{"enum":{}}`, "/enum: enum must be an array of values"},
		{`{"uniqueItems":1}`, "/uniqueItems: uniqueItems must be a boolean"},
		{`{"dependentRequired":{"a":"b"}}`, "/dependentRequired/a: dependentRequired: must be an array of strings"},
		{`{"$schema":"http://example.com/my-schema"}`, `/$schema: $schema "http://example.com/my-schema" is not a draft this validator knows: this validator reads draft 2020-12 (the default without $schema) and draft-07`},
		{`{"$ref":3}`, "/$ref: $ref must be a string"},
		{`{"format":1}`, "/format: format must be a string"},
		{`{"examples":"x"}`, "/examples: examples must be an array"},
		{`{"$schema":"http://json-schema.org/draft-07/schema#","readOnly":1}`, "/readOnly: readOnly must be a boolean"},
		{`3`, "/: a schema must be an object or a boolean, not number"},
	} {
		_, err := CompileSchema([]byte(c.schema))
		if err == nil {
			t.Errorf("%s compiles; want %q", c.schema, c.want)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, c.want) || strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "schema does not compile: ") {
			t.Errorf("%s:\n got %q\nwant %q", c.schema, msg, c.want)
		}
	}
}

// TestSchemaBadSchemasAgreeWithV6: every bad schema above (not the
// refusals of what we do not implement) is one v6 rejected as well.
func TestSchemaBadSchemasAgreeWithV6(t *testing.T) {
	for _, s := range []string{
		`{"minLength":-1}`, `{"maxItems":1.5}`, `{"type":"str"}`, `{"type":["string","string"]}`, `{"type":[]}`,
		`{"required":"a"}`, `{"properties":[]}`, `{"properties":{"a":3}}`, `{"allOf":[]}`, `{"multipleOf":0}`,
		`{"maximum":"3"}`, `{"exclusiveMinimum":true}`, `{"$schema":"http://json-schema.org/draft-07/schema#","exclusiveMinimum":true}`,
		`{"$schema":"http://json-schema.org/draft-07/schema#","enum":[]}`, `{"enum":{}}`, `{"uniqueItems":1}`,
		`{"dependentRequired":{"a":"b"}}`, `{"$ref":"#/$defs/missing"}`, `{"pattern":"(?=x)"}`, `{"required":["a","a"]}`,
		`{"$schema":"http://json-schema.org/draft-07/schema#","enum":[1,1.0]}`, `{"$defs":{"a":{"type":1}}}`,
		`{"definitions":{"a":{"type":1}}}`, `{"dependencies":{"a":3}}`, `{"prefixItems":[]}`, `3`,
		`{"examples":"x"}`, `{"$schema":"http://json-schema.org/draft-07/schema#","readOnly":1}`, `{"deprecated":"yes"}`,
	} {
		if _, err := compileOracle([]byte(s)); err == nil {
			t.Errorf("v6 compiles %s", s)
		}
		if _, err := CompileSchema([]byte(s)); err == nil {
			t.Errorf("ours compiles %s", s)
		}
	}
}

// repoSchemas finds the schemas in the repository: the scenario format,
// and every tool, output and response schema in samples and testdata.
func repoSchemas(t testing.TB) map[string][]byte {
	out := map[string][]byte{}
	raw, err := os.ReadFile(scenarioSchemaFile)
	if err != nil {
		t.Fatal(err)
	}
	out["session/scenario.schema.json"] = raw
	keys := map[string]bool{"parameters": true, "input_schema": true, "inputSchema": true, "schema": true, "parametersJsonSchema": true,
		"responseJsonSchema": true, "responseSchema": true, "response_schema": true, "output_schema": true}
	var walk func(file, at string, v any)
	walk = func(file, at string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if m, ok := x.(map[string]any); ok && keys[k] && (m["type"] != nil || m["properties"] != nil || m["$ref"] != nil || m["anyOf"] != nil) {
					b, _ := json.Marshal(m)
					out[file+"#"+at+"/"+k] = b
				}
				walk(file, at+"/"+k, x)
			}
		case []any:
			for i, x := range v {
				walk(file, fmt.Sprintf("%s/%d", at, i), x)
			}
		}
	}
	root := ".."
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == ".git") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".json") && !strings.HasSuffix(path, ".sse") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		docs := [][]byte{b}
		if strings.HasSuffix(path, ".sse") { // captured streams: each event's data
			docs = nil
			for _, line := range bytes.Split(b, []byte("\n")) {
				if data, ok := bytes.CutPrefix(bytes.TrimSpace(line), []byte("data:")); ok {
					docs = append(docs, data)
				}
			}
		}
		for i, doc := range docs {
			var v any
			if json.Unmarshal(doc, &v) == nil {
				walk(fmt.Sprintf("%s[%d]", path, i), "", v)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// scenarioSchemaFile is session's scenario format, which session embeds;
// it is the largest schema the repository holds.
const scenarioSchemaFile = "../session/scenario.schema.json"

func readScenarioSchema(t testing.TB) []byte {
	raw, err := os.ReadFile(scenarioSchemaFile)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// instancesFor makes a fitting instance for a schema and breaks it in
// every simple way: each required member dropped, each member given each
// wrong type, a stray member added.
func instancesFor(schema []byte) [][]byte {
	var s any
	_ = json.Unmarshal(schema, &s)
	return mutations(sample(s, 0))
}

// mutations is a document and its simple breakages.
func mutations(base any) [][]byte {
	out := [][]byte{toJSON(base)}
	for _, wrong := range []any{nil, 1.5, 7, "x", true, []any{}, map[string]any{}, []any{"x", 1}} {
		out = append(out, toJSON(wrong))
	}
	obj, ok := base.(map[string]any)
	if !ok {
		return out
	}
	for k := range obj {
		c := cloneObj(obj)
		delete(c, k)
		out = append(out, toJSON(c))
		for _, wrong := range []any{nil, 1.5, -3, "", "x", true, []any{}, []any{1}, map[string]any{}} {
			c := cloneObj(obj)
			c[k] = wrong
			out = append(out, toJSON(c))
		}
	}
	c := cloneObj(obj)
	c["stray"] = 1
	out = append(out, toJSON(c))
	return out
}

// deepMutations breaks a document at every object member down to depth 3.
func deepMutations(v any, depth int) [][]byte {
	out := mutations(v)
	if depth >= 3 {
		return out
	}
	switch x := v.(type) {
	case map[string]any:
		for k, member := range x {
			for _, m := range deepMutations(member, depth+1) {
				c := cloneObj(x)
				c[k] = json.RawMessage(m)
				out = append(out, toJSON(c))
			}
		}
	case []any:
		if len(x) > 0 {
			for _, m := range deepMutations(x[0], depth+1) {
				c := slices.Clone(x)
				c[0] = json.RawMessage(m)
				out = append(out, toJSON(c))
			}
		}
	}
	return out
}

func cloneObj(m map[string]any) map[string]any {
	c := make(map[string]any, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

func toJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// sample builds a value that a simple schema accepts.
func sample(s any, depth int) any {
	m, ok := s.(map[string]any)
	if !ok || depth > 6 {
		return nil
	}
	if c, ok := m["const"]; ok {
		return c
	}
	if e, ok := m["enum"].([]any); ok && len(e) > 0 {
		return e[0]
	}
	for _, k := range []string{"anyOf", "oneOf", "allOf"} {
		if a, ok := m[k].([]any); ok && len(a) > 0 {
			return sample(a[0], depth+1)
		}
	}
	t := m["type"]
	if ts, ok := t.([]any); ok && len(ts) > 0 {
		t = ts[0]
	}
	switch t {
	case "object":
		o := map[string]any{}
		props, _ := m["properties"].(map[string]any)
		for k, p := range props {
			o[k] = sample(p, depth+1)
		}
		return o
	case "array":
		return []any{sample(m["items"], depth+1)}
	case "string":
		return "abc"
	case "integer":
		return 3
	case "number":
		return 2.5
	case "boolean":
		return true
	}
	return nil
}

func TestSchemaAgreesWithV6OnRepositorySchemas(t *testing.T) {
	schemas := repoSchemas(t)
	if len(schemas) < 10 {
		t.Fatalf("found only %d schemas in the repository", len(schemas))
	}
	instances := 0
	for name, raw := range schemas {
		theirs, err := compileOracle(raw)
		if err != nil {
			t.Errorf("%s: v6 does not compile it: %v", name, err)
			continue
		}
		ours, err := CompileSchema(raw)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		for _, inst := range instancesFor(raw) {
			instances++
			if d := agree(raw, ours, theirs, inst); d != "" {
				t.Errorf("%s: %s", name, d)
			}
		}
	}
	// The scenario schema against real scenarios, whole and broken.
	scenarioSchemaJSON := readScenarioSchema(t)
	ours, _ := CompileSchema(scenarioSchemaJSON)
	theirs, _ := compileOracle(scenarioSchemaJSON)
	for _, file := range []string{"../samples/refund.json"} {
		doc, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if vs := ours.Validate(doc); vs != nil {
			t.Errorf("%s: %v", file, vs)
		}
		var v any
		_ = json.Unmarshal(doc, &v)
		for _, inst := range deepMutations(v, 0) {
			instances++
			if d := agree(scenarioSchemaJSON, ours, theirs, inst); d != "" {
				t.Errorf("%s: %s", file, d)
			}
		}
	}
	t.Logf("%d schemas, %d instances", len(schemas), instances)
}

// The official JSON-Schema-Test-Suite comes from the Go module
// github.com/kaptinlin/jsonschema, which carries a copy of it under
// testdata/JSON-Schema-Test-Suite (files in the module zip, not a
// submodule). go mod download fetches it through the module proxy and
// checks it against the checksum database; its sum is pinned here too.
// It is not in go.mod: nothing imports it. The copy has no commit in it
// (its package.json says 0.1.0); comparing blob ids with the suite's
// history, its draft2020-12 and draft7 directories are those of the
// suite's commits 9f39cf73 to dd9599a5 (21 April to 3 May 2024), except
// that kaptinlin cut draft2020-12/anchor.json from 8 cases to 1 (the
// location-independent identifiers with a base URI, which we refuse).
const (
	suiteModule    = "github.com/kaptinlin/jsonschema@v0.9.8"
	suiteModuleSum = "h1:srpfx2MAm4ecYz0zJLbz6fiW+UXiuv+vGhUqZUIWmrg="
	suiteModuleDir = "testdata/JSON-Schema-Test-Suite/tests"
)

// suiteDrafts are the suite's directories for the drafts we read, with
// the cases each passed on the pinned copy when measured (of 1,260 and
// 928, optional files included): a change that refuses or misjudges more
// fails TestSchemaSuite.
var suiteDrafts = []struct {
	dir, schema string // schema: the $schema a case without one gets
	floor       int
}{
	{"draft2020-12", "", 1152},
	{"draft7", "http://json-schema.org/draft-07/schema#", 879},
}

// TestSchemaSuite runs the official JSON-Schema-Test-Suite's cases for
// the drafts we read (2020-12 and draft-07, each with its optional
// bignum, float-overflow and non-BMP regex cases; format and the
// ECMA-only regex cases are not ours to pass). A case whose schema we
// refuse counts as refused, never as passed; every schema we compile must
// give the suite's answer. MODELWIRE_SCHEMA_SUITE=<checkout>/tests runs
// another copy instead (the floors hold for the pinned one only):
//
//	git clone https://github.com/json-schema-org/JSON-Schema-Test-Suite /tmp/suite
//	MODELWIRE_SCHEMA_SUITE=/tmp/suite/tests go test ./jsonschema -run TestSchemaSuite -v
//
// When the pinned copy cannot be downloaded the test skips locally and
// fails in CI (MODELWIRE_REQUIRE_E2E=1, as internal/e2e does).
func TestSchemaSuite(t *testing.T) {
	dir, pinned := os.Getenv("MODELWIRE_SCHEMA_SUITE"), false
	if dir == "" {
		dir, pinned = pinnedSchemaSuite(t), true
	}
	refusals := map[string]int{}
	for _, d := range suiteDrafts {
		r := runSuiteDraft(t, filepath.Join(dir, d.dir), d.schema, refusals)
		t.Logf("%s: %d/%d passed, %d wrong, %d refused", d.dir, r.passed, r.total, r.wrong, r.refused)
		switch {
		case r.total == 0:
			t.Errorf("%s: no suite case under %s", d.dir, dir)
		case r.wrong > 0:
			t.Errorf("%s: %d wrong verdicts, want none", d.dir, r.wrong)
		case pinned && r.passed < d.floor:
			t.Errorf("%s: %d cases passed, fewer than the %d measured on %s", d.dir, r.passed, d.floor, suiteModule)
		}
	}
	reasons := slices.Sorted(maps.Keys(refusals))
	for i, r := range reasons {
		reasons[i] = fmt.Sprintf("%d× %s", refusals[r], r)
	}
	t.Logf("schemas refused:\n%s", strings.Join(reasons, "\n"))
}

type suiteResult struct{ passed, total, wrong, refused int }

// runSuiteDraft runs one draft directory's case files.
func runSuiteDraft(t *testing.T, dir, schemaURL string, refusals map[string]int) suiteResult {
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	for _, opt := range []string{"bignum.json", "float-overflow.json", "non-bmp-regex.json"} {
		if _, err := os.Stat(filepath.Join(dir, "optional", opt)); err == nil {
			files = append(files, filepath.Join(dir, "optional", opt))
		}
	}
	var r suiteResult
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var groups []struct {
			Description string
			Schema      json.RawMessage
			Tests       []struct {
				Description string
				Data        json.RawMessage
				Valid       bool
			}
		}
		if err := json.Unmarshal(b, &groups); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		for _, g := range groups {
			r.total += len(g.Tests)
			s, err := CompileSchema(withDraft(g.Schema, schemaURL))
			if err != nil {
				r.refused += len(g.Tests)
				refusals[strings.SplitN(err.Error(), ": ", 3)[2]]++
				if !suiteMayRefuse(err.Error()) {
					t.Errorf("%s %q: %v", file, g.Description, err)
				}
				continue
			}
			for _, c := range g.Tests {
				if got := s.Validate(c.Data) == nil; got != c.Valid {
					r.wrong++
					t.Errorf("%s %q / %q: valid %v, want %v", file, g.Description, c.Description, got, c.Valid)
					continue
				}
				r.passed++
			}
		}
	}
	return r
}

// pinnedSchemaSuite downloads suiteModule (the module cache first) and
// returns the suite's tests directory in it.
func pinnedSchemaSuite(t *testing.T) string {
	t.Helper()
	unavailable := t.Skipf
	if e2e.Required() {
		unavailable = t.Fatalf
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// Run outside the module, so go.mod and go.sum are neither read nor
	// written (and GOFLAGS' -mod means nothing); go test puts its own go
	// first on PATH.
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", suiteModule)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var mod struct{ Dir, Sum, Error string }
	if jerr := json.Unmarshal(out, &mod); err != nil || jerr != nil || mod.Error != "" {
		why := strings.Join(slices.DeleteFunc([]string{fmt.Sprint(err), mod.Error, strings.TrimSpace(stderr.String())},
			func(s string) bool { return s == "" || s == "<nil>" }), "; ")
		unavailable("the JSON Schema suite: go mod download %s: %s (MODELWIRE_SCHEMA_SUITE=<checkout>/tests runs another copy; %s=1 makes this a failure)",
			suiteModule, why, e2e.RequireEnv)
		return ""
	}
	if mod.Sum != suiteModuleSum {
		t.Fatalf("%s has sum %s, want %s", suiteModule, mod.Sum, suiteModuleSum)
	}
	return filepath.Join(mod.Dir, filepath.FromSlash(suiteModuleDir))
}

// suiteMayRefuse lists the refusals a suite schema may meet: what we do
// not implement, remote refs and remote metaschemas (the suite's
// vocabulary cases name one as $schema), and loops the suite wants
// detected.
func suiteMayRefuse(msg string) bool {
	for _, ok := range []string{"is not supported", "references outside this schema", "embedded resource", "loops back", "Go's regexp",
		"is not a draft this validator knows"} {
		if strings.Contains(msg, ok) {
			return true
		}
	}
	return false
}

// withDraft gives a suite schema without $schema the draft's own, as the
// suite's runners do by default (none for 2020-12, our default).
func withDraft(schema json.RawMessage, url string) []byte {
	if url == "" || !bytes.HasPrefix(bytes.TrimSpace(schema), []byte("{")) || bytes.Contains(schema, []byte(`"$schema"`)) {
		return schema
	}
	var m map[string]any
	if json.Unmarshal(schema, &m) != nil {
		return schema
	}
	m["$schema"] = url
	return toJSON(m)
}

// hugeExponent finds an exponent of four digits or more: v6 reads numbers
// with big.Rat, which refuses exponents past 10^6 and takes seconds on
// those just below (the fuzzer stalled on them).
var hugeExponent = regexp.MustCompile(`[eE][-+]?0*[1-9][0-9]{3}`)

// FuzzSchemaAgreesWithV6 mutates instances and small schemas: ours never
// panics and, where both compile, agrees with v6 on validity.
func FuzzSchemaAgreesWithV6(f *testing.F) {
	for _, c := range schemaCases {
		for _, inst := range append(slices.Clone(c.valid), c.invalid...) {
			f.Add([]byte(c.schema), []byte(inst))
		}
	}
	for _, raw := range repoSchemas(f) {
		for _, inst := range instancesFor(raw)[:3] {
			f.Add(raw, inst)
		}
	}
	f.Fuzz(func(t *testing.T, schema, instance []byte) {
		ours, err := CompileSchema(schema)
		if err != nil {
			return
		}
		v, err := ParseJSON(instance)
		if err != nil {
			if vs := ours.Validate(instance); len(vs) != 1 {
				t.Fatalf("not JSON, yet %v", vs)
			}
			return
		}
		got := ours.ValidateValue(v)
		// v6 asserts format in the older drafts; we never do. Numbers with
		// huge exponents are beyond it (1E1000001 is not an integer to it):
		// TestSchemaHugeExponents covers ours.
		formatDiffers := bytes.Contains(schema, []byte("draft-0")) && bytes.Contains(schema, []byte(`"format"`))
		if !formatDiffers && !hugeExponent.Match(schema) && !hugeExponent.Match(instance) {
			theirs, err := compileOracle(schema)
			if err != nil {
				return
			}
			want := theirs.violations(v)
			if (got == nil) != (want == nil) {
				t.Fatalf("schema %s, instance %s: ours %v, v6 %v", schema, instance, got, want)
			}
		}
	})
}

// benchSchemas are the refund sample's output schema and tool schemas,
// and the scenario format with the sample itself, each with an instance
// that passes.
func benchSchemas(b *testing.B) (names []string, schemas, instances [][]byte) {
	raw, err := os.ReadFile("../samples/refund.json")
	if err != nil {
		b.Fatal(err)
	}
	var doc struct {
		Tools []struct {
			Name       string
			Parameters json.RawMessage
		}
		Output struct{ Schema json.RawMessage }
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		b.Fatal(err)
	}
	names = append(names, "output")
	schemas = append(schemas, doc.Output.Schema)
	instances = append(instances, []byte(`{"order_id":"A-1001","line_id":"L2","decision":"needs_review","currency":"CNY",
		"requested_refund_cents":13000,"max_refund_cents":null,"issues":["超出退款窗口","需人工复核"],
		"evidence_ids":["ev_1","ev_2","ev_3"],"reply_draft":"经核查，该订单行的退款申请需要人工复核，未提交退款。"}`))
	names = append(names, "scenario")
	schemas = append(schemas, readScenarioSchema(b))
	instances = append(instances, raw)
	for _, t := range doc.Tools {
		names = append(names, t.Name)
		schemas = append(schemas, t.Parameters)
		instances = append(instances, toJSON(sample(mustDecode(t.Parameters), 0)))
	}
	return names, schemas, instances
}

func mustDecode(raw []byte) any {
	var v any
	_ = json.Unmarshal(raw, &v)
	return v
}

func BenchmarkSchemaCompile(b *testing.B) {
	names, schemas, _ := benchSchemas(b)
	for i, name := range names {
		b.Run("ours/"+name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := CompileSchema(schemas[i]); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("v6/"+name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := compileOracle(schemas[i]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSchemaValidate: a decoded instance, as the callers hold it
// after Validate's parse (the parse is the same encoding/json for both).
func BenchmarkSchemaValidate(b *testing.B) {
	names, schemas, instances := benchSchemas(b)
	for i, name := range names {
		ours, _ := CompileSchema(schemas[i])
		theirs, _ := compileOracle(schemas[i])
		v, err := ParseJSON(instances[i])
		if err != nil || ours.ValidateValue(v) != nil || theirs.violations(v) != nil {
			b.Fatalf("%s: the instance should pass: %v %v", name, err, ours.ValidateValue(v))
		}
		bad, _ := ParseJSON([]byte(`{"order_id":7,"extra":true}`))
		b.Run("ours/"+name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				ours.ValidateValue(v)
			}
		})
		b.Run("v6/"+name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				theirs.violations(v)
			}
		})
		b.Run("ours/"+name+"/invalid", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				ours.ValidateValue(bad)
			}
		})
		b.Run("v6/"+name+"/invalid", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				theirs.violations(bad)
			}
		})
	}
}

// TestBinaryDoesNotLinkTheOldValidator guards issue 20's start-up: the
// library's package init compiled five metaschemas at every start, so
// only tests may import it.
func TestBinaryDoesNotLinkTheOldValidator(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	// go test puts its own go first on PATH.
	out, err := exec.Command("go", "list", "-deps", "github.com/modelwire/modelwire").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.Contains(pkg, "santhosh-tekuri/jsonschema") {
			t.Errorf("the modelwire binary links %s", pkg)
		}
	}
}

// TestParseJSONTakesOneValue: an edited body or argument with anything
// after its value (a stray closing bracket included, which
// json.Decoder.More lets through) is refused, never cut short.
func TestParseJSONTakesOneValue(t *testing.T) {
	for _, s := range []string{`{"a":1}}`, `[1]]`, `{"a":1} {}`, `1 x`} {
		if v, err := ParseJSON([]byte(s)); err == nil || !strings.Contains(err.Error(), "after top-level value") {
			t.Errorf("%s: %v, %v; want an error after the value", s, v, err)
		}
	}
	v, err := ParseJSON([]byte(" {\"n\":18000} \n"))
	if m, ok := v.(map[string]any); err != nil || !ok || m["n"] != json.Number("18000") {
		t.Errorf("%#v, %v", v, err)
	}
}
