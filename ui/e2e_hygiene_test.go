package ui

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// storedSessions lists the sessions in db as the sessions command does.
func storedSessions(t *testing.T, bin, db string) []map[string]any {
	t.Helper()
	out, err := exec.Command(bin, "--db", db, "sessions", "--json").Output()
	if err != nil {
		t.Fatalf("modelwire sessions: %v", err)
	}
	var list []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("sessions --json: %v: %q", err, line)
		}
		list = append(list, m)
	}
	return list
}

// TestE2ESessionHygiene drives the workbench in tmux as a person would, in
// 80×24 without colour and in 200×60 with 256 colours: opening it and
// quitting stores nothing; n starts the session; editing a source and
// re-sending starts a new session linked to the first, which is stored
// as interrupted at once, not left running.
func TestE2ESessionHygiene(t *testing.T) {
	bin := e2eBinary(t)
	eachTerminal(t, "mwhyg", func(t *testing.T, tm *tmux, dir, db string) {

		// Open and quit: nothing was started, so nothing is asked or stored.
		tm.start(bin, db, dir)
		tm.waitFor("the walkthrough", 20*time.Second, func(s string) bool { return strings.Contains(s, "⏸ assembled") })
		tm.send("q")
		tm.waitExit(10 * time.Second)
		if list := storedSessions(t, bin, db); len(list) != 0 {
			t.Fatalf("opening and quitting stored %d session(s): %v", len(list), list)
		}

		// n starts the session; an edited source re-sends as a new one.
		tm.start(bin, db, dir)
		tm.waitFor("the walkthrough", 20*time.Second, func(s string) bool { return strings.Contains(s, "⏸ assembled") })
		tm.send("n")
		tm.waitFor("the request sent", 20*time.Second, func(s string) bool { return strings.Contains(s, "⏸ sent") })
		first := storedSessions(t, bin, db)
		if len(first) != 1 || first[0]["status"] != "running" {
			t.Fatalf("after n: %v", first)
		}
		tm.send("BTab") // from the stream lanes back to the assembly
		tm.send("Enter")
		tm.waitFor("the source editor", 10*time.Second, func(s string) bool { return strings.Contains(s, "Edit source") })
		tm.sendText(" 请用中文回答。")
		tm.send("C-s")
		tm.waitFor("the re-sent request", 20*time.Second, func(s string) bool {
			return strings.Contains(s, "⏸ assembled") && !strings.Contains(s, "Edit source")
		})
		var list []map[string]any
		deadline := time.Now().Add(10 * time.Second)
		for {
			list = storedSessions(t, bin, db)
			if len(list) == 2 && list[1]["status"] == "interrupted" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("after the edit: %v", list)
			}
			time.Sleep(50 * time.Millisecond)
		}
		// Newest first: the re-sent session names the first as its parent.
		if list[0]["parent_id"] != first[0]["id"] || list[0]["status"] != "running" {
			t.Errorf("the re-sent session: %v; want parent %v", list[0], first[0]["id"])
		}
		tm.send("q")
		tm.waitFor("the quit question", 10*time.Second, func(s string) bool { return strings.Contains(s, "Quit?") })
		tm.send("y")
		tm.waitExit(10 * time.Second)
		for _, s := range storedSessions(t, bin, db) {
			if s["status"] == "running" {
				t.Errorf("session %v left running after quitting", s["id"])
			}
		}
	})
}

// TestE2ESignalsEndTheWorkbench: a closed terminal (SIGHUP) or a service
// manager (SIGTERM) ends the workbench as q does — the running session is
// stored as interrupted, not left running.
func TestE2ESignalsEndTheWorkbench(t *testing.T) {
	bin := e2eBinary(t)
	for _, sig := range []string{"HUP", "TERM"} {
		eachTerminal(t, "mwsig"+strings.ToLower(sig), func(t *testing.T, tm *tmux, dir, db string) {
			tm.start(bin, db, dir)
			tm.waitFor("the walkthrough", 20*time.Second, has("⏸ assembled"))
			tm.send("n")
			tm.waitFor("the request sent", 20*time.Second, has("⏸ sent"))
			out, err := tm.cmd("list-panes", "-t", tm.name, "-F", "#{pane_pid}").Output()
			if err != nil {
				t.Fatal(err)
			}
			if err := exec.Command("kill", "-"+sig, strings.TrimSpace(string(out))).Run(); err != nil {
				t.Fatal(err)
			}
			tm.waitExit(10 * time.Second)
			list := storedSessions(t, bin, db)
			if len(list) != 1 || list[0]["status"] != "interrupted" {
				t.Fatalf("after SIG%s: %v", sig, list)
			}
		})
	}
}
