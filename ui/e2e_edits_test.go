package ui

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestE2EEdits: a proxied session whose streamed tool call a rule edited,
// opened with `modelwire replay ID` in an 80×24 terminal: at its end, v
// shows the model's arguments and the edited ones (CJK included), who
// edited them, and that the next request carried the edited call back;
// 3 goes to the bytes the application received.
func TestE2EEdits(t *testing.T) {
	bin := e2eBinary(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "mw.db")
	id := recordProxied(t, path, false)
	tm := &tmux{t: t, name: fmt.Sprintf("mwedits%d", os.Getpid()), sock: filepath.Join(dir, "tmux.sock"), w: 80, h: 24}
	t.Cleanup(tm.kill)
	tm.start(bin, path, dir, "replay", id[:8])
	tm.waitFor("the replay", 20*time.Second, has("modelwire replay"))
	tm.sendText("G")
	end := tm.waitFor("the end", 20*time.Second, has("turn 2 · ⏸", "this request carries get_weather"))
	t.Logf("the lanes at the end:\n%s", end)
	tm.sendText("v")
	s := tm.waitFor("both versions of the call", 10*time.Second, has(
		"✎ edited by rule 0 \"tokyo\" (rules.json)",
		"‹ arguments as the model proposed them", `"city": "Paris",`,
		"▶ arguments as edited by rule 0 \"tokyo\" (rules.json)", `"city": "東京都千代田区",`))
	t.Logf("the values view at 80×24:\n%s", s)
	tm.send("PgDn")
	s = tm.waitFor("the carried note", 10*time.Second, has("request): the model sees the call the application ran", "2 EDITS"))
	t.Logf("its next page:\n%s", s)
	tm.sendText("3")
	tm.waitFor("what the application received", 10*time.Second, has("3 WHAT THE APPLICATION RECEIVED", "data: [DONE]"))
	tm.send("Escape")
	tm.waitFor("the values view closed", 10*time.Second, func(s string) bool { return !has("Values ·")(s) })
	tm.sendText("q")
	tm.waitExit(10 * time.Second)
}
