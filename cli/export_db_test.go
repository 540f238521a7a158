package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// No command writes over the database it reads, --force or not, by any
// name: the path itself, a symlink to it, a path through "..", its WAL
// (issue 29).
func TestExportRefusesTheDatabase(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "m.db")
	var out, errb bytes.Buffer
	if code := Main([]string{"run", "--db", db, "--approve", "auto", "--json"}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("run: %d %s", code, errb.String())
	}
	before, _ := os.ReadFile(db)
	link := filepath.Join(dir, "link.db")
	if err := os.Symlink(db, link); err != nil {
		t.Fatal(err)
	}
	for _, o := range []string{db, link, filepath.Join(dir, "..", filepath.Base(dir), "m.db"), db + "-wal"} {
		out.Reset()
		errb.Reset()
		code := Main([]string{"export", "--db", db, "-o", o, "--force", lastSessionID(t, db)}, strings.NewReader(""), &out, &errb)
		if code != 2 || !strings.Contains(errb.String(), "this command reads") {
			t.Errorf("-o %s: exit %d: %s", o, code, errb.String())
		}
	}
	if after, _ := os.ReadFile(db); !bytes.Equal(before, after) {
		t.Error("the database changed")
	}
}

func lastSessionID(t *testing.T, db string) string {
	t.Helper()
	var out, errb bytes.Buffer
	if code := Main([]string{"sessions", "--db", db, "--json"}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("sessions: %s", errb.String())
	}
	_, rest, _ := strings.Cut(out.String(), `"id":"`)
	id, _, _ := strings.Cut(rest, `"`)
	return id
}
