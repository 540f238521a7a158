package wire

import (
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// validCases are JSON texts a decoder meets, good and bad; the verdict is
// gjson.Valid's, the rule the decoders applied before Valid.
var validCases = []string{
	``, ` `, `{}`, ` {} `, `[]`, `[ ]`, `{ }`, `"a"`, `0`, `-0`, `1.5e+3`, `true`, `false`, `null`,
	`{"type":"response.output_text.delta","delta":"héllo 你好","sequence_number":3}`,
	`{"a":[1,2,{"b":null}],"c":{"d":[]}}`,
	// Bad escapes.
	`"\x"`, `"\u12"`, `"\u12G4"`, `"\uD800"`, `"\/\b\f\n\r\t\"\\"`, `"a\`, `"\`,
	// Control bytes and invalid UTF-8 inside strings (gjson does not check UTF-8).
	"\"a\tb\"", "\"a\x00b\"", "\"a\x1fb\"", "\"a\x7fb\"", "\"\xff\xfe\"", "\"\xe4\xbd\"", "{\"k\xff\":1}",
	// Truncated or malformed numbers.
	`-`, `1.`, `1.e5`, `1e`, `1e+`, `01`, `-01`, `.5`, `+1`, `1.5.5`, `[1,]`, `[-]`, `{"a":1e}`, `2e-7`, `{"a":-}`,
	// Truncated structures.
	`{`, `[`, `{"a"`, `{"a":`, `{"a":1`, `{"a":1,`, `[1`, `[1,`, `{"a":1}}`, `[1]]`, `{"a" 1}`, `{a:1}`,
	`{"a":1,}`, `{,"a":1}`, `[,1]`, `{"a":1 "b":2}`, `[1 2]`, `{"a":[}`, `[{]}`, `{"a":{]}`, `tru`, `nul`, `fals`, `truex`,
	`{} {}`, `{}x`, "\t\r\n{}\n", `"abc`, `"abcdefghijklmnop`, `"abcdefghijklmnop\"`, `{"abcdefgh":"ijklmnopqrstuvw\u0041xyz"}`,
}

func TestValidMatchesGJSON(t *testing.T) {
	cases := append([]string(nil), validCases...)
	// Deep nesting, which gjson accepted at any depth: still accepted,
	// without recursion; unbalanced, rejected.
	for _, n := range []int{63, 64, 65, 300, 100000} {
		cases = append(cases, strings.Repeat("[", n)+strings.Repeat("]", n),
			strings.Repeat(`{"a":[`, n)+"1"+strings.Repeat("]}", n),
			strings.Repeat("[", n)+strings.Repeat("]", n-1),
			strings.Repeat(`{"a":[`, n)+"1"+strings.Repeat("]}", n-1)+"}")
	}
	// Every prefix of a good event is judged alike too.
	good := `{"type":"x","arr":[1,-2.5e3,true,false,null,{"k":"v\n\u00e9"}],"s":"` + strings.Repeat("long text 中文 ", 5) + `"}`
	for i := range good {
		cases = append(cases, good[:i])
	}
	for _, s := range cases {
		if got, want := Valid(s), gjson.Valid(s); got != want {
			t.Errorf("Valid(%.60q) = %v, gjson.Valid says %v", s, got, want)
		}
	}
}

func TestMembers(t *testing.T) {
	var keys, vals []string
	valid, object := Members(` {"type" : "a\"b", "n\u0061me":[1, {"x":"}"}], "e":{} } `, func(k, v string) {
		keys, vals = append(keys, k), append(vals, v)
	})
	if !valid || !object {
		t.Fatalf("valid %v object %v", valid, object)
	}
	if strings.Join(keys, "|") != "type|name|e" || strings.Join(vals, "|") != `"a\"b"|[1, {"x":"}"}]|{}` {
		t.Errorf("keys %q values %q", keys, vals)
	}
	for _, s := range validCases {
		valid, object := Members(s, func(string, string) {})
		if want := gjson.Valid(s); valid != want {
			t.Errorf("Members(%.60q) valid = %v, gjson.Valid says %v", s, valid, want)
		}
		if want := valid && gjson.Parse(s).IsObject(); valid && object != want {
			t.Errorf("Members(%.60q) object = %v, want %v", s, object, want)
		}
	}
}

// envelope is a Chat chunk's beginning, up to its choices' value.
const envelope = `{"id":"c1","object":"chat.completion.chunk","choices":`

func TestValidObjectFrom(t *testing.T) {
	tails := append([]string{`[]}`, `[{"delta":{"content":"hi"}}],"usage":null}`, ` [] } `, `[]`, `[],}`, `[]}x`, `[],"a"}`, `[],"a":}`, `[],"a":1}`, `[] "a":1}`, `}`, ``}, validCases...)
	for _, tail := range tails {
		s := envelope + tail
		if got, want := ValidObjectFrom(s, len(envelope)), gjson.Valid(s); got != want {
			t.Errorf("ValidObjectFrom(%.80q) = %v, gjson.Valid says %v", s, got, want)
		}
	}
}

func FuzzValid(f *testing.F) {
	for _, s := range validCases {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := gjson.Valid(s)
		if got := Valid(s); got != want {
			t.Fatalf("Valid(%q) = %v, gjson.Valid says %v", s, got, want)
		}
		if valid, object := Members(s, func(string, string) {}); valid != want || (valid && object != gjson.Parse(s).IsObject()) {
			t.Fatalf("Members(%q) = %v, %v; gjson.Valid says %v", s, valid, object, want)
		}
		if got, want := ValidObjectFrom(envelope+s, len(envelope)), gjson.Valid(envelope+s); got != want {
			t.Fatalf("ValidObjectFrom(%q) = %v, gjson.Valid says %v", envelope+s, got, want)
		}
	})
}

func BenchmarkValid(b *testing.B) {
	ev := `{"type":"response.output_text.delta","sequence_number":1234,"item_id":"msg_68af0c1b2c3d","output_index":0,"content_index":0,"delta":"` +
		strings.Repeat("Hello 世界, a streamed delta. ", 4) + `","logprobs":[],"obfuscation":"abcDEF123"}`
	b.Run("wire", func(b *testing.B) {
		b.SetBytes(int64(len(ev)))
		for b.Loop() {
			if !Valid(ev) {
				b.Fatal("invalid")
			}
		}
	})
	b.Run("gjson", func(b *testing.B) {
		b.SetBytes(int64(len(ev)))
		for b.Loop() {
			if !gjson.Valid(ev) {
				b.Fatal("invalid")
			}
		}
	})
}
