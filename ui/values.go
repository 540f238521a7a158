package ui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/session"
)

// How the workbench writes values. Every JSON value a person may want to
// read is written whole and wrapped to the width (CJK is two cells), never
// cut: the final answer in the order of the output schema's properties,
// each tool call's arguments and result, each domain check with the
// values it used, each fact with the observations it read. null is
// written null.

// valueText is a JSON value as a line of text: a string as its text, null
// as null, anything else as jsonText.
func valueText(v gjson.Result) string {
	switch v.Type {
	case gjson.String:
		if v.Str == "" {
			return `""`
		}
		return v.Str
	case gjson.Null:
		return "null"
	}
	return jsonText(v)
}

// jsonText writes a JSON value on one line in its own member order, with
// a space after each comma and colon so that it wraps between members,
// and strings as they read (no \u escapes).
func jsonText(v gjson.Result) string {
	var b strings.Builder
	var walk func(v gjson.Result)
	walk = func(v gjson.Result) {
		switch {
		case v.IsObject() || v.IsArray():
			obj := v.IsObject()
			open, end := "[", "]"
			if obj {
				open, end = "{", "}"
			}
			b.WriteString(open)
			i := 0
			v.ForEach(func(k, e gjson.Result) bool {
				if i > 0 {
					b.WriteString(", ")
				}
				i++
				if obj {
					b.WriteString(quote(k.String()) + ": ")
				}
				walk(e)
				return true
			})
			b.WriteString(end)
		case v.Type == gjson.String:
			b.WriteString(quote(v.Str))
		case v.Type == gjson.Null || v.Raw == "":
			b.WriteString("null")
		default:
			b.WriteString(v.Raw)
		}
	}
	walk(v)
	return b.String()
}

// quote writes a JSON string without escaping <, > and & or non-ASCII.
func quote(s string) string {
	b, _ := adapters.MarshalBody(s)
	return string(b)
}

// rawText is raw JSON as jsonText writes it, or the text as it is when it
// is not JSON; empty is null.
func rawText(raw []byte) string {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 {
		return "null"
	}
	if !gjson.ValidBytes(t) {
		return string(t)
	}
	return jsonText(gjson.ParseBytes(t))
}

// hang wraps text to w cells after a first-line prefix; the lines after
// the first are indented by indent spaces and wrapped to what is left.
func hang(prefix, text string, indent, w int) []string {
	first := max(1, w-displayWidth(prefix))
	lines := wrapLines(text, first)
	out := []string{prefix + lines[0]}
	if len(lines) == 1 {
		return out
	}
	rest := strings.Join(lines[1:], "\n")
	if strings.HasPrefix(text, lines[0]) {
		// Wrap what follows the first line again, to the wider room.
		rest = strings.TrimPrefix(strings.TrimLeft(text[len(lines[0]):], " "), "\n")
	}
	pad := strings.Repeat(" ", indent)
	for _, l := range wrapLines(rest, max(1, w-indent)) {
		out = append(out, pad+l)
	}
	return out
}

// schemaOrder is the names of an object schema's properties in the order
// the schema file gives them (read from the raw JSON, not a map).
func schemaOrder(schema json.RawMessage) []string {
	var keys []string
	gjson.GetBytes(schema, "properties").ForEach(func(k, _ gjson.Result) bool {
		keys = append(keys, k.String())
		return true
	})
	return keys
}

// answerLines lists an answer object's members in the order of the output
// schema's properties, then any member the schema does not name in the
// answer's own order: each key whole, its value whole, wrapped to w
// cells beside the keys or, when the keys leave too little room, under
// its key.
func (c *Common) answerLines(schema, out json.RawMessage, w int) []string {
	if len(out) == 0 {
		return nil
	}
	s := c.Styles
	ans := gjson.ParseBytes(out)
	if !ans.IsObject() {
		return indentLines(wrapLines(rawText(out), max(1, w-2)), "  ")
	}
	vals := map[string]gjson.Result{}
	var own []string
	ans.ForEach(func(k, v gjson.Result) bool {
		if _, dup := vals[k.String()]; !dup {
			own = append(own, k.String())
		}
		vals[k.String()] = v
		return true
	})
	var keys []string
	named := map[string]bool{}
	for _, k := range schemaOrder(schema) {
		if _, ok := vals[k]; ok && !named[k] {
			keys = append(keys, k)
			named[k] = true
		}
	}
	for _, k := range own {
		if !named[k] {
			keys = append(keys, k)
		}
	}
	kw := 0
	for _, k := range keys {
		kw = max(kw, displayWidth(k))
	}
	// A value goes beside the keys when it fits there on one line, or
	// when that room is wide enough to wrap in; under its key otherwise
	// (a narrow panel), so that words are not cut.
	room := w - kw - 3
	var lines []string
	for _, k := range keys {
		text := valueText(vals[k])
		style := s.Text
		if k == "decision" || k == "max_refund_cents" {
			style = s.Accent
		}
		if room >= 40 || room >= displayWidth(text) && !strings.Contains(text, "\n") {
			vl := wrapLines(text, max(1, room))
			lines = append(lines, "  "+s.Muted.Render(padRight(k, kw))+" "+style.Render(vl[0]))
			for _, l := range vl[1:] {
				lines = append(lines, strings.Repeat(" ", kw+3)+style.Render(l))
			}
			continue
		}
		lines = append(lines, "  "+s.Muted.Render(k))
		for _, l := range wrapLines(text, max(1, w-4)) {
			lines = append(lines, "    "+style.Render(l))
		}
	}
	return lines
}

