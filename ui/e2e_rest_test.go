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

	"github.com/charmbracelet/x/ansi"
)

// has is a waitFor condition: the screen shows every string.
func has(want ...string) func(string) bool {
	return func(s string) bool {
		for _, w := range want {
			if !strings.Contains(s, w) {
				return false
			}
		}
		return true
	}
}

// header is the screen's first line: the step, or the call waiting for a
// decision. A key at a pause or a proposal changes it; the status line,
// which clears on its own, does not — so waiting for the header, not for
// any change, never takes a status clearing for the key's effect.
func header(s string) string { return strings.SplitN(s, "\n", 2)[0] }

// settledStep waits, after a key that steps the walkthrough, for the
// header to leave before's state and come to rest: paused, asking, done or
// failed. "● running" between two pauses is not a step; a loop that took it
// for one sent its next key into the run and stepped past where it meant to
// stop.
func settledStep(tm *tmux, before string) string {
	return tm.waitFor("the next step", 20*time.Second, func(s string) bool {
		h := header(s)
		return h != header(before) && strings.ContainsAny(h, "⏸⏳✓✗")
	})
}

// sizes are the terminals issue 16 asks for: 80×24 without colour and
// 200×60 with 256 colours.
var sizes = []struct {
	w, h int
	env  []string
}{{80, 24, []string{"NO_COLOR=1"}}, {200, 60, nil}}

// eachTerminal runs fn as a subtest in each of sizes, with a tmux of that
// size and environment (named from name), its directory and a database
// path in it.
func eachTerminal(t *testing.T, name string, fn func(t *testing.T, tm *tmux, dir, db string)) {
	for _, c := range sizes {
		t.Run(fmt.Sprintf("%dx%d%s", c.w, c.h, strings.Join(c.env, "")), func(t *testing.T) {
			dir := t.TempDir()
			tm := &tmux{t: t, name: fmt.Sprintf("%s%d%d", name, os.Getpid(), c.w), sock: filepath.Join(dir, "tmux.sock"), w: c.w, h: c.h, env: c.env}
			t.Cleanup(tm.kill)
			fn(t, tm, dir, filepath.Join(dir, "mw.db"))
		})
	}
}

// TestE2ECompareAndApproval drives the workbench in tmux: the compare
// table names each part's own place with whole paths (all six protocols
// at 200 columns, two at a time at 80, → for the next); then the
// bad-args model's first call, which fails its schema, cannot be approved
// (a is refused with the reason and the session keeps waiting), r rejects
// it, and the corrected call is approved.
func TestE2ECompareAndApproval(t *testing.T) {
	bin := e2eBinary(t)
	eachTerminal(t, "mwcmp", func(t *testing.T, tm *tmux, dir, db string) {
		tm.start(bin, db, dir, "--pace", "0")
		tm.waitFor("the walkthrough", 20*time.Second, has("⏸ assembled"))

		// Compare.
		tm.send("c")
		if tm.w >= 200 {
			tm.waitFor("the compare table", 10*time.Second, has("Compare: one request", "openai-responses", "deepseek-chat",
				"messages[2].content[0]", "contents[0].parts[1]", "response_format.json_schema.schema", "generationConfig.responseJsonSchema"))
		} else {
			tm.waitFor("the compare table", 10*time.Second, has("Compare: one request", "input[3].content[0]", "protocols 1–2 of 6"))
			for range 3 {
				tm.send("Right")
			}
			tm.waitFor("the next protocols", 10*time.Second, has("systemInstruction.parts[1]", "protocols 3–4 of 6"))
		}
		tm.send("Escape")
		tm.waitFor("compare to close", 10*time.Second, func(s string) bool { return !strings.Contains(s, "Compare:") })

		// The bad-args model, from the options.
		tm.send("o")
		tm.waitFor("the options", 10*time.Second, has("Options"))
		tm.send("Down")
		tm.send("Right")
		tm.waitFor("the bad-args variant", 10*time.Second, has("‹ bad-args ›"))
		tm.send("Enter")
		tm.waitFor("the bad-args walkthrough", 20*time.Second, has("refund/bad-args", "⏸ assembled"))
		for i := 0; ; i++ {
			s := tm.capture()
			if strings.Contains(s, "Tool proposal") {
				break
			}
			if i > 10 {
				t.Fatalf("no proposal after %d steps:\n%s", i, s)
			}
			tm.send("n")
			settledStep(tm, s)
		}
		tm.waitFor("the invalid proposal", 10*time.Second, has("missing property", "cannot run as proposed"))
		tm.send("a")
		s := tm.waitFor("the refusal", 10*time.Second, has("cannot approve get_order_line"))
		if !strings.Contains(s, "Tool proposal") {
			t.Fatalf("the refused approval closed the proposal:\n%s", s)
		}
		tm.send("r")
		tm.waitFor("the reason", 10*time.Second, has("reason:"))
		tm.send("Enter")
		tm.waitFor("the rejection", 10*time.Second, func(s string) bool { return !strings.Contains(s, "cannot run as proposed") })
		// On to the end: n at each pause, a at each (now valid) proposal.
		for i := 0; ; i++ {
			s := tm.capture()
			if strings.Contains(s, "⏸ validated") {
				break
			}
			if i > 40 {
				t.Fatalf("the walkthrough did not end:\n%s", s)
			}
			key := "n"
			if strings.Contains(s, "Tool proposal") {
				if strings.Contains(s, "cannot run as proposed") {
					t.Fatalf("a second invalid proposal:\n%s", s)
				}
				key = "a"
			}
			tm.send(key)
			settledStep(tm, s)
		}
		tm.send("q")
		tm.waitFor("the quit question", 10*time.Second, has("Quit?"))
		tm.send("y")
		tm.waitExit(10 * time.Second)

		// What the session recorded: the person rejected the invalid
		// call (the gate never had to), then approved the corrected one.
		list := storedSessions(t, bin, db)
		if len(list) != 1 {
			t.Fatalf("sessions: %v", list)
		}
		out, err := exec.Command(bin, "--db", db, "replay", list[0]["id"].(string), "--json").Output()
		if err != nil {
			t.Fatal(err)
		}
		var decisions []string
		for _, line := range strings.Split(string(out), "\n") {
			var e struct {
				Event struct{ Type, Name, Decision, Reason string }
			}
			if json.Unmarshal([]byte(line), &e) == nil && e.Event.Type == "tool.decision" {
				decisions = append(decisions, e.Event.Name+" "+e.Event.Decision+" "+e.Event.Reason)
			}
		}
		if len(decisions) < 2 || decisions[0] != "get_order_line rejected rejected by the operator" ||
			!strings.HasPrefix(decisions[1], "get_order_line approved") {
			t.Errorf("decisions %q", decisions)
		}
	})
}

