// Package wire is the adapters' one toolkit for the providers' wire
// formats. Its JSON primitives exist here once and nowhere else: validate
// (Valid, ValueEnd, StringEnd, NumberEnd), validate and read an event's
// members in one pass (Members), skip a validated value (SkipValue,
// SkipWS), walk an object or array in place (MemberIter, ElementIter,
// Skim, Value), read a string (Unquote, Unescape, ReadString) or a number
// (SmallIndex, Int, GJSONInt), pretty-print (AppendIndent). The decoders
// and their fast paths (adapters/*/decode*.go, fast.go) and the
// simulators (simulate*.go) keep only their protocol's logic on top of
// them. It also holds simulated ids, SSE framing and request checks as
// tables of named rules.
package wire

import (
	"iter"
	"math/bits"
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/modelwire/modelwire/adapters"
)

// Kind is the JSON type of a value. Each provider names types in its own
// words in its errors; those words stay with the provider's simulator.
type Kind uint8

// Kinds.
const (
	KindAbsent Kind = iota // no such member
	KindNull
	KindString
	KindNumber
	KindBool
	KindArray
	KindObject
)

// Value is one JSON value of a request body: its raw text, a sub-string
// of the body (no copy). The zero Value is an absent member. Values are
// only read from bodies that passed Valid, so their raw text is valid JSON.
type Value struct{ Raw string }

// Kind is v's JSON type.
func (v Value) Kind() Kind {
	if v.Raw == "" {
		return KindAbsent
	}
	switch v.Raw[0] {
	case '"':
		return KindString
	case '{':
		return KindObject
	case '[':
		return KindArray
	case 't', 'f':
		return KindBool
	case 'n':
		return KindNull
	}
	return KindNumber
}

// Present: the member is there and not null (the providers read a null
// optional member as unset).
func (v Value) Present() bool { k := v.Kind(); return k != KindAbsent && k != KindNull }

// Integer: a number written without fraction or exponent.
func (v Value) Integer() bool {
	return v.Kind() == KindNumber && !strings.ContainsAny(v.Raw, ".eE")
}

// Str is a string value's text ("" for anything else): Unquote.
func (v Value) Str() string { return Unquote(v.Raw) }

// Unescape is the text of a JSON string whose quotes are cut off, its
// escapes decoded (\n, \", \u4e2d, a surrogate pair as one character, a
// lone surrogate as U+FFFD), as gjson and encoding/json decode it, in one
// allocation (gjson takes two: a buffer, then a string of it). Like
// gjson it stops at what valid JSON never holds (a control byte, an
// unknown or cut escape), and never panics.
func Unescape(s string) string {
	var b strings.Builder
	b.Grow(len(s)) // the text is never longer than its escaped form
	for i := 0; i < len(s); {
		// The text up to the next escape, copied at once.
		j := nextCare(s, i)
		b.WriteString(s[i:j])
		if j == len(s) {
			break
		}
		switch c := s[j]; {
		case c == '"': // not in a valid string; copied, as gjson does
			b.WriteByte(c)
			i = j + 1
			continue
		case c < ' ':
			return b.String()
		}
		i = j + 1 // the byte after the backslash
		if i >= len(s) {
			break
		}
		switch s[i] {
		case '"', '\\', '/':
			b.WriteByte(s[i])
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			if i+5 > len(s) {
				return b.String()
			}
			r, _ := Hex4(s[i+1 : i+5])
			i += 4
			if utf16.IsSurrogate(r) && r < 0xdc00 && i+7 <= len(s) && s[i+1] == '\\' && s[i+2] == 'u' {
				if r2, _ := Hex4(s[i+3 : i+7]); r2 >= 0xdc00 && r2 < 0xe000 {
					r = utf16.DecodeRune(r, r2)
					i += 6
				}
			}
			b.WriteRune(r) // a lone surrogate is written as U+FFFD
		default:
			return b.String()
		}
		i++
	}
	return b.String()
}

// nextCare is the index of the first byte at or after i that is `"`, `\`
// or below 0x20, len(s) when none is: eight bytes at a time (careMask).
func nextCare(s string, i int) int {
	for ; i+8 <= len(s); i += 8 {
		if m := careMask(word(s, i)); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c == '"' || c == '\\' || c < ' ' {
			return i
		}
	}
	return i
}

