package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/modelwire/modelwire/adapters/registry"
)

// TestNoProtocolNamedOutsideAdapters: a protocol's facts live in its
// descriptor (adapters/<name>/descriptor.go, listed in adapters/registry).
// A file outside adapters/ that names one protocol — its constant, such
// as adapters.OpenAIChat, or its name as a string — is a switch a new
// protocol can be forgotten in, so it fails here with the place.
func TestNoProtocolNamedOutsideAdapters(t *testing.T) {
	const root = "../.."
	names := map[string]bool{}
	for _, d := range registry.All() {
		names[d.Name] = true
	}
	consts := protocolConstants(t, filepath.Join(root, "adapters", "capabilities.go"), names)
	// A provider may share its protocol's name ("gemini"): the provider's
	// constant and a bare provider name are not a protocol's.
	for _, d := range registry.All() {
		if d.Provider == d.Name {
			delete(names, d.Name)
		}
	}
	if len(consts) < len(names) {
		t.Fatalf("found %d protocol constants in adapters for %d protocols", len(consts), len(names))
	}
	var found []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if rel == "." {
				return nil
			}
			if rel == "adapters" || strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				if x, ok := n.X.(*ast.Ident); ok && x.Name == "adapters" && consts[n.Sel.Name] {
					found = append(found, fset.Position(n.Pos()).String()+": adapters."+n.Sel.Name)
				}
			case *ast.BasicLit:
				if s, err := strconv.Unquote(n.Value); n.Kind == token.STRING && err == nil && names[s] {
					found = append(found, fset.Position(n.Pos()).String()+": "+n.Value)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(found)
	for _, f := range found {
		rel, _ := filepath.Rel(root, f)
		if rel == "" || strings.HasPrefix(rel, "..") {
			rel = f
		}
		t.Errorf("%s names a protocol outside adapters/: read its descriptor (registry.Describe, Route, All) instead", rel)
	}
}

// protocolConstants are the names of the constants whose value is a
// registered protocol's name in file, where package adapters declares the
// protocols' names (other constants may share a value: the provider
// "gemini").
func protocolConstants(t *testing.T, file string, names map[string]bool) map[string]bool {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, decl := range f.Decls {
		g, ok := decl.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, v := range vs.Values {
				lit, ok := v.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING || i >= len(vs.Names) || strings.HasPrefix(vs.Names[i].Name, "Provider") {
					continue
				}
				if s, _ := strconv.Unquote(lit.Value); names[s] {
					out[vs.Names[i].Name] = true
				}
			}
		}
	}
	return out
}
