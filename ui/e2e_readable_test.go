package ui

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestE2EReadable drives the workbench in tmux at 80×24 without colour and
// at 200×60 with 256 colours: the focus marker, the inspector (open,
// search, close), zoom, the sessions list (columns, a search that matches
// nothing), a replay at another speed with its scrubber; then ASCII mode.
func TestE2EReadable(t *testing.T) {
	bin := e2eBinary(t)
	eachTerminal(t, "mwread", func(t *testing.T, tm *tmux, dir, db string) {
		has := func(want ...string) func(string) bool {
			return func(s string) bool {
				for _, w := range want {
					if !strings.Contains(s, w) {
						return false
					}
				}
				return true
			}
		}

		// A free run to the end, so there is something to inspect and replay.
		tm.start(bin, db, dir, "--pace", "0")
		tm.waitFor("the walkthrough", 20*time.Second, has("⏸ assembled", "◆ Assembly"))
		// The colours the terminal was told it has: none with NO_COLOR,
		// the 256-colour palette otherwise (never 24-bit escapes).
		esc := tm.captureEscapes()
		colour := regexp.MustCompile(`\x1b\[[0-9;]*(3[0-9]|4[0-9]|9[0-7]|10[0-7])(;[0-9;]*)?m`)
		switch {
		case len(tm.env) > 0 && colour.MatchString(esc):
			t.Errorf("NO_COLOR: the screen has colour escapes %q", colour.FindString(esc))
		case len(tm.env) == 0 && (!strings.Contains(esc, "38;5;") || strings.Contains(esc, "38;2;") || strings.Contains(esc, "48;2;")):
			t.Errorf("TERM=screen-256color: want 256-colour escapes only:\n%q", esc[:min(len(esc), 600)])
		}
		tm.send("i")
		tm.waitFor("the inspector", 10*time.Second, has("Inspect · request", "raw (as on the wire)", "canonical"))
		tm.send("/")
		tm.sendText("instructions")
		tm.send("Enter")
		tm.waitFor("the search", 10*time.Second, has(`matching "instructions"`))
		tm.send("Escape")
		tm.waitFor("the inspector to close", 10*time.Second, func(s string) bool { return !strings.Contains(s, "Inspect ·") })
		tm.send("z")
		tm.waitFor("the zoomed panel", 10*time.Second, func(s string) bool {
			return strings.Contains(s, "◆ Assembly") && !strings.Contains(s, "Validation")
		})
		tm.send("z")
		for i := 0; i < 60; i++ {
			s := tm.capture()
			if strings.Contains(s, "⏸ validated") || strings.Contains(s, "✓ done") {
				break
			}
			if strings.Contains(s, "Tool proposal") {
				tm.send("A")
			} else {
				tm.send("n")
			}
			settledStep(tm, s)
		}
		if s := tm.capture(); strings.Contains(s, "⏸ validated") {
			if !strings.Contains(s, "◆ Validation") {
				t.Errorf("the validation panel is not focused at the validated step:\n%s", s)
			}
			tm.send("n")
		}
		end := tm.waitFor("the end", 20*time.Second, has("✓ done"))

		// The sessions list: its columns, the cost as the validation
		// panel priced it; a search that matches nothing.
		tm.send("s")
		list := tm.waitFor("the sessions list", 10*time.Second, has("Sessions (1)", "STATUS", "FAILED", "▸ "))
		if tm.w >= 200 {
			for _, col := range []string{"PROTOCOL", "PROVIDER", "SCENARIO/APP", "FAULT", "STATUS", "FAILED", "TURNS", "TOKENS", "COST", "TIME"} {
				if !strings.Contains(list, col) {
					t.Errorf("the sessions list has no %s column:\n%s", col, list)
				}
			}
			total := regexp.MustCompile(`total +USD (\d+\.\d+)`).FindStringSubmatch(end)
			if total == nil || !strings.Contains(list, "$"+total[1]) {
				t.Errorf("the list's cost is not the validation panel's total %v:\n%s\n%s", total, end, list)
			}
		} else {
			// Too narrow for every column: sorting by one shows it.
			for i := 0; i < 20; i++ {
				s := tm.capture()
				if strings.Contains(s, "COST↑") {
					break
				}
				tm.sendText("S")
				tm.waitFor("the next sort", 10*time.Second, func(s2 string) bool { return s2 != s })
			}
			tm.waitFor("the cost column", 10*time.Second, has("sort: COST", "COST↑", "$0.0"))
		}
		tm.send("/")
		tm.sendText("zzz")
		tm.send("Enter")
		tm.waitFor("no match", 30*time.Second, has(`no session matches "zzz"`))
		tm.send("/")
		tm.send("BSpace", "BSpace", "BSpace", "Enter")
		tm.send("Enter")
		tm.waitFor("the replay", 20*time.Second, has("modelwire replay"))
		tm.sendText("-")
		tm.sendText("-")
		tm.waitFor("the slower speed", 10*time.Second, has("×0.25"))
		tm.send("G")
		tm.waitFor("the end of the replay", 10*time.Second, has("5/5 pass"))
		tm.send("q")
		tm.waitExit(10 * time.Second)

		// ASCII mode: no box drawing, markers in ASCII.
		tm.start(bin, db, dir, "--ascii")
		s := tm.waitFor("the ASCII walkthrough", 20*time.Second, has("# assembled", "* Assembly"))
		for _, r := range s {
			if r >= 0x2500 && r <= 0x257f {
				t.Fatalf("ASCII mode drew box drawing %q:\n%s", r, s)
			}
		}
		tm.send("q")
		tm.waitExit(10 * time.Second)
	})
}
