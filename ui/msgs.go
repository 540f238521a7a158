package ui

import (
	"time"

	"github.com/modelwire/modelwire/session"
)

// Messages. Every asynchronous result carries the generation (gen) of the
// run, replay or listing it belongs to; Update drops those that no longer
// match, so a result of a session the person already replaced never lands
// on the screen of the new one.

// updatesMsg is a coalesced batch of session updates.
type updatesMsg struct {
	gen int
	ups []session.Update
}

// askMsg asks for a decision on a proposal. The session goroutine waits on
// reply (buffered, so answering never blocks Update's command).
type askMsg struct {
	gen   int
	p     session.Proposal
	reply chan session.Decision
}

// pauseMsg says the walkthrough stopped at a protocol step; sending on
// reply moves it on.
type pauseMsg struct {
	gen   int
	step  string
	turn  int
	reply chan struct{}
}

// runEndedMsg says a live session's goroutine returned.
type runEndedMsg struct {
	gen int
	err error
}

// statusMsg puts a message in the status line.
type statusMsg struct {
	level statusLevel
	text  string
}

// clearStatusMsg clears the status line if it still shows message id.
type clearStatusMsg struct{ id int }

// sessionsMsg is the stored sessions list.
type sessionsMsg struct {
	gen  int
	list []session.SessionInfo
	err  error
}

// replayMsg is a stored session loaded for replay.
type replayMsg struct {
	gen int
	rep *Replay
	err error
}

// seekMsg is where a replay seek landed: the position, a copy of the
// state there and the recorded gap to the next entry.
type seekMsg struct {
	gen   int
	pos   int
	state *session.State
	gap   time.Duration
	err   error
}

// deletedMsg says a stored session was deleted (or why not).
type deletedMsg struct {
	id  string
	err error
}

// exportedMsg says where a session was exported.
type exportedMsg struct {
	id, path string
	err      error
}

// playTickMsg advances a playing replay by one entry.
type playTickMsg struct {
	gen, play int
}

// tickEvery is the replay's fastest frame: recorded gaps shorter than it
// are merged into one frame.
const tickEvery = 16 * time.Millisecond
