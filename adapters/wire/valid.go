package wire

import "math/bits"

// The decoders' JSON validator. It accepts exactly what gjson.Valid
// accepts (the decoders' rule before it, kept so that no event is judged
// differently; FuzzValid compares the two): RFC 8259 grammar, strings
// free of control bytes with well-formed escapes, no UTF-8 check (the SSE
// reader has already replaced ill-formed UTF-8), any nesting depth. It
// differs in speed only: it is a loop with an explicit stack, not a
// recursion, and a string body is skipped eight bytes at a time, looking
// only for the bytes that need care (`"`, `\`, control bytes), so it runs
// several times faster than gjson.Valid or encoding/json.Valid on
// streamed events, which are mostly string bodies.

// Valid reports whether s is one JSON value, with optional white space
// around it.
func Valid(s string) bool {
	end, ok := ValueEnd(s, 0)
	return ok && SkipWS(s, end) == len(s)
}

// Members reads s, a JSON text, in one pass: it validates all of it and
// calls fn with the key and raw value (a sub-string of s) of each
// top-level member when s is an object. valid reports whether s is valid
// JSON (with white space around it), object whether it is an object; fn
// may have been called before s turned out invalid, so callers only
// collect in fn and act once valid is known. A key is its text between
// the quotes, unescaped when it has escapes.
func Members(s string, fn func(key, raw string)) (valid, object bool) {
	i := SkipWS(s, 0)
	if i >= len(s) || s[i] != '{' {
		return Valid(s), false
	}
	i = SkipWS(s, i+1)
	if i < len(s) && s[i] == '}' {
		return SkipWS(s, i+1) == len(s), true
	}
	for {
		if i >= len(s) || s[i] != '"' {
			return false, true
		}
		kEnd, ok := stringBodyEnd(s, i+1)
		if !ok {
			return false, true
		}
		key := Unquote(s[i:kEnd])
		i = SkipWS(s, kEnd)
		if i >= len(s) || s[i] != ':' {
			return false, true
		}
		i = SkipWS(s, i+1)
		end, ok := ValueEnd(s, i)
		if !ok {
			return false, true
		}
		fn(key, s[i:end])
		i = SkipWS(s, end)
		if i >= len(s) {
			return false, true
		}
		switch s[i] {
		case ',':
			i = SkipWS(s, i+1)
		case '}':
			return SkipWS(s, i+1) == len(s), true
		default:
			return false, true
		}
	}
}

// ValidObjectFrom reports whether s is valid JSON when s[:i] is already
// known to be a valid beginning of a top-level object that ends just after
// a member's colon: an earlier event began with the same bytes and was
// valid (Chat chunks repeat their envelope before "choices"), and the
// validator reads left to right, so it would be in the same state there.
func ValidObjectFrom(s string, i int) bool {
	for {
		end, ok := ValueEnd(s, i)
		if !ok {
			return false
		}
		i = SkipWS(s, end)
		if i >= len(s) {
			return false
		}
		switch s[i] {
		case '}':
			return SkipWS(s, i+1) == len(s)
		case ',':
		default:
			return false
		}
		if i = SkipWS(s, i+1); i >= len(s) || s[i] != '"' {
			return false
		}
		if end, ok = stringBodyEnd(s, i+1); !ok {
			return false
		}
		if i = SkipWS(s, end); i >= len(s) || s[i] != ':' {
			return false
		}
		i++
	}
}

// ValueEnd validates the JSON value that starts at s[i] (after white
// space) and returns the index just after it; false when no valid value
// starts there.
func ValueEnd(s string, i int) (int, bool) {
	// The open containers, one bit each (1: object), innermost lowest.
	// Four words cover 256 levels without allocating; deeper nesting
	// spills into more.
	var local [4]uint64
	stack := local[:0]
	depth := 0
	var ok bool
value:
	i = SkipWS(s, i)
	if i >= len(s) {
		return i, false
	}
	switch s[i] {
	case '"':
		if i, ok = stringBodyEnd(s, i+1); !ok {
			return i, false
		}
	case '{':
		if w := depth >> 6; w == len(stack) {
			stack = append(stack, 0)
		}
		stack[depth>>6] |= 1 << (depth & 63)
		depth++
		i = SkipWS(s, i+1)
		if i < len(s) && s[i] == '}' {
			depth--
			i++
			break
		}
		goto key
	case '[':
		if w := depth >> 6; w == len(stack) {
			stack = append(stack, 0)
		}
		stack[depth>>6] &^= 1 << (depth & 63)
		depth++
		i = SkipWS(s, i+1)
		if i < len(s) && s[i] == ']' {
			depth--
			i++
			break
		}
		goto value
	case 't':
		if len(s)-i < 4 || s[i:i+4] != "true" {
			return i, false
		}
		i += 4
	case 'f':
		if len(s)-i < 5 || s[i:i+5] != "false" {
			return i, false
		}
		i += 5
	case 'n':
		if len(s)-i < 4 || s[i:i+4] != "null" {
			return i, false
		}
		i += 4
	default:
		if i, ok = NumberEnd(s, i); !ok {
			return i, false
		}
	}
	// A value ended at i: what follows depends on the container.
	for depth > 0 {
		i = SkipWS(s, i)
		if i >= len(s) {
			return i, false
		}
		inObject := stack[(depth-1)>>6]&(1<<((depth-1)&63)) != 0
		switch c := s[i]; {
		case c == ',':
			i = SkipWS(s, i+1)
			if inObject {
				goto key
			}
			goto value
		case c == '}' && inObject, c == ']' && !inObject:
			depth--
			i++
		default:
			return i, false
		}
	}
	return i, true
key:
	// A member: s[i] must open its key.
	if i >= len(s) || s[i] != '"' {
		return i, false
	}
	if i, ok = stringBodyEnd(s, i+1); !ok {
		return i, false
	}
	i = SkipWS(s, i)
	if i >= len(s) || s[i] != ':' {
		return i, false
	}
	i++
	goto value
}

