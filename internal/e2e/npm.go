package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// NPMCI installs the packages dir's package-lock.json pins (npm ci, no
// install scripts).
func NPMCI(ctx context.Context, t testing.TB, dir string) {
	t.Helper()
	npm := exec.CommandContext(ctx, "npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--prefer-offline")
	npm.Dir = dir
	if out, err := npm.CombinedOutput(); err != nil {
		t.Fatalf("npm ci: %v\n%s", err, out)
	}
}

// NPMDir is a private copy of a pinned package set (pkgDir's package.json
// and package-lock.json) with files beside it, installed: tests that run
// at once never share a node_modules.
func NPMDir(ctx context.Context, t testing.TB, pkgDir string, files ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range append([]string{filepath.Join(pkgDir, "package.json"), filepath.Join(pkgDir, "package-lock.json")}, files...) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	NPMCI(ctx, t, dir)
	return dir
}

// Binary builds modelwire into a temporary directory and returns its path.
func Binary(ctx context.Context, t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "modelwire")
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/modelwire/modelwire").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}
