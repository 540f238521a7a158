package session

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"

	"github.com/modelwire/modelwire/jsonschema"
	"github.com/modelwire/modelwire/validate"
)

// The layers and verdicts are validate's; session names them for its own
// code and its callers' (the replayer, the engine's tests).
const (
	LayerTransport = validate.Transport
	LayerProtocol  = validate.Protocol
	LayerParse     = validate.Parse
	LayerSchema    = validate.Schema
	LayerDomain    = validate.Domain
)

// Verdict is a layer's outcome (validate.Verdict, which the store keeps).
type Verdict = validate.Verdict

// The verdicts.
const (
	Pass = validate.Pass
	Fail = validate.Fail
	Skip = validate.Skip
)

// LayerResult is one layer's verdict.
type LayerResult = validate.LayerResult

// Outcome is what a session's run came to, as the validator needs it.
type Outcome = validate.Outcome

// CheckResult is one business check's verdict.
type CheckResult struct {
	ID     string `json:"id"`
	Pass   bool   `json:"pass"`
	Detail string `json:"detail"`
	// Shown are the values the check names (its show list), each with
	// the expression it was read by, on a pass as on a failure.
	Shown []Shown `json:"shown,omitempty"`
}

// Shown is one value a check shows: the expression and its JSON value.
type Shown struct {
	Expr  string          `json:"expr"`
	Value json.RawMessage `json:"value"`
}

// Domain is the domain layer's working, for a person to read: every
// check with its verdict and the values it used, and every fact with its
// value and the observations it was computed from. A pass shows it as a
// failure does.
type Domain struct {
	Checks []CheckResult `json:"checks"`
	Facts  []FactResult  `json:"facts,omitempty"`
}

// Validate runs the five layers on a session (validate.Judge): the whole
// loop, parsed per the scenario's output contract, its business checks as
// the domain layer. A session that re-sent an application's requests is
// judged in the application's scope.
func Validate(sc *Scenario, o Outcome, obs *Observations) (results []LayerResult, output json.RawMessage) {
	scope := validate.Scenario
	if sc.application {
		scope = validate.Application
	}
	return validate.Judge(validate.Input{
		Scope:    scope,
		Outcome:  o,
		Contract: validate.Contract{Mode: sc.Output.Mode, Schema: sc.OutputSchema(), Name: sc.Output.Name},
		Domain: func(obj json.RawMessage) []validate.Check {
			var out []validate.Check
			for _, c := range RunChecks(sc, obj, obs) {
				out = append(out, validate.Check{ID: c.ID, Pass: c.Pass, Detail: c.Detail})
			}
			return out
		},
	})
}

// RunChecks runs the scenario's checks on an answer, with the facts
// computed from this session's observations.
func RunChecks(sc *Scenario, obj json.RawMessage, obs *Observations) []CheckResult {
	checks, _ := runChecks(sc, obj, obs)
	return checks
}

// ExplainDomain runs the checks as the domain layer does and keeps their
// working: the checks' values and the facts with what they read. It is
// nil when the layers did not judge the domain (an earlier layer failed,
// or the scenario has no checks).
func ExplainDomain(sc *Scenario, layers []LayerResult, obj json.RawMessage, obs *Observations) *Domain {
	judged := false
	for _, l := range layers {
		judged = judged || l.Layer == LayerDomain && l.Status != Skip
	}
	if !judged || sc == nil || obs == nil {
		return nil
	}
	checks, env := runChecks(sc, obj, obs)
	return &Domain{Checks: checks, Facts: sc.explainFacts(env)}
}

// runChecks runs the checks and returns them with the environment the
// expressions saw (the facts computed in it).
func runChecks(sc *Scenario, obj json.RawMessage, obs *Observations) ([]CheckResult, map[string]any) {
	var doc any
	d := json.NewDecoder(bytes.NewReader(obj))
	d.UseNumber()
	_ = d.Decode(&doc)
	var answer any
	_ = json.Unmarshal(obj, &answer)
	env := exprEnv(answer, obs)
	env[stopName] = obs.Stop
	for name, v := range sc.ReadPrompt(obs.Prompt) {
		if c, ok := v.(int64); ok {
			v = int(c) // expr's own integer
		}
		env[name] = v
	}
	out := sc.computeFacts(env)
	for i, c := range sc.Checks {
		if i < len(sc.checkPrograms) && sc.checkPrograms[i] != nil {
			out = append(out, runExprCheck(c, sc.checkPrograms[i], env))
			continue
		}
		out = append(out, runCheck(c, doc))
	}
	return out, env
}

func runCheck(c Check, doc any) CheckResult {
	res := CheckResult{ID: c.ID, Pass: true}
	fail := func(format string, args ...any) CheckResult {
		res.Pass = false
		res.Detail = fmt.Sprintf(format, args...)
		if c.Message != "" {
			res.Detail = c.Message + " (" + res.Detail + ")"
		}
		return res
	}
	v, found := Lookup(doc, c.Pointer)
	if c.Exists != nil {
		if found != *c.Exists {
			return fail("%s exists: %v", c.Pointer, found)
		}
		if !found {
			return res
		}
	}
	if !found {
		return fail("%s is missing", c.Pointer)
	}
	if len(c.Equals) > 0 {
		var want any
		d := json.NewDecoder(bytes.NewReader(c.Equals))
		d.UseNumber()
		_ = d.Decode(&want)
		if !sameJSON(v, want) {
			return fail("%s is %s, want %s", c.Pointer, show(v), show(want))
		}
	}
	if len(c.OneOf) > 0 {
		ok := false
		for _, w := range c.OneOf {
			ok = ok || sameJSON(v, w)
		}
		if !ok {
			return fail("%s is %s, want one of %s", c.Pointer, show(v), show(c.OneOf))
		}
	}
	for _, rel := range []struct {
		op  string
		o   *Operand
		cmp func(a, b float64) bool
	}{
		{"<", c.LT, func(a, b float64) bool { return a < b }},
		{"<=", c.LTE, func(a, b float64) bool { return a <= b }},
		{">", c.GT, func(a, b float64) bool { return a > b }},
		{">=", c.GTE, func(a, b float64) bool { return a >= b }},
	} {
		if rel.o == nil {
			continue
		}
		a, ok := number(v)
		if !ok {
			return fail("%s is %s, not a number", c.Pointer, show(v))
		}
		b, label := math.NaN(), ""
		if rel.o.Number != nil {
			b, label = *rel.o.Number, show(*rel.o.Number)
		} else if w, found := Lookup(doc, rel.o.Pointer); found {
			b, _ = number(w)
			label = fmt.Sprintf("%s (%s)", rel.o.Pointer, show(w))
		}
		if math.IsNaN(b) || !rel.cmp(a, b) {
			return fail("%s is %s, want %s %s", c.Pointer, show(v), rel.op, label)
		}
	}
	return res
}

// Lookup resolves a JSON pointer in a decoded document; checks may also
// write "/" for the whole document and leave out the leading slash.
func Lookup(doc any, ptr string) (any, bool) {
	if ptr == "/" {
		return doc, true
	}
	if ptr != "" && !strings.HasPrefix(ptr, "/") {
		ptr = "/" + ptr
	}
	return jsonschema.Lookup(doc, ptr)
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	case float64:
		return x, true
	case int: // an expression's integer result
		return float64(x), true
	}
	return 0, false
}

func sameJSON(a, b any) bool {
	na, aok := number(a)
	nb, bok := number(b)
	if aok && bok {
		return na == nb
	}
	return reflect.DeepEqual(normalise(a), normalise(b))
}

func normalise(v any) any {
	b, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

func show(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
