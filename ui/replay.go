package ui

import (
	"time"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/session"
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
	Load(id string) (*session.Replayer, error)
	// Diff compares two sessions (diff.go).
	Diff(a, b string) (*DiffResult, error)
	// Fork plans a fork of session id from turn (fork.go): body, when
	// set, is that turn's request body edited; results replace earlier
	// turns' tool results by TURN:CALL_ID.
	Fork(id string, turn int, body []byte, results map[string]string) (session.Setup, error)
}

// Replay is a stored session as the workbench steps through it: the
// session's replayer with what the header and the scrubber show, read
// once when it opens.
type Replay struct {
	r        *session.Replayer
	Info     session.SessionInfo
	Scenario *session.Scenario
	Entries  int
	// TurnStarts are the positions just before each turn's first entry;
	// Proposals and Errors the entries that proposed a tool call and that
	// went wrong, for the scrubber.
	TurnStarts, Proposals, Errors []int
	Stream                        bool
	History                       adapters.HistoryMode
}

func newReplay(r *session.Replayer) *Replay {
	rep := &Replay{r: r, Info: r.Info(), Scenario: r.Scenario(), Entries: r.Len(), Proposals: r.Proposals(), Errors: r.Errors(),
		Stream: r.Stream(), History: r.History()}
	for _, s := range r.TurnStarts() {
		rep.TurnStarts = append(rep.TurnStarts, s-1)
	}
	return rep
}

// cursor is a replay's position with the state there, as the replayer
// folded it.
type cursor struct {
	rep   *Replay
	pos   int
	state *session.State
	err   error // the last seek's, if it failed (the state stays as it was)
}

func newCursor(rep *Replay) *cursor {
	c := &cursor{rep: rep}
	c.seek(0)
	return c
}

func (c *cursor) seek(p int) {
	if c.err = c.rep.r.Seek(p); c.err != nil {
		if c.state == nil {
			c.state = session.NewState()
		}
		return
	}
	c.pos, c.state = c.rep.r.Pos(), c.rep.r.State()
}

// turnOf is the turn whose entries contain position p (0 before any).
func (c *cursor) turnOf(p int) int { return c.rep.r.TurnOf(p) }

// nextTurn is the position after the first entry of the next turn.
func (c *cursor) nextTurn() int { return c.rep.r.NextTurn() }

// prevTurn is the start of the current turn, or of the one before when
// already there.
func (c *cursor) prevTurn() int { return c.rep.r.PrevTurn() }

// gap is the recorded time between the cursor's entry and the next.
func (c *cursor) gap() time.Duration { return c.rep.r.Gap() }

// replaySpeeds are the playback speeds + and - step through.
var replaySpeeds = []float64{0.25, 0.5, 1, 2, 4, 8, 16}

// speedNormal is the index of ×1.
const speedNormal = 2
