package ui

import (
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
)

// A replay in the workbench: loading it, seeking in a command, its keys
// and playback.

// loadReplay loads a stored session in a command.
func (m *Model) loadReplay(id string) tea.Cmd {
	if m.opts.Library == nil {
		return m.setStatus(levelWarn, "no session store is open")
	}
	m.repGen++
	return tea.Batch(m.setStatus(levelInfo, "loading session "+id+"…"), loadCmd(m.repGen, m.opts.Library, id))
}

// loadCmd opens session id of lib for replay in a command.
func loadCmd(gen int, lib Library, id string) tea.Cmd {
	return func() tea.Msg {
		rep, err := lib.Load(id)
		if err != nil {
			return replayMsg{gen: gen, err: err}
		}
		return replayMsg{gen: gen, rep: newReplay(rep)}
	}
}

// onReplay switches to replay mode on a loaded session; the live session,
// if any, is stopped.
func (m *Model) onReplay(msg replayMsg) tea.Cmd {
	if msg.gen != m.repGen {
		return nil
	}
	if msg.err != nil {
		return m.setStatus(levelError, "cannot replay: "+msg.err.Error())
	}
	if m.cancel != nil {
		m.cancel()
		m.cancel = nil
	}
	m.gen++ // the live run's late messages no longer apply
	m.running, m.ask, m.pause, m.decideOnAsk = false, nil, nil, nil
	m.mode = modeReplay
	m.rep = msg.rep
	m.cur = newCursor(msg.rep)
	m.playing = false
	m.d.replay, m.d.ended = true, msg.rep.Info.Status
	m.d.scenario = msg.rep.Scenario
	m.d.preview, m.d.paused, m.d.laneHL = nil, "", ""
	m.d.rc = RunConfig{Scenario: msg.rep.Info.Scenario, Variant: msg.rep.Info.Variant, Protocol: msg.rep.Info.Protocol,
		Provider: msg.rep.Info.Provider, Stream: msg.rep.Stream, History: msg.rep.History}
	m.d.state = m.cur.state
	m.resize(m.w, m.h)
	m.logP.sync()
	return tea.Batch(m.setStatus(levelInfo, "replaying "+msg.rep.Info.ID+": → step, ] turn, G end, space play"),
		marksCmd(m.repGen, msg.rep.r), m.openCompare())
}

// seek asks for replay position p. One seek runs at a time (seekCmd):
// while one runs, p becomes the target that onSeek seeks next, so the
// latest target wins.
func (m *Model) seek(p int) tea.Cmd {
	c := m.cur
	c.want = max(0, min(p, m.rep.Entries))
	if c.busy || c.want == c.pos {
		return nil
	}
	c.busy = true
	return seekCmd(m.repGen, m.rep.r, c.want)
}

// onSeek shows where a seek landed, and seeks the latest target if it
// moved meanwhile; a playing replay schedules its next step from here.
func (m *Model) onSeek(msg seekMsg) tea.Cmd {
	c := m.cur
	if msg.gen != m.repGen || c == nil {
		return nil
	}
	c.busy, c.err = false, msg.err
	if msg.err != nil {
		c.want = c.pos // go on from what is shown
		m.playing = false
		return m.seekStatus()
	}
	c.pos, c.state, c.gap = msg.pos, msg.state, msg.gap
	m.d.state = c.state
	m.logP.sync()
	if c.want != c.pos {
		return m.seek(c.want)
	}
	if m.playing {
		return m.tick()
	}
	return nil
}

// replayKey handles the replay cursor keys. Steps count from the target
// of the seek running, if any, so that each press moves one step.
func (m *Model) replayKey(msg tea.KeyMsg) (tea.Cmd, bool) {
	km := &m.km
	if m.cur == nil {
		return nil, false
	}
	var to int
	switch {
	case key.Matches(msg, km.Replay.Forward):
		to = m.cur.want + 1
	case key.Matches(msg, km.Replay.Back):
		to = m.cur.want - 1
	case key.Matches(msg, km.Replay.NextTurn):
		to = m.cur.nextTurn()
	case key.Matches(msg, km.Replay.PrevTurn):
		to = m.cur.prevTurn()
	case key.Matches(msg, km.Replay.Start):
		to = 0
	case key.Matches(msg, km.Replay.End):
		to = m.rep.Entries
	case key.Matches(msg, km.Replay.Play):
		m.playing = !m.playing
		m.play++
		if !m.playing {
			return nil, true
		}
		if m.cur.want >= m.rep.Entries {
			if cmd := m.seek(0); cmd != nil {
				return cmd, true // onSeek goes on playing
			}
		}
		if m.cur.busy {
			return nil, true // onSeek goes on playing
		}
		return m.tick(), true
	case key.Matches(msg, km.Replay.Faster):
		m.speed = min(m.speed+1, len(replaySpeeds)-1)
		return nil, true
	case key.Matches(msg, km.Replay.Slower):
		m.speed = max(m.speed-1, 0)
		return nil, true
	case key.Matches(msg, km.Replay.Speed):
		m.speed = (m.speed + 1) % len(replaySpeeds)
		return nil, true
	case key.Matches(msg, km.Replay.Fork):
		return m.openFork(), true
	case key.Matches(msg, km.Global.Live):
		if m.opts.Replay != "" {
			return nil, true // opened on a stored session: there is no live one to go back to
		}
		return m.startRun(m.opts.Run), true
	default:
		return nil, false
	}
	// A manual step pauses playback.
	if m.playing {
		m.playing = false
		m.play++
	}
	return m.seek(to), true
}

// seekStatus reports a seek the store could not serve (the screen keeps
// the last state it had).
func (m *Model) seekStatus() tea.Cmd {
	if m.cur == nil || m.cur.err == nil {
		return nil
	}
	return m.setStatus(levelError, "cannot read the session: "+m.cur.err.Error())
}

// tick schedules the next playback step after the recorded gap.
func (m *Model) tick() tea.Cmd {
	gap := time.Duration(float64(m.cur.gap) / replaySpeeds[m.speed])
	gap = max(tickEvery, min(gap, 2*time.Second))
	gen, play := m.repGen, m.play
	return tea.Tick(gap, func(time.Time) tea.Msg { return playTickMsg{gen: gen, play: play} })
}

func (m *Model) onTick(msg playTickMsg) tea.Cmd {
	if msg.gen != m.repGen || msg.play != m.play || !m.playing || m.cur == nil || m.cur.busy {
		return nil
	}
	if m.cur.pos >= m.rep.Entries {
		m.playing = false
		return nil
	}
	return m.seek(m.cur.pos + 1) // onSeek schedules the next tick
}
