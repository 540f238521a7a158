package redact

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
)

// BodyRules are the rules for personal data in bodies, given by the user
// (`proxy --redact-body FILE`): regular expressions matched against text
// (every string value of a JSON body, a stream's text assembled across
// its events, errors), and JSON Pointers naming values replaced whole.
//
// A pointer is an RFC 6901 JSON Pointer ("/metadata/user_email",
// "/messages/0/content", with ~1 for "/" and ~0 for "~" in a name) in
// which a token that is exactly "*" matches any one member of an object
// or element of an array ("/messages/*/content"). A member literally
// named "*" cannot be named alone: "*" always means any. A pointer is
// resolved against each JSON document separately: a request body, a
// whole response body, each event of a stream. The value it names —
// string, number, object or array — becomes the string "[redacted]".
type BodyRules struct {
	Patterns []*regexp.Regexp
	Pointers []string
	ptrs     [][]string // the pointers' tokens, unescaped
}

// bodyFile is the rules file's format.
type bodyFile struct {
	Patterns []string `json:"patterns"`
	Pointers []string `json:"pointers"`
}

// LoadBodyRules reads a rules file: {"patterns": [...], "pointers": [...]}.
// Every error is one line naming the file and the bad pattern or pointer.
func LoadBodyRules(path string) (*BodyRules, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("redaction rules: %v", err)
	}
	r, err := ParseBodyRules(b)
	if err != nil {
		return nil, fmt.Errorf("redaction rules %s: %v", path, err)
	}
	return r, nil
}

// ParseBodyRules reads the rules file's JSON. Unknown members are refused
// (a misspelt "pattern" would otherwise redact nothing, silently).
func ParseBodyRules(b []byte) (*BodyRules, error) {
	var f bodyFile
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("not a rules object {\"patterns\": [...], \"pointers\": [...]}: %s", oneLineErr(err))
	}
	if dec.More() {
		return nil, fmt.Errorf("not a rules object: text after the JSON object")
	}
	r := &BodyRules{}
	for i, p := range f.Patterns {
		if p == "" {
			return nil, fmt.Errorf("patterns[%d]: empty pattern", i)
		}
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, fmt.Errorf("patterns[%d] %q: %s", i, p, oneLineErr(err))
		}
		if re.MatchString("") {
			return nil, fmt.Errorf("patterns[%d] %q: matches the empty text, which would redact nothing or everything", i, p)
		}
		r.Patterns = append(r.Patterns, re)
	}
	for i, p := range f.Pointers {
		if _, err := ParsePointer(p); err != nil {
			return nil, fmt.Errorf("pointers[%d] %q: %v", i, p, err)
		}
		r.Pointers = append(r.Pointers, p)
	}
	if len(r.Patterns) == 0 && len(r.Pointers) == 0 {
		return nil, fmt.Errorf("no patterns and no pointers: the file redacts nothing")
	}
	if err := r.compile(); err != nil {
		return nil, err
	}
	return r, nil
}

func oneLineErr(err error) string { return strings.Join(strings.Fields(err.Error()), " ") }

// compile parses the pointers once (a BodyRules built by hand has its
// pointers parsed on each use).
func (r *BodyRules) compile() error {
	r.ptrs = r.ptrs[:0]
	for _, p := range r.Pointers {
		toks, err := ParsePointer(p)
		if err != nil {
			return fmt.Errorf("pointer %q: %v", p, err)
		}
		r.ptrs = append(r.ptrs, toks)
	}
	return nil
}

