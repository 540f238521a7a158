package ui

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/modelwire/modelwire/app"
	"github.com/modelwire/modelwire/session"
)

// uiGlyphs are the runes beyond ASCII in the strings the workbench's
// code draws (ui/ and themes/, tests aside), each with where it is: the
// glyphs ASCII mode must replace. Comments are not read.
func uiGlyphs(t *testing.T) map[rune]string {
	t.Helper()
	out := map[rune]string{}
	for _, dir := range []string{".", filepath.Join("..", "themes")} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			fs := token.NewFileSet()
			af, err := parser.ParseFile(fs, f, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(af, func(n ast.Node) bool {
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING && lit.Kind != token.CHAR {
					return true
				}
				v := lit.Value
				if lit.Kind == token.STRING {
					v, _ = strconv.Unquote(v)
				}
				for _, r := range v {
					if r > unicode.MaxASCII && out[r] == "" {
						out[r] = fs.Position(lit.Pos()).String()
					}
				}
				return true
			})
		}
	}
	return out
}

// Every symbol the workbench's code draws has an ASCII fold of the same
// width. Letters used as marks (Δ) are chosen in the code instead
// (Common.mark), so that a person's Greek stays Greek; the screens test
// below catches one that is not.
func TestASCIIFoldsEveryGlyph(t *testing.T) {
	for r, where := range uiGlyphs(t) {
		if unicode.IsLetter(r) {
			continue
		}
		g := string(r)
		f := asciiFrame(g)
		for _, x := range f {
			if x > unicode.MaxASCII {
				t.Errorf("%q (%s) has no ASCII fold", g, where)
				break
			}
		}
		if ansi.StringWidth(f) != ansi.StringWidth(g) {
			t.Errorf("%q (%s) folds to %q: %d cells for %d", g, where, f, ansi.StringWidth(f), ansi.StringWidth(g))
		}
	}
}

// contentRunes are the runes beyond ASCII in what the session itself
// holds (the scenario's sources, notes and script, the requests, events
// and results): the person's text, which ASCII mode leaves alone.
func contentRunes(t *testing.T, vs ...any) map[rune]bool {
	t.Helper()
	out := map[rune]bool{}
	for _, v := range vs {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range string(b) {
			if r > unicode.MaxASCII {
				out[r] = true
			}
		}
	}
	return out
}

// TestASCIIModeDrawsOnlyASCII renders the workbench's views in ASCII
// mode — the held request with its notes and teaching line, options,
// compare, help, a streaming lane, a proposal waiting, an edited call
// and its result, the validation, the wire request, the inspector, the
// sessions list with a fork, the replay with its scrubber and help, the
// fork dialog and the diff — at 80×24 and 120×36: every rune on screen is
// ASCII or the session's own text; never a glyph of the code's.
func TestASCIIModeDrawsOnlyASCII(t *testing.T) {
	glyphs := uiGlyphs(t)
	db, parent, ups, sc := recordFixture(t)
	fork := recordEditedOrder(t, db, sc, ups, parent)
	content := contentRunes(t, sc, ups)
	for _, size := range [][2]int{{80, 24}, {120, 36}} {
		w, h := size[0], size[1]
		check := func(what, screen string) {
			t.Helper()
			plain := screenText(screen)
			for _, r := range plain {
				if r <= unicode.MaxASCII {
					continue
				}
				if where := glyphs[r]; where != "" || !content[r] {
					t.Errorf("%dx%d %s: ASCII mode drew %q (%s):\n%s", w, h, what, r, where, plain)
					return
				}
			}
			checkFrame(t, screen, w, h)
		}
		newModel := func(opts Options) *Model {
			opts.ASCII, opts.Getenv = true, func(string) string { return "" }
			m := New(opts)
			m.Update(tea.WindowSizeMsg{Width: w, Height: h})
			return m
		}

		// Live: the walkthrough held at its first request.
		m := newModel(Options{Backend: &fakeBackend{}})
		m.Update(m.Init()())
		check("assembled", m.View())
		m.setFocus(panelNotes)
		check("notes", m.View())
		m.setFocus(panelAssembly)
		press(m, "E")
		check("teaching", m.View())
		press(m, "E")
		for _, k := range []string{"o", "c", "?"} {
			press(m, k)
			check("dialog "+k, m.View())
			press(m, "esc")
		}
		press(m, "n")
		script := scriptedSession(t, m.d.scenario, m.d.rc)
		m.Update(updatesMsg{gen: m.gen, ups: script[:20]})
		m.setFocus(panelStream)
		check("streaming", m.View())
		m = newModel(Options{Backend: &fakeBackend{}})
		m.Update(m.Init()())
		press(m, "n")
		for i, u := range script {
			if u.Kind == session.UpProposal {
				m.Update(updatesMsg{gen: m.gen, ups: script[:i+1]})
				ask(m, *u.Proposal)
				break
			}
		}
		check("approval", m.View())
		contains(t, m.View(), ".. decide")
		press(m, "esc") // later: the lane waits for the decision
		check("waiting", m.View())

		// An edited call and an error result, then the whole session.
		m = newModel(Options{Backend: &fakeBackend{}})
		m.Update(m.Init()())
		press(m, "n")
		edited := append([]session.Update(nil), script...)
		for i, u := range edited {
			switch {
			case u.Kind == session.UpDecision && u.Turn == 1:
				d := session.Decision{Kind: session.Edited, Arguments: json.RawMessage(`{"order_id":"O-2048","line_id":"L2"}`), By: "person"}
				edited[i].Decision = &d
			case u.Kind == session.UpResult && u.Turn == 1:
				r := *u.Result
				r.IsError = true
				edited[i].Result = &r
			}
		}
		end1 := 0
		for i, u := range edited {
			if u.Turn == 2 {
				end1 = i
				break
			}
		}
		m.Update(updatesMsg{gen: m.gen, ups: edited[:end1]})
		m.setFocus(panelStream)
		check("decided", m.View())
		contains(t, m.View(), "/ edited", `\ error result`, "|tool_call")
		m.Update(updatesMsg{gen: m.gen, ups: edited[end1:]})
		m.Update(pauseMsg{gen: m.gen, step: session.StepValidated, reply: make(chan struct{}, 1)})
		check("validated", m.View())
		press(m, "w")
		check("wire", m.View())
		press(m, "w")
		m.setFocus(panelLog)
		press(m, "i")
		check("inspector", m.View())
		press(m, "esc")

		// The store: the sessions list, a replay, the fork dialog, a diff.
		m = newModel(Options{Library: app.Library{DB: db}, Backend: &fakeBackend{}})
		for _, msg := range run(press(m, "s")) {
			m.Update(msg)
		}
		check("sessions", m.View())
		contains(t, m.View(), `\ `+fork)
		list := m.top().(*sessionsDialog)
		for i, s := range list.visible() {
			if s.ID == fork {
				list.sel = i
			}
		}
		isDiff := func(msg tea.Msg) bool { _, ok := msg.(diffMsg); return ok }
		for _, msg := range runUntil(press(m, "D"), isDiff, 30*time.Second) {
			if isDiff(msg) {
				m.Update(msg)
			}
		}
		check("diff", m.View())
		m.dialogs = nil
		for _, msg := range run(m.loadReplay(parent)) {
			m.Update(msg)
		}
		check("replay", m.View())
		contains(t, m.View(), "# x1")
		press(m, "?")
		check("replay help", m.View())
		press(m, "esc")
		settle(m, press(m, "G"))
		check("replay end", m.View())
		press(m, "F")
		check("fork", m.View())
	}
}
