package vcr

import (
	"bytes"
	"os"
	"testing"
)

// FuzzRead: no input makes Read panic, and what it reads it writes back
// as a cassette it reads again with the same exchanges.
func FuzzRead(f *testing.F) {
	if b, err := os.ReadFile("testdata/cassettes/refund-answer.jsonl"); err == nil {
		f.Add(b)
	}
	f.Add([]byte(`{"type":"modelwire.export","format":1}` + "\n" + `{"type":"session","id":"a"}` + "\n" +
		`{"type":"attempt","turn":2,"attempt":1,"method":"POST","url":"/v1/messages"}` + "\n" + `{"type":"step","turn":2,"attempt":1,"raw":{"data":"{}"}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := Read(bytes.NewReader(b))
		if err != nil {
			return
		}
		var out bytes.Buffer
		if _, err := c.WriteTo(&out); err != nil {
			t.Fatal(err)
		}
		again, err := Read(&out)
		if err != nil || again.Len() != c.Len() {
			t.Fatalf("written back: %v, %d exchanges, want %d", err, again.Len(), c.Len())
		}
		c.match(canonicalize("POST", "/v1/messages", nil, []byte(`{"model":"m","messages":[]}`), nil), nil)
	})
}
