package ui

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/tidwall/gjson"
)

func inspected(t *testing.T) (*Model, *[]string) {
	t.Helper()
	m := newLive(t, 200, 60)
	m.Update(updatesMsg{gen: m.gen, ups: scriptedSession(t, m.d.scenario, m.d.rc)})
	var copied []string
	m.opts.Clipboard = func(s string) error { copied = append(copied, s); return nil }
	return m, &copied
}

// i on the event log opens the selected event: its raw wire JSON beside
// its canonical events; / finds text and jumps to it; f folds; y copies
// the raw JSON; esc closes.
func TestInspectorShowsAnEventRawAndCanonical(t *testing.T) {
	m, copied := inspected(t)
	m.setFocus(panelLog)
	press(m, "i")
	d, ok := m.top().(*inspectorDialog)
	if !ok {
		t.Fatalf("i opened %T", m.top())
	}
	s := m.View()
	contains(t, s, "Inspect · event", "raw (as on the wire)", "canonical (modelwire)", `"type"`)
	checkFrame(t, s, 200, 60)

	press(m, "/")
	for _, r := range "usage" {
		press(m, string(r))
	}
	press(m, "enter")
	if len(d.matches) == 0 {
		t.Fatalf("no line matches usage:\n%s", m.View())
	}
	contains(t, m.View(), `1 line matching "usage"`, "▶")

	before := len(d.lines)
	press(m, "f")
	d.render(90)
	if len(d.lines) > before || !strings.Contains(m.View(), "…") {
		t.Errorf("f did not fold (%d lines, was %d):\n%s", len(d.lines), before, m.View())
	}

	for _, msg := range run(press(m, "y")) {
		m.Update(msg)
	}
	if len(*copied) != 1 || !json.Valid([]byte((*copied)[0])) {
		t.Fatalf("y copied %q", *copied)
	}
	press(m, "esc")
	if m.top() != nil {
		t.Error("esc did not close the inspector")
	}
}

// On the assembly panel the inspector holds the request; Y copies it as a
// curl command whose key comes from the environment, never the key
// itself.
func TestInspectorCopiesTheRequestAsCurl(t *testing.T) {
	m, copied := inspected(t)
	m.setFocus(panelAssembly)
	press(m, "i")
	contains(t, m.View(), "Inspect · request", `"model"`, `"source"`)
	for _, msg := range run(press(m, "Y")) {
		m.Update(msg)
	}
	if len(*copied) != 1 {
		t.Fatalf("Y copied %d texts", len(*copied))
	}
	curl := (*copied)[0]
	for _, want := range []string{"curl -sN -X POST '", "/v1/responses'", "authorization: Bearer $OPENAI_API_KEY", `-d '{"model"`} {
		if !strings.Contains(curl, want) {
			t.Errorf("the curl lacks %q:\n%s", want, curl)
		}
	}
	if strings.Contains(curl, "redacted") || strings.Contains(curl, "sim-key") {
		t.Errorf("the curl carries a key or a placeholder:\n%s", curl)
	}
}

// Folding keeps the key order and counts what it hides.
func TestFoldJSON(t *testing.T) {
	raw := `{"b":1,"a":{"x":[1,2,3],"y":{}},"c":"三"}`
	if got := foldJSON(gjsonParse(raw), 1); got != "{\n  \"b\": 1,\n  \"a\": {…2},\n  \"c\": \"三\"\n}" {
		t.Errorf("fold 1:\n%s", got)
	}
	if got := foldJSON(gjsonParse(raw), 0); !strings.Contains(got, "\"x\": [\n      1,") {
		t.Errorf("open:\n%s", got)
	}
}

func gjsonParse(s string) gjson.Result { return gjson.Parse(s) }

// A dialog covers its whole rectangle and a cell of margin around it:
// the inspector, one cell narrower than the screen, shows no border of
// the panels beneath at its edges (it showed them at its left edge), nor
// does a small dialog beside its box.
func TestOverlayCoversItsRectangle(t *testing.T) {
	covered := func(t *testing.T, m *Model, what string) {
		t.Helper()
		bodyH := m.lay.body.h + m.lay.tabBar.h
		top := 1 + m.lay.timeline.h
		screen := strings.Split(screenText(m.View()), "\n")
		box := strings.Split(screenText(m.top().View(m.w-2, bodyH)), "\n")
		bw := 0
		for _, l := range box {
			bw = max(bw, ansi.StringWidth(l))
		}
		x, y := max(0, (m.w-bw)/2), top+max(0, (bodyH-len(box))/2)
		for row := max(top, y-1); row < min(top+bodyH, y+len(box)+1); row++ {
			want := strings.Repeat(" ", bw)
			if row >= y && row < y+len(box) {
				want = fit(box[row-y], bw)
			}
			if x > 0 {
				want = " " + want
			}
			if x+bw < m.w {
				want += " "
			}
			if got := ansi.Cut(screen[row], max(0, x-1), min(m.w, x+bw+1)); got != want {
				t.Fatalf("%s at %dx%d, row %d: %q, want %q:\n%s", what, m.w, m.h, row, got, want, strings.Join(screen, "\n"))
			}
		}
	}
	for _, size := range [][2]int{{80, 24}, {120, 36}} {
		m := newLive(t, size[0], size[1])
		m.Update(updatesMsg{gen: m.gen, ups: scriptedSession(t, m.d.scenario, m.d.rc)})
		m.setFocus(panelLog)
		press(m, "i")
		covered(t, m, "the inspector")
		press(m, "esc")
		press(m, "q") // the session runs: a confirmation
		if m.top() == nil {
			t.Fatal("q while running asked nothing")
		}
		covered(t, m, "the confirmation")
	}
}
