package store

import (
	"fmt"
	"path/filepath"
	"sync"
	"testing"
)

// TestOpenNewFileFromManyHandles: several writers creating one database at
// the same moment all get it (switching a new file to the WAL makes SQLite
// refuse one of them at once, without its busy handler).
func TestOpenNewFileFromManyHandles(t *testing.T) {
	dir := t.TempDir()
	for round := 0; round < 25; round++ {
		path := filepath.Join(dir, fmt.Sprintf("new%d.db", round))
		var wg sync.WaitGroup
		errs := make(chan error, 4)
		for h := 0; h < 4; h++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				db, err := Open(path)
				if err != nil {
					errs <- err
					return
				}
				errs <- db.Close()
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
	}
}
