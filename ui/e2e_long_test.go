package ui

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestE2ELongReplay: `modelwire replay ID` on a session of 200,000 entries
// (200 turns of 1,000: long enough that the replay keeps only the shown
// turn's detail) opens at once, G lands on the end, [ on the last turn's
// start, and the scrubber marks the turns; the validation panel lists the
// last turns and says how many it leaves out.
func TestE2ELongReplay(t *testing.T) {
	bin := e2eBinary(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "mw.db")
	id := recordLongAt(t, path, 200, 1000)
	tm := &tmux{t: t, name: fmt.Sprintf("mwlong%d", os.Getpid()), sock: filepath.Join(dir, "tmux.sock")}
	t.Cleanup(tm.kill)
	tm.start(bin, path, dir, "replay", id[:8])
	tm.waitFor("the replay", 20*time.Second, has("modelwire replay", "entry 0/200000"))
	tm.sendText("G")
	s := tm.waitFor("the end", 20*time.Second, has("entry 200000/200000", "· done"))
	if bar := strings.Split(s, "\n")[1]; strings.Count(bar, "┃") < 50 {
		t.Errorf("the scrubber should mark the turns ┃: %q", bar)
	}
	tm.sendText("[")
	tm.waitFor("the last turn's start", 20*time.Second, has("entry 199001/200000"))
	tm.send("Tab")
	tm.waitFor("the validation panel", 10*time.Second, has("◆ Validation"))
	tm.sendText("z")
	tm.waitFor("the validation panel's turns", 20*time.Second, has("… 149 earlier turns"))
	tm.sendText("q")
	tm.waitExit(10 * time.Second)
}
