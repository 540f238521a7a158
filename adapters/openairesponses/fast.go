package openairesponses

import (
	"strings"

	"github.com/modelwire/modelwire/adapters/wire"
)

// fastKeys are the members of the delta events, nearly every event of a
// stream, as the API writes them: compact, each key once, every value a
// string, a non-negative integer or an empty array.
//
//	{"type":"response.output_text.delta","content_index":0,"delta":"S","item_id":"msg_…","logprobs":[],"obfuscation":"X","output_index":1,"sequence_number":N}
var fastKeys = [...]string{`"type":`, `"content_index":`, `"delta":`, `"item_id":`, `"logprobs":`,
	`"obfuscation":`, `"output_index":`, `"sequence_number":`, `"summary_index":`}

// fastMembers is scanMembers for events made only of those members: it
// validates and reads them in one pass that compares each key with a few
// literals instead of scanning it, and hands each raw value to fields.set
// as scanMembers does (in order, stopping as it stops), so f ends up the
// same. Any other byte sequence — another key, white space, a repeated
// key, another kind of value — returns false, with f in any state, and
// the caller takes the general path. TestFastPathAgrees compares the two.
func fastMembers(data string, f *fields) bool {
	if len(data) < 2 || data[0] != '{' {
		return false
	}
	i := 1
	var seen uint16
	done := false
	for {
		k := fastKey(data[i:])
		if k < 0 || seen&(1<<k) != 0 {
			return false
		}
		seen |= 1 << k
		i += len(fastKeys[k])
		start := i
		if i >= len(data) {
			return false
		}
		switch c := data[i]; {
		case c == '"':
			end, ok := wire.StringEnd(data, i)
			if !ok {
				return false
			}
			i = end
		case c == '[':
			if !strings.HasPrefix(data[i:], "[]") {
				return false
			}
			i += 2
		case c == '0':
			i++
		case c >= '1' && c <= '9':
			for i < len(data) && data[i] >= '0' && data[i] <= '9' {
				if i-start >= 18 {
					return false
				}
				i++
			}
		default:
			return false
		}
		if !done {
			key := fastKeys[k][1 : len(fastKeys[k])-2]
			f.set(key, data[start:i])
			done = key == "delta" && f.hasDelta && f.hasSeq && f.hasIdx && strings.HasSuffix(f.typ, ".delta")
		}
		if i >= len(data) {
			return false
		}
		switch data[i] {
		case ',':
			i++
		case '}':
			return i+1 == len(data)
		default:
			return false
		}
	}
}

// fastKey is the index in fastKeys of the key s starts with, -1 if none:
// its first letters pick the one candidate (a loop comparing each was
// most of the reader's time).
func fastKey(s string) int {
	if len(s) < 3 {
		return -1
	}
	k := -1
	switch s[1] {
	case 't':
		k = 0
	case 'c':
		k = 1
	case 'd':
		k = 2
	case 'i':
		k = 3
	case 'l':
		k = 4
	case 'o':
		k = 5
		if s[2] == 'u' {
			k = 6
		}
	case 's':
		k = 7
		if s[2] == 'u' {
			k = 8
		}
	default:
		return -1
	}
	if !strings.HasPrefix(s, fastKeys[k]) {
		return -1
	}
	return k
}
