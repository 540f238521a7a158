package ui

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestE2EStats: a refund session that passes and one of refund/wrong-cap
// that fails its domain checks, recorded by `modelwire run`; `stats
// --json` says the refund model's failure rate and cost; in the workbench
// at 80×24, s then % opens the stats view, whose refund-model row shows
// the same failure rate and cost (the live session the workbench starts
// is running, so it changes neither).
func TestE2EStats(t *testing.T) {
	bin := e2eBinary(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "mw.db")
	for _, sc := range []string{"refund", "refund/wrong-cap"} {
		if out, err := exec.Command(bin, "run", "--db", db, "--scenario", sc, "--approve", "auto", "--regenerate=false").CombinedOutput(); err != nil && sc == "refund" {
			t.Fatalf("run %s: %v\n%s", sc, err, out)
		}
	}
	out, err := exec.Command(bin, "stats", "--db", db, "--by", "model", "--json").Output()
	if err != nil {
		t.Fatalf("stats --json: %v", err)
	}
	var g struct {
		Group       map[string]string `json:"group"`
		Sessions    int               `json:"sessions"`
		FailureRate float64           `json:"failure_rate"`
		Cost        float64           `json:"cost"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(string(out))), &g); err != nil || g.Group["model"] != "refund-model" || g.Sessions != 2 {
		t.Fatalf("stats --json: %v, %+v; want one refund-model group of 2\n%s", err, g, out)
	}
	rate, cost := fmt.Sprintf("%.1f%%", 100*g.FailureRate), fmt.Sprintf("%.4f", g.Cost)

	tm := &tmux{t: t, name: fmt.Sprintf("mwstats%d", os.Getpid()), sock: filepath.Join(dir, "tmux.sock"), w: 80, h: 24}
	t.Cleanup(tm.kill)
	tm.start(bin, db, dir, "--pace", "0")
	tm.waitFor("the workbench", 20*time.Second, has("⏸ assembled"))
	tm.send("s")
	tm.waitFor("the sessions browser", 10*time.Second, has("Sessions ("))
	tm.send("%")
	screen := tm.waitFor("the stats view", 10*time.Second, has("Stats by model", "refund-model", "Time to first text", "Cost per group"))
	row := regexp.MustCompile(`refund-model\s+(\d+)\s+(\S+%)\s+\S+\s+(\S+)`).FindStringSubmatch(screen)
	if row == nil {
		t.Fatalf("no refund-model row in:\n%s", screen)
	}
	if row[2] != rate || row[3] != cost {
		t.Errorf("the view shows failure rate %s and cost %s; stats --json says %s and %s\n%s", row[2], row[3], rate, cost, screen)
	}
	if rate != "50.0%" {
		t.Errorf("failure rate %s, want 50.0%% (one of the two finished sessions failed)", rate)
	}
	tm.send("Right")
	tm.waitFor("grouped by protocol", 10*time.Second, has("Stats by protocol", "PROTOCOL"))
	tm.send("Escape")
	tm.waitFor("the sessions browser again", 10*time.Second, func(s string) bool { return !strings.Contains(s, "Stats by") && strings.Contains(s, "Sessions (") })
	tm.send("Escape")
	// q sent at once could arrive in the same read as the Escape and be
	// taken for alt+q: it waits for the browser to close.
	tm.waitFor("the workbench again", 10*time.Second, func(s string) bool { return !strings.Contains(s, "Sessions (") })
	tm.send("q")
	tm.waitExit(10 * time.Second)
}
