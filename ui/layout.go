package ui

// rect is a region of the screen in cells.
type rect struct{ x, y, w, h int }

// layoutT is every rectangle of the screen, computed in one place
// (layout) on resize and when something that takes room toggles.
type layoutT struct {
	w, h int
	// tabs: the terminal is too small for side-by-side panels; one panel
	// shows at a time under a tab bar.
	tabs bool
	// zoom: the focused panel alone fills the body.
	zoom     bool
	header   rect
	timeline rect // replay only (h 0 otherwise)
	tabBar   rect
	body     rect
	footer   rect
	panels   [numPanels]rect
}

// Thresholds for the side-by-side layout.
const (
	wideMinW = 110
	wideMinH = 30
)

// layout computes the rectangles for a w×h terminal. The column of the
// emphasised panel (the focused one, which follows the step) gets the
// most room; zoom gives the whole body to it.
func layout(w, h int, replay bool, emphasis panelID, zoom bool) layoutT {
	l := layoutT{w: w, h: h, zoom: zoom}
	y := 0
	l.header = rect{0, y, w, 1}
	y++
	if replay {
		l.timeline = rect{0, y, w, 1}
		y++
	}
	footerH := 2
	l.footer = rect{0, h - footerH, w, footerH}
	l.tabs = w < wideMinW || h < wideMinH
	if zoom {
		l.tabs = false
		l.body = rect{0, y, w, max(3, h-footerH-y)}
		for i := range l.panels {
			l.panels[i] = l.body
		}
		return l
	}
	if l.tabs {
		l.tabBar = rect{0, y, w, 1}
		y++
		l.body = rect{0, y, w, max(3, h-footerH-y)}
		for i := range l.panels {
			l.panels[i] = l.body
		}
		return l
	}
	l.body = rect{0, y, w, max(3, h-footerH-y)}
	b := l.body
	// Three columns: assembly over notes | stream over events | validation;
	// the emphasised panel's column is the widest.
	leftPct, rightPct := 30, 26
	switch emphasis {
	case panelAssembly, panelNotes:
		leftPct = 46
	case panelValidation:
		leftPct, rightPct = 22, 46
	default:
		leftPct = 24
	}
	leftW := b.w * leftPct / 100
	rightW := b.w * rightPct / 100
	midW := b.w - leftW - rightW
	topH := b.h * 58 / 100
	botH := b.h - topH
	l.panels[panelAssembly] = rect{b.x, b.y, leftW, topH}
	l.panels[panelNotes] = rect{b.x, b.y + topH, leftW, botH}
	l.panels[panelStream] = rect{b.x + leftW, b.y, midW, topH}
	l.panels[panelLog] = rect{b.x + leftW, b.y + topH, midW, botH}
	l.panels[panelValidation] = rect{b.x + leftW + midW, b.y, rightW, b.h}
	return l
}
