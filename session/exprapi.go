package session

import "github.com/expr-lang/expr/vm"

// CompileExpr compiles an expression with the bounds every scenario
// expression has (tree size, time, the size of what it makes), for other
// files of expressions over modelwire's data (a workshop's checks).
func CompileExpr(src string) (*vm.Program, error) { return compileExpr(src) }

// RunExpr runs a program CompileExpr made within the same bounds; env
// must be a fresh map the caller owns (the run adds its budget to it).
func RunExpr(prog *vm.Program, env map[string]any) (any, error) { return runExpr(prog, env) }
