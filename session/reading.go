package session

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"github.com/modelwire/modelwire/adapters"
)

// A scenario's facts can come from the prompt itself: the order a task
// names, the amount it asks for, the claim a context element makes. Both
// the simulated model and the domain checks take them from one reading of
// the request (ReadPrompt), so an edit of a sentence changes what the
// model answers and what the checks expect alike.

// PromptFact is one value read from a request's prompt.
type PromptFact struct {
	Name string `json:"name"`
	// In is where the value is read: "task" (the user's own words: user
	// text outside any <tag>…</tag> element), "instructions" (system and
	// developer text), or an element of the user's messages, "<history>"
	// or, narrowed by attributes, `<context source="history">`.
	In string `json:"in"`
	// Pattern is a regular expression; the value is its first group (the
	// whole match when it has none), from the first text that matches.
	Pattern string `json:"pattern,omitempty"`
	// Unit "cents" reads a money amount and gives it in integer cents:
	// 150 元, 150.5 元, 150 yuan, 150 CNY, 150 RMB, ¥150, CNY 150. With a
	// Pattern, the amount is read in the pattern's value.
	Unit string `json:"unit,omitempty"`
	// Attr reads an attribute of the element named by In instead of its
	// text ("verified" gives "false" for <history verified="false">).
	Attr string `json:"attr,omitempty"`

	pattern *regexp.Regexp
	where   place
}

// place is a compiled In.
type place struct {
	kind  string            // "task", "instructions", "element"
	tag   string            // for "element"
	attrs map[string]string // attributes the element must have
}

// Prompt is a request's prompt as a model reads it: its parts in order.
type Prompt []adapters.PromptPart

// PromptOf is the prompt a canonical request gives the model: each source
// as it is sent (context material as user text).
func PromptOf(req *adapters.Request) Prompt {
	p := make(Prompt, 0, len(req.Sources))
	for _, s := range req.Sources {
		role := s.Role
		if role == adapters.RoleContext {
			role = adapters.RoleUser
		}
		p = append(p, adapters.PromptPart{Role: role, Text: adapters.SourceText(s)})
	}
	return p
}

