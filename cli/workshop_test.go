package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWorkshopBadUsage: what serve --workshop, room and workshop refuse is
// exit 2 with one line naming the problem, and nothing is created.
func TestWorkshopBadUsage(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "mw.db")
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"name":"x","title":{"zh":"a","en":"b"},"scenario":"refund","steps":[{"id":"s","turn":0,"title":{"zh":"a","en":"b"},"checks":[{"id":"c","expr":"len(","section":"13.2","hint":{"zh":"a","en":"b"}}]}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--workshop", "refund-1", "--listen", "0.0.0.0:0"}, "add --require-key"},
		{[]string{"serve", "--workshop", "refund-9", "--addr", "127.0.0.1:0"}, `no exercise "refund-9"`},
		{[]string{"serve", "--workshop", "refund-1", "--addr", "127.0.0.1:0", "--max-participants", "0"}, "--max-participants must be positive"},
		{[]string{"serve", "--tui", "--addr", "127.0.0.1:0"}, "it needs --workshop"},
		{[]string{"serve", "--workshop", bad, "--addr", "127.0.0.1:0"}, "/steps/0/checks/0/expr: does not compile"},
		{[]string{"workshop", "check", bad}, "bad.json:1: /steps/0/checks/0/expr: does not compile"},
		{[]string{"workshop", "check", filepath.Join(dir, "none.json")}, "cannot read"},
	} {
		var out, errb bytes.Buffer
		code := Main(append(c.args, "--db", db), strings.NewReader(""), &out, &errb)
		if code != ExitUsage || !strings.Contains(errb.String(), c.want) || strings.Count(strings.TrimSpace(errb.String()), "\n") > 0 {
			t.Errorf("%v: exit %d, stderr %q, want 2 and %q on one line", c.args, code, errb.String(), c.want)
		}
	}
	if _, err := os.Stat(db); err == nil {
		t.Error("a refused command created the database")
	}
}

func TestWorkshopListAndCheck(t *testing.T) {
	var out, errb bytes.Buffer
	if code := Main([]string{"workshop", "list"}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("list: %d %s", code, errb.String())
	}
	for _, n := range []string{"refund-1", "refund-2", "refund-3"} {
		if !strings.Contains(out.String(), n) {
			t.Errorf("list lacks %s:\n%s", n, out.String())
		}
	}
	out.Reset()
	if code := Main([]string{"workshop", "check", "../workshop/exercises/refund-2.json"}, strings.NewReader(""), &out, &errb); code != 0 || !strings.Contains(out.String(), "valid") {
		t.Errorf("check refund-2.json: %d %s %s", code, out.String(), errb.String())
	}
}
