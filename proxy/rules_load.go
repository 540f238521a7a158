package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/registry"
	"github.com/modelwire/modelwire/jsonschema"
)

// Loading a rules file: JSON, checked whole before any rule is used, each
// error named by its file, line and JSON pointer
// ("rules.json:12: /rules/2/match/tool: unknown field"), so that a bad
// reload can be refused with one line and the old rules kept.

// maxRulesFile bounds a rules file read into memory.
const maxRulesFile = 4 << 20

// LoadRules reads and checks a rules file.
func LoadRules(file string) (*Rules, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	if len(data) > maxRulesFile {
		return nil, fmt.Errorf("%s: larger than %d bytes", file, maxRulesFile)
	}
	return ParseRules(filepath.Base(file), data)
}

// ParseRules checks a rules document; name labels its errors.
func ParseRules(name string, data []byte) (*Rules, error) {
	doc, err := jsonschema.ParseJSON(data)
	if err != nil {
		line := 1
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line = lineAt(data, int(se.Offset))
		}
		return nil, fmt.Errorf("%s:%d: not JSON: %v", name, line, err)
	}
	c := &ruleChecker{name: name, data: data, at: pointerOffsets(data)}
	rs := c.document(doc)
	if c.err != nil {
		return nil, c.err
	}
	rs.Source = name
	return rs, nil
}

// ruleChecker keeps the first error, located.
type ruleChecker struct {
	name string
	data []byte
	at   map[string]int
	err  error
}

func (c *ruleChecker) fail(ptr, format string, args ...any) {
	if c.err != nil {
		return
	}
	off, ok := c.at[ptr]
	for p := ptr; !ok && p != ""; { // a missing member: its parent's line
		p = p[:strings.LastIndexByte(p, '/')]
		off, ok = c.at[p]
	}
	c.err = fmt.Errorf("%s:%d: %s: %s", c.name, lineAt(c.data, off), ptrOrRoot(ptr), fmt.Sprintf(format, args...))
}

func ptrOrRoot(p string) string {
	if p == "" {
		return "(document)"
	}
	return p
}

// object checks v is an object with only the allowed members.
func (c *ruleChecker) object(ptr string, v any, allowed ...string) map[string]any {
	m, ok := v.(map[string]any)
	if !ok {
		c.fail(ptr, "must be an object")
		return nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		return c.at[ptr+"/"+jsonschema.EscapeToken(a)] - c.at[ptr+"/"+jsonschema.EscapeToken(b)]
	})
	for _, k := range keys {
		if !slices.Contains(allowed, k) {
			c.fail(ptr+"/"+jsonschema.EscapeToken(k), "unknown field (known: %s)", strings.Join(allowed, ", "))
		}
	}
	return m
}

func (c *ruleChecker) str(ptr string, v any) string {
	s, ok := v.(string)
	if !ok {
		c.fail(ptr, "must be a string")
	}
	return s
}

func (c *ruleChecker) document(doc any) *Rules {
	rs := &Rules{}
	m := c.object("", doc, "rules")
	arr, ok := m["rules"].([]any)
	if m != nil && !ok {
		c.fail("/rules", "must be an array of rules")
	}
	for i, v := range arr {
		rs.List = append(rs.List, c.rule(i, "/rules/"+strconv.Itoa(i), v))
	}
	return rs
}

var actions = []string{"edit", "replace", "fault", "delay", "hold"}

