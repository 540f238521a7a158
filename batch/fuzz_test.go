package batch_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/modelwire/modelwire/batch"
	"github.com/modelwire/modelwire/store"
)

// FuzzImport: whatever the files hold, Import stores a session per request
// or fails with an InputError and stores nothing; it never panics.
func FuzzImport(f *testing.F) {
	for _, pair := range [][2]string{{"input.jsonl", "output.jsonl"}, {"input.jsonl", "errors.jsonl"}} {
		in, _ := os.ReadFile(filepath.Join("testdata", pair[0]))
		out, _ := os.ReadFile(filepath.Join("testdata", pair[1]))
		f.Add(in, out)
	}
	f.Add([]byte(line("a", "m")), []byte(`{"custom_id":"a","response":{"status_code":200,"body":5}}`))
	f.Add([]byte(line("a", "m")), []byte(`{"custom_id":"a","response":{"status_code":500,"body":"x"}}`))
	db, err := store.Open(filepath.Join(f.TempDir(), "mw.db"))
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { db.Close() })
	f.Fuzz(func(t *testing.T, in, out []byte) {
		before, _ := db.ListSessions(store.Filter{})
		res, err := batch.Import(db, []batch.File{{Name: "in", R: bytesReader(in)}, {Name: "out", R: bytesReader(out)}})
		after, _ := db.ListSessions(store.Filter{})
		if err != nil && len(after) != len(before) {
			t.Fatalf("a failed import (%v) left %d sessions", err, len(after)-len(before))
		}
		if err == nil && len(after)-len(before) != len(res.Sessions) {
			t.Fatalf("imported %d, stored %d", len(res.Sessions), len(after)-len(before))
		}
	})
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }
