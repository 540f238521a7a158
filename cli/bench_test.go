package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBenchCSVAndBadUsage(t *testing.T) {
	dir := t.TempDir()
	csvPath := filepath.Join(dir, "b.csv")
	code, out, errOut := runMain(t, "", "bench", "--only", "sim", "--csv", csvPath)
	if code != ExitOK || !strings.Contains(out, "refund loop") || !strings.Contains(out, "status") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	b, err := os.ReadFile(csvPath)
	if err != nil || !strings.HasPrefix(string(b), "group,path,unit,ours,reference_name,reference,ratio,target,met,note\nsim,") {
		t.Fatalf("csv %q %v", b, err)
	}
	// An existing CSV is not overwritten; an unknown group is bad usage.
	for _, args := range [][]string{{"bench", "--only", "sim", "--csv", csvPath}, {"bench", "--only", "decod"}} {
		if code, _, errOut := runMain(t, "", args...); code != ExitUsage || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
		}
	}
}
