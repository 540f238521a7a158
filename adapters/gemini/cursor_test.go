package gemini

import (
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/modelwire/modelwire/adapters/adapterstest"
)

func TestCursor(t *testing.T) {
	c := cursor{s: ` {"a": "x\"y\\", "b": [1, {"c": true}, "]"], "d": null, "e": "\u4e2d"} `}
	var got []string
	c.object(func(k string) bool {
		switch k {
		case "a", "e":
			got = append(got, k+"="+c.str())
			return true
		}
		return false
	})
	if !c.end() || len(got) != 2 || got[0] != `a=x"y\` || got[1] != "e=中" {
		t.Fatalf("got %q, end %v", got, c.end())
	}
	for _, bad := range []string{`{"a":}`, `{"a":1,}`, `[1 2]`, `{"a" 1}`, `"\x"`, "\"a\tb\"", `01`, `1.`, `-`, `tru`, `{"a":1}x`, `"\ud8"`} {
		c := cursor{s: bad}
		c.skip()
		if c.end() {
			t.Errorf("%s accepted", bad)
		}
	}
}

// FuzzCursorValid: the cursor accepts exactly what encoding/json.Valid
// accepts, reading values it skips and values it walks into alike.
func FuzzCursorValid(f *testing.F) {
	for _, s := range adapterstest.SeedsFromTestdata(f, ".sse", ".body.json", ".error.json") {
		f.Add(string(s))
	}
	for _, s := range []string{`{"a":`, `[[[`, `{"a" 1}`, `-0.5e+3`, `"\u00e9"`, `[1,]`, `{"x":[{"y":"z"}]}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := json.Valid([]byte(s))
		skip := cursor{s: s}
		skip.skip()
		walked := cursor{s: s}
		walk(&walked)
		if skip.end() != want || walked.end() != want {
			t.Fatalf("%q: skip %v, walk %v, encoding/json %v", s, skip.end(), walked.end(), want)
		}
	})
}

// walk reads every value through the callbacks, as the decoder does.
func walk(c *cursor) {
	switch c.peek() {
	case '{':
		c.object(func(string) bool { walk(c); return true })
	case '[':
		c.array(func(int) bool { walk(c); return true })
	case '"':
		_ = c.str()
	default:
		_ = c.raw()
	}
}

// FuzzStr: the cursor's unescaping agrees with encoding/json on every
// valid JSON string literal of valid UTF-8 (the SSE reader has already
// replaced ill-formed bytes by U+FFFD).
func FuzzStr(f *testing.F) {
	for _, s := range []string{`a\nb`, `\"q\"`, `\u4e2d\u6587`, `\ud83d\ude00`, `\ud800x`, `\/\\\b\f\r\t`, `plain`, `x\u0000y`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		q := `"` + body + `"`
		var want string
		if !utf8.ValidString(body) || !gjson.Valid(q) || json.Unmarshal([]byte(q), &want) != nil {
			return
		}
		c := cursor{s: q}
		if got := c.str(); got != want {
			t.Fatalf("%s: got %q, want %q", q, got, want)
		}
	})
}
