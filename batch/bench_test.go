package batch_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelwire/modelwire/batch"
	"github.com/modelwire/modelwire/store"
)

// BenchmarkImport1000 imports a batch of 1,000 requests (their results
// in reverse order) into a fresh database: the cost of pairing and of
// recording a session per custom_id.
func BenchmarkImport1000(b *testing.B) {
	var in, out strings.Builder
	for i := range 1000 {
		id := fmt.Sprintf("req-%d", i)
		in.WriteString(line(id, "gpt-4.1-mini") + "\n")
	}
	for i := 999; i >= 0; i-- {
		fmt.Fprintf(&out, `{"id":"batch_req_%d","custom_id":"req-%d","response":{"status_code":200,"request_id":"req_%d","body":{"id":"resp_%d","object":"response","status":"completed","model":"gpt-4.1-mini","output":[{"type":"message","id":"msg_%d","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Hello.","annotations":[]}]}],"usage":{"input_tokens":9,"output_tokens":2,"total_tokens":11}}},"error":null}`+"\n", i, i, i, i, i)
	}
	for b.Loop() {
		b.StopTimer()
		db, err := store.Open(filepath.Join(b.TempDir(), "mw.db"))
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		res, err := batch.Import(db, []batch.File{{Name: "in.jsonl", R: strings.NewReader(in.String())}, {Name: "out.jsonl", R: strings.NewReader(out.String())}})
		if err != nil || len(res.Sessions) != 1000 {
			b.Fatal(err, len(res.Sessions))
		}
		b.StopTimer()
		db.Close()
		b.StartTimer()
	}
}
