package proxy

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelwire/modelwire/internal/e2e"
)

// TestJavaScriptSDKGetsEditedStream: the official openai JavaScript SDK
// (pinned in sim/jstest) streams a call through a rule that edits its
// arguments; its finalChatCompletion holds the edited call, and its next
// request carries it back (the session's carried note). Needs node and
// npm; skipped without them unless MODELWIRE_REQUIRE_E2E is set.
func TestJavaScriptSDKGetsEditedStream(t *testing.T) {
	e2e.Require(t, "the JavaScript SDK edit check", "node", "npm")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dir := e2e.NPMDir(ctx, t, "../sim/jstest", "testdata/edit_stream.mjs")
	rc := refund(t)
	b, _ := json.Marshal(map[string]any{"system": rc.system, "task": rc.task, "tools": rc.sc.Tools})
	fx := filepath.Join(dir, "fixture.json")
	if err := os.WriteFile(fx, b, 0o644); err != nil {
		t.Fatal(err)
	}
	r := newRig(t, "", Options{Rules: mustRules(t, `{"rules": [{"match": {"direction": "response", "tool": "get_order_line"},
	  "edit": {"arguments": {"get_order_line": {"line_id": "L2"}}}}]}`)})
	cmd := exec.CommandContext(ctx, "node", "edit_stream.mjs", r.url, fx)
	cmd.Dir = dir
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	var first struct {
		Calls []struct{ ID, Name, Arguments string }
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil || len(first.Calls) == 0 || !strings.Contains(first.Calls[0].Arguments, `"line_id":"L2"`) {
		t.Fatalf("the SDK got %s", out)
	}
	if len(lines) < 2 {
		t.Fatalf("no second turn: %s", out)
	}
	carried := false
	for _, c := range r.stop()[0].Calls {
		carried = carried || strings.HasPrefix(c.Reason, CarriedNote) && strings.Contains(c.Reason, "edited (the model sees")
	}
	if !carried {
		t.Error("the session does not say the history carried the edit")
	}
}