// Instructions is the system and developer text, part after part.
func (p Prompt) Instructions() string {
	var b strings.Builder
	for _, part := range p {
		if part.Role == adapters.RoleSystem || part.Role == adapters.RoleDeveloper {
			b.WriteString(part.Text)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// Task is the user's own words: user text with every element taken out.
func (p Prompt) Task() string {
	var b strings.Builder
	for _, part := range p {
		if part.Role != adapters.RoleUser {
			continue
		}
		rest := part.Text
		for {
			el, ok := nextElement(rest, "")
			if !ok {
				b.WriteString(rest)
				break
			}
			b.WriteString(rest[:el.start])
			b.WriteByte('\n')
			rest = rest[el.end:]
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// Element is one <tag attr="v">text</tag> of the user's messages.
type Element struct {
	Tag  string
	Text string

	attrs      string // the opening tag's attributes, as written
	start, end int
}

// Attr is the value of the element's attribute name; ok is false when
// the element has none.
func (el Element) Attr(name string) (value string, ok bool) {
	for rest := el.attrs; ; {
		k, v, more, found := nextAttr(rest)
		if !found {
			return "", false
		}
		if k == name {
			return v, true
		}
		rest = more
	}
}

// Elements are the user's elements with the tag, in order, nested ones
// included.
func (p Prompt) Elements(tag string) []Element {
	var out []Element
	for _, part := range p {
		if part.Role != adapters.RoleUser {
			continue
		}
		for rest := part.Text; ; {
			el, ok := nextElement(rest, tag)
			if !ok {
				break
			}
			out = append(out, el)
			rest = rest[el.start+1:]
		}
	}
	return out
}

// nextElement finds the first element of s with the tag ("" for any) that
// is closed; an opening tag never closed is text. It reads the tags by
// hand: a prompt is read on every simulated request, and a regexp here
// was a third of the simulator's allocations.
func nextElement(s, tag string) (Element, bool) {
	for off := 0; off < len(s); off++ {
		i := strings.IndexByte(s[off:], '<')
		if i < 0 {
			return Element{}, false
		}
		off += i
		name, attrs, bodyStart, ok := openingTag(s, off)
		if !ok || tag != "" && name != tag {
			continue
		}
		if j := strings.Index(s[bodyStart:], "</"+name+">"); j >= 0 {
			return Element{Tag: name, Text: s[bodyStart : bodyStart+j], attrs: attrs, start: off, end: bodyStart + j + len(name) + 3}, true
		}
	}
	return Element{}, false
}

// openingTag reads <name attr="v" …> at s[at]: the name, the attributes
// as written, and where the element's text starts.
func openingTag(s string, at int) (name, attrs string, bodyStart int, ok bool) {
	i := at + 1
	for i < len(s) && isNameByte(s[i], i == at+1) {
		i++
	}
	if i == at+1 {
		return "", "", 0, false
	}
	name = s[at+1 : i]
	attrStart := i
	for rest := s[i:]; ; {
		_, _, more, found := nextAttr(rest)
		if !found {
			break
		}
		i = len(s) - len(more)
		rest = more
	}
	attrs = s[attrStart:i]
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	if i >= len(s) || s[i] != '>' {
		return "", "", 0, false
	}
	return name, attrs, i + 1, true
}

// nextAttr reads one ` name="value"` at the start of s (white space
// first, around the =); found is false when s does not start with one.
func nextAttr(s string) (name, value, rest string, found bool) {
	i := 0
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	if i == 0 {
		return "", "", s, false
	}
	j := i
	for j < len(s) && isNameByte(s[j], false) {
		j++
	}
	if j == i {
		return "", "", s, false
	}
	name = s[i:j]
	for j < len(s) && isSpace(s[j]) {
		j++
	}
	if j >= len(s) || s[j] != '=' {
		return "", "", s, false
	}
	j++
	for j < len(s) && isSpace(s[j]) {
		j++
	}
	if j >= len(s) || s[j] != '"' {
		return "", "", s, false
	}
	k := strings.IndexByte(s[j+1:], '"')
	if k < 0 {
		return "", "", s, false
	}
	return name, s[j+1 : j+1+k], s[j+2+k:], true
}

func isNameByte(c byte, first bool) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_':
		return true
	case first:
		return false
	}
	return c >= '0' && c <= '9' || c == '.' || c == ':' || c == '-'
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// compile checks a fact's place, pattern and unit.
func (f *PromptFact) compile() error {
	switch {
	case f.In == "task", f.In == "instructions":
		f.where = place{kind: f.In}
	case strings.HasPrefix(f.In, "<"):
		name, attrs, end, ok := openingTag(f.In, 0)
		if !ok || end != len(f.In) {
			return fmt.Errorf("in %q: want <tag> or <tag attr=\"value\">", f.In)
		}
		f.where = place{kind: "element", tag: name, attrs: map[string]string{}}
		for rest := attrs; ; {
			k, v, more, found := nextAttr(rest)
			if !found {
				break
			}
			f.where.attrs[k] = v
			rest = more
		}
	default:
		return fmt.Errorf("in %q: want \"task\", \"instructions\" or an element such as \"<history>\"", f.In)
	}
	if f.Attr != "" && f.where.kind != "element" {
		return fmt.Errorf("attr %q needs an element in \"in\"", f.Attr)
	}
	if f.Unit != "" && f.Unit != "cents" {
		return fmt.Errorf("unit %q: the only unit is \"cents\"", f.Unit)
	}
	if f.Pattern != "" {
		re, err := regexp.Compile(f.Pattern)
		if err != nil {
			return fmt.Errorf("pattern: %v", err)
		}
		f.pattern = re
	}
	if f.Pattern == "" && f.Unit == "" && f.Attr == "" {
		return fmt.Errorf("a fact needs a pattern, a unit or an attr")
	}
	return nil
}

// PromptText is a prompt's texts, each read once: the user's own words,
// the instructions, and its elements by tag (read on first use).
type PromptText struct {
	Prompt             Prompt
	Task, Instructions string
	elements           map[string][]Element
}

// Read reads the prompt's texts.
func (p Prompt) Read() *PromptText {
	return &PromptText{Prompt: p, Task: p.Task(), Instructions: p.Instructions()}
}

// Elements are the prompt's elements with the tag (Prompt.Elements).
func (t *PromptText) Elements(tag string) []Element {
	if els, ok := t.elements[tag]; ok {
		return els
	}
	if t.elements == nil {
		t.elements = map[string][]Element{}
	}
	els := t.Prompt.Elements(tag)
	t.elements[tag] = els
	return els
}

// texts are the texts the fact reads, in request order.
func (f *PromptFact) texts(p *PromptText) []string {
	switch f.where.kind {
	case "task":
		return []string{p.Task}
	case "instructions":
		return []string{p.Instructions}
	}
	var out []string
	for _, el := range p.Elements(f.where.tag) {
		if !hasAttrs(el, f.where.attrs) {
			continue
		}
		if f.Attr != "" {
			if v, ok := el.Attr(f.Attr); ok {
				out = append(out, v)
			}
			continue
		}
		out = append(out, el.Text)
	}
	return out
}

func hasAttrs(el Element, want map[string]string) bool {
	for k, v := range want {
		if got, _ := el.Attr(k); got != v {
			return false
		}
	}
	return true
}

// read is the fact's value in p: a string, cents as int64, or nil when
// the prompt does not say.
func (f *PromptFact) read(p *PromptText) any {
	for _, t := range f.texts(p) {
		if f.pattern != nil {
			m := f.pattern.FindStringSubmatch(t)
			if m == nil {
				continue
			}
			t = m[0]
			if len(m) > 1 {
				t = m[1]
			}
		}
		if f.Unit == "cents" {
			if c, ok := MoneyCents(t); ok {
				return c
			}
			continue
		}
		return t
	}
	return nil
}

// Reading is what a request's prompt says, by fact name (nil: not said).
type Reading map[string]any

// ReadPrompt reads the scenario's prompt facts from p.
func (sc *Scenario) ReadPrompt(p Prompt) Reading { return sc.ReadText(p.Read()) }

// ReadText reads the scenario's prompt facts from a prompt's texts.
func (sc *Scenario) ReadText(p *PromptText) Reading {
	r := make(Reading, len(sc.Reads))
	for i := range sc.Reads {
		r[sc.Reads[i].Name] = sc.Reads[i].read(p)
	}
	return r
}

// Str is a fact's string value ("" when it is not a string).
func (r Reading) Str(name string) string {
	s, _ := r[name].(string)
	return s
}

// Cents is a fact's amount in cents.
func (r Reading) Cents(name string) (int64, bool) {
	c, ok := r[name].(int64)
	return c, ok
}

var moneyAmount = LazyRegexp(`(?i)(?:(?:[¥￥]|\b(?:CNY|RMB))\s*(\d+(?:[.,]\d+)?)|(\d+(?:\.\d+)?)\s*(?:元|块钱|块|yuan\b|CNY\b|RMB\b))`)

// MoneyCents reads the first money amount in s (150 元, 150.5 yuan, ¥150,
// CNY 150) as integer cents, rounding half-cents away from zero; ok is
// false when s names no amount.
func MoneyCents(s string) (int64, bool) {
	m := moneyAmount().FindStringSubmatch(s)
	if m == nil {
		return 0, false
	}
	num := m[1]
	if num == "" {
		num = m[2]
	}
	whole, frac, _ := strings.Cut(strings.ReplaceAll(num, ",", "."), ".")
	if len(whole) > 15 {
		return 0, false // beyond any amount a task asks for, and int64 cents
	}
	cents, _ := strconv.ParseInt(whole, 10, 64)
	cents *= 100
	frac += "000"
	tenths, _ := strconv.ParseInt(frac[:3], 10, 64) // three digits: cents and the one that rounds
	cents += (tenths + 5) / 10
	return cents, true
}

// HasHan reports whether s has a Chinese character: the language a task
// is written in, as the simulated model answers in it.
func HasHan(s string) bool {
	for _, r := range s {
		if unicode.Is(unicode.Han, r) {
			return true
		}
	}
	return false
}

// LazyRegexp compiles a pattern on first use, not at start-up: every
// command links the packages that read prompts, and most never do.
func LazyRegexp(pattern string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(pattern) })
}
