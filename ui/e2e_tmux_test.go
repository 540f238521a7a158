package ui

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelwire/modelwire/internal/e2e"
)

// TestE2ETmux builds the binary and drives it in a real terminal (tmux,
// 120×40): the refund walkthrough with the contract's keys — n through
// the steps, a for each tool call — to the validation panel; checks the
// decision, the cap and the five passing layers on the captured screen;
// quits (q, then y: the walkthrough is still running); then opens the
// workbench again on the same database and replays that session from the
// sessions browser.
func TestE2ETmux(t *testing.T) {
	dir := t.TempDir()
	bin := e2eBinary(t)
	db := filepath.Join(dir, "mw.db")
	tm := &tmux{t: t, name: fmt.Sprintf("mwe2e%d", os.Getpid()), sock: filepath.Join(dir, "tmux.sock")}
	t.Cleanup(tm.kill)

	// 1. The walkthrough.
	tm.start(bin, db, dir)
	tm.waitFor("the walkthrough", 20*time.Second, func(s string) bool { return strings.Contains(s, "⏸ assembled") })
	approvals := 0
	deadline := time.Now().Add(90 * time.Second)
	for {
		if time.Now().After(deadline) {
			t.Fatalf("the walkthrough did not reach the validation; screen:\n%s", tm.capture())
		}
		s := tm.waitFor("a pause or a proposal", 30*time.Second, func(s string) bool {
			return strings.Contains(s, "⏸ ") || strings.Contains(s, "Tool proposal")
		})
		if strings.Contains(s, "⏸ validated") {
			break
		}
		key := "n"
		if strings.Contains(s, "Tool proposal") {
			key = "a"
			approvals++
		}
		tm.send(key)
		tm.waitFor("the screen to move on", 20*time.Second, func(s2 string) bool { return s2 != s })
	}
	s := tm.waitFor("the validation", 10*time.Second, func(s string) bool {
		return strings.Contains(s, "5/5 pass") && strings.Contains(s, "needs_review")
	})
	for _, want := range []string{"needs_review", "13000", "✓ transport", "✓ protocol", "✓ parse", "✓ schema", "✓ domain"} {
		if !strings.Contains(s, want) {
			t.Errorf("the validation screen lacks %q:\n%s", want, s)
		}
	}
	if approvals != 3 {
		t.Errorf("approved %d tool calls, want 3", approvals)
	}
	// The session id, from the footer (a status message may hide it for
	// a few seconds).
	idRe := regexp.MustCompile(`session ([0-9a-z]{12})\b`)
	s = tm.waitFor("the session id in the footer", 15*time.Second, func(s string) bool { return idRe.MatchString(s) })
	id := idRe.FindStringSubmatch(s)[1]

	// 2. Quit: the walkthrough still runs (paused on the last step), so q asks.
	tm.send("q")
	tm.waitFor("the quit question", 10*time.Second, func(s string) bool { return strings.Contains(s, "Quit?") })
	tm.send("y")
	tm.waitExit(10 * time.Second)

	// 3. Replay it from the sessions browser.
	tm.start(bin, db, dir)
	tm.waitFor("the workbench", 20*time.Second, func(s string) bool { return strings.Contains(s, "⏸ assembled") })
	tm.send("s")
	tm.waitFor("the sessions browser", 10*time.Second, func(s string) bool { return strings.Contains(s, "Sessions (") && strings.Contains(s, id) })
	tm.send("/")
	tm.sendText(id)
	tm.send("Enter")
	tm.waitFor("the filter", 10*time.Second, func(s string) bool { return strings.Contains(s, "Sessions (1)") })
	tm.send("Enter")
	tm.waitFor("the replay", 20*time.Second, func(s string) bool { return strings.Contains(s, "modelwire replay "+id) })
	tm.send("l")
	tm.waitFor("a step", 10*time.Second, func(s string) bool { return strings.Contains(s, "entry 1/") })
	tm.send("G")
	s = tm.waitFor("the end of the replay", 10*time.Second, func(s string) bool {
		return strings.Contains(s, "5/5 pass") && strings.Contains(s, "needs_review")
	})
	for _, want := range []string{"needs_review", "13000", "✓ transport", "✓ domain"} {
		if !strings.Contains(s, want) {
			t.Errorf("the replay's last screen lacks %q:\n%s", want, s)
		}
	}
	tm.send("q")
	tm.waitExit(10 * time.Second)
}

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
)

