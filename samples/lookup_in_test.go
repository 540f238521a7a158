package samples

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A scenario named over the network is a built-in or a regular file
// inside the scenarios directory, nothing else (issue 29).
func TestLookupInRefusesPaths(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	data, _ := files.ReadFile("refund.json")
	must(t, os.WriteFile(filepath.Join(dir, "mine.json"), data, 0o644))
	must(t, os.WriteFile(filepath.Join(outside, "secret.json"), data, 0o644))
	must(t, os.Symlink(filepath.Join(outside, "secret.json"), filepath.Join(dir, "out.json")))
	must(t, syscall.Mkfifo(filepath.Join(dir, "pipe.json"), 0o644))
	big := make([]byte, MaxServedScenario+10)
	must(t, os.WriteFile(filepath.Join(dir, "big.json"), big, 0o644))

	lookup := LookupIn(dir)
	for _, ok := range []string{"refund", "refund/wrong-cap", "mine.json"} {
		if _, err := lookup(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for name, want := range map[string]string{
		filepath.Join(outside, "secret.json"):           "not a relative path",
		"../" + filepath.Base(outside) + "/secret.json": "not a relative path",
		"out.json":    "leads out",
		"pipe.json":   "not a regular file",
		"big.json":    "larger than",
		"none.json":   "no such scenario",
		"/etc/passwd": "not a relative path",
	} {
		if _, err := lookup(name); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", name, err, want)
		}
	}
	if _, err := LookupIn("")("mine.json"); err == nil || !strings.Contains(err.Error(), "--scenarios") {
		t.Errorf("without a directory: %v", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
