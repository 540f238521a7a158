package wire

import (
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
)

// Pull iterators over the members of a JSON object and the elements of a
// JSON array, for text already validated (Valid, ValidObjectFrom): they
// only find where each value starts and ends, and let a decoder walk a
// nested value in place, so a chunk is scanned once after validation.
//
// Why not gjson.ForEach: it parses every value it passes (numbers through
// ParseFloat, nested values squashed and indexed), and a Chat chunk is
// walked at four levels (chunk, choices, choice, delta), so the delta was
// scanned four times.
//
// They never panic on any input: every index is bounds-checked, and text
// that is not valid JSON just ends the iteration early.

// MemberIter iterates the members of a JSON object. Key reads the next key
// and leaves the position I at its value; the caller then takes the value
// with Value or Str, or decodes it in place and moves past it with SkipTo.
type MemberIter struct{ scanPos }

// IterMembers iterates the object obj.
func IterMembers(obj string) MemberIter { return MemberIter{scanPos{obj, SkipWS(obj, 0)}} }

// IterMembersAt iterates the object that starts at s[i] (or resumes just
// after a member's colon or value).
func IterMembersAt(s string, i int) MemberIter { return MemberIter{scanPos{s, i}} }

// Key returns the next member's key, unquoted.
func (m *MemberIter) Key() (string, bool) {
	s := m.S
	i := SkipWS(s, m.I)
	if i < len(s) && (s[i] == '{' || s[i] == ',') {
		i++
	}
	i = SkipWS(s, i)
	m.I = i
	if i >= len(s) || s[i] != '"' {
		return "", false
	}
	start := i
	i, esc := ScanString(s, i)
	k := literalText(s, start, i, esc)
	i = SkipWS(s, i)
	if i < len(s) && s[i] == ':' {
		i++
	}
	m.I = SkipWS(s, i)
	return k, true
}

// End is the index just after the object's closing brace, once Key has
// returned false.
func (m *MemberIter) End() int { return m.end('}') }

// Str returns the text of a string value at the position and moves past
// it; any other value is skipped and yields ok false.
func (m *MemberIter) Str() (string, bool) {
	if m.Peek() != '"' {
		m.Value()
		return "", false
	}
	start := m.I
	end, esc := ScanString(m.S, start)
	m.I = end
	return literalText(m.S, start, end, esc), true
}

// Next returns the next member's key and raw value.
func (m *MemberIter) Next() (key, val string, ok bool) {
	if key, ok = m.Key(); !ok {
		return "", "", false
	}
	val = m.Value()
	if val == "" {
		return "", "", false
	}
	return key, val, true
}

// ElementIter iterates the elements of a JSON array, the same way.
type ElementIter struct{ scanPos }

// IterElements iterates the array arr.
func IterElements(arr string) ElementIter { return ElementIter{scanPos{arr, SkipWS(arr, 0)}} }

// IterElementsAt iterates the array that starts at s[i].
func IterElementsAt(s string, i int) ElementIter { return ElementIter{scanPos{s, i}} }

// Start moves to the next element and reports whether there is one.
func (e *ElementIter) Start() bool {
	s := e.S
	i := SkipWS(s, e.I)
	if i < len(s) && (s[i] == '[' || s[i] == ',') {
		i++
	}
	e.I = SkipWS(s, i)
	return e.I < len(s) && s[e.I] != ']'
}

// End is the index just after the array's closing bracket, once Start has
// returned false.
func (e *ElementIter) End() int { return e.end(']') }

// Next returns the next raw element.
func (e *ElementIter) Next() (string, bool) {
	if !e.Start() {
		return "", false
	}
	v := e.Value()
	return v, v != ""
}

// scanPos is an iterator's text and position, and what both iterators do
// at the position.
type scanPos struct {
	S string // the text
	I int    // the position in S
}

// Peek is the first byte of the value at the position, 0 at the end.
func (p *scanPos) Peek() byte {
	if p.I < len(p.S) {
		return p.S[p.I]
	}
	return 0
}

// Value returns the raw value at the position and moves past it.
func (p *scanPos) Value() string {
	start := p.I
	p.I = SkipValue(p.S, start)
	return p.S[start:p.I]
}

// SkipTo moves the position to end, just after a value decoded in place;
// a value that did not end (end before the position) ends the object or
// array.
func (p *scanPos) SkipTo(end int) {
	if end <= p.I {
		end = len(p.S)
	}
	p.I = end
}

// end is the index just after the closing byte at the position, len(S)
// when another byte is there.
func (p *scanPos) end(closing byte) int {
	if p.I < len(p.S) && p.S[p.I] == closing {
		return p.I + 1
	}
	return len(p.S)
}

// literalText is the text of the string literal s[start:end], which holds
// an escape when escaped is set.
func literalText(s string, start, end int, escaped bool) string {
	if end-start < 2 {
		return ""
	}
	if !escaped {
		return s[start+1 : end-1]
	}
	return Unescape(s[start+1 : end-1])
}

// IsString reports a raw value that is a string literal.
func IsString(raw string) bool { return len(raw) >= 2 && raw[0] == '"' }

// Unquote is the text of a string literal, its escapes decoded (Unescape);
// the common case (no escapes) is a sub-string, without copying. A raw
// value that is not a string yields "".
func Unquote(raw string) string {
	if !IsString(raw) {
		return ""
	}
	inner := raw[1 : len(raw)-1]
	if strings.IndexByte(inner, '\\') < 0 {
		return inner
	}
	return Unescape(inner)
}

// ReadString validates the JSON string whose opening quote is s[i]
// (StringEnd) and returns its text, escapes decoded, and the index just
// after it: the decoders' fast paths read their one string this way.
func ReadString(s string, i int) (text string, end int, ok bool) {
	end, ok = StringEnd(s, i)
	if !ok {
		return "", i, false
	}
	return Unquote(s[i:end]), end, true
}

// GJSONInt reads a JSON value as gjson's Result.Int reads it (a fraction
// truncated, a huge value clamped, a string's digits, true as 1: the
// decoders' rule from before their scanners, kept so that no event reads
// differently), and whether it is a number. Small integers, the indexes
// and sequence numbers of a stream, are read without gjson.
func GJSONInt(raw string) (n int64, number bool) {
	if n, end, ok := SmallIndex(raw, 0); ok && end == len(raw) {
		return n, true
	}
	r := gjson.Parse(raw)
	return r.Int(), r.Type == gjson.Number
}

// Int reads a JSON number as an integer: exactly when it is written as
// one, truncated when it has a fraction or exponent and its value is
// within ±2^53; false for anything else.
func Int(raw string) (int64, bool) {
	if n, err := strconv.ParseInt(raw, 10, 64); err == nil {
		return n, true
	}
	if f, err := strconv.ParseFloat(raw, 64); err == nil && f >= -1<<53 && f <= 1<<53 {
		return int64(f), true
	}
	return 0, false
}
