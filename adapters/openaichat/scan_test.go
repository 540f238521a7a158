package openaichat

import (
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/modelwire/modelwire/adapters/adapterstest"
)

// walk lists key=raw for every member, and recurses into objects and
// arrays, once with our scanner and once with gjson, so the two can be
// compared on any valid JSON.
func walkOurs(raw string, out *[]string) {
	switch {
	case strings.HasPrefix(raw, "{"):
		for m := newMembers(raw); ; {
			k, v, ok := m.next()
			if !ok {
				if m.end() != len(raw) {
					*out = append(*out, "END-MISMATCH")
				}
				return
			}
			*out = append(*out, k+"="+v)
			walkOurs(v, out)
		}
	case strings.HasPrefix(raw, "["):
		for e := newElements(raw); ; {
			v, ok := e.next()
			if !ok {
				if e.end() != len(raw) {
					*out = append(*out, "END-MISMATCH")
				}
				return
			}
			*out = append(*out, "[]="+v)
			walkOurs(v, out)
		}
	case strings.HasPrefix(raw, `"`):
		*out = append(*out, "text="+unquote(raw))
	}
}

func walkGJSON(r gjson.Result, out *[]string) {
	switch {
	case r.IsObject():
		r.ForEach(func(k, v gjson.Result) bool {
			*out = append(*out, k.Str+"="+v.Raw)
			walkGJSON(v, out)
			return true
		})
	case r.IsArray():
		r.ForEach(func(_, v gjson.Result) bool {
			*out = append(*out, "[]="+v.Raw)
			walkGJSON(v, out)
			return true
		})
	case r.Type == gjson.String:
		*out = append(*out, "text="+r.Str)
	}
}

func sameWalk(t *testing.T, doc string) {
	t.Helper()
	if !gjson.Valid(doc) {
		t.Fatalf("not valid JSON: %s", doc)
	}
	doc = strings.TrimSpace(doc)
	var a, b []string
	walkOurs(doc, &a)
	walkGJSON(gjson.Parse(doc), &b)
	if strings.Join(a, "\n") != strings.Join(b, "\n") {
		t.Errorf("scanner and gjson differ on %s:\nours:  %q\ngjson: %q", doc, a, b)
	}
}

func TestScannerAgreesWithGJSON(t *testing.T) {
	for _, doc := range []string{
		`{}`, `[]`, `{"a":{}}`, `{"a":[]}`, `{"a":[{}],"b":{"c":[]}}`,
		` { "a" : 1 , "b" : [ 1 , 2 , { "c" : null } ] , "d" : "x" } `,
		"{\n\t\"a\":\r\n true,\"b\":false}",
		`{"a\"b":"c\\","d\\":"\\\"","e":"\u4e2d\u6587 \ud83d\ude00"}`,
		`{"k":"` + strings.Repeat(`ab\"`, 40) + `","l":"` + strings.Repeat("中", 50) + `\\"}`,
		`{"con\u0074ent":"x"}`,
		`{"n":-1.5e+10,"m":0,"o":[-0.0,1E3]}`,
		`{"s":"]}\"{["}`,
	} {
		sameWalk(t, doc)
	}
	// every payload of every capture
	for _, name := range captures(t) {
		body := string(adapterstest.ReadCapture(t, name))
		if strings.HasSuffix(name, ".json") {
			sameWalk(t, body)
			continue
		}
		for _, line := range strings.Split(body, "\n") {
			if p, ok := strings.CutPrefix(line, "data: "); ok && gjson.Valid(p) {
				sameWalk(t, p)
			}
		}
	}
}

// The scanner must not panic or loop on text that is not JSON (the
// decoder validates first, but the scanner does not rely on it).
// TestScannerOnGarbage fails by panicking or by never terminating: the
// scanners must stop on every truncated or malformed input.
func TestScannerOnGarbage(t *testing.T) {
	for _, s := range []string{"", "{", "[", `{"a`, `{"a":`, `{"a":"`, `{"a":[1,`, `{"a":{"b":"\`, "}", "]", `{,}`, `{"a" "b"}`, `["\\`} {
		for m := newMembers(s); ; {
			if _, _, ok := m.next(); !ok {
				break
			}
		}
		for e := newElements(s); ; {
			if _, ok := e.next(); !ok {
				break
			}
		}
		_ = unquote(s)
	}
}
