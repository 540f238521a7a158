package proxy

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/session"
)

// What happens to a held response once it is decoded: the response rules
// (edit, delay, fault, hold), then the decider (--hold-tools, or a hold
// rule). And, on the conversation's next request, whether the edited call
// came back in its history as edited.

// respond runs the response rules and the decider. It returns what was
// rejected ("" when nothing was) and the edit to apply.
func (p *Proxy) respond(r *http.Request, x *exchange, sum adapters.Summary) (string, responseEdit) {
	var e responseEdit
	called := make([]string, len(sum.ToolCalls))
	for i, c := range sum.ToolCalls {
		called[i] = c.Name
	}
	held := false
	in := x.info(r.URL.Path, called)
	for _, rule := range x.respRules {
		if !rule.Match.matches(DirResponse, in) {
			continue
		}
		who := rule.who(x.rulesSource)
		switch {
		case rule.Delay > 0:
			x.respDelay += rule.Delay
		case rule.Hold:
			held = true
		case rule.Fault == FaultDisconnect:
			x.cut = cutAfterEvents
		case rule.Fault != "":
			x.respFault = rule.Fault
			x.replaced = "answered by " + who + " with the fault " + rule.Fault
			return "", responseEdit{}
		case rule.Edit != nil:
			p.ruleEdit(x, sum, rule.Edit, who, &e)
		}
	}
	asks := p.opts.Hold != nil && (held || p.holdTools() && len(x.req.toolSchemas) > 0)
	if held && p.opts.Hold == nil {
		p.log.Warn("a hold rule matched, but there is no one to ask (no terminal): the response passes")
	}
	if asks && len(sum.ToolCalls) > 0 {
		return p.decide(r, x, sum.ToolCalls, &e), e
	}
	return "", e
}

// holdTools: --hold-tools (hold mode) is on, not only a hold rule.
func (p *Proxy) holdTools() bool { return !p.opts.HoldByRuleOnly }

// ruleEdit applies a rule's response edit and records it as decisions.
func (p *Proxy) ruleEdit(x *exchange, sum adapters.Summary, ed *Edit, who string, e *responseEdit) {
	for i, c := range sum.ToolCalls {
		patch, ok := ed.Arguments[c.Name]
		if !ok {
			for name, pt := range ed.Arguments {
				if glob(name, c.Name) {
					patch, ok = pt, true
				}
			}
		}
		if !ok {
			continue
		}
		cur := c.Arguments
		if a, had := e.args[i]; had {
			cur = a
		}
		args, err := mergeArguments(cur, patch)
		if err != nil {
			p.log.Warn("a response edit rule failed; the call goes unchanged by it", "rule", who, "err", err.Error())
			continue
		}
		e.setArgs(i, args)
		prop := session.Proposal{Turn: x.turn, Index: i, Of: len(sum.ToolCalls), CallID: c.CallID, Name: c.Name, Arguments: c.Arguments, Known: true}
		x.tail <- session.Update{Kind: session.UpDecision, Turn: x.turn, Proposal: &prop,
			Decision: &session.Decision{Kind: session.Edited, Arguments: args, Reason: "edited by " + who, By: who}}
	}
	if ed.Text != nil {
		e.text = ed.Text
		x.tail <- textDecision(x.turn, EditedText, sum.Text, *ed.Text, who)
	}
	if ed.Stop != "" {
		e.stop = ed.Stop
		x.tail <- textDecision(x.turn, EditedStop, string(sum.StopReason), string(ed.Stop), who)
	}
}

// The names (and call ids: one of each a turn) a response's text and
// stop-reason edits, and the bytes the application got, are stored under
// as decisions (Arguments the original as a JSON string, Edited the new):
// session's, which the workbench reads too.
const (
	EditedText   = session.EditedText
	EditedStop   = session.EditedStop
	ClientBytes  = session.ClientBytes
	CarriedNote  = session.CarriedNote
	maxClientRec = maxRecorded
)

func textDecision(turn int, name, orig, edited, who string) session.Update {
	a, _ := json.Marshal(orig)
	b, _ := json.Marshal(edited)
	return session.Update{Kind: session.UpDecision, Turn: turn, Proposal: &session.Proposal{Turn: turn, CallID: name, Name: name, Arguments: a, Known: true},
		Decision: &session.Decision{Kind: session.Edited, Arguments: b, Reason: "edited by " + who, By: who}}
}

