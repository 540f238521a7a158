package e2e

import (
	"strings"
	"testing"
)

// recorder stands in for *testing.T so the test can see whether Require
// skipped or failed.
type recorder struct {
	testing.TB
	skipped, failed string
}

func (r *recorder) Helper()                   {}
func (r *recorder) Skipf(f string, a ...any)  { r.skipped = f }
func (r *recorder) Fatalf(f string, a ...any) { r.failed = f }

// TestMissingToolSkipsLocallyAndFailsInCI: a tool that is not on PATH is
// a skip without the variable and a failure with it; a present tool is
// neither.
func TestMissingToolSkipsLocallyAndFailsInCI(t *testing.T) {
	if testing.Short() {
		t.Skip("Require itself stops under -short")
	}
	const missing = "modelwire-no-such-tool"
	t.Setenv(RequireEnv, "")
	r := &recorder{TB: t}
	Require(r, "the check", missing)
	if r.skipped == "" || r.failed != "" {
		t.Fatalf("without %s: skipped=%q failed=%q, want a skip", RequireEnv, r.skipped, r.failed)
	}

	t.Setenv(RequireEnv, "1")
	r = &recorder{TB: t}
	Require(r, "the check", missing)
	if r.failed == "" || r.skipped != "" || !strings.Contains(r.failed, "not on PATH") {
		t.Fatalf("with %s=1: skipped=%q failed=%q, want a failure", RequireEnv, r.skipped, r.failed)
	}

	r = &recorder{TB: t}
	Require(r, "the check", "go")
	if r.failed != "" || r.skipped != "" {
		t.Fatalf("go is on PATH: skipped=%q failed=%q, want neither", r.skipped, r.failed)
	}
}
