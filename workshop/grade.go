package workshop

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/session"
	"github.com/modelwire/modelwire/sim"
)

// A check sees the request as the provider read it, in canonical words
// (the same for every protocol):
//
//	turn         model turns the request's history carries
//	protocol     the wire format it came in
//	model, stream
//	tools        [{name, description, parameters, strict}]
//	tool_choice  {mode: "" (none stated) | auto | required | none | tool, name}
//	output       {mode: "" | text | json_object | json_schema, name, strict, schema}
//	results      [{call_id, name (of the call it answers; "" when none), content, is_error, json}]
//	prompt       [{role: system | developer | user, text}]
//	serial       parallel calls forbidden
//	rejected     nil, or {status, message}: the provider's answer to a request it refused
//	has(m, k)    whether map m has key k
//	closed(s)    schema s is as strict mode needs it: every object with
//	             additionalProperties:false and all its properties required

// Result is one check's verdict on one request.
type Result struct {
	Check   string `json:"check"`
	Pass    bool   `json:"pass"`
	Detail  string `json:"detail,omitempty"`
	Section string `json:"section"`
	Hint    Text   `json:"hint"`
}

// Grade is one request's grade.
type Grade struct {
	At   time.Time `json:"at"`
	Turn int       `json:"turn"`
	// Step is the step's id ("" when no step of the exercise is at this
	// turn) and StepIndex its 1-based number.
	Step      string   `json:"step"`
	StepIndex int      `json:"step_index"`
	Passed    int      `json:"passed"`
	Total     int      `json:"total"`
	Failed    []Result `json:"failed"`
	Status    int      `json:"status"` // the HTTP status the request is answered with
	Protocol  string   `json:"protocol"`
	// Request is what the request said, in canonical words, short: shown
	// beside the shape the step expects.
	Request string `json:"request"`
}

// maxDetail bounds what a grade keeps of a detail (a rejection's message).
const maxDetail = 300

// env is the request as a check sees it. turn is the request's turn
// (estimated by the room when the provider could not read it).
func env(g sim.Graded, turn int) map[string]any {
	e := map[string]any{"turn": turn, "protocol": g.Protocol.Name, "rejected": nil, "serial": false}
	root := gjson.ParseBytes(g.Body)
	decl := g.Protocol.Declared(g.Path, root)
	e["model"], e["stream"] = decl.Model, decl.Stream
	choice := map[string]any{"mode": "", "name": ""}
	output := map[string]any{"mode": "", "name": decl.SchemaName, "strict": false, "schema": parse(decl.Schema)}
	if decl.Schema != nil {
		output["mode"] = string(adapters.OutputJSONSchema)
	}
	var tools, results, prompt []any
	if in := g.In; in != nil {
		for _, t := range in.ToolDefs {
			tools = append(tools, map[string]any{"name": t.Name, "description": t.Description, "parameters": parse(t.Parameters), "strict": t.Strict})
		}
		choice["mode"], choice["name"] = string(in.Choice.Mode), in.Choice.Name
		o := in.Output
		output = map[string]any{"mode": string(o.Mode), "name": o.Name, "strict": o.Strict, "schema": parse(o.Schema)}
		for _, r := range in.Results {
			results = append(results, result(r.CallID, r.Name, r.Content, r.IsError))
		}
		for _, p := range in.Prompt {
			prompt = append(prompt, map[string]any{"role": string(p.Role), "text": p.Text})
		}
		e["serial"] = in.Serial
	} else {
		// Refused before it was read: what can be read leniently.
		for name, schema := range decl.Tools {
			tools = append(tools, map[string]any{"name": name, "description": "", "parameters": parse(schema), "strict": false})
		}
		for _, r := range adapters.BodyResults(g.Protocol.Name, g.Body) {
			results = append(results, result(r.CallID, r.Name, r.Content, r.IsError))
		}
	}
	if g.Rejected != nil {
		msg := gjson.GetBytes(g.Rejected.Body, "error.message").String()
		if msg == "" {
			msg = gjson.GetBytes(g.Rejected.Body, "message").String()
		}
		e["rejected"] = map[string]any{"status": g.Rejected.Status, "message": msg}
	}
	e["tools"], e["results"], e["prompt"] = orEmpty(tools), orEmpty(results), orEmpty(prompt)
	e["tool_choice"], e["output"] = choice, output
	e["has"] = func(m any, k string) bool {
		mm, ok := m.(map[string]any)
		_, found := mm[k]
		return ok && found
	}
	e["closed"] = closed
	return e
}

func orEmpty(v []any) []any {
	if v == nil {
		return []any{}
	}
	return v
}

func result(callID, name, content string, isError bool) map[string]any {
	return map[string]any{"call_id": callID, "name": name, "content": content, "is_error": isError, "json": parse([]byte(content))}
}

// parse is a JSON text as a value (nil when it is absent or not JSON).
func parse(raw []byte) any {
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil {
		return nil
	}
	return v
}