// ParsePointer splits a JSON Pointer into its unescaped tokens ("*" is
// kept as the wildcard).
func ParsePointer(p string) ([]string, error) {
	if p == "" {
		return nil, fmt.Errorf("empty pointer: the whole document cannot be redacted (want /name/…)")
	}
	if p[0] != '/' {
		return nil, fmt.Errorf("a JSON Pointer starts with /")
	}
	toks := strings.Split(p[1:], "/")
	for i, t := range toks {
		for j := 0; j < len(t); j++ {
			if t[j] == '~' && (j+1 == len(t) || (t[j+1] != '0' && t[j+1] != '1')) {
				return nil, fmt.Errorf("token %q: ~ must be followed by 0 or 1 (~0 is ~, ~1 is /)", t)
			}
		}
		toks[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
	}
	return toks, nil
}

// Active reports whether there are rules to apply.
func (r *BodyRules) Active() bool { return r != nil && (len(r.Patterns) > 0 || len(r.Pointers) > 0) }

// HasPatterns reports whether there are patterns (only they can match
// across a stream's events).
func (r *BodyRules) HasPatterns() bool { return r != nil && len(r.Patterns) > 0 }

// matches returns the merged byte ranges of s that any pattern matches.
func (r *BodyRules) matches(s string) [][2]int {
	var out [][2]int
	for _, re := range r.Patterns {
		for _, m := range re.FindAllStringIndex(s, -1) {
			if m[1] > m[0] {
				out = append(out, [2]int{m[0], m[1]})
			}
		}
	}
	if len(out) < 2 {
		return out
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	merged := out[:1]
	for _, m := range out[1:] {
		if last := &merged[len(merged)-1]; m[0] <= last[1] {
			last[1] = max(last[1], m[1])
		} else {
			merged = append(merged, m)
		}
	}
	return merged
}

// Text replaces every match of the patterns in s by [redacted] (matches
// that overlap or touch are one).
func (r *BodyRules) Text(s string) string {
	if !r.HasPatterns() || s == "" {
		return s
	}
	ms := r.matches(s)
	if len(ms) == 0 {
		return s
	}
	var b strings.Builder
	last := 0
	for _, m := range ms {
		b.WriteString(s[last:m[0]])
		b.WriteString(Redacted)
		last = m[1]
	}
	b.WriteString(s[last:])
	return b.String()
}

// Cut is the part of a match that one piece of a text holds: bytes
// [Start, End) of that piece. The piece that holds a match's beginning
// shows [redacted] in its place (First); the others hold nothing of it.
type Cut struct {
	Start, End int
	First      bool
}

// Split runs the patterns over the text the parts make together (a
// stream's deltas, in order) and returns, for each part, the cuts that
// remove every byte of every match: a match split across parts is cut in
// each part that holds a piece of it. Joining the parts after CutText
// gives what Text gives for the joined text.
func (r *BodyRules) Split(parts []string) [][]Cut {
	if !r.HasPatterns() {
		return nil
	}
	var b strings.Builder
	starts := make([]int, len(parts)+1)
	for i, p := range parts {
		starts[i] = b.Len()
		b.WriteString(p)
	}
	starts[len(parts)] = b.Len()
	ms := r.matches(b.String())
	if len(ms) == 0 {
		return nil
	}
	cuts := make([][]Cut, len(parts))
	for _, m := range ms {
		// the first part that holds byte m[0]
		i := sort.Search(len(parts), func(i int) bool { return starts[i+1] > m[0] })
		first := true
		for ; i < len(parts) && starts[i] < m[1]; i++ {
			s, e := max(m[0], starts[i])-starts[i], min(m[1], starts[i+1])-starts[i]
			if e > s {
				cuts[i] = append(cuts[i], Cut{Start: s, End: e, First: first})
				first = false
			}
		}
	}
	return cuts
}

// CutText applies a part's cuts (in order, as Split returns them).
func CutText(s string, cuts []Cut) string {
	if len(cuts) == 0 {
		return s
	}
	var b strings.Builder
	last := 0
	for _, c := range cuts {
		b.WriteString(s[last:c.Start])
		if c.First {
			b.WriteString(Redacted)
		}
		last = c.End
	}
	b.WriteString(s[last:])
	return b.String()
}

// Pieces are the texts the cuts remove from s (what a stored copy of the
// same part must lose too).
func Pieces(s string, cuts []Cut) []string {
	out := make([]string, 0, len(cuts))
	for _, c := range cuts {
		out = append(out, s[c.Start:c.End])
	}
	return out
}

// JSON redacts a JSON document: the values the pointers name become
// "[redacted]", and the patterns run over every other string value. The
// rest of the document is kept byte for byte. A text that is not JSON has
// the patterns run over it as text.
func (r *BodyRules) JSON(b []byte) []byte {
	if !r.Active() || len(b) == 0 {
		return b
	}
	ptrs := r.pointers()
	out, err := editJSON(b, func(path []string) bool { return pointed(ptrs, path) }, r.Text)
	if err != nil {
		return []byte(r.Text(string(b)))
	}
	return out
}

// Pointed replaces the values the pointers name, and nothing else (a
// text that is not JSON is returned as it is).
func (r *BodyRules) Pointed(b []byte) []byte {
	if r == nil || len(r.Pointers) == 0 || len(b) == 0 {
		return b
	}
	ptrs := r.pointers()
	out, err := editJSON(b, func(path []string) bool { return pointed(ptrs, path) }, nil)
	if err != nil {
		return b
	}
	return out
}

// pointers are the pointers' tokens: parsed once when the rules were
// loaded; for rules built by hand, parsed here and not kept (the rules
// are shared by concurrent exchanges).
func (r *BodyRules) pointers() [][]string {
	if len(r.ptrs) == len(r.Pointers) {
		return r.ptrs
	}
	var ptrs [][]string
	for _, p := range r.Pointers {
		if toks, err := ParsePointer(p); err == nil {
			ptrs = append(ptrs, toks)
		}
	}
	return ptrs
}

// JSONStrings runs the patterns over a JSON document's string values only
// (tool arguments: pointers are for bodies).
func (r *BodyRules) JSONStrings(b []byte) []byte {
	if !r.HasPatterns() || len(b) == 0 {
		return b
	}
	out, err := editJSON(b, nil, r.Text)
	if err != nil {
		return []byte(r.Text(string(b)))
	}
	return out
}

// pointed reports whether a pointer names the value at path.
func pointed(ptrs [][]string, path []string) bool {
	for _, toks := range ptrs {
		if len(toks) != len(path) {
			continue
		}
		ok := true
		for i, t := range toks {
			if t != "*" && t != path[i] {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// Strings maps every string value (not member names) of a JSON document
// through fn; ok is false when the document is not JSON. Used to cut a
// stream event's raw data as its canonical text was cut.
func Strings(b []byte, fn func(string) string) (out []byte, ok bool) {
	out, err := editJSON(b, nil, fn)
	return out, err == nil
}