// e2eBinary builds modelwire once for every end-to-end test of the run,
// or skips the test where tmux is missing or -short is set.
func e2eBinary(t *testing.T) string {
	t.Helper()
	e2e.Require(t, "the end-to-end terminal test", "tmux")
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "mwe2e")
		if err != nil {
			buildErr = err
			return
		}
		builtBin = filepath.Join(dir, "modelwire")
		if out, err := exec.Command("go", "build", "-o", builtBin, "..").CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return builtBin
}

// tmux drives one tmux session on a private socket: 120×40 and 256
// colours (TERM=screen-256color) unless w, h and env say otherwise (env:
// extra VAR=value, e.g. NO_COLOR=1).
type tmux struct {
	t    *testing.T
	name string
	sock string
	w, h int
	env  []string
	dir  string // XDG_STATE_HOME: the program's log is dir/modelwire/tui.log
}

func (x *tmux) cmd(args ...string) *exec.Cmd {
	return exec.Command("tmux", append([]string{"-S", x.sock}, args...)...)
}

func (x *tmux) start(bin, db, dir string, args ...string) {
	x.t.Helper()
	x.dir = dir
	w, h := x.w, x.h
	if w == 0 {
		w, h = 120, 40
	}
	// 256 colours as issue 16 asks (TERM=screen-256color), whatever the
	// test's own environment is, unless env says else: COLORTERM and the
	// colour switches cleared, and CI too (termenv takes a set CI for "not
	// a terminal" and draws no colour; CI systems export it).
	shell := fmt.Sprintf("TERM=screen-256color COLORTERM= NO_COLOR= CLICOLOR= CLICOLOR_FORCE= CI= %s XDG_STATE_HOME=%q %q --db %q", strings.Join(x.env, " "), dir, bin, db)
	for _, a := range args {
		shell += fmt.Sprintf(" %q", a)
	}
	c := x.cmd("new-session", "-d", "-s", x.name, "-x", fmt.Sprint(w), "-y", fmt.Sprint(h), shell)
	c.Env = append(os.Environ(), "TERM=xterm-256color")
	if out, err := c.CombinedOutput(); err != nil {
		x.t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
}

func (x *tmux) send(keys ...string) {
	x.t.Helper()
	if out, err := x.cmd(append([]string{"send-keys", "-t", x.name}, keys...)...).CombinedOutput(); err != nil {
		x.t.Fatalf("tmux send-keys %v: %v\n%s", keys, err, out)
	}
}

// sendText types literal text.
func (x *tmux) sendText(s string) {
	x.t.Helper()
	if out, err := x.cmd("send-keys", "-t", x.name, "-l", s).CombinedOutput(); err != nil {
		x.t.Fatalf("tmux send-keys -l: %v\n%s", err, out)
	}
}

func (x *tmux) capture() string {
	out, err := x.cmd("capture-pane", "-p", "-t", x.name).Output()
	if err != nil {
		return ""
	}
	return string(out)
}

// captureEscapes is the screen with its colour escapes.
func (x *tmux) captureEscapes() string {
	out, err := x.cmd("capture-pane", "-e", "-p", "-t", x.name).Output()
	if err != nil {
		return ""
	}
	return string(out)
}

// waitFor polls the screen until cond holds, up to d.
func (x *tmux) waitFor(what string, d time.Duration, cond func(string) bool) string {
	x.t.Helper()
	deadline := time.Now().Add(d)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		s := x.capture()
		if cond(s) {
			return s
		}
		if time.Now().After(deadline) {
			if s == "" {
				// The program is gone: its log says why.
				log, _ := os.ReadFile(filepath.Join(x.dir, "modelwire", "tui.log"))
				x.t.Fatalf("timed out waiting for %s: the program has exited; its log:\n%s", what, log)
			}
			x.t.Fatalf("timed out waiting for %s; screen:\n%s", what, s)
		}
		<-tick.C
	}
}

// waitExit waits until the program has ended (its tmux session is gone).
func (x *tmux) waitExit(d time.Duration) {
	x.t.Helper()
	deadline := time.Now().Add(d)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for x.cmd("has-session", "-t", x.name).Run() == nil {
		if time.Now().After(deadline) {
			x.t.Fatalf("the program did not exit; screen:\n%s", x.capture())
		}
		<-tick.C
	}
}

func (x *tmux) kill() {
	_ = x.cmd("kill-server").Run()
}
