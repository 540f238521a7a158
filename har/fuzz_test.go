package har

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/modelwire/modelwire/adapters/registry"
	"github.com/modelwire/modelwire/store"
)

// FuzzImportHAR imports arbitrary bytes as a HAR file: an error or
// sessions, never a panic, and a failed import writes nothing.
func FuzzImportHAR(f *testing.F) {
	f.Add([]byte(`{"log":{"entries":[]}}`))
	f.Add([]byte(`{"log":{"entries":[{"request":{"method":"POST","url":"http://x/v1/chat/completions","postData":{"text":"{\"model\":\"m\",\"stream\":true}"}},` +
		`"response":{"status":200,"content":{"mimeType":"text/event-stream","text":"data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\ndata: [DONE]\n\n"}}}]}}`))
	f.Add([]byte(`{"log":{"entries":[{"request":{"method":"POST","url":"http://x/v1/messages"},"response":{"status":529,"content":{"text":"e30=","encoding":"base64"}}}]}}`))
	db, err := store.Open(filepath.Join(f.TempDir(), "fuzz.db"))
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { db.Close() })
	f.Fuzz(func(t *testing.T, b []byte) {
		before, err := db.ListSessions(store.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Import(db, bytes.NewReader(b), "fuzz.har", registry.Lookup); err != nil {
			after, _ := db.ListSessions(store.Filter{})
			if len(after) != len(before) {
				t.Fatalf("a failed import wrote %d session(s)", len(after)-len(before))
			}
		}
	})
}
