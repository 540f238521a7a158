package redact

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
)

// editJSON walks a JSON document and rebuilds it with two kinds of edit:
// a value whose path pointed says is named becomes "[redacted]" whole,
// and every other string value is mapped through str (when it changes,
// it is re-encoded; otherwise its bytes are kept as they were). Member
// names are never changed. A document that is not JSON is an error.
func editJSON(b []byte, pointed func(path []string) bool, str func(string) string) ([]byte, error) {
	w := &jsonEdit{b: b, pointed: pointed, str: str}
	w.ws()
	if err := w.value(nil, 0); err != nil {
		return nil, err
	}
	w.ws()
	if w.i != len(b) {
		return nil, errNotJSON
	}
	if w.out == nil {
		return b, nil
	}
	w.out = append(w.out, b[w.last:]...)
	return w.out, nil
}

var errNotJSON = errors.New("not JSON")

// maxDepth bounds the walk's recursion (a hostile body of nested arrays).
const maxDepth = 10000

type jsonEdit struct {
	b       []byte
	i       int
	out     []byte // nil until the first edit
	last    int    // b[:last] is in out
	pointed func([]string) bool
	str     func(string) string
}

func (w *jsonEdit) ws() {
	for w.i < len(w.b) {
		switch w.b[w.i] {
		case ' ', '\t', '\n', '\r':
			w.i++
		default:
			return
		}
	}
}

// replace puts rep in place of b[start:end].
func (w *jsonEdit) replace(start, end int, rep []byte) {
	if w.out == nil {
		w.out = make([]byte, 0, len(w.b)+16)
	}
	w.out = append(w.out, w.b[w.last:start]...)
	w.out = append(w.out, rep...)
	w.last = end
}

var redactedJSON = []byte(`"` + Redacted + `"`)

func (w *jsonEdit) value(path []string, depth int) error {
	if depth > maxDepth || w.i >= len(w.b) {
		return errNotJSON
	}
	start := w.i
	named := w.pointed != nil && len(path) > 0 && w.pointed(path)
	var err error
	switch c := w.b[w.i]; {
	case c == '{':
		err = w.object(path, depth, named)
	case c == '[':
		err = w.array(path, depth, named)
	case c == '"':
		var end int
		end, err = w.skipString()
		if err == nil && !named && w.str != nil {
			var s string
			if uerr := json.Unmarshal(w.b[start:end], &s); uerr != nil {
				return errNotJSON
			}
			if t := w.str(s); t != s {
				w.replace(start, end, encodeString(t))
			}
		}
	default:
		for w.i < len(w.b) && !endsLiteral(w.b[w.i]) {
			w.i++
		}
		if !json.Valid(w.b[start:w.i]) {
			return errNotJSON
		}
	}
	if err != nil {
		return err
	}
	if named {
		w.replace(start, w.i, redactedJSON)
	}
	return nil
}

// object walks an object; inside a value named whole nothing is edited
// (the whole is replaced once it is walked).
func (w *jsonEdit) object(path []string, depth int, named bool) error {
	w.i++
	w.ws()
	if w.i < len(w.b) && w.b[w.i] == '}' {
		w.i++
		return nil
	}
	for {
		w.ws()
		if w.i >= len(w.b) || w.b[w.i] != '"' {
			return errNotJSON
		}
		ks := w.i
		ke, err := w.skipString()
		if err != nil {
			return err
		}
		var key string
		if err := json.Unmarshal(w.b[ks:ke], &key); err != nil {
			return errNotJSON
		}
		w.ws()
		if w.i >= len(w.b) || w.b[w.i] != ':' {
			return errNotJSON
		}
		w.i++
		w.ws()
		if err := w.child(path, key, depth, named); err != nil {
			return err
		}
		w.ws()
		if w.i >= len(w.b) {
			return errNotJSON
		}
		if w.b[w.i] == '}' {
			w.i++
			return nil
		}
		if w.b[w.i] != ',' {
			return errNotJSON
		}
		w.i++
	}
}

func (w *jsonEdit) array(path []string, depth int, named bool) error {
	w.i++
	w.ws()
	if w.i < len(w.b) && w.b[w.i] == ']' {
		w.i++
		return nil
	}
	for n := 0; ; n++ {
		w.ws()
		if err := w.child(path, strconv.Itoa(n), depth, named); err != nil {
			return err
		}
		w.ws()
		if w.i >= len(w.b) {
			return errNotJSON
		}
		if w.b[w.i] == ']' {
			w.i++
			return nil
		}
		if w.b[w.i] != ',' {
			return errNotJSON
		}
		w.i++
	}
}

// child walks a member's or element's value; under a value named whole
// it only skips (no edit inside what is replaced).
func (w *jsonEdit) child(path []string, tok string, depth int, named bool) error {
	if named {
		saved := *w
		w.pointed, w.str, w.out = nil, nil, nil
		err := w.value(nil, depth+1)
		i := w.i
		*w = saved
		w.i = i
		return err
	}
	p := append(path[:len(path):len(path)], tok)
	return w.value(p, depth+1)
}

// endsLiteral reports whether c ends a number, true, false or null.
func endsLiteral(c byte) bool {
	switch c {
	case ',', ']', '}', ' ', '\t', '\r', '\n':
		return true
	}
	return false
}

// skipString moves past a string starting at w.i and returns its end.
func (w *jsonEdit) skipString() (int, error) {
	w.i++
	for w.i < len(w.b) {
		switch w.b[w.i] {
		case '\\':
			w.i += 2
		case '"':
			w.i++
			return w.i, nil
		default:
			w.i++
		}
	}
	return 0, errNotJSON
}

// encodeString encodes s as a JSON string without HTML escaping.
func encodeString(s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return bytes.TrimRight(b.Bytes(), "\n")
}
