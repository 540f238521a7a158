package proxy

import (
	"encoding/json"
	"fmt"
	"path"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/jsonschema"
)

// Rules are what `proxy --rules FILE` does to the traffic unattended (the
// format is in docs/proxy.md, "Rules"). Each rule matches an exchange by
// protocol, path, model, tool name and turn, in one direction, and takes
// one action: edit, replace, fault, delay or hold. Rules run in file
// order; every matching rule acts, except that a replace or a fault ends
// the request's rules (nothing is forwarded after it).

// Directions a rule acts in.
const (
	DirRequest  = "request"
	DirResponse = "response"
)

// Rules is one loaded rules file.
type Rules struct {
	Source string // the file, for messages
	List   []Rule
}

// Rule is one match and its action.
type Rule struct {
	N     int // its index in the file, from 0
	Name  string
	Match Match
	// Exactly one action is set.
	Edit    *Edit
	Replace string // a stored session's id, played back as the upstream
	Fault   string // one of FaultNames
	Delay   time.Duration
	Hold    bool
}

// Match selects exchanges; an empty field matches anything. Path and
// model are globs (path.Match); Turn counts the conversation's turns from 1.
type Match struct {
	Protocol  string
	Path      string
	Model     string
	Tool      string
	Turn      int
	Direction string // request (default) or response
}

// Edit changes a request body (Merge, then Patch) or a held response
// (Arguments by tool name as a merge patch, Text, Stop).
type Edit struct {
	Merge     json.RawMessage
	Patch     []PointerValue
	Arguments map[string]json.RawMessage
	Text      *string
	Stop      adapters.StopReason
}

// PointerValue sets (or adds) the value at a JSON pointer.
type PointerValue struct {
	Pointer string
	Value   json.RawMessage
}

// who names a rule in a decision's reason.
func (r Rule) who(src string) string {
	s := fmt.Sprintf("rule %d", r.N)
	if r.Name != "" {
		s += " " + strconv.Quote(r.Name)
	}
	if src != "" {
		s += " (" + src + ")"
	}
	return s
}

// RuleSet holds the rules in force; a reload swaps them whole.
type RuleSet struct{ cur atomic.Pointer[Rules] }

// NewRuleSet holds r.
func NewRuleSet(r *Rules) *RuleSet {
	s := &RuleSet{}
	s.Set(r)
	return s
}

// Set replaces the rules in force.
func (s *RuleSet) Set(r *Rules) { s.cur.Store(r) }

// Get is the rules in force (nil when none).
func (s *RuleSet) Get() *Rules {
	if s == nil {
		return nil
	}
	return s.cur.Load()
}

// matchInfo is what an exchange offers to a match.
type matchInfo struct {
	protocol, path, model string
	turn                  int
	tools                 []string // offered (request) or called (response)
	// anyTool: the tools are not known yet (a response not yet decoded):
	// a rule naming a tool may match.
	anyTool bool
}

func (m Match) matches(dir string, in matchInfo) bool {
	d := m.Direction
	if d == "" {
		d = DirRequest
	}
	if d != dir || in.protocol == "" {
		return false
	}
	if m.Protocol != "" && m.Protocol != in.protocol {
		return false
	}
	if m.Path != "" && !glob(m.Path, in.path) {
		return false
	}
	if m.Model != "" && !glob(m.Model, in.model) {
		return false
	}
	if m.Turn != 0 && m.Turn != in.turn {
		return false
	}
	if m.Tool != "" && !in.anyTool {
		for _, t := range in.tools {
			if glob(m.Tool, t) {
				return true
			}
		}
		return false
	}
	return true
}

func glob(pattern, s string) bool {
	ok, err := path.Match(pattern, s)
	return err == nil && ok || pattern == s
}

// matching are the rules for dir that match, in file order.
func (rs *Rules) matching(dir string, in matchInfo) []Rule {
	if rs == nil {
		return nil
	}
	var out []Rule
	for _, r := range rs.List {
		if r.Match.matches(dir, in) {
			out = append(out, r)
		}
	}
	return out
}

// editRequest applies a request edit to a JSON body: the merge patch
// (RFC 7386), then each pointer's value.
func editRequest(body []byte, e *Edit) ([]byte, error) {
	doc, err := jsonschema.ParseJSON(body)
	if err != nil {
		return nil, fmt.Errorf("the request body is not JSON: %v", err)
	}
	if len(e.Merge) > 0 {
		patch, err := jsonschema.ParseJSON(e.Merge)
		if err != nil {
			return nil, err
		}
		doc = mergePatch(doc, patch)
	}
	for _, pv := range e.Patch {
		v, err := jsonschema.ParseJSON(pv.Value)
		if err != nil {
			return nil, err
		}
		if doc, err = setPointer(doc, pv.Pointer, v); err != nil {
			return nil, err
		}
	}
	return adapters.MarshalBody(doc)
}

// mergePatch is RFC 7386: an object patch merges member by member (null
// removes), anything else replaces the target.
func mergePatch(target, patch any) any {
	p, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	t, ok := target.(map[string]any)
	if !ok {
		t = map[string]any{}
	}
	for k, v := range p {
		if v == nil {
			delete(t, k)
			continue
		}
		t[k] = mergePatch(t[k], v)
	}
	return t
}

// setPointer sets the value at ptr (RFC 6901); the last token may name a
// new member, or "-" or the length to append to an array.
func setPointer(doc any, ptr string, v any) (any, error) {
	if ptr == "" {
		return v, nil
	}
	if !strings.HasPrefix(ptr, "/") {
		return nil, fmt.Errorf("pointer %q does not start with /", ptr)
	}
	toks := strings.Split(ptr[1:], "/")
	var set func(cur any, i int) (any, error)
	set = func(cur any, i int) (any, error) {
		tok := jsonschema.UnescapeToken(toks[i])
		last := i == len(toks)-1
		switch c := cur.(type) {
		case map[string]any:
			if last {
				c[tok] = v
				return c, nil
			}
			next, ok := c[tok]
			if !ok {
				return nil, fmt.Errorf("pointer %s: no member %q", ptr, tok)
			}
			nv, err := set(next, i+1)
			c[tok] = nv
			return c, err
		case []any:
			n, err := strconv.Atoi(tok)
			if tok == "-" {
				n, err = len(c), nil
			}
			if err != nil || n < 0 || n > len(c) || (!last && n == len(c)) {
				return nil, fmt.Errorf("pointer %s: no element %q", ptr, tok)
			}
			if last {
				if n == len(c) {
					return append(c, v), nil
				}
				c[n] = v
				return c, nil
			}
			nv, err := set(c[n], i+1)
			c[n] = nv
			return c, err
		}
		return nil, fmt.Errorf("pointer %s: %q is inside a value that is neither object nor array", ptr, tok)
	}
	return set(doc, 0)
}

// mergeArguments applies a merge patch to a call's arguments; the result
// must stay one JSON object.
func mergeArguments(args, patch json.RawMessage) (json.RawMessage, error) {
	t, err := jsonschema.ParseJSON(args)
	if err != nil {
		t = map[string]any{} // arguments that never parsed are replaced whole
	}
	p, err := jsonschema.ParseJSON(patch)
	if err != nil {
		return nil, err
	}
	out := mergePatch(t, p)
	if _, ok := out.(map[string]any); !ok {
		return nil, fmt.Errorf("the edited arguments are not a JSON object")
	}
	return adapters.MarshalBody(out)
}
