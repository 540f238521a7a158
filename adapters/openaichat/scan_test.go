package openaichat

import (
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/modelwire/modelwire/adapters/adapterstest"
	"github.com/modelwire/modelwire/adapters/wire"
)

// walk lists key=raw for every member, and recurses into objects and
// arrays, once with our scanner and once with gjson, so the two can be
// compared on any valid JSON.
func walkOurs(raw string, out *[]string) {
	switch {
	case strings.HasPrefix(raw, "{"):
		for m := wire.IterMembers(raw); ; {
			k, v, ok := m.Next()
			if !ok {
				if m.End() != len(raw) {
					*out = append(*out, "END-MISMATCH")
				}
				return
			}
			*out = append(*out, k+"="+v)
			walkOurs(v, out)
		}
	case strings.HasPrefix(raw, "["):
		for e := wire.IterElements(raw); ; {
			v, ok := e.Next()
			if !ok {
				if e.End() != len(raw) {
					*out = append(*out, "END-MISMATCH")
				}
				return
			}
			*out = append(*out, "[]="+v)
			walkOurs(v, out)
		}
	case strings.HasPrefix(raw, `"`):
		*out = append(*out, "text="+wire.Unquote(raw))
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

// scanBounded walks s with both iterators, recursing into every value,
// and fails t unless each step moves forward inside s: at most one step
// per byte, positions in [0, len(s)], each value a non-empty piece of s
// at the position the iterator was at, end() inside s. A scanner that
// loops, walks backwards or reads past the end fails here instead of
// hanging or panicking.
func scanBounded(t *testing.T, s string, depth int) {
	t.Helper()
	if depth > 64 {
		return
	}
	m := wire.IterMembers(s)
	for steps := 0; ; steps++ {
		if steps > len(s) {
			t.Fatalf("members of %q: more steps than bytes", s)
		}
		before := m.I
		k, v, ok := m.Next()
		if m.I < before || m.I > len(s) {
			t.Fatalf("members of %q: position %d after %d", s, m.I, before)
		}
		if !ok {
			break
		}
		if v == "" || !strings.HasSuffix(s[:m.I], v) {
			t.Fatalf("members of %q: key %q value %q does not end at the position %d", s, k, v, m.I)
		}
		scanBounded(t, v, depth+1)
	}
	if end := m.End(); end < 0 || end > len(s) {
		t.Fatalf("members of %q: end %d", s, end)
	}
	e := wire.IterElements(s)
	for steps := 0; ; steps++ {
		if steps > len(s) {
			t.Fatalf("elements of %q: more steps than bytes", s)
		}
		before := e.I
		v, ok := e.Next()
		if e.I < before || e.I > len(s) {
			t.Fatalf("elements of %q: position %d after %d", s, e.I, before)
		}
		if !ok {
			break
		}
		if v == "" || !strings.HasSuffix(s[:e.I], v) {
			t.Fatalf("elements of %q: value %q does not end at the position %d", s, v, e.I)
		}
		scanBounded(t, v, depth+1)
	}
	if end := e.End(); end < 0 || end > len(s) {
		t.Fatalf("elements of %q: end %d", s, end)
	}
	_ = wire.Unquote(s)
}

// The scanner must not panic, loop or read out of place on text that is
// not JSON (the decoder validates first, but the scanner does not rely on
// it); on the members it does find, its values are the text's own.
func TestScannerOnGarbage(t *testing.T) {
	for _, s := range []string{"", "{", "[", `{"a`, `{"a":`, `{"a":"`, `{"a":[1,`, `{"a":{"b":"\`, "}", "]", `{,}`, `{"a" "b"}`, `["\\`,
		`{"a":1,"b":`, `[1,2,`, `{"a":"x\"}`, `[[[[`, `{"a":{"a":{"a":`, "\x00{\"\x00\":1}"} {
		scanBounded(t, s, 0)
	}
	// What a truncated object yields: the members before the cut, then the
	// cut value as the rest of the text (the decoder never gets here: it
	// validates first).
	var got []string
	for m := wire.IterMembers(`{"a":1,"b":[2,3],"c":"x`); ; {
		k, v, ok := m.Next()
		if !ok {
			break
		}
		got = append(got, k+"="+v)
	}
	if strings.Join(got, " ") != `a=1 b=[2,3] c="x` {
		t.Fatalf("members of a cut object: %q", got)
	}
}

// FuzzScan: on any input the iterators stay bounded and in place, and on
// valid JSON they walk exactly what gjson.ForEach walks.
func FuzzScan(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":[1,{"b":"c\\"}]}`, `{"a":"`, `[1,2,`, ` { "k" : [ true , null ] } `, `{"s":"]}\"{["}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) {
		scanBounded(t, data, 0)
		if gjson.Valid(data) {
			sameWalk(t, data)
		}
	})
}
