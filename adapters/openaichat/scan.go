package openaichat

import (
	"strconv"
	"strings"

	"github.com/modelwire/modelwire/adapters/wire"
)

// A minimal reader of JSON text that gjson.Valid has already accepted.
//
// Why not gjson.ForEach: it parses every value it passes (numbers through
// ParseFloat, nested values squashed and indexed), and a chunk is walked at
// four levels (chunk, choices, choice, delta), so the delta was scanned
// four times. These iterators only find where each member's value starts
// and ends, and let the decoder walk a nested object in place, so a chunk
// is scanned once after validation. They never panic on any input: every
// index is bounds-checked, and text that is not valid JSON just ends the
// iteration early.

// members iterates the members of a JSON object. key reads the next key
// and leaves the position at its value; the caller then takes the value
// with value, or decodes it in place and moves the position past it with
// skipTo.
type members struct {
	s string
	i int
}

func newMembers(obj string) members { return members{s: obj, i: skipWS(obj, 0)} }

func membersAt(s string, i int) members { return members{s: s, i: i} }

// key returns the next member's key, unquoted.
func (m *members) key() (string, bool) {
	s := m.s
	i := skipWS(s, m.i)
	if i < len(s) && (s[i] == '{' || s[i] == ',') {
		i++
	}
	i = skipWS(s, i)
	m.i = i
	if i >= len(s) || s[i] != '"' {
		return "", false
	}
	start := i
	i, esc := scanString(s, i)
	k := text(s, start, i, esc)
	i = skipWS(s, i)
	if i < len(s) && s[i] == ':' {
		i++
	}
	m.i = skipWS(s, i)
	return k, true
}

// peek is the first byte of the value at the position, 0 at the end.
func (m *members) peek() byte {
	if m.i < len(m.s) {
		return m.s[m.i]
	}
	return 0
}

// value returns the raw value at the position and moves past it.
func (m *members) value() string {
	start := m.i
	m.i = skipValue(m.s, start)
	return m.s[start:m.i]
}

// str returns the text of a string value at the position and moves past
// it; any other value is skipped and yields ok false.
func (m *members) str() (string, bool) {
	if m.peek() != '"' {
		m.value()
		return "", false
	}
	start := m.i
	end, esc := scanString(m.s, start)
	m.i = end
	return text(m.s, start, end, esc), true
}

// skipTo moves the position to end, just after a value decoded in place;
// a value that did not end (end before the position) ends the object.
func (m *members) skipTo(end int) {
	if end <= m.i {
		end = len(m.s)
	}
	m.i = end
}

// end is the index just after the object's closing brace, once key has
// returned false.
func (m *members) end() int {
	if m.i < len(m.s) && m.s[m.i] == '}' {
		return m.i + 1
	}
	return len(m.s)
}

// next returns the next member's key and raw value.
func (m *members) next() (key, val string, ok bool) {
	if key, ok = m.key(); !ok {
		return "", "", false
	}
	val = m.value()
	if val == "" {
		return "", "", false
	}
	return key, val, true
}

// elements iterates the elements of a JSON array, the same way.
type elements struct {
	s string
	i int
}

func newElements(arr string) elements { return elements{s: arr, i: skipWS(arr, 0)} }

func elementsAt(s string, i int) elements { return elements{s: s, i: i} }

// start moves to the next element and reports whether there is one.
func (e *elements) start() bool {
	s := e.s
	i := skipWS(s, e.i)
	if i < len(s) && (s[i] == '[' || s[i] == ',') {
		i++
	}
	e.i = skipWS(s, i)
	return e.i < len(s) && s[e.i] != ']'
}

func (e *elements) peek() byte {
	if e.i < len(e.s) {
		return e.s[e.i]
	}
	return 0
}

func (e *elements) value() string {
	start := e.i
	e.i = skipValue(e.s, start)
	return e.s[start:e.i]
}

func (e *elements) skipTo(end int) {
	if end <= e.i {
		end = len(e.s)
	}
	e.i = end
}

func (e *elements) end() int {
	if e.i < len(e.s) && e.s[e.i] == ']' {
		return e.i + 1
	}
	return len(e.s)
}

// next returns the next raw element.
func (e *elements) next() (string, bool) {
	if !e.start() {
		return "", false
	}
	v := e.value()
	return v, v != ""
}

func skipWS(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string literal that starts at
// s[i] (a quote).
func skipString(s string, i int) int {
	end, _ := scanString(s, i)
	return end
}

// scanString returns the index after the string literal that starts at
// s[i], and whether it holds an escape (wire.ScanString).
func scanString(s string, i int) (end int, escaped bool) { return wire.ScanString(s, i) }

// text returns the text of the string literal s[start:end].
func text(s string, start, end int, escaped bool) string {
	if end-start < 2 {
		return ""
	}
	if !escaped {
		return s[start+1 : end-1]
	}
	return wire.Unescape(s[start+1 : end-1])
}

// skipValue returns the index after the value that starts at s[i].
func skipValue(s string, i int) int {
	if i >= len(s) {
		return i
	}
	switch s[i] {
	case '"':
		return skipString(s, i)
	case '{', '[':
		depth := 0
		for i < len(s) {
			switch s[i] {
			case '"':
				i = skipString(s, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return len(s)
	}
	for i < len(s) && s[i] != ',' && s[i] != '}' && s[i] != ']' && s[i] != ' ' && s[i] != '\t' && s[i] != '\n' && s[i] != '\r' {
		i++
	}
	return i
}

// isString reports a raw value that is a string literal.
func isString(raw string) bool { return len(raw) >= 2 && raw[0] == '"' }

// unquote returns the text of a string literal; the common case (no
// escapes) is a substring, without copying. A raw value that is not a
// string yields "".
func unquote(raw string) string {
	if !isString(raw) {
		return ""
	}
	inner := raw[1 : len(raw)-1]
	if strings.IndexByte(inner, '\\') < 0 {
		return inner
	}
	return wire.Unescape(inner)
}

// rawInt reads a JSON number as an integer.
func rawInt(raw string) (int64, bool) {
	if n, err := strconv.ParseInt(raw, 10, 64); err == nil {
		return n, true
	}
	if f, err := strconv.ParseFloat(raw, 64); err == nil && f >= -1<<53 && f <= 1<<53 {
		return int64(f), true
	}
	return 0, false
}
