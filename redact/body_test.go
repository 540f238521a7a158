package redact

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const card = `\b\d{4}(?: ?\d{4}){3}\b`

func rules(t *testing.T, file string) *BodyRules {
	t.Helper()
	r, err := ParseBodyRules([]byte(file))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestBodyRulesErrors(t *testing.T) {
	for _, c := range []struct{ file, want string }{
		{`{"patterns": ["a(b"]}`, `patterns[0] "a(b": error parsing regexp`},
		{`{"patterns": ["x", "[z-a]"]}`, `patterns[1] "[z-a]"`},
		{`{"patterns": ["a*"]}`, `patterns[0] "a*": matches the empty text`},
		{`{"patterns": [""]}`, `patterns[0]: empty pattern`},
		{`{"pointers": ["metadata/email"]}`, `pointers[0] "metadata/email": a JSON Pointer starts with /`},
		{`{"pointers": ["/a", ""]}`, `pointers[1] "": empty pointer`},
		{`{"pointers": ["/a~2b"]}`, `pointers[0] "/a~2b": token "a~2b": ~ must be followed by 0 or 1`},
		{`{"pattern": ["x"]}`, `unknown field "pattern"`},
		{`{}`, `no patterns and no pointers`},
		{`[1]`, `not a rules object`},
		{`{"patterns": ["x"]} {}`, `text after the JSON object`},
	} {
		_, err := ParseBodyRules([]byte(c.file))
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: got %v, want one line containing %q", c.file, err, c.want)
		}
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "rules.json")
	if err := os.WriteFile(p, []byte(`{"pointers": ["x"]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadBodyRules(p); err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), `pointers[0] "x"`) {
		t.Errorf("LoadBodyRules: %v, want the file and the pointer named", err)
	}
	if _, err := LoadBodyRules(filepath.Join(dir, "none.json")); err == nil {
		t.Error("a missing file loaded")
	}
}

func TestBodyRulesPointers(t *testing.T) {
	r := rules(t, `{"pointers": ["/metadata/user_email", "/messages/*/content", "/a~1b/~0c", "/list/1", "/*/deep"]}`)
	in := `{"model": "m", "metadata": {"user_email": "ann@example.com", "other": "keep"},
 "messages": [{"role": "user", "content": "hi ann"}, {"role": "assistant", "content": [{"type": "text", "text": "x"}]}],
 "a/b": {"~c": 42, "c": 1}, "list": ["zero", {"one": true}, "two"], "x": {"deep": [1, 2]}, "y": {"shallow": "s"}}`
	got := string(r.JSON([]byte(in)))
	if !json.Valid([]byte(got)) {
		t.Fatalf("invalid JSON: %s", got)
	}
	var v map[string]any
	_ = json.Unmarshal([]byte(got), &v)
	want := `{"model": "m", "metadata": {"user_email": "[redacted]", "other": "keep"},
 "messages": [{"role": "user", "content": "[redacted]"}, {"role": "assistant", "content": "[redacted]"}],
 "a/b": {"~c": "[redacted]", "c": 1}, "list": ["zero", "[redacted]", "two"], "x": {"deep": "[redacted]"}, "y": {"shallow": "s"}}`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	// Nothing named: the bytes are the same slice's.
	same := []byte(`{"metadata": {"user": 1}}`)
	if out := r.JSON(same); &out[0] != &same[0] {
		t.Error("an untouched document was copied")
	}
}

func TestBodyRulesPatterns(t *testing.T) {
	r := rules(t, `{"patterns": ["`+strings.ReplaceAll(card, `\`, `\\`)+`", "[a-z]+@[a-z]+\\.com"], "pointers": ["/id"]}`)
	in := `{"id": 7, "text": "card 4111 1111 1111 1111 <b> & ann@x.com", "n": 4111111111111111, "k": ["4111111111111111"]}`
	got := string(r.JSON([]byte(in)))
	want := `{"id": "[redacted]", "text": "card [redacted] <b> & [redacted]", "n": 4111111111111111, "k": ["[redacted]"]}`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if got := string(r.JSON([]byte("not json 4111 1111 1111 1111"))); got != "not json [redacted]" {
		t.Errorf("text fallback: %s", got)
	}
	if got := r.Text("a 4111 1111 1111 1111 b"); got != "a [redacted] b" {
		t.Errorf("Text: %s", got)
	}
	// An escaped string is decoded, matched, and encoded again.
	if got := string(r.JSONStrings([]byte(`{"t":"\u0034111 1111 1111 1111\n"}`))); got != `{"t":"[redacted]\n"}` {
		t.Errorf("escaped: %s", got)
	}
}

// A match split across parts is cut in each part that holds a piece of
// it, and the joined result is what Text gives for the joined text.
func TestBodyRulesSplit(t *testing.T) {
	r := rules(t, `{"patterns": ["`+strings.ReplaceAll(card, `\`, `\\`)+`", "ann@example\\.com"]}`)
	for _, parts := range [][]string{
		{"Card: 4111 1111 ", "1111 1111 ok"},
		{"4", "111 1111 1111 11", "11", " and ann@", "example.com."},
		{"no match ", "here"},
		{"", "4111 1111 1111 1111", ""},
		{"x 4111 1111 1111 1111 y 4111", " 1111 1111 1111"},
	} {
		cuts := r.Split(parts)
		var joined strings.Builder
		for i, p := range parts {
			var c []Cut
			if cuts != nil {
				c = cuts[i]
			}
			out := CutText(p, c)
			for _, piece := range Pieces(p, c) {
				if strings.Contains(out, piece) && piece != " " {
					t.Errorf("%q: part %d still holds %q: %q", parts, i, piece, out)
				}
			}
			for _, frag := range []string{"4111", "1111", "ann@", "example.com"} {
				if strings.Contains(out, frag) {
					t.Errorf("%q: part %d holds %q: %q", parts, i, frag, out)
				}
			}
			joined.WriteString(out)
		}
		if want := r.Text(strings.Join(parts, "")); joined.String() != want {
			t.Errorf("%q: joined %q, Text %q", parts, joined.String(), want)
		}
	}
}

func TestStrings(t *testing.T) {
	out, ok := Strings([]byte(`{"delta":"1111 1111 ok","type":"x","n":[1,"1111 1111 ok"]}`), func(s string) string {
		if s == "1111 1111 ok" {
			return " ok"
		}
		return s
	})
	if !ok || string(out) != `{"delta":" ok","type":"x","n":[1," ok"]}` {
		t.Errorf("%v %s", ok, out)
	}
	if _, ok := Strings([]byte(`{"a":`), strings.ToUpper); ok {
		t.Error("a cut document passed as JSON")
	}
}

// Rules built by hand (not loaded) apply their pointers too.
func TestBodyRulesByHand(t *testing.T) {
	r := &BodyRules{Pointers: []string{"/a/*"}}
	if got := string(r.JSON([]byte(`{"a":[1,{"b":2}],"c":3}`))); got != `{"a":["[redacted]","[redacted]"],"c":3}` {
		t.Errorf("got %s", got)
	}
}

func TestBodyRulesPointed(t *testing.T) {
	r := rules(t, `{"patterns": ["secret"], "pointers": ["/choices/*/delta/content"]}`)
	in := `{"choices":[{"delta":{"content":"hi ann"},"note":"secret"}]}`
	if got := string(r.Pointed([]byte(in))); got != `{"choices":[{"delta":{"content":"[redacted]"},"note":"secret"}]}` {
		t.Errorf("got %s", got)
	}
	if got := string(r.Pointed([]byte("[DONE]"))); got != "[DONE]" {
		t.Errorf("not JSON: %s", got)
	}
}
