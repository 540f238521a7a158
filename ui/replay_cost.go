package ui

import (
	"errors"
	"fmt"
	"slices"
	"time"

	tea "github.com/charmbracelet/bubbletea"
)

// ReplayCost is what replaying a stored session costs the workbench, as a
// person meets it (`modelwire bench --only store`, BenchmarkReplayLarge).
type ReplayCost struct {
	// Open is from asking for the session (the sessions list's enter) in
	// a running workbench to its first frame drawn: the load command
	// (Library.Load) and the model's update and view.
	Open time.Duration
	// Jumps are cold jumps, each in a session just opened: to the end,
	// to the middle, and to the start of the turn at 70%: from the key
	// to the frame drawn where the seek (its command) landed.
	Jumps []time.Duration
	// Frames are the frames of a replay playing at full speed, one entry
	// a tick, from the middle: the tick, the landed step folded in and the
	// frame drawn — what the workbench's goroutine does. Steps are the
	// step seeks themselves, which run in their command beside it.
	Frames, Steps []time.Duration
	// Marks is the pass that finds the scrubber's proposals and errors,
	// in its command after the first frame (marksCmd).
	Marks time.Duration
}

// MeasureReplay opens session id of lib in a workbench of w×h cells and
// measures it (ReplayCost), playing frames entries. clock is the time
// measured: nil for the wall clock; the process's CPU time on a machine
// other work shares (bench does).
func MeasureReplay(lib Library, id string, w, h, frames int, clock func() time.Duration) (ReplayCost, error) {
	var c ReplayCost
	if clock == nil {
		start := time.Now()
		clock = func() time.Duration { return time.Since(start) }
	}
	since := func(t time.Duration) time.Duration { return clock() - t }
	open := func() (*Model, time.Duration, error) {
		// The workbench is running when a session is opened in it.
		m := New(Options{Library: lib, Getenv: func(string) string { return "" }})
		m.Update(tea.WindowSizeMsg{Width: w, Height: h})
		_ = m.View()
		t0 := clock()
		m.repGen++
		msg := loadCmd(m.repGen, lib, id)().(replayMsg)
		if msg.err != nil {
			return nil, 0, msg.err
		}
		m.Update(msg)
		if m.cur == nil {
			return nil, 0, errors.New("the session did not open for replay")
		}
		_ = m.View()
		return m, since(t0), nil
	}
	m, d, err := open()
	if err != nil {
		return c, err
	}
	c.Open = d
	t0 := clock()
	if msg := marksCmd(m.repGen, m.rep.r)().(marksMsg); msg.err != nil {
		return c, msg.err
	}
	c.Marks = since(t0)
	n := m.rep.Entries
	far := n / 2
	if ts := m.rep.TurnStarts; len(ts) > 0 {
		far = ts[len(ts)*7/10]
	}
	for _, to := range []int{n, n / 2, far} {
		m, _, err := open()
		if err != nil {
			return c, err
		}
		t0 := clock()
		if err := m.settleSeek(m.seek(to)); err != nil {
			return c, err
		}
		_ = m.View()
		c.Jumps = append(c.Jumps, since(t0))
		if m.cur.pos != to {
			return c, fmt.Errorf("a jump to %d landed at %d", to, m.cur.pos)
		}
	}
	if err := m.settleSeek(m.seek(n / 2)); err != nil {
		return c, err
	}
	m.playing, m.play = true, m.play+1
	for range min(frames, n-n/2) {
		t0 := clock()
		cmd := m.onTick(playTickMsg{gen: m.repGen, play: m.play})
		if cmd == nil {
			return c, errors.New("a tick started no step")
		}
		ui := since(t0)
		t1 := clock()
		msg := cmd()
		c.Steps = append(c.Steps, since(t1))
		t2 := clock()
		m.Update(msg)
		_ = m.View()
		c.Frames = append(c.Frames, ui+since(t2))
		if m.cur.err != nil {
			return c, m.cur.err
		}
	}
	return c, nil
}

// settleSeek runs a seek's command, and those of the seeks it starts,
// folding each landing in.
func (m *Model) settleSeek(cmd tea.Cmd) error {
	for cmd != nil {
		msg, ok := cmd().(seekMsg)
		if !ok {
			return nil
		}
		cmd = m.onSeek(msg)
		if m.cur.err != nil {
			return m.cur.err
		}
		if m.playing {
			return nil // onSeek scheduled a tick
		}
	}
	return nil
}

// Percentile is the p-th percentile (0–100) of ds, 0 for none.
func Percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s)-1)*p/100+0.5))]
}