// TestE2ETeachingTimingsScrubberAndCJK drives the rest of issue 16's
// points in tmux at both sizes: teaching mode's two lines on the selected
// element; the validation panel's timeline (arrival sparkline, where tool
// arguments opened and closed, tokens a second); the step's note rendered
// as markdown; the replay's scrubber
// with its turn and proposal marks; and the Chinese reply draft wrapped
// between characters inside the stream panel, whole, no line too wide.
func TestE2ETeachingTimingsScrubberAndCJK(t *testing.T) {
	bin := e2eBinary(t)
	eachTerminal(t, "mwteach", func(t *testing.T, tm *tmux, dir, db string) {
		tm.start(bin, db, dir, "--pace", "0")
		tm.waitFor("the walkthrough", 20*time.Second, has("⏸ assembled"))
		for _, step := range []string{"⏸ sent", "⏸ first_event", "⏸ proposals"} {
			tm.send("n")
			tm.waitFor(step, 20*time.Second, has(step))
		}
		// The simulator answers with OpenAI's rate-limit headers: the
		// stream panel works the capacity bound out beside them.
		if tm.w >= 200 {
			tm.waitFor("the capacity bound", 10*time.Second, has("capacity ≤", "binds: RPM 5000/60"))
		}
		tm.sendText("E")
		tm.waitFor("teaching mode", 10*time.Second, has("tool_call:", "why: Closed and parsed"))

		// The turn's timeline, in the validation panel (zoomed and
		// paged down where the terminal is small).
		tm.send("Tab")
		tm.waitFor("the validation panel", 10*time.Second, has("◆ Validation"))
		tm.sendText("z")
		tm.send("PageDown")
		s := tm.waitFor("the timeline", 10*time.Second, has("TIMINGS", "turn 1  headers"))
		if !regexp.MustCompile(`\([\s*|]*\)`).MatchString(s) || !strings.ContainsAny(s, "▁▂▃▄▅▆▇█") {
			t.Errorf("the timeline lacks the sparkline or the argument marks:\n%s", s)
		}
		// The six time points: the first token (the arguments) is marked.
		if !strings.Contains(s, "* token +") {
			t.Errorf("the timeline does not mark the first output token:\n%s", s)
		}
		tm.sendText("z")
		tm.waitFor("the layout back", 10*time.Second, has("Stream"))

		// The step's note, markdown rendered: a heading, not "## 4".
		tm.send("Tab")
		tm.waitFor("the events panel", 10*time.Second, has("◆ Events"))
		tm.send("Tab")
		s = tm.waitFor("the notes panel", 10*time.Second, has("◆ Notes", "4 · Turn 1 proposes"))
		if strings.Contains(s, "## ") || strings.Contains(s, "**") {
			t.Errorf("the note shows raw markdown:\n%s", s)
		}

		// To the end, then the replay of it.
		for i := 0; ; i++ {
			s := tm.capture()
			if strings.Contains(s, "✓ done") {
				break
			}
			if i > 40 {
				t.Fatalf("the walkthrough did not end:\n%s", s)
			}
			key := "n"
			if strings.Contains(s, "Tool proposal") {
				key = "A"
			}
			tm.sendText(key)
			settledStep(tm, s)
		}
		tm.waitFor("the end's timeline", 10*time.Second, has("tok/s"))
		tm.sendText("s")
		tm.waitFor("the sessions list", 10*time.Second, has("Sessions (1)"))
		tm.send("Enter")
		tm.waitFor("the replay", 20*time.Second, has("modelwire replay"))
		tm.sendText("G")
		end := regexp.MustCompile(`entry (\d+)/(\d+)`)
		s = tm.waitFor("the end of the replay", 10*time.Second, func(s string) bool {
			m := end.FindStringSubmatch(s)
			return m != nil && m[1] == m[2]
		})
		bar := strings.Split(s, "\n")[1]
		if strings.Count(bar, "┃") != 3 || strings.Count(bar, "◆") != 3 {
			t.Errorf("the scrubber should mark 3 turns ┃ and 3 proposals ◆: %q", bar)
		}

		// The answer's Chinese reply draft, in the stream panel.
		tm.send("BTab")
		s = tm.waitFor("the stream panel", 10*time.Second, has("◆ Stream · turn 3"))
		for _, want := range []string{"reply_draft", "经核查", "未提交退款"} {
			if !strings.Contains(s, want) {
				t.Errorf("the stream panel lacks %q:\n%s", want, s)
			}
		}
		for _, line := range strings.Split(s, "\n") {
			if w := ansi.StringWidth(line); w > tm.w {
				t.Errorf("a line of %d cells in %d: %q", w, tm.w, line)
			}
		}
		tm.sendText("q")
		tm.waitExit(10 * time.Second)
	})
}
