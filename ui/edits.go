package ui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/modelwire/modelwire/diff"
	"github.com/modelwire/modelwire/session"
)

// How the workbench shows a proxy's edits (session/edits.go names what
// they are recorded as). An edited tool call shows the model's arguments
// and the edited ones side by side — two columns when the room is wide
// enough, one above the other with a label each when it is not (80
// columns) — with who edited it and, once the application's next request
// carried the call back in its history, whether it came back edited or as
// the model first proposed it (a warning: the model then sees a call the
// application did not run). The request, text and stop-reason edits are
// not tool calls: the values view lists them as edits (original →
// edited), and the bytes the application got in a part of their own.

// pairMinCol is the narrowest column two side-by-side versions get;
// narrower room stacks them.
const pairMinCol = 44

// pairLines writes two versions of a value under their labels: side by
// side in two columns when w leaves each pairMinCol cells, else stacked.
// render writes one version's lines at a width. indent starts each line.
func (c *Common) pairLines(labelA, labelB string, render func(raw []byte, w int) []string, a, b []byte, indent, w int) []string {
	s := c.Styles
	pad := strings.Repeat(" ", indent)
	sep := " │ " // the frame's ASCII fold draws it |
	col := (w - indent - displayWidth(sep)) / 2
	if col < pairMinCol {
		var out []string
		out = append(out, hang(pad+s.Muted.Render("‹ "), labelA, indent+2, w)...)
		out = append(out, indentLines(render(a, max(1, w-indent-2)), pad+"  ")...)
		out = append(out, hang(pad+s.Warn.Render("▶ "), labelB, indent+2, w)...)
		out = append(out, indentLines(render(b, max(1, w-indent-2)), pad+"  ")...)
		return out
	}
	left := append(styleLines(s.Muted, wrapLines(labelA, col)), render(a, col)...)
	right := append(styleLines(s.Warn, wrapLines(labelB, col)), render(b, col)...)
	// The labels may wrap to different heights: the values start level.
	la, lb := len(wrapLines(labelA, col)), len(wrapLines(labelB, col))
	for la < lb {
		left = append(left[:la], append([]string{""}, left[la:]...)...)
		la++
	}
	for lb < la {
		right = append(right[:lb], append([]string{""}, right[lb:]...)...)
		lb++
	}
	var out []string
	for i := range max(len(left), len(right)) {
		l, r := "", ""
		if i < len(left) {
			l = left[i]
		}
		if i < len(right) {
			r = right[i]
		}
		// padRight measures cells (ansi width): CJK columns stay level.
		out = append(out, strings.TrimRight(pad+padRight(cut(l, col), col)+sep+cut(r, col), " "))
	}
	return out
}

// jsonLines writes raw JSON pretty-printed and highlighted, or the text
// as it is when it is not JSON.
func (c *Common) jsonLines(raw []byte, w int) []string {
	t := bytes.TrimSpace(raw)
	if json.Valid(t) {
		return c.highlightJSON(t, w)
	}
	return wrapLines(string(t), w)
}

// stringLines writes a JSON string's text whole, wrapped (anything else
// as valueText writes it).
func (c *Common) stringLines(raw []byte, w int) []string {
	return wrapLines(valueText(gjson.ParseBytes(raw)), w)
}

// editedBy is the decision's line: "✎ edited by WHO", then what the
// reason says besides who (a person approving a rule's edit).
func (c *Common) editedBy(d *session.Decision) (line, rest string) {
	who := session.EditedBy(d)
	rest = strings.TrimSpace(d.Reason)
	if i := strings.LastIndex(rest, "edited by "); i >= 0 {
		rest = strings.TrimRight(strings.TrimSpace(rest[:i]), ";,")
	}
	line = c.Styles.Warn.Render("✎ edited")
	if who != "" {
		line += c.Styles.Muted.Render(" by " + who)
	}
	return line, rest
}

// editedCallLines are an edited tool call's two versions, who edited it
// and, when a later request carried it back, how.
func (c *Common) editedCallLines(st *session.State, turn int, ps *session.ProposalState, indent, w int) []string {
	d := ps.Decision
	who := session.EditedBy(d)
	if who == "" {
		who = "someone"
	}
	out := c.pairLines("arguments as the model proposed them",
		"arguments as edited by "+who+" (what the application got)",
		c.jsonLines, ps.Proposal.Arguments, d.Arguments, indent, w)
	return append(out, c.carriedLines(st, turn, ps.Proposal.CallID, indent, w)...)
}

// carried finds the note that a request after turn carried call callID
// back in its history: the later turn and whether it came back edited.
func carried(st *session.State, turn int, callID string) (later int, edited, ok bool) {
	if st == nil {
		return 0, false, false
	}
	for _, t := range st.Turns {
		if t.N <= turn {
			continue
		}
		for _, p := range t.Proposals {
			if p.Proposal.CallID != callID {
				continue
			}
			if c, e := session.Carried(p.Decision); c {
				return t.N, e, true
			}
		}
	}
	return 0, false, false
}

// carriedLines say how the application's next request carried the call.
func (c *Common) carriedLines(st *session.State, turn int, callID string, indent, w int) []string {
	later, edited, ok := carried(st, turn, callID)
	if !ok {
		return nil
	}
	return c.carriedNote(fmt.Sprintf("turn %d's request", later), edited, indent, w)
}

