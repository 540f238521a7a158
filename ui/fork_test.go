package ui

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/modelwire/modelwire/app"
	"github.com/modelwire/modelwire/session"
)

// setupEngine keeps the setup it was asked to run.
type setupEngine struct{ got chan session.Setup }

func (e *setupEngine) Run(_ context.Context, s session.Setup, _ session.Hooks) (*session.Result, error) {
	e.got <- s
	return &session.Result{}, nil
}

// F on a replayed turn opens the fork dialog; an edited tool result that
// is not JSON is named in one line and kept (reopening the editor shows
// it as it was left); a sound one plans the fork from the store and runs
// it live: from turn 3, under its parent, with the result replaced.
func TestForkFromTheReplay(t *testing.T) {
	db, parent, _, _ := recordFixture(t)
	eng := &setupEngine{got: make(chan session.Setup, 1)}
	m := New(Options{Library: app.Library{DB: db}, Backend: &EngineBackend{Engine: eng}, Getenv: func(string) string { return "" }})
	m.Update(tea.WindowSizeMsg{Width: 140, Height: 40})
	for _, msg := range run(m.loadReplay(parent)) {
		m.Update(msg)
	}
	if m.mode != modeReplay {
		t.Fatal("not replaying")
	}
	press(m, "?")
	contains(t, m.View(), "fork from this turn")
	press(m, "esc")
	press(m, "F")
	if m.top() != nil {
		t.Fatalf("F before the first turn opened %T", m.top())
	}
	contains(t, m.View(), "step into a turn first")

	settle(m, press(m, "G")) // the seek runs in a command
	press(m, "F")
	d, ok := m.top().(*forkDialog)
	if !ok {
		t.Fatalf("F on the last turn opened %T, want the fork dialog", m.top())
	}
	contains(t, m.View(), "Fork "+parent+" from turn 3", "no edit", "turn 3's request body", "the result of get_order_line")
	order := -1
	for i, c := range d.choices {
		if strings.Contains(c.label, "get_order_line") {
			order = i
		}
	}
	if order < 0 || !strings.Contains(d.choices[order].original, `"paid_cents": 18000`) {
		t.Fatalf("no order result to edit among %+v", d.choices)
	}

	// The body must stay an object; an edited one is planned as an edit
	// of each request the fork sends.
	if !d.choices[1].body {
		t.Fatalf("the second row is %q, want the body", d.choices[1].label)
	}
	m.Update(forkEditedMsg{gen: d.gen, idx: 1, text: "[1]"})
	if m.top() != d || !strings.Contains(m.status.text, "the edited request body is not a JSON object") {
		t.Fatalf("a body that is not an object: top %T, status %q", m.top(), m.status.text)
	}
	body := strings.Replace(d.choices[1].original, `"store": false`, `"store": true`, 1)
	if body == d.choices[1].original {
		body = strings.Replace(body, "{", `{"temperature": 0.5,`, 1)
	}
	_, cmd := m.Update(forkEditedMsg{gen: d.gen, idx: 1, text: body})
	planned := false
	for _, msg := range run(cmd) {
		if p, ok := msg.(forkPlannedMsg); ok {
			planned = p.err == nil && p.setup.Fork != nil && p.setup.Fork.Edit != nil
		}
	}
	if !planned {
		t.Fatal("the edited body was not planned as an edit of the fork's requests")
	}

	// Broken JSON from the editor: one line naming the problem, the
	// dialog stays, nothing is planned, the text is kept.
	broken := strings.Replace(d.choices[order].original, `"paid_cents": 18000`, `"paid_cents": 20000,,`, 1)
	_, cmd = m.Update(forkEditedMsg{gen: d.gen, idx: order, text: broken})
	for _, msg := range run(cmd) {
		if _, planned := msg.(forkPlannedMsg); planned {
			t.Fatal("a fork was planned from JSON that does not parse")
		}
	}
	if m.top() != d || m.status.level != levelError || !strings.Contains(m.status.text, "is not JSON: invalid character ','") || strings.Contains(m.status.text, "\n") {
		t.Fatalf("after broken JSON: top %T, status %q", m.top(), m.status.text)
	}
	contains(t, m.View(), "(edited)", "get_order_line (call_1_0) is not JSON", "enter edits")
	var file forkFileMsg
	for _, msg := range run(m.do(actForkEdit{gen: d.gen, idx: order})) {
		file, _ = msg.(forkFileMsg)
	}
	b, err := os.ReadFile(file.path)
	os.Remove(file.path)
	if err != nil || strings.TrimSpace(string(b)) != broken {
		t.Fatalf("the editor reopens on %q (%v), want the text as left: %q", b, err, broken)
	}

	// The fixed text: the fork is planned, and runs live.
	fixed := strings.Replace(broken, ",,", "", 1)
	_, cmd = m.Update(forkEditedMsg{gen: d.gen, idx: order, text: fixed})
	var plan forkPlannedMsg
	for _, msg := range run(cmd) {
		if p, ok := msg.(forkPlannedMsg); ok {
			plan = p
		}
	}
	if plan.err != nil || plan.setup.Fork == nil {
		t.Fatalf("planned %+v", plan)
	}
	_, cmd = m.Update(plan)
	if m.mode != modeLive || m.top() != nil || m.d.rc.Parent != parent {
		t.Fatalf("after planning: mode %v, top %T, parent %q", m.mode, m.top(), m.d.rc.Parent)
	}
	for _, msg := range run(cmd) {
		if sm, ok := msg.(scenarioMsg); ok {
			run(m.onScenario(sm))
		}
	}
	s := <-eng.got
	if s.Parent != parent || s.Fork.FromTurn != 3 || s.Scenario == nil || s.Scenario.Name != "refund" || s.Policy != session.PolicyManual {
		t.Errorf("fork setup: parent %q, from turn %d, scenario %v, policy %v", s.Parent, s.Fork.FromTurn, s.Scenario, s.Policy)
	}
	edited := false
	for ref, c := range s.ForkResults {
		edited = edited || ref.Turn < 3 && strings.Contains(c, `"paid_cents":20000`)
	}
	for _, o := range s.Fork.Observed {
		if o.Name == "get_order_line" && !strings.Contains(o.Content, `"paid_cents":20000`) {
			t.Errorf("the fork observes the order as %s", o.Content)
		}
	}
	if !edited || len(s.ForkResults) != 1 {
		t.Errorf("fork results %v, want the order's with paid_cents 20000", s.ForkResults)
	}
}