func (c *ruleChecker) rule(i int, ptr string, v any) Rule {
	r := Rule{N: i}
	m := c.object(ptr, v, append([]string{"name", "match"}, actions...)...)
	if m == nil {
		return r
	}
	if n, ok := m["name"]; ok {
		r.Name = c.str(ptr+"/name", n)
	}
	if mv, ok := m["match"]; ok {
		r.Match = c.match(ptr+"/match", mv)
	}
	var set []string
	for _, a := range actions {
		if _, ok := m[a]; ok {
			set = append(set, a)
		}
	}
	if len(set) != 1 {
		c.fail(ptr, "a rule takes exactly one action (%s); this one has %d", strings.Join(actions, ", "), len(set))
		return r
	}
	dir := r.Match.Direction
	if dir == "" {
		dir = DirRequest
	}
	ap := ptr + "/" + set[0]
	av := m[set[0]]
	switch set[0] {
	case "edit":
		r.Edit = c.edit(ap, av, dir)
	case "replace":
		rm := c.object(ap, av, "session")
		if rm != nil {
			r.Replace = c.str(ap+"/session", rm["session"])
			if r.Replace == "" {
				c.fail(ap+"/session", "names the stored session to play back")
			}
		}
		if dir != DirRequest {
			c.fail(ap, "replace acts on the request (it stands for the upstream): match direction request")
		}
	case "fault":
		r.Fault = c.str(ap, av)
		if _, ok := faultAnswers[r.Fault]; !ok && r.Fault != FaultDisconnect && c.err == nil {
			c.fail(ap, "unknown fault %q (known: %s)", r.Fault, strings.Join(FaultNames(), ", "))
		}
	case "delay":
		d, err := time.ParseDuration(c.str(ap, av))
		if c.err == nil && (err != nil || d < 0 || d > time.Hour) {
			c.fail(ap, "a duration such as \"1.5s\" (at most 1h)")
		}
		r.Delay = d
	case "hold":
		if b, ok := av.(bool); !ok || !b {
			c.fail(ap, "must be true")
		}
		r.Hold = true
	}
	return r
}

func (c *ruleChecker) match(ptr string, v any) Match {
	m := c.object(ptr, v, "protocol", "path", "model", "tool", "turn", "direction")
	var out Match
	for k, val := range m {
		p := ptr + "/" + k
		switch k {
		case "protocol":
			out.Protocol = c.str(p, val)
			if _, ok := registry.Describe(out.Protocol); !ok && c.err == nil {
				c.fail(p, "unknown protocol %q (known: %s)", out.Protocol, strings.Join(registry.Protocols, ", "))
			}
		case "path":
			out.Path = c.str(p, val)
		case "model":
			out.Model = c.str(p, val)
		case "tool":
			out.Tool = c.str(p, val)
		case "direction":
			out.Direction = c.str(p, val)
			if out.Direction != DirRequest && out.Direction != DirResponse && c.err == nil {
				c.fail(p, "request or response")
			}
		case "turn":
			n, ok := val.(json.Number)
			t, err := n.Int64()
			if !ok || err != nil || t < 1 {
				c.fail(p, "a turn number from 1")
			}
			out.Turn = int(t)
		}
	}
	return out
}

