package wire

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// The reader must agree with encoding/json on what a body holds: member
// names (escaped ones too), values' text, array elements, the last of a
// repeated member, white space anywhere JSON allows it.
func TestValueAgreesWithEncodingJSON(t *testing.T) {
	body := []byte(" {\"a\" : [1, {\"b\":\"x\\\"]}\"}, [ ], \"\\u4e2d\"] ,\n\t\"k\\\"ey\":null, \"n\":-1.5e3,\"t\":true, \"a\":\"last\", \"e\":{} } ")
	v, ok := Parse(body)
	if !ok {
		t.Fatal("Parse refused valid JSON")
	}
	o, ok := v.Members()
	if !ok {
		t.Fatal("not an object")
	}
	if want := []string{"a", `k"ey`, "n", "t", "a", "e"}; !reflect.DeepEqual(o.Keys, want) {
		t.Errorf("keys %q, want %q", o.Keys, want)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	for k, raw := range m {
		if got := o.Get(k).Raw; got != string(raw) {
			t.Errorf("%s: %q, encoding/json %q", k, got, raw)
		}
	}
	var first struct {
		A []json.RawMessage `json:"a"`
	}
	_ = json.Unmarshal([]byte(`{"a":[1, {"b":"x\"]}"}, [ ], "\u4e2d"]}`), &first)
	els := Value{`[1, {"b":"x\"]}"}, [ ], "\u4e2d"]`}.Elements()
	if len(els) != len(first.A) {
		t.Fatalf("%d elements, encoding/json %d", len(els), len(first.A))
	}
	for i := range els {
		if els[i].Raw != string(first.A[i]) {
			t.Errorf("element %d: %q, want %q", i, els[i].Raw, first.A[i])
		}
	}
	if s := els[3].Str(); s != "中" {
		t.Errorf("Str of an escaped string: %q", s)
	}
	if o.Get("n").Integer() || !o.Get("t").Bool() || o.Get("k\"ey").Kind() != KindNull || o.Get("missing").Kind() != KindAbsent {
		t.Error("kinds read wrong")
	}
	if f, ok := o.Get("n").Float(); !ok || f != -1500 {
		t.Errorf("Float = %v %v", f, ok)
	}
	if _, ok := Parse([]byte(`{"a":`)); ok {
		t.Error("Parse accepted a cut body")
	}
	if e, ok := o.Get("e").Members(); !ok || len(e.Keys) != 0 {
		t.Errorf("empty object: %v %v", e, ok)
	}
}

// Long strings are scanned for their closing quote in bulk: escaped quotes
// and runs of backslashes before a quote, past the first few dozen bytes,
// must still end the string where encoding/json ends it.
func TestLongStringsEndWhereEncodingJSONEnds(t *testing.T) {
	long := "0123456789012345678901234567890123456789"
	for _, text := range []string{
		long + `\"` + long,
		long + `\\`,
		long + `\\\"]}` + long + `\\\\`,
		`\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\` + long + `\"`,
		long + `中文\u4e2d\"x`,
	} {
		body := []byte(`{"s":"` + text + `","t":[1,"` + text + `"],"u":2}`)
		v, ok := Parse(body)
		if !ok {
			t.Fatalf("Parse refused %s", body)
		}
		o, _ := v.Members()
		var m map[string]json.RawMessage
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatal(err)
		}
		if len(o.Keys) != 3 {
			t.Fatalf("%s: keys %q", body, o.Keys)
		}
		for k, raw := range m {
			if got := o.Get(k).Raw; got != string(raw) {
				t.Errorf("%s: %q, encoding/json %q", k, got, raw)
			}
		}
	}
}

// AppendIndent prints what json.Indent prints with two spaces, for bodies
// with nesting, empty objects and arrays, strings holding brackets, commas
// and escaped quotes, white space inside and around; and refuses what
// json.Indent refuses.
func TestAppendIndentAsJSONIndent(t *testing.T) {
	for _, src := range []string{
		`{"a":[1,{"b":"x\"],{:"},[ ],{}],"c":{"d":null,"e":[true,false]},"f":"中文 \\","g":-1.5e3}`,
		` { "a" : [ ] , "b" : { } , "c" : [ { } , [ [ ] ] ] } `,
		"[\n\t1,\r\n2]\n",
		`"just a string"`, `12`, `[]`, `{}`,
	} {
		var want bytes.Buffer
		if err := json.Indent(&want, []byte(src), "", "  "); err != nil {
			t.Fatal(err)
		}
		got, ok := AppendIndent([]byte("prefix:"), src)
		if !ok || string(got) != "prefix:"+want.String() {
			t.Errorf("AppendIndent(%s) =\n%s\nwant\n%s", src, got, want.String())
		}
		// Nested two levels deep, the value's lines carry two levels more
		// (json.Indent's prefix), and its own space around it is dropped.
		want.Reset()
		if err := json.Indent(&want, []byte(strings.TrimSpace(src)), "    ", "  "); err != nil {
			t.Fatal(err)
		}
		if got := AppendIndentAt([]byte("x: "), strings.TrimSpace(src), 2); string(got) != "x: "+want.String() {
			t.Errorf("AppendIndentAt(%s, 2) =\n%s\nwant\n%s", src, got, want.String())
		}
	}
	for _, bad := range []string{`{"a":`, `{"a" 1}`, ``, `[1,]`} {
		if got, ok := AppendIndent(nil, bad); ok || got != nil {
			t.Errorf("AppendIndent(%q) accepted invalid JSON: %q", bad, got)
		}
	}
}

// ScanString ends a string where the validator does, whatever the escapes
// and wherever they fall against the eight-byte words it reads, and says
// whether it holds one.
func TestScanStringEndsWhereStringEndDoes(t *testing.T) {
	for _, esc := range []string{``, `\"`, `\\`, `\\\"`, `\\\\`, `\u4e2d`, `中文`} {
		for before := range 40 {
			for _, after := range []int{0, 1, 7, 8, 9, 40} {
				s := `"` + strings.Repeat("a", before) + esc + strings.Repeat("b", after) + `","next"`
				want, ok := StringEnd(s, 0)
				got, escaped := ScanString(s, 0)
				if !ok || got != want || escaped != strings.Contains(s[:want], `\`) {
					t.Fatalf("ScanString(%s) = %d %v, StringEnd %d %v", s, got, escaped, want, ok)
				}
			}
		}
	}
}
