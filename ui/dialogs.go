package ui

import (
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/modelwire/modelwire/session"
)

// Dialogs sit on a stack over the panels; the top one gets the keys. A
// dialog never changes the root: it returns a typed action that the root
// carries out (crush's dialog pattern, instead of one show-X boolean per
// overlay).

// dialogKind names a dialog.
type dialogKind int

const (
	dlgApproval dialogKind = iota
	dlgOptions
	dlgCompare
	dlgSessions
	dlgHelp
	dlgConfirm
	dlgSource
	dlgInspector
	dlgDiff
	dlgFork
	dlgValues
	dlgChanges
	dlgMatrix
	dlgStats
)

// dialog is one overlay.
type dialog interface {
	Kind() dialogKind
	// HandleKey handles a key; a nil action means "nothing for the root".
	HandleKey(msg tea.KeyMsg, km *KeyMap) (action, tea.Cmd)
	// Update passes other messages (cursor blinks) to inner components.
	Update(msg tea.Msg) tea.Cmd
	// View renders the dialog within w×h cells.
	View(w, h int) string
	// Bindings are the keys the dialog answers to now (for help).
	Bindings(km *KeyMap) []key.Binding
}

// action is what a dialog asks the root to do.
type action interface{ isAction() }

type (
	// actClose pops the top dialog.
	actClose struct{}
	// actDecide answers the waiting proposal (and pops the dialog).
	actDecide struct {
		d   session.Decision
		all bool // approve all from now on
	}
	// actRun replaces the live session with a new one.
	actRun struct{ rc RunConfig }
	// actOpenReplay loads a stored session for replay.
	actOpenReplay struct{ id string }
	// actQuit ends the program (after cancelling the session).
	actQuit struct{}
	// actEditSource re-sends the scenario with a source's text replaced.
	actEditSource struct{ id, text string }
	// actAskDelete asks to confirm a deletion; actDelete deletes.
	actAskDelete struct{ id string }
	actDelete    struct{ id string }
	// actExport exports a stored session.
	actExport struct{ id string }
	// actCopy puts text on the clipboard.
	actCopy struct{ what, text string }
	// actStatus shows a message in the status line.
	actStatus struct {
		level statusLevel
		text  string
	}
)

func (actClose) isAction()      {}
func (actDecide) isAction()     {}
func (actRun) isAction()        {}
func (actOpenReplay) isAction() {}
func (actQuit) isAction()       {}
func (actEditSource) isAction() {}
func (actAskDelete) isAction()  {}
func (actDelete) isAction()     {}
func (actExport) isAction()     {}
func (actStatus) isAction()     {}
func (actCopy) isAction()       {}

// box frames a dialog's lines with the dialog style, a title and a key
// hint line, within w×h cells.
func (c *Common) box(title string, lines []string, hint string, w, h int) string {
	st := c.Styles.Dialog
	innerW := max(10, w-st.GetHorizontalFrameSize())
	innerH := max(3, h-st.GetVerticalFrameSize())
	body := []string{c.Styles.DialogTitle.Render(cut(title, innerW))}
	room := innerH - 1
	if hint != "" {
		room--
	}
	for i, l := range lines {
		if i >= room {
			break
		}
		body = append(body, fit(l, innerW))
	}
	for len(body) < 1+min(room, len(lines)) {
		body = append(body, strings.Repeat(" ", innerW))
	}
	if hint != "" {
		body = append(body, c.Styles.Subtle.Render(cut(hint, innerW)))
	}
	for i := range body {
		body[i] = fit(body[i], innerW)
	}
	return st.Render(strings.Join(body, "\n"))
}

// hintOf renders bindings as "key desc · key desc".
func hintOf(bs ...key.Binding) string {
	parts := make([]string, 0, len(bs))
	for _, b := range bs {
		if !b.Enabled() {
			continue
		}
		h := b.Help()
		parts = append(parts, h.Key+" "+h.Desc)
	}
	return strings.Join(parts, " · ")
}

