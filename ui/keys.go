package ui

import (
	"github.com/charmbracelet/bubbles/key"
)

// KeyMap holds every binding, grouped by area. The contract's keys
// (shared/spec/contract.md, "TUI keys") are the defaults and the
// acceptance checks drive them; help is computed from the bindings that are
// active in the current state, so it cannot drift from them.
type KeyMap struct {
	Global   GlobalKeys
	Nav      NavKeys
	Approval ApprovalKeys
	Replay   ReplayKeys
	Dialog   DialogKeys
	Inspect  InspectKeys
	Values   ValuesKeys
}

// ValuesKeys move between the parts of the values view (valuesview.go).
type ValuesKeys struct {
	NextSection, PrevSection key.Binding
	// Section jumps to the part its digit numbers.
	Section key.Binding
}

// InspectKeys work in the inspector.
type InspectKeys struct {
	Next, Prev, Fold, Copy, CopyCurl key.Binding
}

// GlobalKeys work wherever no dialog takes the key first.
type GlobalKeys struct {
	Help, Quit, ForceQuit, NextPanel, PrevPanel key.Binding
	Step, Wire, Compare, Sessions, Options      key.Binding
	Theme, Live, Zoom, Inspect, Teach           key.Binding
	// Values opens the values view: tool calls, answer, checks, facts.
	Values key.Binding
	// Changes shows what the request on screen adds to the one before
	// it (changes.go).
	Changes key.Binding
}

// NavKeys move inside the focused panel.
type NavKeys struct {
	Up, Down, PageUp, PageDown, Top, Bottom, Select key.Binding
}

// ApprovalKeys decide a tool proposal.
type ApprovalKeys struct {
	Approve, Edit, Reject, ApproveAll, Confirm key.Binding
}

// ReplayKeys drive the replay cursor.
type ReplayKeys struct {
	Forward, Back, NextTurn, PrevTurn, Start, End, Play, Speed, Faster, Slower key.Binding
	// Fork sends the session again from the current turn (fork.go).
	Fork key.Binding
}

// DialogKeys are shared by the dialogs.
type DialogKeys struct {
	Close, Accept, Yes, No, Left, Right, Toggle, Filter, Sort, Reverse, Delete, Export key.Binding
	// Mark and Diff: the sessions list compares two sessions.
	Mark, Diff key.Binding
	// Replay opens the selected session (the sessions list).
	Replay key.Binding
	// Matrix opens the check matrix from the sessions list (matrix.go);
	// Pair compares the cursor's cell's recording and child there.
	Matrix, Pair key.Binding
	// Stats opens the stats view from the sessions list (stats.go).
	Stats key.Binding
}

// DefaultKeyMap is the contract's key map.
func DefaultKeyMap() KeyMap {
	b := func(help, desc string, keys ...string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(help, desc))
	}
	return KeyMap{
		Global: GlobalKeys{
			Help:      b("?", "help", "?"),
			Quit:      b("q", "quit", "q"),
			ForceQuit: b("ctrl+c", "quit now", "ctrl+c"),
			NextPanel: b("tab", "next panel", "tab"),
			PrevPanel: b("shift+tab", "previous panel", "shift+tab"),
			Step:      b("n", "next step", "n"),
			Wire:      b("w", "wire request", "w"),
			Compare:   b("c", "compare protocols", "c"),
			Sessions:  b("s", "sessions", "s"),
			Options:   b("o", "options", "o"),
			Theme:     b("t", "theme", "t"),
			Live:      b("L", "back to live", "L"),
			Zoom:      b("z", "zoom panel", "z"),
			Inspect:   b("i", "inspect", "i"),
			Teach:     b("E", "explain the selection", "E"),
			Values:    b("v", "values", "v"),
			Changes:   b("d", "what this request adds to the last", "d"),
		},
		Nav: NavKeys{
			Up:       b("↑/k", "up", "up", "k"),
			Down:     b("↓/j", "down", "down", "j"),
			PageUp:   b("pgup", "page up", "pgup", "ctrl+u"),
			PageDown: b("pgdn", "page down", "pgdown", "ctrl+d"),
			Top:      b("home", "top", "home"),
			Bottom:   b("end", "bottom", "end"),
			Select:   b("enter", "select / edit source", "enter"),
		},
		Approval: ApprovalKeys{
			Approve:    b("a", "approve", "a"),
			Edit:       b("e", "edit arguments", "e"),
			Reject:     b("r", "reject", "r"),
			ApproveAll: b("A", "approve all", "A"),
			Confirm:    b("ctrl+s", "confirm", "ctrl+s"),
		},
		Replay: ReplayKeys{
			Forward:  b("→/l", "step forward", "right", "l"),
			Back:     b("←/h", "step back", "left", "h"),
			NextTurn: b("]", "next turn", "]"),
			PrevTurn: b("[", "previous turn", "["),
			Start:    b("g", "start", "g"),
			End:      b("G", "end", "G"),
			Play:     b("space", "play/pause", " ", "space"),
			Speed:    b("x", "next speed", "x"),
			Faster:   b("+", "faster (up to ×16)", "+", "="),
			Slower:   b("-", "slower (down to ×0.25)", "-"),
			Fork:     b("F", "fork from this turn", "F"),
		},
		Inspect: InspectKeys{
			Next:     b("n", "next match", "n"),
			Prev:     b("N", "previous match", "N"),
			Fold:     b("f", "fold deeper levels", "f"),
			Copy:     b("y", "copy JSON", "y"),
			CopyCurl: b("Y", "copy as curl", "Y"),
		},
		Values: ValuesKeys{
			NextSection: b("tab", "next part", "tab"),
			PrevSection: b("shift+tab", "previous part", "shift+tab"),
			Section:     b("1–4", "go to part", "1", "2", "3", "4"),
		},
		Dialog: DialogKeys{
			Close:   b("esc", "close", "esc"),
			Accept:  b("enter", "apply", "enter"),
			Yes:     b("y", "yes", "y"),
			No:      b("n", "no", "n"),
			Left:    b("←", "previous value", "left", "h"),
			Right:   b("→", "next value", "right", "l"),
			Toggle:  b("space", "toggle", " ", "space"),
			Filter:  b("/", "search", "/"),
			Sort:    b("S", "sort by next column", "S"),
			Reverse: b("R", "reverse the order", "R"),
			Delete:  b("d", "delete", "d"),
			Export:  b("x", "export", "x"),
			Mark:    b("m", "mark for diff", "m"),
			Diff:    b("D", "diff the two marked (or a fork and its parent)", "D"),
			Replay:  b("enter", "replay", "enter"),
			Matrix:  b("M", "check matrix", "M"),
			Pair:    b("enter", "pair side by side", "enter"),
			Stats:   b("%", "stats across sessions", "%"),
		},
	}
}
