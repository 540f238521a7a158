package ui

import (
	"encoding/json"
	"fmt"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/session"
)

// streamPanel shows the current turn's attempts and one lane per output
// item (message, reasoning, refusal, and one per tool call_id), filled as
// deltas arrive.
//
// Rendering cost: each lane's body is cached by (width, lane version,
// theme). A finished lane never changes version again, so its markdown or
// highlighting runs once and is then frozen; per frame only the lanes
// that are still streaming are rendered, and those only from the tail of
// their text. That keeps a frame's cost independent of how much has
// already streamed (mods' appendToOutput re-rendered everything per
// token, the documented failure this avoids).
type streamPanel struct {
	scroller
	c     *Common
	d     *viewData
	cache map[*session.Lane]*laneRender
	// turn the cache belongs to: a new turn (or a new state) drops it.
	cacheTurn *session.TurnState
	// hlLine is the line of the highlighted lane's header in the last
	// layout; lastHL the highlight the view last scrolled to.
	hlLine int
	lastHL string
}

type laneRender struct {
	w, version, gen int
	lines           []string
}

func newStreamPanel(c *Common, d *viewData) *streamPanel {
	p := &streamPanel{c: c, d: d, cache: map[*session.Lane]*laneRender{}}
	p.follow = true
	return p
}

func (p *streamPanel) HandleKey(msg tea.KeyMsg, km *KeyMap) (bool, tea.Cmd) {
	return p.scrollKey(msg, km, p.totalLines()), nil
}

func (p *streamPanel) totalLines() int { return len(p.lines()) }

func (p *streamPanel) View() []string {
	lines := p.lines()
	// A new highlight from the event log scrolls its lane into view.
	if p.d.laneHL != p.lastHL {
		p.lastHL = p.d.laneHL
		if p.d.laneHL != "" && p.hlLine >= 0 {
			p.off, p.follow = p.hlLine, false
		} else if p.d.laneHL == "" {
			p.follow = true
		}
	}
	return p.window(lines)
}

// streamTail bounds how much of a streaming lane's text is laid out per
// frame: enough to fill any panel, never the whole stream.
const streamTail = 4096

func (p *streamPanel) lines() []string {
	s := p.c.Styles
	t := p.d.turn()
	if t == nil {
		return []string{s.Muted.Render("no response yet")}
	}
	if t != p.cacheTurn {
		clear(p.cache)
		p.cacheTurn = t
	}
	var out []string
	if t.Continues {
		out = append(out, cut(s.Info.Render(fmt.Sprintf("continues turn %d: pause_turn — the paused content was sent back unchanged", t.N-1)), p.w))
	}
	if g := t.Regenerates; g != nil {
		out = append(out, cut(s.Warn.Render(fmt.Sprintf("regeneration of turn %d's answer (%s failed)", t.N-1, g.Layer)), p.w))
	}
	limited := false
	for _, a := range t.Attempts {
		out = append(out, cut(p.attemptLine(t, a), p.w))
		if len(a.RateLimits) > 0 {
			out = append(out, cut("  "+s.Muted.Render(strings.Join(a.RateLimits, " · ")), p.w))
			limited = true
		}
	}
	if limited {
		if c := capacityText(p.d.state, t, p.d.rc.Protocol); c != "" {
			out = append(out, styleLines(s.Muted, hang("  ", c, 4, p.w))...)
		}
	}
	out = append(out, p.c.carriedHereLines(t, 0, p.w)...)
	if n := len(t.Attempts); len(t.Lanes) == 0 && n > 0 && t.Attempts[n-1].HTTPStatus/100 == 2 && t.Terminal == nil {
		// Waiting until the attempt's first event, whatever it is (a
		// response.created opens no lane).
		if hasEvents(t, t.Attempts[n-1].N) {
			out = append(out, s.Muted.Render("no output item yet"))
		} else {
			out = append(out, s.Muted.Render("waiting for the first event…"))
		}
	}
	p.hlLine = -1
	for _, l := range t.Lanes {
		if l.ItemID == p.d.laneHL {
			p.hlLine = len(out)
		}
		out = append(out, p.header(l))
		out = append(out, p.body(l)...)
		if l.Kind == adapters.KindToolCall {
			out = append(out, p.decision(t, l)...)
		}
	}
	if t.Terminal != nil {
		out = append(out, cut(s.Muted.Render("terminal ")+p.terminal(t.Terminal), p.w))
	}
	return out
}

