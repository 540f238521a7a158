package jsonschema

// Reading JSON: one value with exact numbers, and JSON Pointers (RFC 6901).

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// ParseJSON reads one JSON value with numbers kept exact (json.Number: a
// schema's limits compare exactly, and 18000 never becomes 1.8e+04 in a
// diff) and nothing but white space after it.
func ParseJSON(data []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if rest := bytes.TrimLeft(data[d.InputOffset():], " \t\r\n"); len(rest) > 0 {
		return nil, fmt.Errorf("invalid character %q after top-level value", rest[0])
	}
	return v, nil
}

// Lookup follows a JSON pointer (RFC 6901) into a document.
func Lookup(doc any, ptr string) (any, bool) {
	if ptr == "" {
		return doc, true
	}
	if !strings.HasPrefix(ptr, "/") {
		return nil, false
	}
	v := doc
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = UnescapeToken(tok)
		switch x := v.(type) {
		case map[string]any:
			next, ok := x[tok]
			if !ok {
				return nil, false
			}
			v = next
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(x) || tok != strconv.Itoa(i) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// canonicalPointer re-escapes a pointer the way compile names locations,
// so a $ref and the keyword walk share one node for one place.
func canonicalPointer(ptr string) string {
	if ptr == "" {
		return ""
	}
	toks := strings.Split(ptr[1:], "/")
	for i, tok := range toks {
		toks[i] = EscapeToken(UnescapeToken(tok))
	}
	return "/" + strings.Join(toks, "/")
}

// UnionKeys is every key of x or y, sorted: the members two objects are
// compared on (or the turns two sessions are).
func UnionKeys[K cmp.Ordered, V any](x, y map[K]V) []K {
	keys := make([]K, 0, len(x)+len(y))
	for k := range x {
		keys = append(keys, k)
	}
	for k := range y {
		if _, ok := x[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// EscapeToken writes a key as one JSON Pointer token (RFC 6901: ~ as ~0,
// / as ~1).
func EscapeToken(s string) string {
	if !strings.ContainsAny(s, "~/") {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// UnescapeToken reads a JSON Pointer token back into its key.
func UnescapeToken(tok string) string {
	if !strings.Contains(tok, "~") {
		return tok
	}
	return strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
}