// Hex4 reads the four hex digits at the start of s (a \u escape's); false
// when there are fewer or they are not hex, and then the rune is 0 (as
// gjson reads them).
func Hex4(s string) (rune, bool) {
	if len(s) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range []byte(s[:4]) {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// Bool is a boolean value (false for anything else).
func (v Value) Bool() bool { return v.Raw == "true" }

// Float is a number value, false when v is not a number or out of range.
func (v Value) Float() (float64, bool) {
	if v.Kind() != KindNumber {
		return 0, false
	}
	f, err := strconv.ParseFloat(v.Raw, 64)
	return f, err == nil
}

// Elements are an array's values in order (nil for anything else).
//
// Elements, All, MemberPair and Members walk the value in a loop of their
// own rather than through ElementIter and MemberIter: they are most of a
// request check, and the iterators' call per member measured ~6% slower
// there (BenchmarkCheckRequest of openairesponses).
func (v Value) Elements() []Value {
	if v.Kind() != KindArray {
		return nil
	}
	var out []Value
	for i := SkipWS(v.Raw, 1); i < len(v.Raw) && v.Raw[i] != ']'; {
		end := SkipValue(v.Raw, i)
		out = append(out, Value{v.Raw[i:end]})
		i = SkipWS(v.Raw, end)
		if i < len(v.Raw) && v.Raw[i] == ',' {
			i = SkipWS(v.Raw, i+1)
		}
	}
	return out
}

// All iterates an array's values in order without collecting them
// (Elements does, in a slice of their own): for an array read once, such
// as a message's content parts. Nothing for anything else.
func (v Value) All() iter.Seq[Value] {
	return func(yield func(Value) bool) {
		if v.Kind() != KindArray {
			return
		}
		for i := SkipWS(v.Raw, 1); i < len(v.Raw) && v.Raw[i] != ']'; {
			end := SkipValue(v.Raw, i)
			if end <= i || !yield(Value{v.Raw[i:end]}) {
				return
			}
			i = SkipWS(v.Raw, end)
			if i < len(v.Raw) && v.Raw[i] == ',' {
				i = SkipWS(v.Raw, i+1)
			}
		}
	}
}

// Member is the member named key of an object value (the last, when the
// object repeats it, as Get reads it), found without building an Object
// (Members does): for a member or two of an object read once, such as a
// content part's type. The zero Value when v is not an object or has no
// such member.
func (v Value) Member(key string) Value {
	found, _ := v.MemberPair(key, "")
	return found
}

// MemberPair is Member for two keys in one scan of the object: a content
// part's type and its text, which is most of the part's length.
func (v Value) MemberPair(a, b string) (va, vb Value) {
	if v.Kind() != KindObject {
		return
	}
	s := v.Raw
	for i := SkipWS(s, 1); i < len(s) && s[i] == '"'; {
		end, escaped := ScanString(s, i)
		key := s[i+1 : end-1]
		if escaped {
			key = Value{s[i:end]}.Str()
		}
		i = SkipWS(s, end)
		i = SkipWS(s, i+1) // the colon
		end = SkipValue(s, i)
		switch key {
		case a:
			va = Value{s[i:end]}
		case b:
			vb = Value{s[i:end]}
		}
		i = SkipWS(s, end)
		if i < len(s) && s[i] == ',' {
			i = SkipWS(s, i+1)
		}
	}
	return va, vb
}

// Object is a JSON object read once: its members in body order. Lookups
// scan the members (request objects have a few dozen at most, and a scan
// beats hashing them).
type Object struct {
	Keys []string
	Vals []Value
}

// Members reads v as an object; false when it is not one.
func (v Value) Members() (Object, bool) {
	if v.Kind() != KindObject {
		return Object{}, false
	}
	// Request objects have a few members, rarely more than eight: one
	// allocation for the keys and values, not one per doubling.
	room := new(struct {
		keys [8]string
		vals [8]Value
	})
	o := Object{Keys: room.keys[:0], Vals: room.vals[:0]}
	s := v.Raw
	for i := SkipWS(s, 1); i < len(s) && s[i] == '"'; {
		end := SkipValue(s, i)
		key := Value{s[i:end]}.Str()
		i = SkipWS(s, end)
		i = SkipWS(s, i+1) // the colon
		end = SkipValue(s, i)
		o.Keys = append(o.Keys, key)
		o.Vals = append(o.Vals, Value{s[i:end]})
		i = SkipWS(s, end)
		if i < len(s) && s[i] == ',' {
			i = SkipWS(s, i+1)
		}
	}
	return o, true
}

// Get is the member named key; when a body repeats a key, the last one
// counts, as encoding/json and the providers' parsers read it.
func (o Object) Get(key string) Value {
	for i := len(o.Keys) - 1; i >= 0; i-- {
		if o.Keys[i] == key {
			return o.Vals[i]
		}
	}
	return Value{}
}

// Has: the object has a member named key (null or not).
func (o Object) Has(key string) bool {
	for _, k := range o.Keys {
		if k == key {
			return true
		}
	}
	return false
}

// Parse reads a request body: its top-level value, false when the body is
// not valid JSON. Every Value read from it is a sub-string of the body,
// not a copy (see adapters.View): the body must not change after.
func Parse(body []byte) (Value, bool) { return ParseString(adapters.View(body)) }

// ParseString is Parse for text already held as a string (a tool result's
// content), without a copy.
func ParseString(s string) (Value, bool) {
	if !Valid(s) {
		return Value{}, false
	}
	return Value{strings.TrimSpace(s)}, true
}

// SkipWS is the index of the first byte at or after i that is not JSON
// white space.
func SkipWS(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// SkipValue is the index just after the value that starts at s[i]. The
// text has been validated (Parse, Valid or Members checked it), so the
// scanner only finds where each value ends: it does not parse numbers or
// unescape strings (gjson's ForEach does both for every value, and that
// was most of a check's cost). On text that is not valid JSON it still
// never panics nor goes back: a value that does not close ends at len(s).
func SkipValue(s string, i int) int {
	if i >= len(s) {
		return i
	}
	switch s[i] {
	case '"':
		return skipString(s, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(s); j++ {
			switch s[j] {
			case '"':
				j = SkipValue(s, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return len(s)
	}
	j := i
	for j < len(s) && s[j] != ',' && s[j] != '}' && s[j] != ']' && s[j] != ' ' && s[j] != '\t' && s[j] != '\n' && s[j] != '\r' {
		j++
	}
	return j
}

// skipString is the index just after the string that starts at i.
func skipString(s string, i int) int {
	end, _ := ScanString(s, i)
	return end
}

// ScanString is the index just after the JSON string that starts at s[i],
// and whether the string holds an escape (len(s) and true when it does not
// end).
func ScanString(s string, i int) (end int, escaped bool) {
	q, escaped := CloseQuote(s, i)
	if q == len(s) {
		return len(s), true
	}
	return q + 1, escaped
}

// CloseQuote is the index of the quote that closes the string whose
// opening quote is s[i] (len(s) when none does), and whether the string
// holds an escape. Keys and short values are scanned a word (eight bytes)
// at a time; past a few dozen bytes (the texts that are most of a request)
// IndexByte finds the next quote faster, which closes the string unless an
// odd run of backslashes escapes it.
func CloseQuote(s string, i int) (q int, escaped bool) {
	j := i + 1
	for n := 0; n < 4 && j+8 <= len(s); n++ {
		m := careMask(word(s, j)) // in a string, the byte it finds is " or \ (or a control byte, which JSON does not allow)
		if m == 0 {
			j += 8
			continue
		}
		j += bits.TrailingZeros64(m) >> 3
		switch s[j] {
		case '"':
			return j, escaped
		case '\\':
			escaped = true
			j += 2
		default:
			j++
		}
	}
	for from := j; j < len(s); {
		k := strings.IndexByte(s[j:], '"')
		if k < 0 {
			break
		}
		j += k
		n := 0
		for b := j - 1; b > i && s[b] == '\\'; b-- {
			n++
		}
		if n%2 == 0 {
			return j, escaped || strings.IndexByte(s[from:j], '\\') >= 0
		}
		j++
	}
	return len(s), true
}

// SmallIndex reads the index that starts at s[i] (a JSON integer of at
// most nine digits, without a leading zero) for the decoders' fast paths:
// its value and where it ends, false for anything else, which they leave
// to the general path.
func SmallIndex(s string, i int) (n int64, end int, ok bool) {
	start := i
	for i < len(s) && isDigit(s[i]) {
		if i-start >= 9 {
			return 0, i, false
		}
		n = n*10 + int64(s[i]-'0')
		i++
	}
	if i == start || (s[start] == '0' && i-start > 1) {
		return 0, i, false
	}
	return n, i, true
}
