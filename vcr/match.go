package vcr

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/registry"
	"github.com/modelwire/modelwire/jsonschema"
	"github.com/modelwire/modelwire/redact"
)

// Matching: a request is compared with each recorded one in a canonical
// form read by its protocol's own request checker (the simulator's side of
// the adapter), so that what differs is named as a person reads the
// request — the model, a tool result by its call_id, the tools, the output
// schema, the conversation's messages — before the rest of the body. The
// volatile members (DefaultIgnore and the test's own pointers) are removed
// first, and both sides are compared in their redacted form.

// DefaultIgnore are the request members left out of matching: they carry
// ids and bookkeeping that change from run to run, not what the model is
// asked. A "*" token matches any one member or element.
var DefaultIgnore = []string{"/metadata", "/user", "/safety_identifier", "/prompt_cache_key"}

// canonical is a request in its matching form: sections compared in order.
type canonical struct {
	method   string
	path     string
	sections []section
	history  int // how many conversation items it carries
}

type section struct {
	name  string // "" for the rest of the body: its pointers are the body's
	value any
}

// model is the model the request names, as its protocol reads it.
func (c *canonical) model() string {
	for _, s := range c.sections {
		if m, ok := s.value.(string); ok && s.name == "model" {
			return m
		}
	}
	return ""
}

// canonicalize reads a (redacted) request body for matching.
func canonicalize(method, path string, h http.Header, body []byte, ignore [][]string) *canonical {
	c := &canonical{method: method, path: path}
	v, err := jsonschema.ParseJSON(body)
	if err != nil {
		c.sections = []section{{"", string(body)}}
		return c
	}
	for _, toks := range ignore {
		v = dropPointer(v, toks)
	}
	d, ok := registry.Route(method, path, "")
	if !ok {
		d, ok = registry.RouteURL(&url.URL{Path: path})
	}
	obj, isObj := v.(map[string]any)
	if !ok || !isObj {
		c.sections = []section{{"", v}}
		return c
	}
	norm, _ := adapters.MarshalBody(v)
	hist := adapters.HistoryItems(d.Name, gjson.ParseBytes(norm))
	c.history = len(hist)
	msgs := make([]any, len(hist))
	for i, it := range hist {
		msgs[i], _ = jsonschema.ParseJSON([]byte(it))
	}
	rest := make(map[string]any, len(obj))
	for k, x := range obj {
		if k != d.HistoryField {
			rest[k] = x
		}
	}
	if simd, ok := d.New().(adapters.Simulated); ok {
		if in, serr := simd.CheckRequest(method, path, h, norm); serr == nil && in != nil {
			results := map[string]any{}
			for _, r := range in.Results {
				results[r.CallID] = asJSON(r)
			}
			c.sections = append(c.sections, section{"model", in.Model}, section{"tool_results", results},
				section{"tools", asJSON(in.ToolDefs)}, section{"output", asJSON(in.Output)})
		}
	}
	c.sections = append(c.sections, section{"messages", msgs}, section{"", rest})
	return c
}

func asJSON(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	out, _ := jsonschema.ParseJSON(b)
	return out
}

// ignorePointers parses the pointers a test declares volatile.
func ignorePointers(ptrs []string) ([][]string, error) {
	var out [][]string
	for _, p := range ptrs {
		toks, err := redact.ParsePointer(p)
		if err != nil {
			return nil, fmt.Errorf("ignore pointer %q: %v", p, err)
		}
		out = append(out, toks)
	}
	return out, nil
}

// dropPointer removes what a pointer names ("*" matches any member or
// element) from v, which it may change in place.
func dropPointer(v any, toks []string) any {
	if len(toks) == 0 {
		return v
	}
	switch x := v.(type) {
	case map[string]any:
		if len(toks) == 1 {
			if toks[0] == "*" {
				return map[string]any{}
			}
			delete(x, toks[0])
			return x
		}
		for k, child := range x {
			if toks[0] == "*" || toks[0] == k {
				x[k] = dropPointer(child, toks[1:])
			}
		}
	case []any:
		for i, child := range x {
			if toks[0] == "*" || toks[0] == fmt.Sprint(i) {
				if len(toks) == 1 {
					x[i] = nil
				} else {
					x[i] = dropPointer(child, toks[1:])
				}
			}
		}
	}
	return v
}

