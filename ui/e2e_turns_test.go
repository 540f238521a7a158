package ui

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestE2ETurnsExplained walks the refund case in tmux at 80×24 and
// 120×36 and reads from the screen what each turn adds: j takes the
// assembly cursor down to the output_schema row (the panel scrolls with
// it); the notes name 13.6.4 on turn 2's request, 13.6.5 on turn 2's
// lookups and 13.6.6 on turn 3's request; and d on turn 3 shows what its
// request adds, tool_choice auto → none.
func TestE2ETurnsExplained(t *testing.T) {
	bin := e2eBinary(t)
	for _, size := range [][2]int{{80, 24}, {120, 36}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			dir := t.TempDir()
			tm := &tmux{t: t, name: fmt.Sprintf("mwturns%d%d", os.Getpid(), size[0]), sock: filepath.Join(dir, "tmux.sock"), w: size[0], h: size[1]}
			t.Cleanup(tm.kill)
			tm.start(bin, filepath.Join(dir, "mw.db"), dir, "--pace", "0")
			s := tm.waitFor("the walkthrough", 20*time.Second, has("⏸ assembled"))

			// Every row of the source map, the last one included.
			for range 11 {
				tm.send("j")
			}
			tm.waitFor("the cursor on output_schema", 10*time.Second, func(s string) bool {
				for _, l := range strings.Split(s, "\n") {
					if strings.Contains(l, "▸ output_schema") {
						return true
					}
				}
				return false
			})

			// notes focuses the notes panel and waits until it shows want.
			notes := func(what string, want ...string) {
				t.Helper()
				for i := 0; !strings.Contains(tm.capture(), "◆ Notes"); i++ {
					if i > int(numPanels) {
						t.Fatalf("%s: the notes panel never took the focus:\n%s", what, tm.capture())
					}
					before := tm.capture()
					tm.send("BTab")
					tm.waitFor("the focus to move", 10*time.Second, func(s string) bool { return s != before })
				}
				tm.waitFor(what, 10*time.Second, has(want...))
			}
			read := map[string]bool{}
			for steps := 0; ; steps++ {
				if steps > 40 {
					t.Fatalf("the walkthrough did not reach the validation:\n%s", s)
				}
				h := header(s)
				switch {
				case strings.Contains(h, "⏸ validated"):
				case strings.Contains(s, "Tool proposal"):
					tm.send("a")
					s = settledStep(tm, s)
					continue
				case strings.Contains(h, "⏸ assembled · turn 2") && !read["13.6.4"]:
					notes("turn 2's request explained by 13.6.4", "13.6.4")
					read["13.6.4"] = true
				case strings.Contains(h, "⏸ results · turn 2") && !read["13.6.5"]:
					notes("turn 2's lookups explained by 13.6.5", "13.6.5")
					read["13.6.5"] = true
				case strings.Contains(h, "⏸ assembled · turn 3") && !read["13.6.6"]:
					notes("turn 3's request explained by 13.6.6", "13.6.6")
					read["13.6.6"] = true
					tm.send("d")
					tm.waitFor("what turn 3's request adds", 10*time.Second, has("What turn 3's request adds", "tool_choice", `"auto" -> "none"`))
					tm.send("Escape")
					tm.waitFor("the view to close", 10*time.Second, func(s string) bool { return !strings.Contains(s, "What turn 3") })
				}
				if strings.Contains(h, "⏸ validated") {
					break
				}
				before := tm.capture()
				tm.send("n")
				s = settledStep(tm, before)
			}
			for _, sec := range []string{"13.6.4", "13.6.5", "13.6.6"} {
				if !read[sec] {
					t.Errorf("no note citing %s was read on the way", sec)
				}
			}
			tm.waitFor("the validation", 10*time.Second, has("5/5 pass"))
			tm.send("q")
			tm.waitFor("the quit question", 10*time.Second, has("Quit?"))
			tm.send("y")
			tm.waitExit(10 * time.Second)
		})
	}
}
