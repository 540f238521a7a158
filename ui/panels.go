package ui

import (
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/session"
)

// panelID names a panel; focus is one of them.
type panelID int

// The panels, in tab order.
const (
	panelAssembly panelID = iota
	panelStream
	panelValidation
	panelLog
	panelNotes
	numPanels
)

var panelTitles = [numPanels]string{"Assembly", "Stream", "Validation", "Events", "Notes"}

func (p panelID) String() string { return panelTitles[p] }

// viewData is what the panels show: the folded state and what the root
// knows around it. The root owns it; panels read it through a pointer.
type viewData struct {
	state    *session.State
	scenario *session.Scenario
	rc       RunConfig
	replay   bool
	// ended is the status a replayed session was stored with (done,
	// failed, interrupted; "" live).
	ended session.Status
	// preview is the first request, encoded before the session sends it.
	preview *adapters.HTTPRequest
	// paused is the step the walkthrough waits on ("" when not paused).
	paused string
	// laneHL is the item id the event log's selection points at.
	laneHL string
	// wire shows the exact wire request in the assembly panel.
	wire bool
}

// turn is the turn the panels show: the latest.
func (d *viewData) turn() *session.TurnState {
	if d.state == nil {
		return nil
	}
	return d.state.Current()
}

// panel is a child of the root: sized by layout, focused by tab, with a
// key handler that says whether it used the key.
type panel interface {
	SetSize(w, h int)
	Focus()
	Blur()
	HandleKey(msg tea.KeyMsg, km *KeyMap) (handled bool, cmd tea.Cmd)
	// View returns the panel's content lines (the root frames them).
	View() []string
}

// scroller keeps a panel's scroll position. follow keeps the bottom in
// view as content grows (a stream); scrolling up stops following.
type scroller struct {
	w, h    int
	off     int
	follow  bool
	focused bool
}

func (s *scroller) SetSize(w, h int) { s.w, s.h = w, h }
func (s *scroller) Focus()           { s.focused = true }
func (s *scroller) Blur()            { s.focused = false }

// scrollKey moves the scroll position; it reports whether the key was one
// of the scroll keys.
func (s *scroller) scrollKey(msg tea.KeyMsg, km *KeyMap, total int) bool {
	maxOff := max(0, total-s.h)
	switch {
	case key.Matches(msg, km.Nav.Up):
		s.off--
	case key.Matches(msg, km.Nav.Down):
		s.off++
	case key.Matches(msg, km.Nav.PageUp):
		s.off -= max(1, s.h-1)
	case key.Matches(msg, km.Nav.PageDown):
		s.off += max(1, s.h-1)
	case key.Matches(msg, km.Nav.Top):
		s.off = 0
	case key.Matches(msg, km.Nav.Bottom):
		s.off = maxOff
	default:
		return false
	}
	if s.off > maxOff {
		s.off = maxOff
	}
	if s.off < 0 {
		s.off = 0
	}
	s.follow = s.off >= maxOff
	return true
}

// window cuts the visible lines out of all lines.
func (s *scroller) window(lines []string) []string {
	maxOff := max(0, len(lines)-s.h)
	if s.follow || s.off > maxOff {
		s.off = maxOff
	}
	end := min(len(lines), s.off+s.h)
	return lines[s.off:end]
}

// section renders a small heading line.
func (c *Common) section(title string) string { return c.Styles.Muted.Render(strings.ToUpper(title)) }

// dialogPage is the lines pgup and pgdn move a dialog that does not know
// its room (or is not drawn yet).
const dialogPage = 10

// dialogScroll moves a full-screen dialog's offset *off by a scroll key
// (a line, page lines, the top) and reports whether msg was one; the
// dialog's view clamps the bottom, since only it knows its length.
func dialogScroll(msg tea.KeyMsg, km *KeyMap, off *int, page int) bool {
	switch {
	case key.Matches(msg, km.Nav.Up):
		*off--
	case key.Matches(msg, km.Nav.Down):
		*off++
	case key.Matches(msg, km.Nav.PageUp):
		*off -= page
	case key.Matches(msg, km.Nav.PageDown):
		*off += page
	case key.Matches(msg, km.Nav.Top):
		*off = 0
	default:
		return false
	}
	*off = max(0, *off)
	return true
}
