package session

import (
	"encoding/json"
	"reflect"
	"slices"

	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/parser"
)

// A fact's working, for a person to check the arithmetic: the value, the
// observed values its expression read, and — for a fact computed by
// arithmetic — the same arithmetic with those values written in. All of it
// is read from the scenario's own expression, for any scenario: the
// refund case's cap comes out as 18000 - 3000 - 2000 because its
// expression subtracts those three observations, not because the refund
// case is known here.

// FactResult is one fact as the checks saw it.
type FactResult struct {
	Name  string          `json:"name"`
	Expr  string          `json:"expr"`
	Value json.RawMessage `json:"value"` // null when it could not be computed
	// Formula is the arithmetic the value came from, with the values it
	// read written in ("18000 - 3000 - 2000"); "" when the branch taken
	// is not arithmetic on numbers.
	Formula string `json:"formula,omitempty"`
	// Because are the conditions that chose the branch taken, each with
	// its value ("has(obs, \"get_refund_ledger\") = false").
	Because []string `json:"because,omitempty"`
	// Reads are the values the expression reads, in its order.
	Reads []FactRead `json:"reads,omitempty"`
}

// FactRead is one value a fact's expression reads: a member of an
// observed tool result (obs.get_order_line.paid_cents), an earlier fact,
// or a reading of the prompt.
type FactRead struct {
	Path  string          `json:"path"`
	Value json.RawMessage `json:"value"` // null when absent
	// Evidence is the evidence_id of the tool result the value is from.
	Evidence string `json:"evidence,omitempty"`
}

// explainFacts is each fact's working in env, where computeFacts put the
// facts.
func (sc *Scenario) explainFacts(env map[string]any) []FactResult {
	out := make([]FactResult, 0, len(sc.Facts))
	for _, f := range sc.Facts {
		r := FactResult{Name: f.Name, Expr: f.Expr, Value: json.RawMessage(showValue(env[f.Name]))}
		if tree, err := parser.Parse(f.Expr); err == nil {
			x := factWork{env: env}
			x.reads(tree.Node)
			r.Reads = x.read
			if text, ops, ok := x.formula(tree.Node); ok && ops > 0 {
				r.Formula = text
			}
			r.Because = x.because
		}
		out = append(out, r)
	}
	return out
}

// factWork walks one fact's expression.
type factWork struct {
	env     map[string]any
	read    []FactRead
	because []string
}

// eval evaluates a piece of the expression (nil when it cannot be).
func (x *factWork) eval(n ast.Node) any {
	v, err := evalExpr(n.String(), x.env)
	if err != nil {
		return nil
	}
	return v
}

// reads collects the values the expression reads: whole member chains
// (obs.tool.member) and names bound to a plain value (a fact, a reading
// of the prompt); maps and functions (obs, has) are not values to show.
func (x *factWork) reads(n ast.Node) {
	switch n := n.(type) {
	case *ast.MemberNode:
		if root, ok := memberRoot(n); ok {
			x.add(n.String(), x.eval(n), x.evidence(root, n))
			return
		}
		x.reads(n.Node)
		x.reads(n.Property)
	case *ast.IdentifierNode:
		v, bound := x.env[n.Value]
		switch v.(type) {
		case map[string]any, []any:
			return
		}
		if bound && !isFunc(v) {
			x.add(n.Value, v, "")
		}
	case *ast.ChainNode:
		x.reads(n.Node)
	case *ast.UnaryNode:
		x.reads(n.Node)
	case *ast.BinaryNode:
		x.reads(n.Left)
		x.reads(n.Right)
	case *ast.ConditionalNode:
		x.reads(n.Cond)
		x.reads(n.Exp1)
		x.reads(n.Exp2)
	case *ast.CallNode:
		for _, a := range n.Arguments {
			x.reads(a)
		}
	case *ast.BuiltinNode:
		for _, a := range n.Arguments {
			x.reads(a)
		}
	case *ast.PredicateNode:
		x.reads(n.Node)
	case *ast.ArrayNode:
		for _, e := range n.Nodes {
			x.reads(e)
		}
	}
}

func (x *factWork) add(path string, v any, evidence string) {
	if slices.ContainsFunc(x.read, func(r FactRead) bool { return r.Path == path }) {
		return
	}
	x.read = append(x.read, FactRead{Path: path, Value: json.RawMessage(showValue(v)), Evidence: evidence})
}

// memberRoot is the identifier a chain of named members hangs from
// (obs in obs.get_order_line.paid_cents); false for anything else
// (an index, a call).
func memberRoot(n *ast.MemberNode) (*ast.IdentifierNode, bool) {
	for {
		if _, ok := n.Property.(*ast.StringNode); !ok || n.Method {
			return nil, false
		}
		switch inner := n.Node.(type) {
		case *ast.IdentifierNode:
			return inner, true
		case *ast.MemberNode:
			n = inner
		default:
			return nil, false
		}
	}
}

// evidence is the evidence_id of the observed result a member chain
// reads: obs.<tool>.… → that tool's result's evidence_id.
func (x *factWork) evidence(root *ast.IdentifierNode, n *ast.MemberNode) string {
	if root.Value != "obs" {
		return ""
	}
	for {
		inner, ok := n.Node.(*ast.MemberNode)
		if !ok {
			break
		}
		n = inner
	}
	tool := n.Property.(*ast.StringNode).Value
	obs, _ := x.env["obs"].(map[string]any)
	res, _ := obs[tool].(map[string]any)
	id, _ := res["evidence_id"].(string)
	return id
}

func isFunc(v any) bool { return v != nil && reflect.TypeOf(v).Kind() == reflect.Func }

// arithmetic operators and their precedence.
var arith = map[string]int{"+": 1, "-": 1, "*": 2, "/": 2, "%": 2, "**": 3, "^": 3}

// formula writes the branch of the expression that was taken as
// arithmetic on the values read, and counts its operators; false when
// that branch is not arithmetic on numbers. The conditions passed on the
// way are kept in because.
func (x *factWork) formula(n ast.Node) (string, int, bool) {
	switch n := n.(type) {
	case *ast.ConditionalNode:
		c, ok := x.eval(n.Cond).(bool)
		if !ok {
			return "", 0, false
		}
		x.because = append(x.because, n.Cond.String()+" = "+showValue(c))
		if c {
			return x.formula(n.Exp1)
		}
		return x.formula(n.Exp2)
	case *ast.ChainNode:
		return x.formula(n.Node)
	case *ast.BinaryNode:
		p, ok := arith[n.Operator]
		if !ok {
			return "", 0, false
		}
		l, lops, lok := x.formula(n.Left)
		r, rops, rok := x.formula(n.Right)
		if !lok || !rok {
			return "", 0, false
		}
		if b, ok := n.Left.(*ast.BinaryNode); ok && arith[b.Operator] < p {
			l = "(" + l + ")"
		}
		if b, ok := n.Right.(*ast.BinaryNode); ok && (arith[b.Operator] < p || arith[b.Operator] == p && n.Operator != "+" && n.Operator != "*") {
			r = "(" + r + ")"
		}
		return l + " " + n.Operator + " " + r, lops + rops + 1, true
	case *ast.UnaryNode:
		if n.Operator != "-" {
			return "", 0, false
		}
		s, ops, ok := x.formula(n.Node)
		return "-" + s, ops, ok
	case *ast.IntegerNode, *ast.FloatNode:
		return n.String(), 0, true
	case *ast.MemberNode, *ast.IdentifierNode:
		v := x.eval(n)
		if _, ok := number(v); !ok {
			return "", 0, false
		}
		return showValue(v), 0, true
	}
	return "", 0, false
}
