package store

import (
	"io"

	"github.com/modelwire/modelwire/adapters"
)

// importHAR is session.ImportHAR, the HAR import's driver: it records
// through the session journal, which store cannot import, so the external
// test package hands it in (harimport_test.go) for the HAR tests here.
var importHAR func(db *DB, r io.Reader, name string, lookup func(string) (adapters.Protocol, error)) (ImportResult, error)

// SetHARImporter is how the external test package hands it in.
func SetHARImporter(f func(db *DB, r io.Reader, name string, lookup func(string) (adapters.Protocol, error)) (ImportResult, error)) {
	importHAR = f
}
