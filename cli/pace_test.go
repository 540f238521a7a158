package cli

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// A --pace that is not a number of words a second, 0 or more, is bad usage
// on every command that takes it, named on one line.
func TestPaceMustBeANonNegativeNumber(t *testing.T) {
	for _, args := range [][]string{
		{"run", "--approve", "auto", "--pace", "-1"},
		{"serve", "--pace", "NaN"},
		{"--pace", "-0.5"},
		{"serve", "--pace", "fast"},
	} {
		var out, errb bytes.Buffer
		code := Main(append(args, "--db", filepath.Join(t.TempDir(), "x.db")), strings.NewReader(""), &out, &errb)
		if code != 2 || !strings.Contains(errb.String(), "pace") || strings.Count(strings.TrimSpace(errb.String()), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q", args, code, errb.String())
		}
	}
}

// A paced run streams the same answer: every layer passes.
func TestRunPaced(t *testing.T) {
	code, lines, stderr := runJSON(t, "--approve", "auto", "--pace", "400")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if res := sessionResult(t, lines); firstFailed(res) != "" {
		t.Fatalf("layer %s failed", firstFailed(res))
	}
}
