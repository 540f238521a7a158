package ui

import (
	"fmt"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/modelwire/modelwire/session"
)

// notesPanel shows the teaching note of the protocol step the session has
// reached, for the turn it is at (the scenario's notes, the most specific
// of step@turn and step (session.Scenario.Note), markdown rendered
// (markdown.go) once per step, turn, width and theme), and on the last
// step the variant's note.
type notesPanel struct {
	scroller
	c *Common
	d *viewData

	key   notesKey
	lines []string
}

type notesKey struct {
	step    string
	turn    int
	sc      *session.Scenario
	w, gen  int
	paused  bool
	variant string
	why     string // the simulated model's rules for the current turn
}

func newNotesPanel(c *Common, d *viewData) *notesPanel { return &notesPanel{c: c, d: d} }

func (p *notesPanel) HandleKey(msg tea.KeyMsg, km *KeyMap) (bool, tea.Cmd) {
	return p.scrollKey(msg, km, len(p.render())), nil
}

func (p *notesPanel) View() []string { return p.window(p.render()) }

// turn is the turn whose note is shown: the one the panels show (a pause
// arrives after its turn's request, so it is the paused turn), 1 before
// the first request is sent.
func (p *notesPanel) turn() int {
	if t := p.d.turn(); t != nil {
		return t.N
	}
	return 1
}

// step is the step whose note is shown: the paused one, else the last
// one reached.
func (p *notesPanel) step() string {
	if p.d.paused != "" {
		return p.d.paused
	}
	if p.d.state != nil && p.d.state.Step != "" {
		return p.d.state.Step
	}
	return session.StepAssembled
}

func (p *notesPanel) render() []string {
	sc := p.d.scenario
	why := p.d.modelWhy()
	k := notesKey{step: p.step(), turn: p.turn(), sc: sc, w: p.w, gen: p.c.Gen, paused: p.d.paused != "", variant: p.d.rc.Variant, why: strings.Join(why, "\n")}
	if k == p.key && p.lines != nil {
		return p.lines
	}
	s := p.c.Styles
	var lines []string
	switch {
	case p.d.paused != "":
		lines = append(lines, s.Accent.Render("⏸ paused at "+p.d.paused)+s.Muted.Render(" — n: next step"))
	case p.d.replay:
		lines = append(lines, s.Muted.Render("replay · step "+k.step))
	case !p.d.rc.StepMode:
		lines = append(lines, s.Muted.Render("free-running · step "+k.step))
	}
	if sc == nil {
		lines = append(lines, s.Muted.Render("no notes (the scenario is not known)"))
	} else {
		md := sc.Note(k.step, k.turn)
		if v, ok := sc.Variants[sc.Variant]; ok && k.step == session.StepAssembled && len(v.Edits) > 0 {
			md += "\n\n**Variant `" + sc.Variant + "` edits the prompt** (the rest is the passing case's):\n"
			for _, e := range v.Edits {
				md += "\n- " + e.String()
			}
		}
		if k.step == session.StepValidated && sc.Variant != "" {
			if v, ok := sc.Variants[sc.Variant]; ok && v.Note != "" {
				md += "\n\n**Variant `" + sc.Variant + "`** — " + v.Note
			}
		}
		if md == "" {
			lines = append(lines, s.Muted.Render("no note for this step"))
		} else {
			lines = append(lines, p.c.markdown(md, p.w)...)
		}
	}
	if len(why) > 0 {
		lines = append(lines, "")
		lines = append(lines, p.c.markdown(whyNote(k.turn, why), p.w)...)
	}
	p.key, p.lines = k, lines
	return lines
}

// whyNote lists the simulated model's rules for a turn as markdown: which
// words of the request made it answer so.
func whyNote(turn int, why []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "**Why the simulated model answered so** (turn %d, header `X-Modelwire-Why`):\n\n", turn)
	for _, l := range why {
		rule, text, _ := strings.Cut(l, ": ")
		fmt.Fprintf(&b, "- `%s`: %s\n", rule, text)
	}
	return b.String()
}
