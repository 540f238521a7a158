package ui

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestE2EValues walks the refund case in tmux at 80×24 without colour and
// at 120×36, and reads from the screen (issue 27, "every value
// readable"): through the values view (v, then home and pgdn) each tool
// call's result whole, the final object whole in the schema's order (the
// reply draft entire), the ten passing checks with their values and the
// cap's arithmetic from the facts; then again with the ledger call
// rejected, where max_refund_cents reads null in the validation panel and
// in the view.
func TestE2EValues(t *testing.T) {
	bin := e2eBinary(t)
	sc := refund(t)
	results := map[string]string{}
	for i, c := range []struct{ name, args string }{
		{"get_order_line", `{"order_id":"O-2048","line_id":"L1"}`},
		{"get_refund_ledger", `{"order_id":"O-2048","line_id":"L1"}`},
		{"get_refund_policy", `{"category":"headphones","received_at":"2026-10-15T12:00:00+08:00","reason":"quality_issue"}`},
	} {
		content, isErr := sc.RunTool(context.Background(), c.name, json.RawMessage(c.args))
		if isErr {
			t.Fatalf("%s: %s", c.name, content)
		}
		results[fmt.Sprintf("?%d", i)] = content // the call ids are the model's
	}
	for _, c := range []struct {
		w, h int
		env  []string
	}{{80, 24, []string{"NO_COLOR=1"}}, {120, 36, nil}} {
		t.Run(fmt.Sprintf("%dx%d", c.w, c.h), func(t *testing.T) {
			dir := t.TempDir()
			tm := &tmux{t: t, name: fmt.Sprintf("mwval%d%d", os.Getpid(), c.w), sock: filepath.Join(dir, "tmux.sock"), w: c.w, h: c.h, env: c.env}
			t.Cleanup(tm.kill)
			db := filepath.Join(dir, "mw.db")
			page := func(cond func(string) bool) string {
				return tm.waitFor("a page of the values view", 10*time.Second, cond)
			}
			keys := func(ks ...string) {
				for _, k := range ks {
					tm.send(map[string]string{"home": "Home", "pgdown": "PageDown"}[k])
				}
			}

			// closeAndQuit closes the values view and quits the workbench.
			closeAndQuit := func() {
				tm.send("Escape")
				tm.waitFor("the view to close", 10*time.Second, func(s string) bool { return !strings.Contains(s, "Values ·") })
				tm.send("q")
				tm.waitFor("the quit question", 10*time.Second, has("Quit?"))
				tm.send("y")
				tm.waitExit(10 * time.Second)
			}

			// Every call approved: the chapter's answer.
			walkRefund(t, tm, bin, db, dir, "")
			tm.send("v")
			tm.waitFor("the values view", 10*time.Second, has("Values ·"))
			lines := readValues(t, page, keys)
			checkValues(t, lines, results)
			closeAndQuit()

			// The ledger call rejected: no cap, and null says so.
			s := walkRefund(t, tm, bin, db, dir, "get_refund_ledger")
			null := regexp.MustCompile(`max_refund_cents +null`)
			if !null.MatchString(s) {
				t.Errorf("the validation panel does not write null:\n%s", s)
			}
			tm.send("v")
			tm.waitFor("the values view", 10*time.Second, has("Values ·"))
			lines = readValues(t, page, keys)
			answer := squash(section(lines, "answer"))
			for _, want := range []string{"max_refund_cents null", "decision unable_to_assess"} {
				if !strings.Contains(answer, squash(want)) {
					t.Errorf("the answer lacks %q:\n%s", want, section(lines, "answer"))
				}
			}
			if facts := squash(section(lines, "facts")); !strings.Contains(facts, "capnull") || !strings.Contains(facts, "obs.get_refund_ledger.pending_hold_cents=null") {
				t.Errorf("the facts do not say why there is no cap:\n%s", section(lines, "facts"))
			}
			if calls := squash(section(lines, "tool calls")); !strings.Contains(calls, "✗rejected") {
				t.Errorf("the tool calls do not show the rejection:\n%s", section(lines, "tool calls"))
			}
			closeAndQuit()
		})
	}
}

// walkRefund starts the workbench and walks the refund case to its
// validated step: n at each pause, a at each proposal, except the tool
// named reject, which is rejected. It returns the screen there.
func walkRefund(t *testing.T, tm *tmux, bin, db, dir, reject string) string {
	t.Helper()
	tm.start(bin, db, dir, "--pace", "0")
	return walkOn(t, tm, tm.waitFor("the walkthrough", 20*time.Second, has("⏸ assembled")), reject)
}

// walkOn walks a started walkthrough from screen s to its validated step,
// as walkRefund does.
func walkOn(t *testing.T, tm *tmux, s, reject string) string {
	t.Helper()
	for i := 0; !strings.Contains(s, "⏸ validated"); i++ {
		if i > 40 {
			t.Fatalf("the walkthrough did not reach the validation:\n%s", s)
		}
		switch {
		case reject != "" && strings.Contains(header(s), "decide "+reject):
			tm.send("r")
			tm.waitFor("the reason", 10*time.Second, has("reason:"))
			tm.sendText("not now")
			tm.send("Enter")
		case strings.Contains(s, "Tool proposal"):
			tm.send("a")
		default:
			tm.send("n")
		}
		s = settledStep(tm, s)
	}
	return tm.waitFor("the validation", 10*time.Second, has("5/5 pass"))
}
