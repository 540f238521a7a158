package jsonl

import (
	"bufio"
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

// An export carries the first output token and the server's figure, and
// they come back on import; a format 1 file, written before they were
// measured, still imports, with both unknown and every other point kept.
func TestTimePointsExportAndOldFilesImport(t *testing.T) {
	a, _ := openTemp(t)
	id := fullSession(t, a)
	first := exportJSONL(t, a, id)
	sa, _ := a.GetSession(id)
	tm := sa.Attempts[0].Timings
	if tm.FirstToken == nil || tm.Server == nil || *tm.Server != 93*time.Millisecond || tm.ServerSource != "openai-processing-ms" {
		t.Fatalf("the fixture's first token and server figure: %+v", tm)
	}
	b, _ := openTemp(t)
	if _, err := Import(b, bytes.NewReader(first), "export.jsonl"); err != nil {
		t.Fatal(err)
	}
	sb, _ := b.GetSession(id)
	if got := sb.Attempts[0].Timings; got.FirstToken == nil || *got.FirstToken != *tm.FirstToken || got.Server == nil || *got.Server != *tm.Server || got.ServerSource != tm.ServerSource {
		t.Fatalf("imported %+v, exported %+v", got, tm)
	}

	// The same file as format 1 wrote it.
	var old bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(first))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		switch string(m["type"]) {
		case `"modelwire.export"`:
			m["format"] = json.RawMessage("1")
		case `"attempt"`:
			delete(m, "server_source")
			var tu map[string]int64
			_ = json.Unmarshal(m["timings_us"], &tu)
			delete(tu, "first_token")
			delete(tu, "server")
			m["timings_us"], _ = json.Marshal(tu)
		}
		line, _ := json.Marshal(m)
		old.Write(append(line, '\n'))
	}
	c, _ := openTemp(t)
	if _, err := Import(c, bytes.NewReader(old.Bytes()), "old.jsonl"); err != nil {
		t.Fatalf("a format 1 file: %v", err)
	}
	sc2, _ := c.GetSession(id)
	got := sc2.Attempts[0].Timings
	if got.FirstToken != nil || got.Server != nil || got.FirstText == nil || *got.FirstText != *tm.FirstText || got.Terminal == nil {
		t.Fatalf("a format 1 attempt imported as %+v", got)
	}
}