func (c *ruleChecker) edit(ptr string, v any, dir string) *Edit {
	e := &Edit{}
	if dir == DirRequest {
		m := c.object(ptr, v, "merge", "patch")
		if m == nil {
			return e
		}
		if mv, ok := m["merge"]; ok {
			if _, isObj := mv.(map[string]any); !isObj {
				c.fail(ptr+"/merge", "a JSON merge patch (an object)")
			}
			e.Merge, _ = adapters.MarshalBody(mv)
		}
		if pv, ok := m["patch"]; ok {
			arr, isArr := pv.([]any)
			if !isArr {
				c.fail(ptr+"/patch", "a list of {\"pointer\", \"value\"}")
			}
			for i, it := range arr {
				ip := ptr + "/patch/" + strconv.Itoa(i)
				im := c.object(ip, it, "pointer", "value")
				if im == nil {
					continue
				}
				ptrText := c.str(ip+"/pointer", im["pointer"])
				if !strings.HasPrefix(ptrText, "/") && c.err == nil {
					c.fail(ip+"/pointer", "a JSON pointer starting with /")
				}
				val, has := im["value"]
				if !has {
					c.fail(ip, "missing value")
				}
				raw, _ := adapters.MarshalBody(val)
				e.Patch = append(e.Patch, PointerValue{Pointer: ptrText, Value: raw})
			}
		}
		if len(e.Merge) == 0 && len(e.Patch) == 0 {
			c.fail(ptr, "a request edit needs merge or patch")
		}
		return e
	}
	m := c.object(ptr, v, "arguments", "text", "stop")
	if m == nil {
		return e
	}
	if av, ok := m["arguments"]; ok {
		am, isObj := av.(map[string]any)
		if !isObj {
			c.fail(ptr+"/arguments", "an object: tool name → merge patch for its arguments")
		}
		e.Arguments = map[string]json.RawMessage{}
		for tool, patch := range am { // every key is a tool name
			if _, isObj := patch.(map[string]any); !isObj {
				c.fail(ptr+"/arguments/"+jsonschema.EscapeToken(tool), "a merge patch (an object) for the tool's arguments")
			}
			e.Arguments[tool], _ = adapters.MarshalBody(patch)
		}
	}
	if tv, ok := m["text"]; ok {
		s := c.str(ptr+"/text", tv)
		e.Text = &s
	}
	if sv, ok := m["stop"]; ok {
		e.Stop = adapters.StopReason(c.str(ptr+"/stop", sv))
		switch e.Stop {
		case adapters.StopFinal, adapters.StopToolCall, adapters.StopTruncated, adapters.StopRefusal:
		default:
			c.fail(ptr+"/stop", "final, tool_call, truncated or refusal")
		}
	}
	if e.Arguments == nil && e.Text == nil && e.Stop == "" {
		c.fail(ptr, "a response edit needs arguments, text or stop")
	}
	return e
}

// pointerOffsets maps each value's JSON pointer to its byte offset.
func pointerOffsets(data []byte) map[string]int {
	out := map[string]int{}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var walk func(ptr string) error
	walk = func(ptr string) error {
		off := skipSep(data, int(dec.InputOffset()))
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		out[ptr] = off
		switch tok {
		case json.Delim('{'):
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return err
				}
				key, _ := k.(string)
				if err := walk(ptr + "/" + jsonschema.EscapeToken(key)); err != nil {
					return err
				}
			}
			_, err = dec.Token()
		case json.Delim('['):
			for i := 0; dec.More(); i++ {
				if err := walk(ptr + "/" + strconv.Itoa(i)); err != nil {
					return err
				}
			}
			_, err = dec.Token()
		}
		return err
	}
	_ = walk("")
	return out
}

// skipSep skips what separates a value from what came before it.
func skipSep(data []byte, off int) int {
	for off < len(data) && strings.IndexByte(" \t\r\n:,", data[off]) >= 0 {
		off++
	}
	return off
}

func lineAt(data []byte, off int) int {
	off = min(max(off, 0), len(data))
	return 1 + bytes.Count(data[:off], []byte("\n"))
}

// WatchRules reloads file into set whenever its modification time or size
// changes (and then holds for one poll), polling every interval until ctx
// ends. A file that fails to
// load keeps the rules in force and logs one line.
func WatchRules(ctx context.Context, file string, set *RuleSet, every time.Duration, log *slog.Logger) {
	stamp := func() (time.Time, int64) {
		fi, err := os.Stat(file)
		if err != nil {
			return time.Time{}, -1
		}
		return fi.ModTime(), fi.Size()
	}
	mt, size := stamp()
	seenM, seenS := mt, size
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		m2, s2 := stamp()
		if m2.Equal(mt) && s2 == size {
			continue
		}
		if !m2.Equal(seenM) || s2 != seenS {
			// Changed since the last poll: an editor may be writing it
			// still. Loaded once it has stayed the same for one poll.
			seenM, seenS = m2, s2
			continue
		}
		mt, size = m2, s2
		rs, err := LoadRules(file)
		if err != nil {
			if log != nil {
				log.Error("rules not reloaded; the previous rules stay in force", "err", err.Error())
			}
			continue
		}
		set.Set(rs)
		if log != nil {
			log.Info("rules reloaded", "file", file, "rules", len(rs.List))
		}
	}
}
