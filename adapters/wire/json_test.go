package wire

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
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
	var all []Value
	for e := range (Value{`[1, {"b":"x\"]}"}, [ ], "\u4e2d"]`}).All() {
		all = append(all, e)
	}
	if !reflect.DeepEqual(all, els) {
		t.Errorf("All: %q, Elements %q", all, els)
	}
	for k, raw := range m {
		if got := v.Member(k).Raw; got != string(raw) {
			t.Errorf("Member(%s): %q, encoding/json %q", k, got, raw)
		}
	}
	if a, n := v.MemberPair("a", "n"); a != o.Get("a") || n != o.Get("n") {
		t.Errorf("MemberPair: %q %q", a.Raw, n.Raw)
	}
	if v.Member("missing").Present() || els[0].Member("a").Present() || len(slices.Collect(els[0].All())) != 0 {
		t.Error("Member or All of what has none")
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

// Unescape decodes what gjson and encoding/json decode, the same way: the
// escapes, surrogate pairs, lone surrogates (U+FFFD), UTF-8 as it is.
func TestUnescapeAgreesWithEncodingJSON(t *testing.T) {
	for _, lit := range []string{
		`""`, `"plain"`, `"a\"b\\c\/d\b\f\n\r\t"`, `"\u4e2d\u6587 中文"`, `"\ud83d\ude00 emoji"`,
		`"\uD83D\uDE00"`, `"lone \ud800 high"`, `"lone \udc00 low"`, `"high then letter \ud800x"`,
		`"high high \ud800\ud800"`, `"\u0000\u001f\u00e9"`, `"line\nbreak \"quoted\""`, `"\\\\\""`,
		`"end \u00e9"`, `"\ud800\u0041"`,
	} {
		var want string
		if err := json.Unmarshal([]byte(lit), &want); err != nil {
			t.Fatalf("%s: %v", lit, err)
		}
		if got := Unescape(lit[1 : len(lit)-1]); got != want {
			t.Errorf("Unescape(%s) = %q, encoding/json %q", lit, got, want)
		}
		if got := (Value{lit}).Str(); got != want {
			t.Errorf("Str(%s) = %q, encoding/json %q", lit, got, want)
		}
		if got := gjson.Parse(lit).String(); got != Unescape(lit[1:len(lit)-1]) {
			t.Errorf("%s: gjson %q, Unescape %q", lit, got, Unescape(lit[1:len(lit)-1]))
		}
	}
}

// Unescape never panics, and where gjson reads text that is not valid
// JSON it reads the same.
func FuzzUnescape(f *testing.F) {
	for _, s := range []string{`a\"b`, `\u4e2d`, `\ud83d\ude00`, `\ud83d`, `\u12`, `\`, `\x`, "a\x01b", `\ud800\u`, `\ud800\udbff`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Unescape(s)
		lit := `"` + s + `"`
		if q, _ := CloseQuote(lit, 0); q != len(lit)-1 || !strings.Contains(s, `\`) {
			return // not one string literal (gjson would read something else), or one gjson does not unescape
		}
		if want := gjson.Parse(lit).String(); got != want {
			t.Errorf("Unescape(%q) = %q, gjson %q", s, got, want)
		}
	})
}
