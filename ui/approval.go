package ui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/modelwire/modelwire/session"
)

// approvalMode is what the approval dialog is doing.
type approvalMode int

const (
	approvalView   approvalMode = iota // showing the proposal: a/e/r/A
	approvalEdit                       // editing the arguments
	approvalReject                     // asking for a reason
)

// approvalDialog decides one tool proposal: approve, edit (a textarea with
// live JSON and schema validation, which cannot be confirmed while
// invalid, and a diff against the model's proposal), reject with a
// reason, or approve all. Nothing runs before it answers.
type approvalDialog struct {
	c    *Common
	sc   *session.Scenario
	p    session.Proposal
	mode approvalMode

	ta     *editor
	reason *editor
	orig   string // the proposal, pretty-printed
	// editErr is the live check of the edit ("" when it passes).
	editErr string
}

func newApprovalDialog(c *Common, sc *session.Scenario, p session.Proposal) *approvalDialog {
	d := &approvalDialog{c: c, sc: sc, p: p, orig: prettyJSON(p.Arguments)}
	d.ta = newEditor(false)
	d.ta.prompt = "│ "
	d.reason = newEditor(true)
	d.reason.holder = "why the call must not run"
	d.reason.prompt = "reason: "
	if p.EditError != "" {
		// The engine refused the last edit: straight back to editing.
		d.startEdit(d.orig)
		d.editErr = p.EditError
	}
	return d
}

func (d *approvalDialog) Kind() dialogKind { return dlgApproval }

func (d *approvalDialog) startEdit(text string) tea.Cmd {
	d.mode = approvalEdit
	d.ta.SetValue(text)
	d.check()
	d.ta.Focus()
	return nil
}

// check validates the edit as the gate will: one JSON object that passes
// the tool's schema.
func (d *approvalDialog) check() {
	if d.sc == nil {
		d.editErr = ""
		return
	}
	if _, err := d.sc.CheckEdit(d.p.Name, []byte(d.ta.Value())); err != nil {
		d.editErr = err.Error()
	} else {
		d.editErr = ""
	}
}

func (d *approvalDialog) Bindings(km *KeyMap) []key.Binding {
	switch d.mode {
	case approvalEdit:
		return []key.Binding{km.Approval.Confirm, km.Dialog.Close}
	case approvalReject:
		return []key.Binding{km.Dialog.Accept, km.Dialog.Close}
	}
	var bs []key.Binding
	if d.p.Valid() { // otherwise nothing to approve: the call cannot run as proposed
		bs = append(bs, km.Approval.Approve)
	}
	if !d.p.NoEdit {
		bs = append(bs, km.Approval.Edit)
	}
	bs = append(bs, km.Approval.Reject)
	if d.p.Valid() {
		bs = append(bs, km.Approval.ApproveAll)
	}
	return append(bs, km.Dialog.Close)
}

func (d *approvalDialog) HandleKey(msg tea.KeyMsg, km *KeyMap) (action, tea.Cmd) {
	switch d.mode {
	case approvalEdit:
		switch {
		case key.Matches(msg, km.Approval.Confirm):
			if d.check(); d.editErr != "" {
				return actStatus{level: levelWarn, text: "cannot confirm the edit: " + d.editErr}, nil
			}
			return actDecide{d: session.Decision{Kind: session.Edited, Arguments: []byte(d.ta.Value())}}, nil
		case key.Matches(msg, km.Dialog.Close):
			d.mode = approvalView
			d.ta.Blur()
			return nil, nil
		}
		if d.ta.Update(msg) {
			d.check()
		}
		return nil, nil
	case approvalReject:
		switch {
		case key.Matches(msg, km.Dialog.Accept):
			reason := strings.TrimSpace(d.reason.Value())
			if reason == "" {
				reason = "rejected by the operator"
			}
			return actDecide{d: session.Decision{Kind: session.Rejected, Reason: reason}}, nil
		case key.Matches(msg, km.Dialog.Close):
			d.mode = approvalView
			d.reason.Blur()
			return nil, nil
		}
		d.reason.Update(msg)
		return nil, nil
	}
	switch {
	case key.Matches(msg, km.Approval.Approve):
		return actDecide{d: session.Decision{Kind: session.Approved}}, nil
	case key.Matches(msg, km.Approval.ApproveAll):
		return actDecide{d: session.Decision{Kind: session.Approved}, all: true}, nil
	case key.Matches(msg, km.Approval.Edit):
		if d.p.NoEdit {
			return actStatus{level: levelWarn, text: session.EditUnavailable}, nil
		}
		return nil, d.startEdit(d.orig)
	case key.Matches(msg, km.Approval.Reject):
		d.mode = approvalReject
		d.reason.Focus()
		return nil, nil
	case key.Matches(msg, km.Dialog.Close):
		return actClose{}, nil
	}
	return nil, nil
}

func (d *approvalDialog) Update(tea.Msg) tea.Cmd { return nil }

