package session

import (
	"fmt"
	"math/big"
	"regexp"
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
	Tag   string
	Attrs map[string]string
	Text  string

	start, end int
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

var openTag = LazyRegexp(`<([A-Za-z_][\w.:-]*)((?:\s+[\w.:-]+\s*=\s*"[^"]*")*)\s*>`)
var tagAttr = LazyRegexp(`([\w.:-]+)\s*=\s*"([^"]*)"`)

// nextElement finds the first element of s with the tag ("" for any) that
// is closed; an opening tag never closed is text.
func nextElement(s, tag string) (Element, bool) {
	for off := 0; off < len(s); {
		m := openTag().FindStringSubmatchIndex(s[off:])
		if m == nil {
			return Element{}, false
		}
		name := s[off+m[2] : off+m[3]]
		attrs := s[off+m[4] : off+m[5]]
		bodyStart := off + m[1]
		if tag == "" || name == tag {
			if i := strings.Index(s[bodyStart:], "</"+name+">"); i >= 0 {
				el := Element{Tag: name, Attrs: map[string]string{}, Text: s[bodyStart : bodyStart+i], start: off + m[0], end: bodyStart + i + len(name) + 3}
				for _, a := range tagAttr().FindAllStringSubmatch(attrs, -1) {
					el.Attrs[a[1]] = a[2]
				}
				return el, true
			}
		}
		off += m[0] + 1
	}
	return Element{}, false
}

// compile checks a fact's place, pattern and unit.
func (f *PromptFact) compile() error {
	switch {
	case f.In == "task", f.In == "instructions":
		f.where = place{kind: f.In}
	case strings.HasPrefix(f.In, "<") && strings.HasSuffix(f.In, ">"):
		m := openTag().FindStringSubmatch(f.In)
		if m == nil || m[0] != f.In {
			return fmt.Errorf("in %q: want <tag> or <tag attr=\"value\">", f.In)
		}
		f.where = place{kind: "element", tag: m[1], attrs: map[string]string{}}
		for _, a := range tagAttr().FindAllStringSubmatch(m[2], -1) {
			f.where.attrs[a[1]] = a[2]
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

// texts are the texts the fact reads, in request order.
func (f *PromptFact) texts(p Prompt) []string {
	switch f.where.kind {
	case "task":
		return []string{p.Task()}
	case "instructions":
		return []string{p.Instructions()}
	}
	var out []string
	for _, el := range p.Elements(f.where.tag) {
		if !hasAttrs(el, f.where.attrs) {
			continue
		}
		if f.Attr != "" {
			if v, ok := el.Attrs[f.Attr]; ok {
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
		if el.Attrs[k] != v {
			return false
		}
	}
	return true
}

// read is the fact's value in p: a string, cents as int64, or nil when
// the prompt does not say.
func (f *PromptFact) read(p Prompt) any {
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
func (sc *Scenario) ReadPrompt(p Prompt) Reading {
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
	num = strings.ReplaceAll(num, ",", ".")
	r, ok := new(big.Rat).SetString(num)
	if !ok || len(num) > 18 {
		return 0, false
	}
	r.Mul(r, big.NewRat(100, 1))
	r.Add(r, big.NewRat(1, 2))
	n := new(big.Int).Quo(r.Num(), r.Denom())
	if !n.IsInt64() {
		return 0, false
	}
	return n.Int64(), true
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
