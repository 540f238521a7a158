package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/expr-lang/expr/vm"
)

// A scenario states its business rules as expressions (expr-lang), so a
// scenario file carries its own domain checks: no rule lives only in Go,
// and a copy of a built-in case checks exactly what the original does.
//
// An expression sees:
//
//	answer        the parsed final answer
//	obs           tool name → the latest successful result of that tool, parsed
//	evidence_ids  every evidence_id found in successful results
//	<fact>        each fact computed before it, by name
//	has(m, k)     whether map m has key k
//	yuan(cents)   cents as a yuan amount: 13000 → "130", 12950 → "129.5"

// Fact is a named value computed from the observations before the checks
// run (nil when it cannot be computed, e.g. a tool was never observed).
type Fact struct {
	Name string `json:"name"`
	Expr string `json:"expr"`
}

// exprEnv is what an expression of the scenario sees for one answer.
func exprEnv(answer any, obs *Observations) map[string]any {
	latest := map[string]any{}
	for _, r := range obs.Results {
		if r.IsError {
			continue
		}
		var v any
		if json.Unmarshal([]byte(r.Content), &v) == nil {
			latest[r.Name] = v
		}
	}
	ids := obs.EvidenceIDs()
	list := make([]any, 0, len(ids))
	for _, id := range slices.Sorted(maps.Keys(ids)) {
		list = append(list, id)
	}
	return map[string]any{
		"answer":       answer,
		"obs":          latest,
		"evidence_ids": list,
		"has": func(m any, k string) bool {
			mm, ok := m.(map[string]any)
			_, found := mm[k]
			return ok && found
		},
		"yuan": func(cents any) string {
			f, ok := number(cents)
			if !ok {
				return fmt.Sprint(cents)
			}
			return strconv.FormatFloat(f/100, 'f', -1, 64)
		},
	}
}

// computeFacts adds each fact to env in order; a fact that cannot be
// computed is nil, so checks can tell "unknown" from a value.
// A fact stopped by a bound is not merely unknown: it is returned as a
// failing result, so the domain layer says which fact ran away.
func (sc *Scenario) computeFacts(env map[string]any) []CheckResult {
	var stopped []CheckResult
	for i, f := range sc.Facts {
		v, err := runExpr(sc.factPrograms[i], env)
		if err != nil {
			v = nil
			if errors.Is(err, ErrExprBound) {
				stopped = append(stopped, CheckResult{ID: "fact " + f.Name, Detail: fmt.Sprintf("fact %s: %v", f.Name, err)})
			}
		}
		env[f.Name] = v
	}
	return stopped
}

// runExprCheck evaluates one expression check: it passes when the
// expression is true; the detail shows the values it names.
func runExprCheck(c Check, prog *vm.Program, env map[string]any) CheckResult {
	res := CheckResult{ID: c.ID}
	out, err := runExpr(prog, env)
	var shown []string
	for _, s := range c.Show {
		v, err := evalExpr(s, env)
		if err != nil {
			v = "?"
		}
		shown = append(shown, s+" = "+showValue(v))
		res.Shown = append(res.Shown, Shown{Expr: s, Value: json.RawMessage(showValue(v))})
	}
	values := strings.Join(shown, ", ")
	switch pass, isBool := out.(bool); {
	case errors.Is(err, ErrExprBound), errors.Is(err, ErrExprCancelled):
		res.Detail = fmt.Sprintf("check %s: %v", c.ID, err)
	case err != nil:
		res.Detail = fmt.Sprintf("cannot evaluate %s: %v", c.Expr, err)
	case !isBool:
		res.Detail = fmt.Sprintf("%s is not true or false but %s", c.Expr, showValue(out))
	default:
		res.Pass = pass
		res.Detail = values
		if !pass && c.Message != "" {
			res.Detail = c.Message
			if values != "" {
				res.Detail += " (" + values + ")"
			}
		}
	}
	return res
}

func showValue(v any) string {
	if v == nil {
		return "null"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