// closed says whether a schema is as strict mode needs it: each object
// with additionalProperties false and every property required.
func closed(schema any) bool {
	m, ok := schema.(map[string]any)
	if !ok {
		return false
	}
	var walk func(v any, depth int) bool
	walk = func(v any, depth int) bool {
		m, ok := v.(map[string]any)
		if !ok || depth > 32 {
			return depth <= 32
		}
		props, hasProps := m["properties"].(map[string]any)
		if isObject(m) || hasProps {
			if m["additionalProperties"] != false {
				return false
			}
			req := map[string]bool{}
			list, _ := m["required"].([]any)
			for _, r := range list {
				if s, ok := r.(string); ok {
					req[s] = true
				}
			}
			for k := range props {
				if !req[k] {
					return false
				}
			}
		}
		for _, k := range []string{"properties", "$defs", "definitions"} {
			if sub, ok := m[k].(map[string]any); ok {
				for _, s := range sub {
					if !walk(s, depth+1) {
						return false
					}
				}
			}
		}
		for _, k := range []string{"items", "additionalItems"} {
			if s, ok := m[k].(map[string]any); ok && !walk(s, depth+1) {
				return false
			}
		}
		for _, k := range []string{"anyOf", "oneOf", "allOf", "prefixItems"} {
			list, _ := m[k].([]any)
			for _, s := range list {
				if !walk(s, depth+1) {
					return false
				}
			}
		}
		return true
	}
	return walk(m, 0)
}

func isObject(m map[string]any) bool {
	switch t := m["type"].(type) {
	case string:
		return t == "object"
	case []any:
		for _, x := range t {
			if x == "object" {
				return true
			}
		}
	}
	return false
}

// grade runs a step's checks on one request.
func grade(st *Step, index int, e map[string]any) Grade {
	g := Grade{Step: st.ID, StepIndex: index + 1, Total: len(st.Checks)}
	for _, c := range st.Checks {
		out, err := session.RunExpr(c.prog, e)
		pass, _ := out.(bool)
		if err == nil && pass {
			g.Passed++
			continue
		}
		r := Result{Check: c.ID, Section: c.Section, Hint: c.Hint}
		switch {
		case err != nil:
			r.Detail = "cannot evaluate: " + firstLine(err.Error())
		case c.ID == "accepted" || e["rejected"] != nil:
			if rej, ok := e["rejected"].(map[string]any); ok {
				r.Detail = fmt.Sprintf("the provider answered %v: %v", rej["status"], rej["message"])
			}
		}
		r.Detail = clip(r.Detail, maxDetail)
		g.Failed = append(g.Failed, r)
	}
	return g
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

// Header is the grade as one response header value:
// "step=2 pass=5/6 fail=call-id-matches,accepted".
func (g Grade) Header() string {
	if g.Step == "" {
		return fmt.Sprintf("step=none turn=%d pass=0/0", g.Turn)
	}
	s := fmt.Sprintf("step=%d pass=%d/%d", g.StepIndex, g.Passed, g.Total)
	if len(g.Failed) > 0 {
		ids := make([]string, len(g.Failed))
		for i, f := range g.Failed {
			ids[i] = f.Check
		}
		s += " fail=" + strings.Join(ids, ",")
	}
	return s
}

// maxSummary bounds a request's summary.
const maxSummary = 600

// summarize is a request in one line of canonical words: its tools, its
// tool choice, its output format and which call each result answers.
func summarize(e map[string]any) string {
	var parts []string
	var names []string
	for _, t := range e["tools"].([]any) {
		names = append(names, fmt.Sprint(t.(map[string]any)["name"]))
	}
	parts = append(parts, "tools: ["+strings.Join(names, ", ")+"]")
	tc := e["tool_choice"].(map[string]any)
	mode := fmt.Sprint(tc["mode"])
	if mode == "" {
		mode = "(not stated: auto)"
	}
	if n := fmt.Sprint(tc["name"]); n != "" {
		mode += " " + n
	}
	parts = append(parts, "tool_choice: "+mode)
	o := e["output"].(map[string]any)
	if m := fmt.Sprint(o["mode"]); m != "" {
		out := "output: " + m
		if n := fmt.Sprint(o["name"]); n != "" {
			out += " " + n
		}
		if o["strict"] == true {
			out += " strict"
		}
		parts = append(parts, out)
	}
	var rs []string
	for _, r := range e["results"].([]any) {
		m := r.(map[string]any)
		name := fmt.Sprint(m["name"])
		if name == "" {
			name = "no such call"
		}
		rs = append(rs, fmt.Sprintf("%s→%s", m["call_id"], name))
	}
	if len(rs) > 0 {
		parts = append(parts, "results: ["+strings.Join(rs, ", ")+"]")
	}
	if rej, ok := e["rejected"].(map[string]any); ok {
		parts = append(parts, fmt.Sprintf("refused %v", rej["status"]))
	}
	return clip(strings.Join(parts, " · "), maxSummary)
}