// carriedNote says whether the application sent an edited call back in
// its history as edited (where names the request) or — a warning — as
// the model first proposed it.
func (c *Common) carriedNote(where string, edited bool, indent, w int) []string {
	s := c.Styles
	pad := strings.Repeat(" ", indent)
	if edited {
		return hang(pad+s.Good.Render("✓ "), "the application sent the edited call back in its history ("+where+"): the model sees the call the application ran", indent+2, w)
	}
	return hang(pad+s.Bad.Render("✗ "), "the application sent the ORIGINAL call back in its history ("+where+"), not the edit: the model sees a call the application did not run", indent+2, w)
}

// carriedHereLines are the notes of a turn whose request carried earlier
// edited calls back: which call, and how.
func (c *Common) carriedHereLines(t *session.TurnState, indent, w int) []string {
	var out []string
	for _, ps := range t.Proposals {
		ok, edited := session.Carried(ps.Decision)
		if !ok {
			continue
		}
		out = append(out, hang(strings.Repeat(" ", indent)+c.Styles.Muted.Render("this request carries "), ps.Proposal.Name+" · call_id "+ps.Proposal.CallID+", edited by the proxy", indent+2, w)...)
		out = append(out, c.carriedNote("this turn's request", edited, indent+2, w)...)
	}
	return out
}

// hiddenProposal reports whether a proposal of a turn is not a tool call
// of it: a pseudo-call (an edit that is not a call) or the note that the
// turn's request carried an earlier call back (shown on that call).
func hiddenProposal(ps *session.ProposalState) bool {
	if session.PseudoCall(ps.Proposal.CallID) {
		return true
	}
	c, _ := session.Carried(ps.Decision)
	return c
}

// editSections are the values view's parts for a proxy's edits that are
// not tool calls: the request, text and stop-reason edits turn by turn,
// then what the application received when it was not the upstream's
// bytes. Empty when the session has none.
func (c *Common) editSections(st *session.State, w int) []valueSection {
	if st == nil {
		return nil
	}
	s := c.Styles
	edits := valueSection{name: "edits"}
	got := valueSection{name: "what the application received"}
	n := 0
	for _, t := range st.Turns {
		var el []string
		for _, ps := range t.Proposals {
			d := ps.Decision
			if d == nil || d.Kind != session.Edited {
				continue
			}
			switch ps.Proposal.CallID {
			case session.EditedRequest:
				el = append(el, c.requestEditLines(ps, w)...)
			case session.EditedText:
				line, rest := c.editedBy(d)
				el = append(el, "  "+s.Bold.Render("text")+" "+line)
				if rest != "" {
					el = append(el, hang("    ", rest, 4, w)...)
				}
				el = append(el, c.pairLines("the model wrote", "the application got", c.stringLines, ps.Proposal.Arguments, d.Arguments, 4, w)...)
			case session.EditedStop:
				line, _ := c.editedBy(d)
				el = append(el, "  "+s.Bold.Render("stop reason")+" "+line)
				el = append(el, hang("    ", valueText(gjson.ParseBytes(ps.Proposal.Arguments))+" → "+valueText(gjson.ParseBytes(d.Arguments)), 6, w)...)
			case session.ClientBytes:
				got.lines = append(got.lines, s.Accent.Render(fmt.Sprintf("turn %d", t.N)))
				if d.Reason != "" {
					got.lines = append(got.lines, hang("  ", d.Reason, 2, w)...)
				}
				got.lines = append(got.lines, indentLines(wrapLines(valueText(gjson.ParseBytes(d.Arguments)), max(1, w-2)), "  ")...)
			}
		}
		if len(el) > 0 {
			n++
			edits.lines = append(edits.lines, s.Accent.Render(fmt.Sprintf("turn %d", t.N)))
			edits.lines = append(edits.lines, el...)
		}
	}
	var out []valueSection
	if len(edits.lines) > 0 {
		edits.name = "edits · " + count(n, "turn")
		out = append(out, edits)
	}
	if len(got.lines) > 0 {
		out = append(out, got)
	}
	return out
}

// requestEditLines are a request edit: who, then each value it changed,
// whole (the body is the request's: w shows it).
func (c *Common) requestEditLines(ps *session.ProposalState, w int) []string {
	s := c.Styles
	d := ps.Decision
	line, _ := c.editedBy(d)
	out := []string{"  " + s.Bold.Render("request") + " " + line}
	changes, err := requestChanges(ps.Proposal.Arguments, d.Arguments)
	if err != nil || len(changes) == 0 {
		return append(out, c.pairLines("the application sent", "what left for the upstream", c.jsonLines, ps.Proposal.Arguments, d.Arguments, 4, w)...)
	}
	arrow := " → "
	for _, ch := range changes {
		var text string
		switch ch.op {
		case diff.OpAdded:
			text = "added " + scalarText(ch.b)
		case diff.OpRemoved:
			text = "removed (was " + scalarText(ch.a) + ")"
		default:
			text = scalarText(ch.a) + arrow + scalarText(ch.b)
		}
		out = append(out, hang("    "+s.Muted.Render(ch.path+" "), text, 6, w)...)
	}
	return out
}
