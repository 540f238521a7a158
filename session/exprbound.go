package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/vm"
)

// A scenario file is data a person may be handed: its expressions must
// not hang a run or exhaust its memory. expr bounds the size of the tree
// (MaxNodes) and counts the array elements a program makes (its memory
// budget), but not time and not the bytes of strings: a loop of loops
// runs for hours, and `reduce(1..40, #acc + #acc, "x")` asks for a
// terabyte. So every expression is compiled with a tick around each
// closure body, each concatenation and each call: the tick stops the
// program once its time is up or a value it made is too large, and
// repeat, join and toJSON are replaced by versions that refuse an
// oversized result before they build it.
const (
	// MaxExprNodes bounds an expression's tree.
	MaxExprNodes = 4000
	// ExprTimeout bounds one evaluation.
	ExprTimeout = 2 * time.Second
	// MaxExprValue bounds a string (or JSON text) an expression makes,
	// in bytes, and the elements of an array or map it sees a tick of.
	MaxExprValue = 1 << 20
	// exprMemory is expr's own budget (array elements and the like),
	// its default made explicit.
	exprMemory = 1_000_000
)

// The names the bounded programs use; a scenario cannot name them ($env
// members starting with "__" are not facts or tools).
const (
	tickName   = "__modelwire_tick"
	budgetName = "__modelwire_budget"
	// stopName holds the run's cancellation (Observations.Stop).
	stopName = "__modelwire_stop"
)

// ErrExprCancelled is an evaluation stopped because the run was.
var ErrExprCancelled = errors.New("expression stopped: the run was cancelled")

// ErrExprBound is what a stopped evaluation's error wraps.
var ErrExprBound = errors.New("expression stopped")

// exprBudget is one evaluation's deadline.
type exprBudget struct{ deadline time.Time }

// ticker is the patch that puts a tick around what can grow or loop.
type ticker struct{}

func tick(n ast.Node) ast.Node {
	return &ast.CallNode{Callee: &ast.IdentifierNode{Value: tickName},
		Arguments: []ast.Node{n, &ast.IdentifierNode{Value: "$env"}}}
}

func (ticker) Visit(node *ast.Node) {
	switch n := (*node).(type) {
	case *ast.PredicateNode:
		n.Node = tick(n.Node)
	case *ast.BinaryNode:
		if n.Operator == "+" {
			ast.Patch(node, tick(n))
		}
	case *ast.BuiltinNode:
		ast.Patch(node, tick(n))
	case *ast.CallNode:
		if id, ok := n.Callee.(*ast.IdentifierNode); !ok || id.Value != tickName {
			ast.Patch(node, tick(n))
		}
	}
}

// tickFn checks the evaluation's budget and passes its first argument
// through.
func tickFn(params ...any) (any, error) {
	if len(params) != 2 {
		return nil, fmt.Errorf("%w: bad tick", ErrExprBound)
	}
	v := params[0]
	env, _ := params[1].(map[string]any)
	if b, ok := env[budgetName].(*exprBudget); ok && time.Now().After(b.deadline) {
		return nil, fmt.Errorf("%w: it ran longer than %s", ErrExprBound, ExprTimeout)
	}
	if stop, ok := env[stopName].(<-chan struct{}); ok && stop != nil {
		select {
		case <-stop:
			return nil, ErrExprCancelled
		default:
		}
	}
	if err := checkSize(v); err != nil {
		return nil, err
	}
	return v, nil
}

func checkSize(v any) error {
	n := 0
	switch v := v.(type) {
	case string:
		n = len(v)
	case []any:
		n = len(v)
	case map[string]any:
		n = len(v)
	}
	if n > MaxExprValue {
		return fmt.Errorf("%w: it made a value of %d bytes or elements (at most %d)", ErrExprBound, n, MaxExprValue)
	}
	return nil
}

