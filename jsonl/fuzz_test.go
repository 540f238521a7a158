package jsonl

import (
	"bytes"
	"testing"
)

// FuzzScanJSONL checks the JSONL import's reader (the whole-file check
// that runs before anything is written) on arbitrary bytes: it returns
// sessions or an error, never panics.
func FuzzScanJSONL(f *testing.F) {
	f.Add([]byte(`{"type":"modelwire.export","format":1}` + "\n"))
	f.Add([]byte(`{"type":"modelwire.export","format":1}` + "\n" + `{"type":"session","id":"1m8x","turns":1}` + "\n"))
	f.Add([]byte(`{"type":"modelwire.export","format":1}` + "\n" + `{"type":"step","seq":1,"turn":1,"attempt":1,"events":[{"type":"text.delta","delta":"x"}]}` + "\n"))
	f.Add([]byte("\xff\xfe\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = scanJSONL(bytes.NewReader(b), "fuzz.jsonl", nil)
	})
}