// NumberEnd validates the number that starts at s[i] (i < len(s)) and
// returns the index just after it: an optional minus, an integer part
// without leading zeros, an optional fraction and exponent.
func NumberEnd(s string, i int) (int, bool) {
	if s[i] == '-' {
		i++
	}
	if i >= len(s) || !isDigit(s[i]) {
		return i, false
	}
	if s[i] == '0' {
		i++
	} else {
		i = digitsEnd(s, i)
	}
	if i < len(s) && s[i] == '.' {
		i++
		if i >= len(s) || !isDigit(s[i]) {
			return i, false
		}
		i = digitsEnd(s, i)
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i >= len(s) || !isDigit(s[i]) {
			return i, false
		}
		i = digitsEnd(s, i)
	}
	return i, true
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func digitsEnd(s string, i int) int {
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return i
}

// SWAR constants: a byte repeated in every lane of a word.
const (
	lanes01 = 0x0101010101010101
	lanes80 = 0x8080808080808080
)

// word is the eight bytes at s[i:], read little-endian (one load).
func word(s string, i int) uint64 {
	b := s[i : i+8]
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

// careMask has the high bit set in the lane of the first byte of w (read
// little-endian) that is `"`, `\` or below 0x20; lanes above it may be
// set falsely (a borrow carries upward), so only the lowest set lane
// counts.
func careMask(w uint64) uint64 {
	quote := w ^ ('"' * lanes01)
	slash := w ^ ('\\' * lanes01)
	return ((quote - lanes01) &^ quote & lanes80) |
		((slash - lanes01) &^ slash & lanes80) |
		((w - 0x20*lanes01) &^ w & lanes80)
}

// StringEnd validates the JSON string whose opening quote is s[i] and
// returns the index just after its closing quote.
func StringEnd(s string, i int) (int, bool) {
	if i >= len(s) || s[i] != '"' {
		return i, false
	}
	return stringBodyEnd(s, i+1)
}

// stringBodyEnd validates a string body starting at s[i] (just after its
// opening quote) and returns the index just after the closing quote.
func stringBodyEnd(s string, i int) (int, bool) {
	for {
		for i+8 <= len(s) {
			if m := careMask(word(s, i)); m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				break
			}
			i += 8
		}
		for i < len(s) && s[i] >= 0x20 && s[i] != '"' && s[i] != '\\' {
			i++
		}
		if i >= len(s) {
			return i, false
		}
		switch c := s[i]; {
		case c == '"':
			return i + 1, true
		case c < 0x20:
			return i, false
		}
		// A backslash.
		i++
		if i >= len(s) {
			return i, false
		}
		switch s[i] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			i++
		case 'u':
			if len(s)-i < 5 || !isHex(s[i+1]) || !isHex(s[i+2]) || !isHex(s[i+3]) || !isHex(s[i+4]) {
				return i, false
			}
			i += 5
		default:
			return i, false
		}
	}
}

func isHex(c byte) bool {
	return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// Skim calls fn with the key and raw value of each member of raw, a JSON
// value already validated (by Members, as part of its enclosing text),
// when it is an object; anything else has no members. It checks nothing
// and finds each value's end with a fast skip, so reading a nested object
// costs far less than validating it again.
func Skim(raw string, fn func(key, raw string)) {
	if raw == "" || raw[0] != '{' {
		return
	}
	for m := IterMembers(raw); ; {
		key, val, ok := m.Next()
		if !ok {
			return
		}
		fn(key, val)
	}
}
