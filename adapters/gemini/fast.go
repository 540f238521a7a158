package gemini

import "strings"

// Nearly every chunk of a stream is one text part followed by the same
// bytes as the chunk before it (usageMetadata, modelVersion, responseId),
// as the API sends them:
//
//	{"candidates": [{"content": {"parts": [{"text": "S"}],"role": "model"},"index": 0}],TAIL
//	{"candidates": [{"content": {"parts": [{"text": "S","thought": true}],"role": "model"},"index": 0}],TAIL
//
// fast reads the head and the text in one pass (the text with the
// cursor, as the general path reads it) and accepts the chunk only when
// TAIL is byte for byte the tail of an earlier chunk that the general
// path decoded whole: that tail was valid then and set the state it sets
// now (the same usage, the same id and model, which announce takes once),
// so only the part is new. A tail that could do more when read again
// (an error, a prompt's block reason) is never kept. Anything else takes
// the general path. TestFastPathAgrees compares the two event by event.
const (
	fastHead    = `{"candidates": [{"content": {"parts": [{"text": `
	fastThought = `,"thought": true`
	fastClose   = `}],"role": "model"},"index": 0}],`
)

// fastHeadEnd returns where the tail of a chunk of the fast shape starts,
// and the part; ok is false for any other chunk.
func fastHeadEnd(data string) (tail int, p partFacts, ok bool) {
	if !strings.HasPrefix(data, fastHead) {
		return 0, p, false
	}
	c := cursor{s: data, i: len(fastHead)}
	if len(data) <= c.i || data[c.i] != '"' {
		return 0, p, false
	}
	p.text, p.hasText = c.str(), true
	if c.bad {
		return 0, p, false
	}
	i := c.i
	if strings.HasPrefix(data[i:], fastThought) {
		p.thought = true
		i += len(fastThought)
	}
	if !strings.HasPrefix(data[i:], fastClose) {
		return 0, p, false
	}
	return i + len(fastClose), p, true
}

// fast applies a chunk whose tail is the kept one.
func (d *decoder) fast(data string) bool {
	if d.tail == "" || d.done {
		return false
	}
	i, p, ok := fastHeadEnd(data)
	if !ok || data[i:] != d.tail {
		return false
	}
	d.part(&p)
	return true
}

// keepTail keeps the tail of a chunk of the fast shape that the general
// path decoded, for the chunks after it.
func (d *decoder) keepTail(data string) {
	i, _, ok := fastHeadEnd(data)
	if !ok || d.done {
		d.tail = ""
		return
	}
	if t := data[i:]; t != d.tail {
		if strings.Contains(t, `"error"`) || strings.Contains(t, `"promptFeedback"`) {
			d.tail = ""
			return
		}
		d.tail = strings.Clone(t)
	}
}