// repeatFn is repeat(s, n) that refuses a result over MaxExprValue.
func repeatFn(params ...any) (any, error) {
	if len(params) != 2 {
		return nil, fmt.Errorf("repeat(string, n)")
	}
	s, ok := params[0].(string)
	n, okn := number(params[1])
	if !ok || !okn || n < 0 {
		return nil, fmt.Errorf("repeat(string, n): bad arguments")
	}
	if float64(len(s))*n > MaxExprValue {
		return nil, fmt.Errorf("%w: repeat would make %.0f bytes (at most %d)", ErrExprBound, float64(len(s))*n, MaxExprValue)
	}
	return strings.Repeat(s, int(n)), nil
}

// joinFn is join(list[, sep]) that refuses a result over MaxExprValue.
func joinFn(params ...any) (any, error) {
	if len(params) < 1 || len(params) > 2 {
		return nil, fmt.Errorf("join(list[, separator])")
	}
	sep := ""
	if len(params) == 2 {
		s, ok := params[1].(string)
		if !ok {
			return nil, fmt.Errorf("join: the separator is not a string")
		}
		sep = s
	}
	var parts []string
	switch l := params[0].(type) {
	case []string:
		parts = l
	case []any:
		for _, p := range l {
			s, ok := p.(string)
			if !ok {
				return nil, fmt.Errorf("join: %s is not a string", showValue(p))
			}
			parts = append(parts, s)
		}
	default:
		return nil, fmt.Errorf("join: not a list of strings")
	}
	total := len(sep) * max(len(parts)-1, 0)
	for _, p := range parts {
		total += len(p)
		if total > MaxExprValue {
			return nil, fmt.Errorf("%w: join would make more than %d bytes", ErrExprBound, MaxExprValue)
		}
	}
	return strings.Join(parts, sep), nil
}

// toJSONFn is toJSON(v) whose text is cut off at MaxExprValue: the
// encoder writes into a buffer that refuses to grow past it.
func toJSONFn(params ...any) (any, error) {
	if len(params) != 1 {
		return nil, fmt.Errorf("toJSON(value)")
	}
	var w cappedWriter
	enc := json.NewEncoder(&w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(params[0]); err != nil {
		if errors.Is(err, ErrExprBound) {
			return nil, err
		}
		return nil, fmt.Errorf("toJSON: %v", err)
	}
	return strings.TrimSuffix(w.b.String(), "\n"), nil
}

type cappedWriter struct{ b strings.Builder }

func (w *cappedWriter) Write(p []byte) (int, error) {
	if w.b.Len()+len(p) > MaxExprValue {
		return 0, fmt.Errorf("%w: toJSON would make more than %d bytes", ErrExprBound, MaxExprValue)
	}
	return w.b.Write(p)
}

// compileExpr compiles a scenario expression with its bounds.
func compileExpr(src string) (*vm.Program, error) {
	return expr.Compile(src, expr.AllowUndefinedVariables(), expr.MaxNodes(MaxExprNodes),
		expr.DisableBuiltin("repeat"), expr.DisableBuiltin("join"), expr.DisableBuiltin("toJSON"),
		expr.Function("repeat", repeatFn), expr.Function("join", joinFn), expr.Function("toJSON", toJSONFn),
		expr.Function(tickName, tickFn), expr.Patch(ticker{}))
}

// runExpr runs a compiled expression within its time and memory bounds.
func runExpr(prog *vm.Program, env map[string]any) (any, error) {
	env[budgetName] = &exprBudget{deadline: time.Now().Add(ExprTimeout)}
	defer delete(env, budgetName)
	m := vm.VM{MemoryBudget: exprMemory}
	out, err := m.Run(prog, env)
	if err != nil && strings.Contains(err.Error(), "memory budget exceeded") {
		err = fmt.Errorf("%w: %v", ErrExprBound, err)
	}
	return out, err
}

// evalExpr compiles and runs src with the bounds (Show expressions, a
// fact's parts).
func evalExpr(src string, env map[string]any) (any, error) {
	prog, err := compileExpr(src)
	if err != nil {
		return nil, err
	}
	return runExpr(prog, env)
}
