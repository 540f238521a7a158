package ui

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestE2EMatrix: two refund recordings (openai-responses and
// anthropic-messages) checked by `modelwire check` against openai-chat
// and the weaker model sim:refund/wrong-cap into a temporary database;
// in the workbench at 80×24, s then M opens the matrix with every cell's
// glyph, → and enter on the failing wrong-cap cell opens the recording
// and its child side by side, esc comes back to the matrix.
func TestE2EMatrix(t *testing.T) {
	bin := e2eBinary(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "mw.db")
	var recs []string
	for _, p := range []string{"openai-responses", "anthropic-messages"} {
		out, err := exec.Command(bin, "run", "--db", db, "--protocol", p, "--approve", "auto", "--json").Output()
		if err != nil {
			t.Fatalf("run %s: %v\n%s", p, err, out)
		}
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			var v struct {
				Type      string `json:"type"`
				SessionID string `json:"session_id"`
			}
			if json.Unmarshal([]byte(l), &v) == nil && v.Type == "session.result" {
				recs = append(recs, v.SessionID)
			}
		}
	}
	if len(recs) != 2 {
		t.Fatalf("recordings %v, want two", recs)
	}
	out, err := exec.Command(bin, "check", "--db", db, "--scenario", "refund", "--to", "openai-chat", "--to", "sim:refund/wrong-cap").Output()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("check: %v (want exit 1: the variant regresses)\n%s", err, out)
	}
	// The wrong-cap child of the first recording, from check's table.
	m := regexp.MustCompile(recs[0] + `\s+sim:refund/wrong-cap\s+(\S+)`).FindStringSubmatch(string(out))
	if m == nil {
		t.Fatalf("no wrong-cap child of %s in:\n%s", recs[0], out)
	}
	child := m[1]

	tm := &tmux{t: t, name: fmt.Sprintf("mwmatrix%d", os.Getpid()), sock: filepath.Join(dir, "tmux.sock"), w: 80, h: 24}
	t.Cleanup(tm.kill)
	tm.start(bin, db, dir, "--pace", "0")
	tm.waitFor("the workbench", 20*time.Second, has("⏸ assembled"))
	tm.send("s")
	tm.waitFor("the sessions browser", 10*time.Second, has("Sessions (", recs[0]))
	tm.send("M")
	tm.waitFor("the matrix", 10*time.Second, has("Check matrix · 2 recordings × 2 targets · 2 regressed",
		"openai-chat", "sim:refund/wrong-cap", recs[0]+" ✓ openai-responses", recs[1]+" ✓ anthropic-messages",
		"✓ pass", "✗ fail domain ↓", recs[0]+" → openai-chat", "regressed none"))
	tm.send("Right")
	tm.waitFor("the wrong-cap cell", 10*time.Second, has(recs[0]+" → sim:refund/wrong-cap", "child     "+child, "regressed layer:domain"))
	tm.send("Enter")
	s := tm.waitFor("the pair side by side", 20*time.Second, has("Diff "+recs[0]+" → "+child, "a "+recs[0], "│ b "+child))
	if !strings.Contains(s, `"refund"`) || !strings.Contains(s, `"refund/wrong-cap"`) {
		t.Errorf("the scenarios are not side by side:\n%s", s)
	}
	tm.send("Escape")
	tm.waitFor("the matrix again", 10*time.Second, has("Check matrix", recs[0]+" → sim:refund/wrong-cap"))
	tm.send("Escape")
	tm.waitFor("the sessions browser again", 10*time.Second, func(s string) bool { return !strings.Contains(s, "Check matrix") && strings.Contains(s, "Sessions (") })
	tm.send("Escape")
	tm.waitFor("the workbench again", 10*time.Second, func(s string) bool { return !strings.Contains(s, "Sessions (") })
	tm.send("q")
	tm.waitExit(10 * time.Second)
}
