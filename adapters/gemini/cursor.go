package gemini

import (
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/modelwire/modelwire/adapters/wire"
)

// cursor reads one JSON text in a single pass, validating as it goes.
//
// Why not gjson: a Gemini chunk nests its text five levels deep
// (candidates[0].content.parts[i].text). gjson.Valid reads the chunk once,
// then every Get or ForEach over an enclosing value scans that whole value
// again to find its end, so the text was read six or seven times per
// chunk. The cursor descends instead, checking the grammar of everything
// it reads or skips (RFC 8259, as encoding/json.Valid; FuzzCursorValid
// compares the two), so each byte is read once.
//
// On the first error the cursor sets bad and jumps to the end; every
// method then returns at once, so no input makes it loop or panic.
type cursor struct {
	s   string
	i   int
	bad bool
	// depth bounds nesting as encoding/json does, so hostile input cannot
	// exhaust the stack.
	depth int
}

const maxDepth = 10000

func (c *cursor) fail() {
	c.bad = true
	c.i = len(c.s)
}

// peek skips white space and returns the next byte, 0 at the end (a
// NUL byte, never valid outside strings, reads the same).
func (c *cursor) peek() byte {
	for c.i < len(c.s) {
		switch b := c.s[c.i]; b {
		case ' ', '\t', '\n', '\r':
			c.i++
		default:
			return b
		}
	}
	return 0
}

// expect consumes byte b (after white space) or fails.
func (c *cursor) expect(b byte) {
	if c.peek() != b {
		c.fail()
		return
	}
	c.i++
}

// stringStop marks the bytes a string scan must look at: the closing
// quote, an escape, and the control characters JSON forbids in strings.
var stringStop = func() (t [256]bool) {
	for b := 0; b < 0x20; b++ {
		t[b] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// quoted reads the string at the cursor and returns it with its quotes,
// escapes intact, and whether it has escapes.
func (c *cursor) quoted() (string, bool) {
	if c.peek() != '"' {
		c.fail()
		return "", false
	}
	start := c.i
	s := c.s
	esc := false
	for j := start + 1; j < len(s); {
		b := s[j]
		if !stringStop[b] {
			j++
			continue
		}
		switch b {
		case '"':
			c.i = j + 1
			return s[start:c.i], esc
		case '\\':
			esc = true
			if j+1 >= len(s) {
				c.fail()
				return "", false
			}
			switch s[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j += 2
			case 'u':
				if _, ok := wire.Hex4(s[j+2:]); !ok {
					c.fail()
					return "", false
				}
				j += 6
			default:
				c.fail()
				return "", false
			}
		default: // a control character
			c.fail()
			return "", false
		}
	}
	c.fail()
	return "", false
}

// str reads a string value and unescapes it; text without escapes is a
// substring of the chunk (no copy). Any other value is read and "" is
// returned, so a caller expecting text never gets JSON syntax.
func (c *cursor) str() string {
	if c.peek() != '"' {
		c.skip()
		return ""
	}
	q, esc := c.quoted()
	if len(q) < 2 {
		return ""
	}
	if !esc {
		return q[1 : len(q)-1]
	}
	return unescape(q[1:len(q)-1], strings.IndexByte(q[1:], '\\'))
}

// raw reads any value and returns its JSON text.
func (c *cursor) raw() string {
	c.peek()
	start := c.i
	c.skip()
	if c.bad {
		return ""
	}
	return c.s[start:c.i]
}

// skip reads past one value, checking its grammar.
func (c *cursor) skip() {
	switch b := c.peek(); {
	case b == '"':
		c.quoted()
	case b == '{':
		c.object(func(string) bool { return false })
	case b == '[':
		c.array(func(int) bool { return false })
	case b == 't':
		c.literal("true")
	case b == 'f':
		c.literal("false")
	case b == 'n':
		c.literal("null")
	case b == '-' || '0' <= b && b <= '9':
		c.number()
	default:
		c.fail()
	}
}

func (c *cursor) literal(word string) {
	if !strings.HasPrefix(c.s[c.i:], word) {
		c.fail()
		return
	}
	c.i += len(word)
}

// number reads -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (c *cursor) number() {
	s, i := c.s, c.i
	digits := func() bool {
		start := i
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
		return i > start
	}
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case !digits():
		c.fail()
		return
	}
	if i < len(s) && s[i] == '.' {
		i++
		if !digits() {
			c.fail()
			return
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if !digits() {
			c.fail()
			return
		}
	}
	c.i = i
}

// object calls fn for each member of the object at the cursor, with the
// cursor at the member's value; fn returns whether it read the value, and
// if not, object skips it. Keys are passed as written (without quotes).
func (c *cursor) object(fn func(key string) bool) {
	c.expect('{')
	if c.bad {
		return
	}
	if c.depth++; c.depth > maxDepth {
		c.fail()
		return
	}
	if c.peek() == '}' {
		c.i++
		c.depth--
		return
	}
	for !c.bad {
		key, _ := c.quoted()
		c.expect(':')
		if c.bad {
			return
		}
		c.peek()
		before := c.i
		if !fn(key[1:len(key)-1]) || c.i == before {
			c.skip()
		}
		switch c.peek() {
		case ',':
			c.i++
		case '}':
			c.i++
			c.depth--
			return
		default:
			c.fail()
		}
	}
}

// array calls fn for each element of the array at the cursor, with its
// index; fn returns whether it read the element.
func (c *cursor) array(fn func(i int) bool) {
	c.expect('[')
	if c.bad {
		return
	}
	if c.depth++; c.depth > maxDepth {
		c.fail()
		return
	}
	if c.peek() == ']' {
		c.i++
		c.depth--
		return
	}
	for n := 0; !c.bad; n++ {
		c.peek()
		before := c.i
		if !fn(n) || c.i == before {
			c.skip()
		}
		switch c.peek() {
		case ',':
			c.i++
		case ']':
			c.i++
			c.depth--
			return
		default:
			c.fail()
		}
	}
}

// end reports whether the whole text was one valid value.
func (c *cursor) end() bool {
	c.peek()
	return !c.bad && c.i == len(c.s)
}

// unescape decodes the JSON escapes of a string body whose first
// backslash is at i. Runs without escapes are copied whole; a lone
// surrogate becomes U+FFFD, as encoding/json does.
func unescape(s string, i int) string {
	var b strings.Builder
	b.Grow(len(s))
	for i >= 0 {
		b.WriteString(s[:i])
		s = s[i:]
		if len(s) < 2 {
			return b.String() // a lone trailing backslash: not valid JSON
		}
		n := 2
		switch c := s[1]; c {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'u':
			var r rune
			r, n = unicodeEscape(s)
			b.WriteRune(r)
		default: // '"', '\\', '/'
			b.WriteByte(c)
		}
		s = s[n:]
		i = strings.IndexByte(s, '\\')
	}
	b.WriteString(s)
	return b.String()
}

// unicodeEscape reads \uXXXX (and a following low surrogate) at the start
// of s and returns the rune and the bytes used.
func unicodeEscape(s string) (rune, int) {
	r, ok := wire.Hex4(s[2:])
	if !ok {
		return utf8.RuneError, 2
	}
	if utf16.IsSurrogate(r) {
		if len(s) >= 12 && s[6] == '\\' && s[7] == 'u' {
			if lo, ok := wire.Hex4(s[8:]); ok {
				if d := utf16.DecodeRune(r, lo); d != utf8.RuneError {
					return d, 12
				}
			}
		}
		return utf8.RuneError, 6
	}
	return r, 6
}