// checkLines lists every domain check, passing or not: a pass with the
// values it used, a failure with what it says is wrong (its values
// included).
func (c *Common) checkLines(checks []session.CheckResult, w int) []string {
	s := c.Styles
	var out []string
	for _, ck := range checks {
		if ck.Pass {
			out = append(out, "  "+s.Good.Render("✓ "+ck.ID))
		} else {
			out = append(out, "  "+s.Bad.Render("✗ "+ck.ID))
		}
		if !ck.Pass || len(ck.Shown) == 0 {
			if d := strings.TrimSpace(ck.Detail); d != "" {
				out = append(out, indentLines(wrapLines(d, max(1, w-6)), "      ")...)
			}
			continue
		}
		for _, sh := range ck.Shown {
			out = append(out, hang("      "+sh.Expr+" = ", rawText(sh.Value), 8, w)...)
		}
	}
	return out
}

// factLines lists each fact with its value, the arithmetic that gave it
// when it is arithmetic ("cap 13000 = 18000 − 3000 − 2000"), otherwise
// the conditions that chose its branch, and the values its expression
// read with the evidence each came from.
func (c *Common) factLines(facts []session.FactResult, w int) []string {
	s := c.Styles
	var out []string
	for _, f := range facts {
		head := f.Name + " " + rawText(f.Value)
		if f.Formula != "" {
			formula := f.Formula
			if !c.ASCII {
				formula = strings.ReplaceAll(formula, " - ", " − ")
			}
			head += " = " + formula
		}
		out = append(out, hang("  ", head, 4, w)...)
		if f.Formula == "" {
			for _, b := range f.Because {
				out = append(out, hang("      "+s.Muted.Render("because "), b, 8, w)...)
			}
		}
		for _, r := range f.Reads {
			text := r.Path + " = " + rawText(r.Value)
			if r.Evidence != "" {
				text += "  (" + r.Evidence + ")"
			}
			out = append(out, hang("      ", text, 8, w)...)
		}
	}
	return out
}

// indentLines puts prefix before each line.
func indentLines(lines []string, prefix string) []string {
	for i := range lines {
		lines[i] = prefix + lines[i]
	}
	return lines
}