// hasEvents reports whether attempt n of turn t has had an event.
func hasEvents(t *session.TurnState, n int) bool {
	for i := len(t.Log) - 1; i >= 0; i-- {
		if t.Log[i].Attempt == n {
			return true
		}
	}
	return false
}

func (p *streamPanel) attemptLine(t *session.TurnState, a session.AttemptState) string {
	s := p.c.Styles
	line := s.Muted.Render(fmt.Sprintf("turn %d · attempt %d · ", t.N, a.N))
	switch {
	case a.Err != "" && a.HTTPStatus != 0:
		line += s.Warn.Render(fmt.Sprintf("HTTP %d", a.HTTPStatus)) + " " + a.Err
	case a.Err != "":
		line += s.Bad.Render(a.Err)
	case a.HTTPStatus >= 400:
		line += s.Bad.Render(fmt.Sprintf("HTTP %d", a.HTTPStatus))
	case a.HTTPStatus != 0:
		line += s.Good.Render(fmt.Sprintf("HTTP %d", a.HTTPStatus))
	default:
		line += s.Muted.Render("sending…")
	}
	return line
}

func (p *streamPanel) terminal(ev *adapters.Event) string {
	s := p.c.Styles
	st := s.Good
	if ev.Status != adapters.StatusCompleted {
		st = s.Bad
	}
	out := st.Render(string(ev.Status)) + " / " + string(ev.StopReason)
	if ev.ProviderStopReason != "" {
		out += s.Muted.Render(" (" + ev.ProviderStopReason + ")")
	}
	return out
}

// header is a lane's one-line summary: kind, ids, state, bytes, timing.
func (p *streamPanel) header(l *session.Lane) string {
	s := p.c.Styles
	mark := s.Kind(string(l.Kind)).Render("▌")
	if p.d.laneHL != "" && p.d.laneHL == l.ItemID {
		mark = s.Highlight.Render("◆")
	}
	id := l.ItemID
	if l.CallID != "" && l.CallID != l.ItemID {
		id += " · " + l.CallID
	}
	parts := []string{mark + s.Kind(string(l.Kind)).Render(string(l.Kind))}
	if l.Name != "" {
		parts = append(parts, s.Bold.Render(l.Name))
	}
	parts = append(parts, s.State(string(l.State)).Render(string(l.State)))
	timing := fmt.Sprintf("%d B · %d %s · %s", l.Len(), l.Deltas, p.c.mark("Δ", "d"), msText(l.StartMS))
	if l.Finished() && l.DoneMS > 0 {
		timing += "→" + msText(l.DoneMS)
	}
	head := strings.Join(parts, " ") + " " + s.Muted.Render(timing)
	return cut(head+" "+s.Subtle.Render(id), p.w)
}

func msText(v float64) string {
	if v >= 1000 {
		return fmt.Sprintf("%.2fs", v/1000)
	}
	return fmt.Sprintf("%.0fms", v)
}

// body renders a lane's content, from the cache when nothing changed.
func (p *streamPanel) body(l *session.Lane) []string {
	if r := p.cache[l]; r != nil && r.w == p.w && r.version == l.Version && r.gen == p.c.Gen {
		return r.lines
	}
	lines := p.renderBody(l)
	p.cache[l] = &laneRender{w: p.w, version: l.Version, gen: p.c.Gen, lines: lines}
	return lines
}

