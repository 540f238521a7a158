package store

import (
	"bytes"
	"io"
	"testing"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/adapterstest"
)

// The file formats (packages har and jsonl) import store, so store's own
// tests that need a HAR or JSONL import (snapshots of imported sessions,
// the bench fixture's export) get them handed in by the external test
// package (formats_test.go).
var (
	importHAR     func(db *DB, r io.Reader, name string, lookup func(string) (adapters.Protocol, error)) (ImportResult, error)
	importJSONL   func(db *DB, r io.ReadSeeker, name string) (ImportResult, error)
	exportJSONLTo func(db *DB, w io.Writer, id string) error
)

// SetFormats is how the external test package hands them in.
func SetFormats(har func(db *DB, r io.Reader, name string, lookup func(string) (adapters.Protocol, error)) (ImportResult, error),
	jsonlImport func(db *DB, r io.ReadSeeker, name string) (ImportResult, error), jsonlExport func(db *DB, w io.Writer, id string) error) {
	importHAR, importJSONL, exportJSONLTo = har, jsonlImport, jsonlExport
}

// fakeLookup answers the toy protocol the tests' captures speak.
var fakeLookup = adapterstest.FakeLookup

func exportJSONL(t *testing.T, db *DB, id string) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := exportJSONLTo(db, &b, id); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

var (
	sseBody     = adapterstest.SSEBody
	harJSON     = adapterstest.HARJSON
	harEntryMap = adapterstest.HAREntry
)