// The body must stay a JSON object; the message says so.
func TestForkJSONProblem(t *testing.T) {
	for _, c := range []struct {
		text   string
		object bool
		want   string
	}{
		{`{"a":1}`, true, ""},
		{`[1]`, true, "is not a JSON object"},
		{`[1]`, false, ""},
		{"{\n\"a\": 1,\n}", true, "(line 3)"},
		{`{"a":`, true, "is not JSON"},
	} {
		if got := jsonProblem(c.text, c.object); c.want == "" && got != "" || !strings.Contains(got, c.want) {
			t.Errorf("jsonProblem(%q) = %q, want %q", c.text, got, c.want)
		}
	}
}

// The fork's editor opens a tool result (one line of JSON, as it went
// over the wire) indented two spaces; what it saves is checked as before
// and sent compact, one line again. Broken JSON is named in one line,
// with its line, and kept as it was left.
func TestForkEditorOpensIndentedJSON(t *testing.T) {
	db, parent, _, _ := recordFixture(t)
	eng := &setupEngine{got: make(chan session.Setup, 1)}
	m := New(Options{Library: app.Library{DB: db}, Backend: &EngineBackend{Engine: eng}, Getenv: func(string) string { return "" }})
	m.Update(tea.WindowSizeMsg{Width: 140, Height: 40})
	for _, msg := range run(m.loadReplay(parent)) {
		m.Update(msg)
	}
	settle(m, press(m, "G"))
	press(m, "F")
	d, ok := m.top().(*forkDialog)
	if !ok {
		t.Fatalf("F opened %T", m.top())
	}
	order := -1
	for i, c := range d.choices {
		if strings.Contains(c.label, "get_order_line") {
			order = i
		}
	}
	if order < 0 {
		t.Fatalf("no order result among %+v", d.choices)
	}
	var stored string
	for _, tn := range m.d.state.Turns {
		for _, p := range tn.Proposals {
			if p.Result != nil && p.Result.Name == "get_order_line" {
				stored = p.Result.Content
			}
		}
	}
	if strings.Contains(stored, "\n") || !json.Valid([]byte(stored)) {
		t.Fatalf("the stored result is not one line of JSON: %q", stored)
	}
	var want bytes.Buffer
	json.Indent(&want, []byte(stored), "", "  ")

	// The file the editor opens.
	var file forkFileMsg
	for _, msg := range run(m.do(actForkEdit{gen: d.gen, idx: order})) {
		file, _ = msg.(forkFileMsg)
	}
	b, err := os.ReadFile(file.path)
	os.Remove(file.path)
	if err != nil || string(b) != want.String()+"\n" {
		t.Fatalf("the editor opens on %q (%v), want the result indented two spaces:\n%s", b, err, want.String())
	}

	// Broken: one line, its line named; nothing planned; kept as left.
	broken := strings.Replace(want.String(), `"paid_cents": 18000`, `"paid_cents": 20000,,`, 1)
	_, cmd := m.Update(forkEditedMsg{gen: d.gen, idx: order, text: broken})
	for _, msg := range run(cmd) {
		if _, planned := msg.(forkPlannedMsg); planned {
			t.Fatal("a fork was planned from JSON that does not parse")
		}
	}
	line := 1 + strings.Count(broken[:strings.Index(broken, ",,")], "\n")
	if m.status.level != levelError || strings.Contains(m.status.text, "\n") || !strings.Contains(m.status.text, fmt.Sprintf("(line %d)", line)) {
		t.Errorf("status %q, want one line naming line %d", m.status.text, line)
	}
	if d.drafts[order] != broken {
		t.Errorf("the draft is %q, want the text as left", d.drafts[order])
	}

	// Sound: sent compact.
	edited := strings.Replace(want.String(), `"paid_cents": 18000`, `"paid_cents": 20000`, 1)
	var compact bytes.Buffer
	json.Compact(&compact, []byte(edited))
	_, cmd = m.Update(forkEditedMsg{gen: d.gen, idx: order, text: edited})
	var plan forkPlannedMsg
	for _, msg := range run(cmd) {
		if p, ok := msg.(forkPlannedMsg); ok {
			plan = p
		}
	}
	if plan.err != nil || len(plan.setup.ForkResults) != 1 {
		t.Fatalf("planned %+v", plan)
	}
	for _, c := range plan.setup.ForkResults {
		if c != compact.String() {
			t.Errorf("the edited result is sent as %q, want it compact: %q", c, compact.String())
		}
	}
}
