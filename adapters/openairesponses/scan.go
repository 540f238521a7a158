package openairesponses

import (
	"strings"

	"github.com/tidwall/gjson"
)

// scanMembers reads the top-level members of data, a JSON text that
// gjson.Valid has accepted, into f in one pass. Only the members the
// decoder uses are parsed; every other value is skipped by its brackets and
// quotes. It reports false when data is not an object.
//
// Why not gjson.ForEach: it builds a Result for every member (logprobs,
// obfuscation…), which on delta events costs as much as the validation
// itself; skipping is about three times cheaper, and deltas are nearly
// every event of a stream.
func scanMembers(data string, f *fields) bool {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return false
	}
	i++
	for i < len(data) {
		i = skipSpace(data, i)
		if i >= len(data) || data[i] == '}' {
			return true
		}
		if data[i] == ',' {
			i++
			continue
		}
		if data[i] != '"' {
			return true // not reached for valid JSON
		}
		kEnd, kEsc := stringEnd(data, i)
		key := data[i+1 : kEnd-1]
		if kEsc {
			key = gjson.Parse(data[i:kEnd]).Str
		}
		i = skipSpace(data, kEnd)
		if i < len(data) && data[i] == ':' {
			i++
		}
		i = skipSpace(data, i)
		end := valueEnd(data, i)
		f.set(key, data[i:end])
		i = end
		if key == "delta" && f.hasDelta && f.hasSeq && f.hasIdx && strings.HasSuffix(f.typ, ".delta") {
			// A delta event's members after its delta are logprobs and
			// obfuscation: nothing the decoder reads — when, as in the
			// API's older member order, sequence_number and output_index
			// came first. Since 2026-08 the API sorts the members after
			// "type", so delta precedes item_id, output_index and
			// sequence_number, and the scan must go on.
			return true
		}
	}
	return true
}

// set stores one member's raw value.
func (f *fields) set(key, raw string) {
	switch key {
	case "type":
		f.typ, f.hasType = stringValue(raw)
	case "sequence_number":
		f.seq, f.hasSeq = intValue(raw)
	case "item_id":
		f.itemID, _ = stringValue(raw)
	case "output_index":
		f.outIdx, f.hasIdx = intValue(raw)
	case "content_index":
		f.contentIdx, _ = intValue(raw)
	case "summary_index":
		f.summaryIdx, _ = intValue(raw)
	case "delta":
		f.delta, f.hasDelta = stringValue(raw)
	case "response":
		f.response = gjson.Parse(raw)
	case "item":
		f.item = gjson.Parse(raw)
	case "part":
		f.part = gjson.Parse(raw)
	case "error":
		f.err = gjson.Parse(raw)
	case "code":
		f.code = gjson.Parse(raw)
	case "message":
		f.message = gjson.Parse(raw)
	case "text":
		f.text = gjson.Parse(raw)
	case "arguments":
		f.arguments = gjson.Parse(raw)
	case "refusal":
		f.refusal = gjson.Parse(raw)
	}
}

// stringValue returns a JSON string's text, unescaped; ok is false for any
// other value.
func stringValue(raw string) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	s := raw[1 : len(raw)-1]
	if strings.IndexByte(s, '\\') < 0 {
		return s, true
	}
	return gjson.Parse(raw).Str, true
}

// intValue reads a JSON number as an integer; ok is false for any other
// value.
func intValue(raw string) (int64, bool) {
	if raw == "" {
		return 0, false
	}
	var n int64
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c < '0' || c > '9' || i >= 18 {
			r := gjson.Parse(raw)
			return r.Int(), r.Type == gjson.Number
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

func skipSpace(s string, i int) int {
	for i < len(s) {
		switch s[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// stringEnd returns the index after the string that starts at s[i] == '"',
// and whether it contains an escape. Keys and most values are short and
// are walked byte by byte; a long value (a delta, a big argument text)
// switches to strings.IndexByte, which is vectorised.
func stringEnd(s string, i int) (int, bool) {
	esc := false
	j := i + 1
	for stop := min(len(s), j+24); j < stop; j++ {
		switch s[j] {
		case '"':
			return j + 1, esc
		case '\\':
			esc = true
			j++
		}
	}
	for j < len(s) {
		k := strings.IndexByte(s[j:], '"')
		if k < 0 {
			return len(s), true
		}
		q := j + k
		n := 0
		for p := q - 1; p > i && s[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return q + 1, esc || strings.IndexByte(s[i+1:q], '\\') >= 0
		}
		j = q + 1
	}
	return len(s), esc
}

// valueEnd returns the index after the value that starts at s[i].
func valueEnd(s string, i int) int {
	if i >= len(s) {
		return i
	}
	switch s[i] {
	case '"':
		end, _ := stringEnd(s, i)
		return end
	case '{', '[':
		depth := 0
		for j := i; j < len(s); j++ {
			switch s[j] {
			case '"':
				end, _ := stringEnd(s, j)
				j = end - 1
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
	for j := i; j < len(s); j++ {
		switch s[j] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return j
		}
	}
	return len(s)
}