func (p *streamPanel) renderBody(l *session.Lane) []string {
	s := p.c.Styles
	w := max(1, p.w-2)
	indent := func(lines []string) []string {
		for i := range lines {
			lines[i] = "  " + lines[i]
		}
		return lines
	}
	text := l.Text()
	if !l.Finished() && len(text) > streamTail {
		text = "…" + tailRunes(text, streamTail)
	}
	switch l.Kind {
	case adapters.KindToolCall:
		switch l.State {
		case adapters.ItemParsed:
			return indent(p.c.highlightJSON(l.Arguments, w))
		case adapters.ItemStreaming:
			return indent(styleLines(s.Info, wrapJSON(text, w)))
		case adapters.ItemInvalid:
			return indent(append(styleLines(s.Bad, wrapJSON(text, w)), s.Bad.Render("arguments are not a JSON object: nothing can run")))
		case adapters.ItemIncomplete:
			return indent(append(styleLines(s.Warn, wrapJSON(text, w)), s.Warn.Render("never closed: can never run")))
		}
		return indent(wrapJSON(text, w))
	case adapters.KindReasoning:
		if l.Finished() {
			// Models write their reasoning in markdown too.
			return indent(p.c.markdown(text, w))
		}
		return indent(styleLines(s.Muted, wrapLines(text, w)))
	case adapters.KindRefusal:
		return indent(styleLines(s.Bad, wrapLines(text, w)))
	}
	if !l.Finished() {
		return indent(wrapLines(text, w))
	}
	// A closed message: JSON is highlighted, anything else is markdown.
	if t := strings.TrimSpace(text); strings.HasPrefix(t, "{") && json.Valid([]byte(t)) {
		return indent(p.c.highlightJSON([]byte(t), w))
	}
	return indent(p.c.markdown(text, w))
}

// tailRunes returns about the last n bytes of s, cut at a rune boundary.
func tailRunes(s string, n int) string {
	i := len(s) - n
	for i < len(s) && i > 0 && s[i]&0xC0 == 0x80 {
		i++
	}
	return s[i:]
}

// decision shows what became of a tool call: waiting, approved, edited or
// rejected, and the result sent back.
func (p *streamPanel) decision(t *session.TurnState, l *session.Lane) []string {
	s := p.c.Styles
	var ps *session.ProposalState
	for _, x := range t.Proposals {
		if x.Proposal.CallID == l.CallID {
			ps = x
		}
	}
	if ps == nil {
		return nil
	}
	var out []string
	pr := ps.Proposal
	if !pr.Known {
		out = append(out, "  "+s.Bad.Render("unknown tool: "+pr.Name))
	}
	for _, v := range pr.Violations {
		out = append(out, cut("  "+s.Bad.Render("schema: ")+v.String(), p.w))
	}
	switch {
	case ps.Decision == nil:
		all := ""
		if pr.Valid() {
			all = "A all"
		}
		out = append(out, "  "+s.Warn.Render("⏳ waiting for a decision")+s.Muted.Render(" — "+decisionKeys(pr, all)))
	default:
		d := ps.Decision
		line := ""
		switch d.Kind {
		case session.Approved:
			line = s.Good.Render("✓ approved")
		case session.Edited:
			out = append(out, p.edited(t, ps)...)
		default:
			line = s.Bad.Render("✗ rejected")
			if d.Reason != "" {
				line += ": " + oneLine(d.Reason)
			}
		}
		if d.Kind != session.Edited {
			if d.By != "" {
				line += s.Muted.Render(" by " + d.By)
			}
			out = append(out, cut("  "+line, p.w))
		}
	}
	if r := ps.Result; r != nil {
		tag := s.Muted.Render("↳ result ")
		if r.IsError {
			tag = s.Bad.Render("↳ error result ")
		}
		out = append(out, cut("  "+tag+oneLine(r.Content), p.w))
	}
	return out
}

// edited shows an edited call: who edited it, then the model's arguments
// beside the edited ones when the panel has room for two columns — else
// the edited ones under a label (the lane above holds the model's, as
// streamed) — and whether the next request carried the call back edited.
func (p *streamPanel) edited(t *session.TurnState, ps *session.ProposalState) []string {
	c, s := p.c, p.c.Styles
	line, rest := c.editedBy(ps.Decision)
	if rest != "" {
		line += s.Muted.Render(": " + oneLine(rest))
	}
	out := []string{cut("  "+line, p.w)}
	if (p.w-5)/2 >= pairMinCol {
		out = append(out, c.pairLines("as the model proposed", "as edited (what the application got)", c.jsonLines, ps.Proposal.Arguments, ps.Decision.Arguments, 2, p.w)...)
	} else {
		out = append(out, "  "+s.Warn.Render("edited to (what the application got; the model's is above):"))
		out = append(out, indentLines(c.jsonLines(ps.Decision.Arguments, max(1, p.w-4)), "    ")...)
	}
	return append(out, c.carriedLines(p.d.state, t.N, ps.Proposal.CallID, 2, p.w)...)
}
