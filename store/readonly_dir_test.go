package store

import (
	"os"
	"path/filepath"
	"testing"
)

// A database in a directory the reader cannot write opens read-only and
// reads (issue 29): SQLite cannot make its -shm file there, so it is read
// as immutable. Root writes anywhere, so the test needs another user; the
// hostile suite runs the same attack against the binary as nobody.
func TestReadOnlyDirectoryReads(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root can write any directory; reliability/hostile runs this as nobody")
	}
	db, path := openTemp(t)
	sw, err := db.CreateSession(SessionMeta{Title: "t", Protocol: "openai-chat", Provider: "sim"})
	if err != nil {
		t.Fatal(err)
	}
	if err := sw.Finish(StatusDone); err != nil {
		t.Fatal(err)
	}
	db.Close()
	dir := filepath.Dir(path)
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o755) })
	if _, err := Open(path); err == nil {
		t.Fatal("opened for writing in a read-only directory")
	}
	ro, err := OpenWith(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	list, err := ro.ListSessions(Filter{})
	if err != nil || len(list) != 1 {
		t.Fatalf("%d sessions, %v", len(list), err)
	}
}
