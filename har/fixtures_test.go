package har

import (
	"path/filepath"
	"testing"

	"github.com/modelwire/modelwire/adapters/adapterstest"
	"github.com/modelwire/modelwire/store"
)

func openTemp(t testing.TB) (*store.DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "nested", "dir", "modelwire.db")
	db, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, path
}

// fakeLookup answers the toy protocol the tests' captures speak.
var fakeLookup = adapterstest.FakeLookup

var (
	sseBody     = adapterstest.SSEBody
	harJSON     = adapterstest.HARJSON
	harEntryMap = adapterstest.HAREntry
)

const planted = "sk-PLANTED-d6f1c0ffee"