// difference is where two requests part first, and how many leaves differ.
type difference struct {
	pointer           string
	recorded, sent    any
	missing, missing2 bool // recorded has nothing there; sent has nothing there
	count             int
}

// compare finds the first difference between a recorded request and a
// sent one (nil when they are the same).
func compare(rec, sent *canonical) *difference {
	d := &difference{}
	if rec.method != sent.method || rec.path != sent.path && !strings.HasSuffix(rec.path, sent.path) && !strings.HasSuffix(sent.path, rec.path) {
		d.note("(method and path)", rec.method+" "+rec.path, sent.method+" "+sent.path, false, false)
	}
	recBy := map[string]any{}
	for _, s := range rec.sections {
		recBy[s.name] = s.value
	}
	seen := map[string]bool{}
	for _, s := range sent.sections {
		seen[s.name] = true
		r, ok := recBy[s.name]
		prefix := ""
		if s.name != "" {
			prefix = "/" + jsonschema.EscapeToken(s.name)
		}
		if !ok {
			continue // the other side's checker could not read it: its body still compares
		}
		walk(d, prefix, r, s.value)
	}
	if d.count == 0 {
		return nil
	}
	return d
}

func (d *difference) note(ptr string, rec, sent any, recMissing, sentMissing bool) {
	if d.count == 0 {
		d.pointer, d.recorded, d.sent, d.missing, d.missing2 = ptr, rec, sent, recMissing, sentMissing
	}
	d.count++
}

// walk compares two JSON values, objects member by member in name order,
// arrays element by element.
func walk(d *difference, ptr string, a, b any) {
	if d.count > 1000 {
		return // enough to rank by
	}
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			d.note(ptr, a, b, false, false)
			return
		}
		for _, k := range jsonschema.UnionKeys(x, y) {
			p := ptr + "/" + jsonschema.EscapeToken(k)
			av, aok := x[k]
			bv, bok := y[k]
			switch {
			case !aok:
				d.note(p, nil, bv, true, false)
			case !bok:
				d.note(p, av, nil, false, true)
			default:
				walk(d, p, av, bv)
			}
		}
	case []any:
		y, ok := b.([]any)
		if !ok {
			d.note(ptr, a, b, false, false)
			return
		}
		for i := 0; i < max(len(x), len(y)); i++ {
			p := fmt.Sprintf("%s/%d", ptr, i)
			switch {
			case i >= len(x):
				d.note(p, nil, y[i], true, false)
			case i >= len(y):
				d.note(p, x[i], nil, false, true)
			default:
				walk(d, p, x[i], y[i])
			}
		}
	case json.Number:
		if y, ok := b.(json.Number); !ok || !sameNumber(x, y) {
			d.note(ptr, a, b, false, false)
		}
	default:
		if a != b {
			d.note(ptr, a, b, false, false)
		}
	}
}

func sameNumber(a, b json.Number) bool {
	if a == b {
		return true
	}
	fa, err1 := a.Float64()
	fb, err2 := b.Float64()
	return err1 == nil && err2 == nil && fa == fb
}

// Mismatch is why a request matches nothing recorded: the nearest
// recorded exchange and the first JSON pointer at which it differs.
type Mismatch struct {
	Cassette string `json:"cassette"`
	// Exchange is the nearest recorded exchange's turn (from 1); 0 when
	// the cassette is empty.
	Exchange int    `json:"exchange"`
	Pointer  string `json:"pointer"`
	Recorded any    `json:"recorded"`
	Sent     any    `json:"sent"`
	// Nearest is the nearest recorded request's method and URL path.
	Nearest string `json:"nearest,omitempty"`
	// Update is the command that re-records it.
	Update string `json:"update,omitempty"`

	recMissing, sentMissing bool
}

// Error is the mismatch in one line (an SDK's error message).
func (m *Mismatch) Error() string { return m.text(false) }

