package wire

import "slices"

// AppendIndent appends src pretty-printed as json.Indent(dst, src, "", "  ")
// prints it — the providers' two-space bodies — and false (dst unchanged)
// when src is not valid JSON. json.Indent runs the decoder's state machine
// over every byte; the simulator's bodies are tens of kilobytes, and
// printing them this way was a good part of a body's cost.
func AppendIndent(dst []byte, src string) ([]byte, bool) {
	if !Valid(src) {
		return dst, false
	}
	// Room for the indentation up front: the bodies nest tool schemas
	// eight deep, and growing the buffer as it filled was a tenth of a
	// body's cost.
	return AppendIndentAt(slices.Grow(dst, 2*len(src)), src, 0), true
}

// AppendIndentAt appends src, which is valid JSON (a checked request's
// value, or JSON the simulator wrote), pretty-printed as a value nested
// depth levels deep in a body AppendIndent prints: its lines indented by
// depth more levels. A body written member by member prints each member's
// value this way, in one pass, instead of being written on one line,
// checked and printed again.
func AppendIndentAt(dst []byte, src string, depth int) []byte {
	base := depth
	open := false // just after { or [: the line break waits for a member
	newline := func() {
		dst = append(dst, '\n')
		for range depth {
			dst = append(dst, ' ', ' ')
		}
	}
	i := SkipWS(src, 0) // json.Indent drops leading space
	for ; i < len(src); i++ {
		c := src[i]
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			if depth == base {
				break // trailing space after the value is kept, as json.Indent keeps it
			}
			continue
		}
		if open && c != '}' && c != ']' {
			open = false
			newline()
		}
		switch c {
		case '"':
			end := skipString(src, i)
			dst = append(dst, src[i:end]...)
			i = end - 1
		case '{', '[':
			dst = append(dst, c)
			depth++
			open = true
		case '}', ']':
			depth--
			if open {
				open = false // an empty object or array stays {} or []
			} else {
				newline()
			}
			dst = append(dst, c)
		case ',':
			dst = append(dst, c)
			newline()
		case ':':
			dst = append(dst, ':', ' ')
		default:
			dst = append(dst, c)
		}
	}
	return append(dst, src[i:]...)
}
