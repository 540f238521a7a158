package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// A Claude Code transcript imports as one session of protocol claude-code
// whose replay holds the transcript's decoded events, so the workbench's
// session browser can open it; the format is recognised by content.
func TestImportClaudeCodeTranscript(t *testing.T) {
	db := filepath.Join(t.TempDir(), "m.db")
	for _, name := range []string{"whole_messages.ndjson", "structured_output.json"} {
		code, out, errs := mw(t, "--db", db, "import", "--json", filepath.Join("..", "adapters", "claudecode", "testdata", name))
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", name, code, errs)
		}
		var res struct{ Imported []string }
		if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Imported) != 1 {
			t.Fatalf("%s: %s %v", name, out, err)
		}
		evs := replayEvents(t, db, res.Imported[0])
		var text strings.Builder
		terminal := ""
		for _, e := range evs {
			var ev struct {
				Type, Delta, Status string
				Final               *string
			}
			_ = json.Unmarshal(e, &ev)
			switch ev.Type {
			case "text.delta":
				text.WriteString(ev.Delta)
			case "item.done":
				if ev.Final != nil {
					text.WriteString(*ev.Final)
				}
			case "response.terminal":
				terminal = ev.Status
			}
		}
		if terminal != "completed" || text.Len() == 0 {
			t.Fatalf("%s: terminal %q, text %q", name, terminal, text.String())
		}
	}
	code, out, _ := mw(t, "--db", db, "sessions", "--json", "--protocol", "claude-code")
	if code != 0 || strings.Count(strings.TrimSpace(out), "\n") != 1 {
		t.Fatalf("sessions: %d %s", code, out)
	}
}
