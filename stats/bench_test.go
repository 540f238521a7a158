package stats_test

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/modelwire/modelwire/stats"
	"github.com/modelwire/modelwire/store"
)

// The benchmark measures; no test asserts wall time. Run it with
//
//	go test -run '^$' -bench Stats -benchtime 5x ./stats/
//
// Target (issue 32): `stats` over 100,000 sessions answers in under a
// second.

var (
	bigOnce sync.Once
	bigPath string
	bigDir  string
	bigErr  error
)

// bigStore is a store of 100,500 sessions (134,000 attempts): the 1,500
// of knownSessions written through the store, copied 67 times. It is
// built once per run of the test binary.
func bigStore(b *testing.B) string {
	b.Helper()
	bigOnce.Do(func() {
		if bigDir, bigErr = os.MkdirTemp("", "modelwire-stats-bench"); bigErr != nil {
			return
		}
		bigPath = filepath.Join(bigDir, "stats.db")
		db, err := store.Open(bigPath)
		if err != nil {
			bigErr = err
			return
		}
		for _, s := range knownSessions() {
			writeSession(b, db, s)
		}
		if bigErr = db.Close(); bigErr != nil {
			return
		}
		multiply(b, bigPath, 67)
	})
	if bigErr != nil {
		b.Fatal(bigErr)
	}
	return bigPath
}

func TestMain(m *testing.M) {
	code := m.Run()
	if bigDir != "" {
		os.RemoveAll(bigDir)
	}
	os.Exit(code)
}

// BenchmarkStats100k: one `stats --by model,protocol` over 100,500
// sessions, opening the database included, as the command does.
func BenchmarkStats100k(b *testing.B) {
	path := bigStore(b)
	b.ResetTimer()
	for b.Loop() {
		db, err := store.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		r, err := stats.Compute(db, store.Filter{}, []string{"model", "protocol"})
		if err != nil {
			b.Fatal(err)
		}
		db.Close()
		n := 0
		for _, g := range r.Groups {
			n += g.Sessions
		}
		if n != 100500 {
			b.Fatalf("%d sessions aggregated, want 100500", n)
		}
	}
}
