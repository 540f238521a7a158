package ui

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestE2ETmuxBatch imports a batch's files with the binary, then opens the
// workbench in an 80×24 tmux and the sessions browser: the batch is one
// group, its header with the batch's status, its requests beneath with
// their own (the rejected one failed, the batch still completed).
func TestE2ETmuxBatch(t *testing.T) {
	dir := t.TempDir()
	bin := e2eBinary(t)
	db := filepath.Join(dir, "mw.db")
	td := filepath.Join("..", "batch", "testdata")
	imp := exec.Command(bin, "--db", db, "import", filepath.Join(td, "errors.jsonl"), filepath.Join(td, "output.jsonl"),
		filepath.Join(td, "batch.json"), filepath.Join(td, "input.jsonl"))
	if out, err := imp.CombinedOutput(); err != nil || !strings.Contains(string(out), "imported 3 session(s)") {
		t.Fatalf("import: %v\n%s", err, out)
	}
	tm := &tmux{t: t, name: fmt.Sprintf("mwbatch%d", os.Getpid()), sock: filepath.Join(dir, "tmux.sock"), w: 80, h: 24}
	t.Cleanup(tm.kill)
	tm.start(bin, db, dir)
	tm.waitFor("the workbench", 20*time.Second, func(s string) bool { return strings.Contains(s, "⏸ assembled") })
	tm.send("s")
	s := tm.waitFor("the batch's group", 10*time.Second, func(s string) bool {
		return strings.Contains(s, "batch batch_abc123 · completed · 3 requests, 1 failed")
	})
	lines := strings.Split(s, "\n")
	row := func(custom string) string {
		for _, l := range lines {
			if strings.Contains(l, " "+custom+" ") {
				return l
			}
		}
		t.Fatalf("no row for %s:\n%s", custom, s)
		return ""
	}
	if l := row("bad-model"); !strings.Contains(l, "failed") || !strings.Contains(l, "transport") {
		t.Errorf("the rejected request's row: %q", l)
	}
	for _, c := range []string{"req-1", "req-2"} {
		if l := row(c); !strings.Contains(l, "done") {
			t.Errorf("%s's row: %q", c, l)
		}
	}
	// Enter on the header does nothing; on a request it replays its turn.
	tm.send("Enter")
	tm.send("Down")
	tm.send("Enter")
	tm.waitFor("the request's replay", 20*time.Second, func(s string) bool { return strings.Contains(s, "modelwire replay ") })
	tm.send("G")
	tm.send("Tab") // the stream panel
	tm.waitFor("its one turn's answer or error", 10*time.Second, func(s string) bool {
		return strings.Contains(s, "turn 1 ·") && (strings.Contains(s, "Hello.") || strings.Contains(s, "Goodbye.") || strings.Contains(s, "HTTP 400"))
	})
	tm.send("q")
	if strings.Contains(tm.waitFor("quit or its question", 10*time.Second, func(s string) bool { return true }), "Quit?") {
		tm.send("y")
	}
	tm.waitExit(10 * time.Second)
}
