package session

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// An expression that would loop for hours or allocate past any budget is
// stopped with an error that says which bound (issue 29); ordinary
// expressions are untouched.
func TestExprBounds(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{`let a = 1..999; all(a, all(a, all(a, true)))`, "longer than"},
		{`reduce(1..40, #acc + #acc, "x") != ""`, "made a value"},
		{`len(repeat("x", 1000000000000)) > 0`, "repeat would make"},
		{`len(join(map(1..2000, {repeat("y", 1000)}), "")) > 0`, "join would make"},
		{`len(toJSON(map(1..200000, {"abcdefgh"}))) > 0`, "toJSON would make"},
		{`len(map(1..2000000, {#})) > 0`, "memory budget"},
	} {
		prog, err := compileExpr(c.src)
		if err != nil {
			t.Fatalf("%s: %v", c.src, err)
		}
		start := time.Now()
		_, err = runExpr(prog, map[string]any{})
		if !errors.Is(err, ErrExprBound) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.src, err, c.want)
		}
		if d := time.Since(start); d > ExprTimeout+2*time.Second {
			t.Errorf("%s: stopped after %s", c.src, d)
		}
	}
	for src, want := range map[string]any{
		`1 + 2`: 3, `"a" + "b"`: "ab", `join(["a", "b"], "-")`: "a-b", `repeat("ab", 2)`: "abab",
		`toJSON({"a": 1})`: "{\n  \"a\": 1\n}", `count(1..10, # > 5)`: 5, `has({"k": 1}, "k")`: true,
	} {
		env := exprEnv(nil, &Observations{})
		v, err := evalExpr(src, env)
		if err != nil || showValue(v) != showValue(want) {
			t.Errorf("%s = %v, %v; want %v", src, v, err, want)
		}
	}
	huge := strings.Repeat("1 + ", MaxExprNodes) + "1"
	if _, err := compileExpr(huge); err == nil {
		t.Errorf("a tree of %d nodes compiled", 2*MaxExprNodes)
	}
}

// Ctrl-C stops an expression still evaluating at once, not at its time
// bound: the run's cancellation reaches the tick.
func TestExprStopsOnCancel(t *testing.T) {
	prog, err := compileExpr(`let a = 1..999; all(a, all(a, all(a, true)))`)
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	env := exprEnv(nil, &Observations{})
	env[stopName] = (<-chan struct{})(stop)
	time.AfterFunc(100*time.Millisecond, func() { close(stop) })
	start := time.Now()
	_, err = runExpr(prog, env)
	if !errors.Is(err, ErrExprCancelled) || time.Since(start) > ExprTimeout/2 {
		t.Errorf("%v after %s", err, time.Since(start))
	}
}
