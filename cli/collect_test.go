package cli

import (
	"net"
	"path/filepath"
	"strings"
	"testing"
)

// TestCollectRefusesBadFlags: each bad flag is a one-line usage error
// (exit 2), before anything listens or the database is created.
func TestCollectRefusesBadFlags(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	db := filepath.Join(t.TempDir(), "mw.db")
	cases := []struct {
		args []string
		says string
	}{
		{[]string{"--http", "0.0.0.0:4318"}, "loopback only"},
		{[]string{"--grpc", "192.0.2.1:4317", "--http", ""}, "loopback only"},
		{[]string{"--http", "nonsense"}, "want host:port"},
		{[]string{"--http", "", "--grpc", ""}, "nothing would receive"},
		{[]string{"--forward", "ftp://x"}, "--forward"},
		{[]string{"--forward", "http://user:pw@127.0.0.1:4318"}, "no credentials"},
		{[]string{"--max-request", "0"}, "must be positive"},
		{[]string{"--idle", "0s"}, "must be positive"},
		{[]string{"--http", ln.Addr().String(), "--grpc", ""}, "cannot listen"},
	}
	for _, c := range cases {
		code, _, errs := mw(t, append([]string{"--db", db, "collect"}, c.args...)...)
		if code != 2 || !strings.Contains(errs, c.says) || strings.Count(strings.TrimSpace(errs), "\n") != 0 || strings.Contains(errs, "pw@") {
			t.Errorf("collect %v: exit %d %q; want 2 saying %q", c.args, code, errs, c.says)
		}
	}
}