// overlay draws box centred over the rows [top, top+height) of base,
// cutting base lines by display cells. The box covers its whole
// rectangle, lines shorter than its widest padded, and a cell of blank
// margin around it (within the rows given): no border of the panels
// beneath shows against its edge, as it did beside a dialog one cell
// narrower than the screen.
func overlay(base, box string, width, top, height int) string {
	bl := strings.Split(base, "\n")
	ol := strings.Split(box, "\n")
	bw := 0
	for _, l := range ol {
		bw = max(bw, ansi.StringWidth(l))
	}
	x := max(0, (width-bw)/2)
	y := top + max(0, (height-len(ol))/2)
	// The margin: a cell left and right where the screen has one, a row
	// above and below where the rows given have one.
	mx, mw := max(0, x-1), min(width, x+bw+1)-max(0, x-1)
	blank := strings.Repeat(" ", mw)
	for row := max(top, y-1); row < min(len(bl), top+height, y+len(ol)+1); row++ {
		if row < y || row >= y+len(ol) {
			bl[row] = paste(bl[row], mx, blank)
			continue
		}
		l := ol[row-y]
		if w := ansi.StringWidth(l); w < bw {
			l += strings.Repeat(" ", bw-w)
		}
		if x > mx {
			l = " " + l
		}
		if x+bw < mx+mw {
			l += " "
		}
		bl[row] = paste(bl[row], mx, l)
	}
	return strings.Join(bl, "\n")
}

// paste puts s over line from cell x on, cutting line by display cells.
func paste(line string, x int, s string) string {
	left := ansi.Truncate(line, x, "")
	if w := ansi.StringWidth(left); w < x {
		left += strings.Repeat(" ", x-w)
	}
	sw := ansi.StringWidth(s)
	right := ansi.TruncateLeft(line, x+sw, "")
	// A wide (CJK) character cut in half leaves the right part one cell
	// off: drop or pad cells until the line is its width again.
	want := max(0, ansi.StringWidth(line)-x-sw)
	for cut := 1; ansi.StringWidth(right) > want && cut <= 2; cut++ {
		right = ansi.TruncateLeft(line, x+sw+cut, "")
	}
	if w := ansi.StringWidth(right); w < want {
		right = strings.Repeat(" ", want-w) + right
	}
	return left + s + right
}

// confirmDialog asks yes or no; yes carries out its action.
type confirmDialog struct {
	c          *Common
	title, msg string
	yes        action
}

func (d *confirmDialog) Kind() dialogKind       { return dlgConfirm }
func (d *confirmDialog) Update(tea.Msg) tea.Cmd { return nil }
func (d *confirmDialog) Bindings(km *KeyMap) []key.Binding {
	return []key.Binding{km.Dialog.Yes, km.Dialog.No, km.Dialog.Close}
}

func (d *confirmDialog) HandleKey(msg tea.KeyMsg, km *KeyMap) (action, tea.Cmd) {
	switch {
	case key.Matches(msg, km.Dialog.Yes):
		return d.yes, nil
	case key.Matches(msg, km.Dialog.No), key.Matches(msg, km.Dialog.Close):
		return actClose{}, nil
	}
	return nil, nil
}

func (d *confirmDialog) View(w, h int) string {
	bw := min(w, max(40, min(70, ansi.StringWidth(d.msg)+6)))
	lines := wrapLines(d.msg, bw-4)
	return d.c.box(d.title, lines, "y yes · n/esc no", bw, len(lines)+4)
}

// helpDialog lists the bindings active right now, computed by the root.
type helpDialog struct {
	c      *Common
	groups []helpGroup
}

type helpGroup struct {
	title string
	keys  []key.Binding
}

func (d *helpDialog) Kind() dialogKind       { return dlgHelp }
func (d *helpDialog) Update(tea.Msg) tea.Cmd { return nil }
func (d *helpDialog) Bindings(km *KeyMap) []key.Binding {
	return []key.Binding{km.Dialog.Close, km.Global.Help}
}

func (d *helpDialog) HandleKey(msg tea.KeyMsg, km *KeyMap) (action, tea.Cmd) {
	if key.Matches(msg, km.Dialog.Close, km.Global.Help, km.Global.Quit) {
		return actClose{}, nil
	}
	return nil, nil
}

func (d *helpDialog) View(w, h int) string {
	s := d.c.Styles
	bw := min(w, 78)
	var lines []string
	for _, g := range d.groups {
		if len(g.keys) == 0 {
			continue
		}
		lines = append(lines, s.Accent.Render(g.title))
		for _, b := range g.keys {
			if !b.Enabled() {
				continue
			}
			hp := b.Help()
			lines = append(lines, "  "+s.Key.Render(padRight(hp.Key, 12))+" "+s.KeyDesc.Render(hp.Desc))
		}
	}
	return d.c.box("Keys active now", lines, "esc/? close", bw, min(h, len(lines)+4))
}
