package ui

import (
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/session"
	"github.com/modelwire/modelwire/timeline"
)

// Library is the store as the sessions browser and the replay see it
// (app.Library).
type Library interface {
	List() ([]session.SessionInfo, error)
	// Search names the sessions whose requests, tool calls or events
	// contain text.
	Search(text string) ([]string, error)
	Delete(id string) error
	// Export writes the session as JSON Lines into dir and returns the path.
	Export(id, dir string) (string, error)
	Load(id string) (*timeline.Replayer, error)
	// Diff compares two sessions (diff.go).
	Diff(a, b string) (*DiffResult, error)
	// Fork plans a fork of session id from turn (fork.go): body, when
	// set, is that turn's request body edited; results replace earlier
	// turns' tool results by TURN:CALL_ID.
	Fork(id string, turn int, body []byte, results map[string]string) (session.Setup, error)
	// Checks reads back what `modelwire check` stored: for each session
	// it re-sent, the recording, the target and the verdicts (matrix.go).
	Checks() ([]CheckCell, error)
}

// Replay is a stored session as the workbench steps through it: the
// session's replayer with what the header and the scrubber show, read
// once when it opens.
type Replay struct {
	r        *timeline.Replayer
	Info     session.SessionInfo
	Scenario *session.Scenario
	Entries  int
	// TurnStarts are the positions just before each turn's first entry;
	// Proposals and Errors the entries that proposed a tool call and that
	// went wrong, for the scrubber: found by a pass over the session
	// after it opens (marksCmd), nil until it lands.
	TurnStarts, Proposals, Errors []int
	Stream                        bool
	History                       adapters.HistoryMode
	// state and gap are the replayer's at opening (position 0), read by
	// the command that loaded it.
	state *session.State
	gap   time.Duration
}

func newReplay(r *timeline.Replayer) *Replay {
	rep := &Replay{r: r, Info: r.Info(), Scenario: r.Scenario(), Entries: r.Len(),
		Stream: r.Stream(), History: r.History(), state: r.State().Clone(), gap: r.Gap()}
	for _, s := range r.TurnStarts() {
		rep.TurnStarts = append(rep.TurnStarts, s-1)
	}
	return rep
}

// cursor is a replay's position with the state there, as the replayer
// folded it. Seeks read the store, so they run in a command (seekCmd)
// that hands back a copy of the state; the screen shows the last state
// until it lands. One seek runs at a time: keys pressed meanwhile move the
// target (want), and when the running seek lands the latest target is
// sought, so held keys coalesce.
type cursor struct {
	rep   *Replay
	pos   int
	state *session.State
	gap   time.Duration // recorded time between the entry at pos and the next
	want  int           // the position asked for last
	busy  bool          // a seek is running
	err   error         // the last seek's, if it failed (the state stays as it was)
}

func newCursor(rep *Replay) *cursor {
	st := rep.state
	if st == nil {
		st = session.NewState()
	}
	return &cursor{rep: rep, state: st, gap: rep.gap}
}

// seekCmd moves the replayer to p in a command. The replayer is the
// command's alone while it runs (the cursor starts one at a time); the
// state it returns is a copy the replayer no longer changes.
func seekCmd(gen int, r *timeline.Replayer, p int) tea.Cmd {
	return func() tea.Msg {
		if err := r.Seek(p); err != nil {
			return seekMsg{gen: gen, err: err}
		}
		return seekMsg{gen: gen, pos: r.Pos(), state: r.State().Clone(), gap: r.Gap()}
	}
}

// marksMsg brings a replay's scrubber marks (Replayer.Marks).
type marksMsg struct {
	gen               int
	proposals, errors []int
	err               error
}

// marksCmd finds the replay's proposals and errors in a command: the
// store keeps no index of them, so it reads the session once (in SQLite,
// decoding only the chunks that hold one), and the replay opens without
// waiting for it.
func marksCmd(gen int, r *timeline.Replayer) tea.Cmd {
	return func() tea.Msg {
		p, e, err := r.Marks()
		return marksMsg{gen: gen, proposals: p, errors: e, err: err}
	}
}

// turnOf is the turn whose entries contain position p (0 before any).
func (c *cursor) turnOf(p int) int { return c.rep.r.TurnOf(p) }

// nextTurn is the position after the first entry of the turn after the
// target's.
func (c *cursor) nextTurn() int { return c.rep.r.NextTurnFrom(c.want) }

// prevTurn is the start of the target's turn, or of the one before when
// already there.
func (c *cursor) prevTurn() int { return c.rep.r.PrevTurnFrom(c.want) }

// replaySpeeds are the playback speeds + and - step through.
var replaySpeeds = []float64{0.25, 0.5, 1, 2, 4, 8, 16}

// speedNormal is the index of ×1.
const speedNormal = 2
