package ui

import (
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
)

// A teatest-style harness: the real program, the real bridge and
// coalescer, a fake backend; the test sends keys and waits for screens.
// (charmbracelet/x/exp/teatest is not in go.mod; this is the same idea:
// WaitFor polls the last rendered frame against a deadline, never a
// fixed sleep.)

// captured wraps the root model to keep the last frame it rendered. View
// runs on the program's goroutine; the test reads the frame atomically.
type captured struct {
	*Model
	frame *atomic.Value
}

func (c captured) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	_, cmd := c.Model.Update(msg)
	return c, cmd
}

func (c captured) View() string {
	v := c.Model.View()
	c.frame.Store(ansiStrip(v))
	return v
}

type flow struct {
	t     *testing.T
	p     *tea.Program
	frame *atomic.Value
	done  chan error
}

func startFlow(t *testing.T, opts Options, w, h int) *flow {
	t.Helper()
	m := New(opts)
	f := &flow{t: t, frame: &atomic.Value{}, done: make(chan error, 1)}
	f.frame.Store("")
	f.p = tea.NewProgram(captured{m, f.frame}, tea.WithInput(nil), tea.WithOutput(io.Discard), tea.WithoutSignalHandler())
	m.br.start(f.p.Send)
	go func() {
		_, err := f.p.Run()
		m.Close()
		f.done <- err
	}()
	f.p.Send(tea.WindowSizeMsg{Width: w, Height: h})
	t.Cleanup(func() {
		f.p.Kill()
		<-f.done
	})
	return f
}

// waitFor polls the screen until cond holds or the deadline passes.
func (f *flow) waitFor(what string, cond func(string) bool) string {
	f.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		s := f.frame.Load().(string)
		if cond(s) {
			return s
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("timed out waiting for %s; screen:\n%s", what, s)
		}
		<-tick.C
	}
}

func (f *flow) waitText(want ...string) string {
	f.t.Helper()
	return f.waitFor(strings.Join(want, " & "), func(s string) bool {
		for _, w := range want {
			if !strings.Contains(s, w) {
				return false
			}
		}
		return true
	})
}

func (f *flow) key(k string) { f.p.Send(key1(k)) }

// TestFlowRefundWalkthrough walks the refund case with the contract's
// keys: n through every step, a for each proposal, to the validation.
func TestFlowRefundWalkthrough(t *testing.T) {
	f := startFlow(t, Options{Backend: &fakeBackend{}}, 120, 40)
	f.waitText("⏸ assembled", "The request is")
	steps, approvals := 0, 0
	for i := 0; i < 60; i++ {
		s := f.waitFor("a pause or a proposal", func(s string) bool {
			return strings.Contains(s, "⏸ ") || strings.Contains(s, "Tool proposal")
		})
		if strings.Contains(s, "⏸ validated") {
			break
		}
		if strings.Contains(s, "Tool proposal") {
			f.key("a")
			approvals++
			f.waitFor("the dialog to close", func(s2 string) bool { return !strings.Contains(s2, "Tool proposal") || s2 != s })
			continue
		}
		before := s
		f.key("n")
		steps++
		f.waitFor("the next step", func(s2 string) bool { return s2 != before })
	}
	if approvals != 3 {
		t.Fatalf("approved %d calls, want 3", approvals)
	}
	s := f.waitText("5/5 pass", "needs_review", "13000", "✓ transport", "✓ domain")
	if !strings.Contains(s, "Validated") {
		t.Errorf("the validated note is missing:\n%s", s)
	}
	f.key("n")
	f.waitText("✓ done")
	f.key("q") // not running any more: quits at once
	select {
	case err := <-f.done:
		if err != nil {
			t.Fatal(err)
		}
		f.done <- nil
	case <-time.After(5 * time.Second):
		t.Fatal("q did not quit")
	}
}

// TestFlowQuitWhileRunning: q asks while the walkthrough runs, y quits.
func TestFlowQuitWhileRunning(t *testing.T) {
	f := startFlow(t, Options{Backend: &fakeBackend{}}, 80, 24)
	f.waitText("⏸ assembled")
	f.key("n")
	f.waitText("⏸ sent")
	f.key("q")
	f.waitText("Quit?")
	f.key("esc")
	f.waitFor("the question to go", func(s string) bool { return !strings.Contains(s, "Quit?") })
	f.key("q")
	f.waitText("Quit?")
	f.key("y")
	select {
	case err := <-f.done:
		f.done <- err
	case <-time.After(5 * time.Second):
		t.Fatal("y did not quit")
	}
}

// TestFlowFreeRunningStopsOnlyForApprovals: without step mode the
// session runs straight to each proposal.
func TestFlowFreeRunningStopsOnlyForApprovals(t *testing.T) {
	rc := DefaultRunConfig()
	rc.StepMode = false
	f := startFlow(t, Options{Backend: &fakeBackend{}, Run: rc}, 120, 40)
	f.waitText("Tool proposal")
	f.key("A") // approve all: the session's other calls need no key
	f.waitText("5/5 pass", "✓ done")
}
