package cli

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	application "github.com/modelwire/modelwire/app"
	"github.com/modelwire/modelwire/store"
	"github.com/modelwire/modelwire/ui"
)

// TestReplayTUIMatchesJSON: the workbench and `replay --json` walk one
// timeline — the same number of entries, the same turn for every entry,
// the same turn boundaries — for a plain run, one with a regeneration (its
// own turn), one retried after a 429, one continued after pause_turn and
// one cut mid-arguments; and a raw event that became two entries is
// printed once.
func TestReplayTUIMatchesJSON(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "m.db")
	for _, extra := range [][]string{{}, {"--scenario", "refund/wrong-cap"}, {"--fault", "rate-limit"},
		{"--protocol", "anthropic-messages", "--fault", "pause-turn"}, {"--fault", "disconnect-mid-args"}} {
		t.Run(strings.Join(append([]string{"refund"}, extra...), " "), func(t *testing.T) {
			args := append([]string{"--db", dbPath, "run", "--approve", "auto", "--pace", "0", "--json"}, extra...)
			code, out, errs := mw(t, args...)
			if code != 0 && code != ExitFailed {
				t.Fatalf("run: %d %s", code, errs)
			}
			var res struct {
				SessionID string `json:"session_id"`
			}
			lines := strings.Split(strings.TrimSpace(out), "\n")
			if err := json.Unmarshal([]byte(lines[len(lines)-1]), &res); err != nil || res.SessionID == "" {
				t.Fatalf("no session.result: %v %s", err, lines[len(lines)-1])
			}

			// What replay --json says.
			code, out, errs = mw(t, "--db", dbPath, "replay", res.SessionID, "--json")
			if code != 0 {
				t.Fatalf("replay: %d %s", code, errs)
			}
			var turnOf []int // by seq-1: the entry's turn, a session-level verdict's the turn before
			var starts []int
			completed, terminals := 0, 0
			for i, line := range strings.Split(strings.TrimSpace(out), "\n") {
				var l struct {
					Turn  int
					Seq   int
					Raw   *struct{ Event string }
					Event struct{ Type string }
				}
				if err := json.Unmarshal([]byte(line), &l); err != nil || l.Seq != i+1 {
					t.Fatalf("line %d: %v %s", i+1, err, line)
				}
				turn := l.Turn
				if turn == 0 && i > 0 {
					turn = turnOf[i-1]
				}
				if turn > len(starts) {
					starts = append(starts, l.Seq)
				}
				turnOf = append(turnOf, turn)
				if l.Raw != nil && l.Raw.Event == "response.completed" {
					completed++
				}
				if l.Event.Type == "response.terminal" {
					terminals++
				}
			}
			if completed > terminals {
				t.Errorf("response.completed printed %d times for %d responses", completed, terminals)
			}

			// What the workbench shows, stepping with → and ].
			db, err := store.Open(dbPath)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			m := ui.New(ui.Options{Library: application.Library{DB: db}, Catalog: application.Catalog{}, Replay: res.SessionID,
				Getenv: func(string) string { return "" }})
			m.Update(tea.WindowSizeMsg{Width: 200, Height: 50})
			drain(m, m.Init())
			// Before the first entry the panels already show turn 1's
			// assembled request, and the header names the turn the panels
			// show: turn 1, though no entry is applied yet.
			pos, n, turn := header(t, m)
			if pos != 0 || n != len(turnOf) || turn != 1 {
				t.Fatalf("the workbench opens at entry %d/%d, turn %d; replay --json has %d entries, turn 1 first", pos, n, turn, len(turnOf))
			}
			for p := 1; p <= n; p++ {
				_, cmd := m.Update(tea.KeyMsg{Type: tea.KeyRight})
				drain(m, cmd) // the seek runs in a command
				pos, _, turn = header(t, m)
				if pos != p || turn != turnOf[p-1] {
					t.Fatalf("→ to entry %d: the workbench shows entry %d, turn %d; replay --json says turn %d", p, pos, turn, turnOf[p-1])
				}
			}
			_, cmd := m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{'g'}})
			drain(m, cmd)
			var visited []int
			for range starts {
				_, cmd := m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{']'}})
				drain(m, cmd)
				pos, _, _ = header(t, m)
				visited = append(visited, pos)
			}
			if fmt.Sprint(visited) != fmt.Sprint(starts) {
				t.Errorf("] visits %v; the turns of replay --json start at %v", visited, starts)
			}
		})
	}
}

// drain runs a command and every command its messages lead to, feeding
// the messages to m. A command that has not answered within a second is
// a timer (the status line's timeout) and is left behind.
func drain(m *ui.Model, cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	ch := make(chan tea.Msg, 1)
	go func() { ch <- cmd() }()
	var got tea.Msg
	select {
	case got = <-ch:
	case <-time.After(time.Second):
		return
	}
	switch msg := got.(type) {
	case nil:
	case tea.BatchMsg:
		for _, c := range msg {
			drain(m, c)
		}
	default:
		_, next := m.Update(msg)
		drain(m, next)
	}
}

var replayHeader = regexp.MustCompile(`entry (\d+)/(\d+) · turn (\d+)`)

// header reads the replay position from the workbench's header.
func header(t *testing.T, m *ui.Model) (pos, n, turn int) {
	t.Helper()
	g := replayHeader.FindStringSubmatch(m.View())
	if g == nil {
		t.Fatalf("no replay position in the header:\n%s", m.View())
	}
	pos, _ = strconv.Atoi(g[1])
	n, _ = strconv.Atoi(g[2])
	turn, _ = strconv.Atoi(g[3])
	return pos, n, turn
}