// clientBytes records what the application got instead of the upstream's
// bytes (the upstream's stay recorded as the attempt's raw events).
func clientBytes(turn int, out []byte) session.Update {
	s := string(out)
	if len(s) > maxClientRec {
		s = headOf(s, maxClientRec)
	}
	u := textDecision(turn, ClientBytes, "", s, "proxy")
	u.Decision.Reason = "the bytes the application got: the edited response, re-encoded by the protocol's simulator side"
	return u
}

func (p *Proxy) waitRespDelay(r *http.Request, x *exchange) {
	if x.respDelay <= 0 {
		return
	}
	select {
	case <-time.After(x.respDelay):
	case <-r.Context().Done():
	}
}

func writeSynth(w http.ResponseWriter, resp *http.Response) {
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}

// editNote is an edited call the conversation waits to see come back.
type editNote struct {
	turn         int
	callID, name string
	orig, edited string // canonical JSON
}

// noteEdits keeps the edited calls for the conversation's next request.
func (x *exchange) noteEdits(sum adapters.Summary, e responseEdit) {
	x.p.mu.Lock()
	defer x.p.mu.Unlock()
	for i, c := range sum.ToolCalls {
		a, ok := e.args[i]
		if !ok || c.CallID == "" {
			continue
		}
		x.conv.edits = append(x.conv.edits, editNote{turn: x.turn, callID: c.CallID, name: c.Name,
			orig: adapters.Canonical(string(c.Arguments)), edited: adapters.Canonical(string(a))})
	}
	if len(x.conv.edits) > 64 { // a long conversation keeps the latest
		x.conv.edits = x.conv.edits[len(x.conv.edits)-64:]
	}
}

// carried checks the request's history for the conversation's edited
// calls and records, for each it finds, whether it came back edited (the
// model will see the call the application ran) or as the model first
// proposed it. Noted once: the note is dropped when found.
func (x *exchange) carried() {
	x.p.mu.Lock()
	notes := x.conv.edits
	var left []editNote
	var found []editNote
	var as []string
	for _, n := range notes {
		if n.turn >= x.turn {
			left = append(left, n)
			continue
		}
		how := ""
		for _, item := range x.req.history {
			if !strings.Contains(item, n.callID) {
				continue
			}
			how = argsIn(gjson.Parse(item), n)
			if how != "" {
				break
			}
		}
		if how == "" {
			left = append(left, n)
			continue
		}
		found, as = append(found, n), append(as, how)
	}
	x.conv.edits = left
	x.p.mu.Unlock()
	for i, n := range found {
		why := CarriedNote + "the application's request of turn " + strconv.Itoa(x.turn) + " carried the call back in its history " + as[i]
		x.pre = append(x.pre, session.Update{Kind: session.UpDecision, Turn: x.turn,
			Proposal: &session.Proposal{Turn: x.turn, CallID: n.callID, Name: n.name, Arguments: json.RawMessage(n.orig), Known: true},
			Decision: &session.Decision{Kind: session.Edited, Arguments: json.RawMessage(n.edited), Reason: why, By: "history"}})
	}
}

// maxArgsDepth bounds how deep argsIn looks into a history item.
const maxArgsDepth = 16

// argsIn finds the call's arguments in a history item (an object, or a
// JSON string holding one, anywhere in it): "edited", "as originally
// proposed (not the edit)", or "" when they are not there.
func argsIn(v gjson.Result, n editNote) string {
	how := ""
	var walk func(v gjson.Result, depth int) bool
	walk = func(v gjson.Result, depth int) bool {
		if depth > maxArgsDepth {
			return true // a call's arguments sit near the item's top, never this deep
		}
		var c string
		switch {
		case v.IsObject():
			c = adapters.Canonical(v.Raw)
		case v.Type == gjson.String && strings.HasPrefix(strings.TrimSpace(v.Str), "{"):
			c = adapters.Canonical(v.Str)
		}
		switch c {
		case "":
		case n.edited:
			how = session.CarriedEdited
			return false
		case n.orig:
			how = session.CarriedOriginal
			return false
		}
		if v.IsObject() || v.IsArray() {
			v.ForEach(func(_, e gjson.Result) bool { return walk(e, depth+1) })
		}
		return how == ""
	}
	walk(v, 0)
	return how
}