// Explain is the mismatch with both values on lines of their own (a test's
// failure).
func (m *Mismatch) Explain() string { return m.text(true) }

func (m *Mismatch) text(lines bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "cassette %s has no request like this one", m.Cassette)
	if m.Exchange == 0 {
		b.WriteString(" (it holds no exchange)")
	} else {
		rec, sent := valueText(m.Recorded, m.Sent), valueText(m.Sent, m.Recorded)
		if m.recMissing {
			rec = "nothing"
		}
		if m.sentMissing {
			sent = "nothing"
		}
		format := ": nearest is exchange %d (%s), which differs first at %s (recorded %s, sent %s)"
		if lines {
			format = ": nearest is exchange %d (%s), which differs first at %s\n  recorded: %s\n  sent:     %s"
		}
		fmt.Fprintf(&b, format, m.Exchange, m.Nearest, m.Pointer, rec, sent)
	}
	if m.Update != "" {
		if lines {
			b.WriteString("\n")
		} else {
			b.WriteString("; ")
		}
		b.WriteString("to re-record it: " + m.Update)
	}
	return b.String()
}

// valueText shows a JSON value in one line, at most about 300 bytes of
// it: a long string from a little before where it parts from the other
// side's, so the difference is in view.
func valueText(v, other any) string {
	if s, ok := v.(string); ok && len(s) > 300 {
		from := 0
		if o, ok := other.(string); ok {
			for from < len(s) && from < len(o) && s[from] == o[from] {
				from++
			}
			from = max(0, from-60)
			for from > 0 && !isRuneStart(s[from]) {
				from--
			}
		}
		to := min(len(s), from+240)
		for to < len(s) && !isRuneStart(s[to]) {
			to--
		}
		out := adapters.JSONString(s[from:to])
		if from > 0 {
			out = "…" + out
		}
		if to < len(s) {
			out += "…"
		}
		return out + fmt.Sprintf(" (%d bytes)", len(s))
	}
	b, err := adapters.MarshalBody(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if len(b) > 300 {
		cut := 300
		for cut > 0 && !isRuneStart(b[cut]) {
			cut--
		}
		return string(b[:cut]) + fmt.Sprintf("… (%d bytes)", len(b))
	}
	return string(b)
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// match finds the turn a request is: the first recorded request equal to
// it with an answer not yet given (a retried turn answers each of its
// attempts in turn), else the last equal one again. Otherwise it returns
// the mismatch against the nearest: the request whose conversation is as
// long as this one's, else the one with the fewest differences.
func (c *Cassette) match(sent *canonical, ignore [][]string) (*turn, *Mismatch) {
	var again, nearest *turn
	var best *difference
	bestScore := -1
	for _, t := range c.turns {
		if t.key == nil {
			x := t.attempts[0]
			t.key = canonicalize(x.line.Method, x.path(), x.line.RequestHeaders, x.body(), ignore)
		}
		d := compare(t.key, sent)
		if d == nil {
			if t.served < len(t.attempts) {
				return t, nil
			}
			again = t
			continue
		}
		score := d.count
		if t.key.history == sent.history {
			score = 0
		}
		if bestScore < 0 || score < bestScore {
			best, bestScore, nearest = d, score, t
		}
	}
	if again != nil {
		return again, nil
	}
	m := &Mismatch{Cassette: c.Name()}
	if nearest != nil {
		x := nearest.attempts[0]
		m.Exchange = c.index(nearest) + 1
		m.Nearest = x.line.Method + " " + x.path()
		m.Pointer, m.Recorded, m.Sent = best.pointer, best.recorded, best.sent
		m.recMissing, m.sentMissing = best.missing, best.missing2
	}
	return nil, m
}

func (c *Cassette) index(t *turn) int {
	for i, x := range c.turns {
		if x == t {
			return i
		}
	}
	return -1
}

// nearestTurn is the turn a mismatch named (nil for none).
func (c *Cassette) nearestTurn(m *Mismatch) *turn {
	if m == nil || m.Exchange < 1 || m.Exchange > len(c.turns) {
		return nil
	}
	return c.turns[m.Exchange-1]
}