func (d *approvalDialog) View(w, h int) string {
	s := d.c.Styles
	bw := min(w, 96)
	inner := bw - s.Dialog.GetHorizontalFrameSize()
	p := d.p
	title := fmt.Sprintf("Tool proposal %d of %d · turn %d", p.Index+1, max(p.Of, 1), p.Turn)
	lines := []string{s.Tool().Render(p.Name) + "  " + s.Muted.Render("call_id ") + p.CallID, ""}
	var hint string
	switch d.mode {
	case approvalEdit:
		taH := max(3, min(d.ta.LineCount()+1, h/3))
		lines = append(lines, s.Muted.Render("edit the arguments (JSON):"))
		lines = append(lines, strings.Split(d.ta.View(inner, taH, d.c), "\n")...)
		if d.editErr == "" {
			lines = append(lines, s.Good.Render("✓ valid JSON object, passes the tool's schema"))
		} else {
			for _, l := range wrapLines("✗ "+d.editErr, inner) {
				lines = append(lines, s.Bad.Render(l))
			}
		}
		lines = append(lines, "", s.Muted.Render("diff against the model's proposal:"))
		lines = append(lines, d.diff(inner)...)
		hint = "ctrl+s confirm (only when valid) · esc back"
	case approvalReject:
		lines = append(lines, d.c.highlightJSON(p.Arguments, inner)...)
		lines = append(lines, "", d.reason.View(inner, 1, d.c))
		hint = "enter reject with this reason · esc back"
	default:
		lines = append(lines, d.c.highlightJSON(p.Arguments, inner)...)
		lines = append(lines, "")
		lines = append(lines, d.schemaLines(inner)...)
		hint = decisionKeys(p, "A approve all · esc later")
		if !p.Valid() {
			hint = decisionKeys(p, "esc later (it cannot run as proposed)")
		}
	}
	return d.c.box(title, lines, hint, bw, min(h, len(lines)+4))
}

// schemaLines report the gate's check of the proposal.
func (d *approvalDialog) schemaLines(w int) []string {
	s := d.c.Styles
	p := d.p
	switch {
	case !p.Known:
		return []string{s.Bad.Render("✗ the scenario has no tool " + p.Name + ": it can only be rejected")}
	case len(p.Violations) == 0:
		return []string{s.Good.Render("✓ arguments pass the tool's schema")}
	}
	out := []string{s.Bad.Render("✗ arguments fail the tool's schema (edit them, or reject the call):")}
	for _, v := range p.Violations {
		out = append(out, wrapLines("  "+v.String(), w)...)
	}
	return out
}

// diff is a line diff of the edit against the proposal (both
// pretty-printed), marked - and +.
func (d *approvalDialog) diff(w int) []string {
	s := d.c.Styles
	a := strings.Split(d.orig, "\n")
	b := strings.Split(prettyJSON([]byte(d.ta.Value())), "\n")
	var out []string
	for _, op := range lineDiff(a, b) {
		switch op.kind {
		case '-':
			out = append(out, s.Bad.Render(cut("- "+op.text, w)))
		case '+':
			out = append(out, s.Good.Render(cut("+ "+op.text, w)))
		default:
			out = append(out, s.Muted.Render(cut("  "+op.text, w)))
		}
	}
	return out
}

type diffOp struct {
	kind byte // ' ', '-', '+'
	text string
}

// lineDiff is a longest-common-subsequence line diff (arguments are
// small: a few dozen lines).
func lineDiff(a, b []string) []diffOp {
	n, m := len(a), len(b)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []diffOp
	i, j := 0, 0
	for i < n && j < m {
		switch {
		case a[i] == b[j]:
			out = append(out, diffOp{' ', a[i]})
			i++
			j++
		case lcs[i+1][j] >= lcs[i][j+1]:
			out = append(out, diffOp{'-', a[i]})
			i++
		default:
			out = append(out, diffOp{'+', b[j]})
			j++
		}
	}
	for ; i < n; i++ {
		out = append(out, diffOp{'-', a[i]})
	}
	for ; j < m; j++ {
		out = append(out, diffOp{'+', b[j]})
	}
	return out
}

// sourceDialog edits one source's text; confirming re-sends the scenario
// with it.
type sourceDialog struct {
	c  *Common
	id string
	ta *editor
}

func newSourceDialog(c *Common, id, text string) (*sourceDialog, tea.Cmd) {
	d := &sourceDialog{c: c, id: id, ta: newEditor(false)}
	d.ta.prompt = "│ "
	d.ta.SetValue(text)
	d.ta.Focus()
	return d, nil
}

func (d *sourceDialog) Kind() dialogKind { return dlgSource }

func (d *sourceDialog) Bindings(km *KeyMap) []key.Binding {
	return []key.Binding{km.Approval.Confirm, km.Dialog.Close}
}

func (d *sourceDialog) HandleKey(msg tea.KeyMsg, km *KeyMap) (action, tea.Cmd) {
	switch {
	case key.Matches(msg, km.Approval.Confirm):
		return actEditSource{id: d.id, text: d.ta.Value()}, nil
	case key.Matches(msg, km.Dialog.Close):
		return actClose{}, nil
	}
	d.ta.Update(msg)
	return nil, nil
}

func (d *sourceDialog) Update(tea.Msg) tea.Cmd { return nil }

func (d *sourceDialog) View(w, h int) string {
	bw := min(w, 100)
	inner := bw - d.c.Styles.Dialog.GetHorizontalFrameSize()
	lines := strings.Split(d.ta.View(inner, max(3, h-6), d.c), "\n")
	return d.c.box("Edit source "+d.id+" — the session restarts with it", lines, "ctrl+s re-send · esc cancel", bw, h)
}

// decisionKeys lists the keys that decide p, only those p allows, then
// rest (if any), joined by " · ".
func decisionKeys(p session.Proposal, rest string) string {
	var parts []string
	if p.Valid() {
		parts = append(parts, "a approve")
	}
	if !p.NoEdit {
		parts = append(parts, "e edit")
	}
	parts = append(parts, "r reject")
	if rest != "" {
		parts = append(parts, rest)
	}
	return strings.Join(parts, " · ")
}