// callLines lists a turn's tool calls: name, call_id and decision, then
// the arguments as proposed (and, edited, beside them as edited: edits.go),
// then the result sent back, JSON pretty-printed and wrapped to w cells.
// A proxy's edits that are not calls are left to editSections.
func (c *Common) callLines(st *session.State, t *session.TurnState, w int) []string {
	s := c.Styles
	type call struct {
		lane *session.Lane
		ps   *session.ProposalState
	}
	var calls []call
	seen := map[string]bool{}
	for _, l := range t.Lanes {
		if l.Kind != adapters.KindToolCall {
			continue
		}
		cl := call{lane: l}
		for _, p := range t.Proposals {
			if p.Proposal.CallID == l.CallID {
				cl.ps = p
			}
		}
		seen[l.CallID] = true
		calls = append(calls, cl)
	}
	for _, p := range t.Proposals {
		if !seen[p.Proposal.CallID] && !hiddenProposal(p) {
			calls = append(calls, call{ps: p})
		}
	}
	jsonBlock := func(raw []byte) []string {
		t := bytes.TrimSpace(raw)
		if json.Valid(t) {
			return indentLines(c.highlightJSON(t, max(1, w-6)), "      ")
		}
		return indentLines(wrapLines(string(t), max(1, w-6)), "      ")
	}
	var out []string
	for _, cl := range calls {
		name, id := "", ""
		if cl.lane != nil {
			name, id = cl.lane.Name, cl.lane.CallID
		}
		if cl.ps != nil {
			name, id = cl.ps.Proposal.Name, cl.ps.Proposal.CallID
		}
		out = append(out, hang("  "+s.Bold.Render(name)+s.Muted.Render(" · call_id "), id, 4, w)...)
		ps := cl.ps
		if ps != nil && !ps.Proposal.Known {
			out = append(out, "    "+s.Bad.Render("unknown tool: "+name))
		}
		if ps != nil {
			for _, v := range ps.Proposal.Violations {
				out = append(out, hang("    "+s.Bad.Render("schema: "), v.String(), 6, w)...)
			}
		}
		switch {
		case ps == nil && cl.lane != nil && cl.lane.State == adapters.ItemStreaming:
			out = append(out, "    "+s.Info.Render("arguments streaming"))
		case ps == nil:
			out = append(out, "    "+s.Bad.Render("never proposed: its arguments are not a JSON object"))
		case ps.Decision == nil:
			out = append(out, "    "+s.Warn.Render("⏳ waiting for a decision"))
		default:
			d := ps.Decision
			var line string
			switch d.Kind {
			case session.Approved:
				line = s.Good.Render("✓ approved")
			default:
				line = s.Bad.Render("✗ rejected")
			}
			reason := d.Reason
			if d.Kind == session.Edited {
				line, reason = c.editedBy(d)
			} else if d.By != "" {
				line += s.Muted.Render(" by " + d.By)
			}
			if reason != "" {
				out = append(out, hang("    "+line+": ", reason, 6, w)...)
			} else {
				out = append(out, "    "+line)
			}
		}
		edited := ps != nil && ps.Decision != nil && ps.Decision.Kind == session.Edited
		if !edited {
			out = append(out, "    "+s.Muted.Render("arguments"))
		}
		switch {
		case edited:
			out = append(out, c.editedCallLines(st, t.N, ps, 4, w)...)
		case ps != nil && len(ps.Proposal.Arguments) > 0:
			out = append(out, jsonBlock(ps.Proposal.Arguments)...)
		case cl.lane != nil && len(cl.lane.Arguments) > 0:
			out = append(out, jsonBlock(cl.lane.Arguments)...)
		case cl.lane != nil:
			out = append(out, jsonBlock([]byte(cl.lane.Text()))...)
		}
		switch {
		case ps == nil || ps.Result == nil:
			out = append(out, "    "+s.Muted.Render("no result yet"))
		case ps.Result.IsError:
			out = append(out, "    "+s.Bad.Render("error result"))
			out = append(out, jsonBlock([]byte(ps.Result.Content))...)
		default:
			out = append(out, "    "+s.Muted.Render("result"))
			out = append(out, jsonBlock([]byte(ps.Result.Content))...)
		}
	}
	return out
}

// valueSection is one part of the values view.
type valueSection struct {
	name  string
	lines []string
	// marks are line indexes within lines to land on (a turn's calls).
	marks map[int]int
}

// valueSections are the values view's parts that have something to show:
// the tool calls of every turn so far (when calls is set), the answer,
// the checks, the facts.
func (c *Common) valueSections(d *viewData, w int, calls bool) []valueSection {
	st := d.state
	if st == nil {
		return nil
	}
	s := c.Styles
	var secs []valueSection
	sec := valueSection{name: "tool calls", marks: map[int]int{}}
	n := 0
	for _, t := range st.Turns {
		if !calls {
			break
		}
		cl := c.callLines(st, t, w)
		if len(cl) == 0 {
			continue
		}
		sec.marks[t.N] = len(sec.lines)
		sec.lines = append(sec.lines, s.Accent.Render(fmt.Sprintf("turn %d", t.N)))
		sec.lines = append(sec.lines, cl...)
		for _, l := range t.Lanes {
			if l.Kind == adapters.KindToolCall {
				n++
			}
		}
	}
	if len(sec.lines) > 0 {
		sec.name = fmt.Sprintf("tool calls (%d)", n)
		secs = append(secs, sec)
	}
	if calls {
		secs = append(secs, c.editSections(st, w)...)
	}
	if len(st.Output) > 0 {
		var schema json.RawMessage
		if d.scenario != nil {
			schema = d.scenario.Output.Schema
		}
		secs = append(secs, valueSection{name: "answer", lines: c.answerLines(schema, st.Output, w)})
	}
	if dm := st.Domain; dm != nil && len(dm.Checks) > 0 {
		pass := 0
		for _, ck := range dm.Checks {
			if ck.Pass {
				pass++
			}
		}
		secs = append(secs, valueSection{name: fmt.Sprintf("checks · %d of %d pass", pass, len(dm.Checks)), lines: c.checkLines(dm.Checks, w)})
		if len(dm.Facts) > 0 {
			secs = append(secs, valueSection{name: "facts", lines: c.factLines(dm.Facts, w)})
		}
	}
	return secs
}
