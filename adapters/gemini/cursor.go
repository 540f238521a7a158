package gemini

import (
	"strings"

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

// quoted reads the string at the cursor and returns it with its quotes,
// escapes intact (wire.StringEnd checks its grammar).
func (c *cursor) quoted() string {
	if c.peek() != '"' {
		c.fail()
		return ""
	}
	start := c.i
	end, ok := wire.StringEnd(c.s, start)
	if !ok {
		c.fail()
		return ""
	}
	c.i = end
	return c.s[start:end]
}

// str reads a string value and unescapes it (wire.Unquote); text without
// escapes is a substring of the chunk (no copy). Any other value is read
// and "" is returned, so a caller expecting text never gets JSON syntax.
func (c *cursor) str() string {
	if c.peek() != '"' {
		c.skip()
		return ""
	}
	return wire.Unquote(c.quoted())
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

// number reads -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? (wire.NumberEnd).
func (c *cursor) number() {
	end, ok := wire.NumberEnd(c.s, c.i)
	if !ok {
		c.fail()
		return
	}
	c.i = end
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
		key := c.quoted()
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
