package proxy

import (
	"fmt"
	"net/http"
	"strings"
	"unsafe"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/redact"
	"github.com/modelwire/modelwire/session"
)

// Personal data in bodies (Options.BodyRules, `proxy --redact-body FILE`)
// is removed from every copy of an exchange before it leaves the proxy,
// as keys are (secrets.go); the client gets the bytes unchanged and live.
//
//   - The request body recorded: pointers name values replaced whole,
//     patterns run over every string value; the session's title is read
//     from the redacted body.
//   - A whole response body: the same; when a pointer changed it, its
//     recorded events and summary are decoded from the redacted body.
//   - A stream, with pointers set, is decoded a second time, from its raw
//     events as the pointers redact them (shadow): its events and summary
//     are recorded from that decoding.
//   - A stream, with patterns set: its text arrives in deltas, and a
//     match may be split across two events ("4111 1111 " + "1111 1111").
//     Its step updates are held until it ends (heldStream); then, per
//     lane (the deltas of one item's text, reasoning, refusal or
//     arguments, in order), the patterns run over the lane's whole text,
//     and each match is cut from every delta that holds a piece of it —
//     the piece holding its start shows [redacted], the others nothing of
//     it — and the same bytes are cut from each event's raw data, inside
//     the JSON string that carried the delta.
//   - Every update then has the rules applied on its own (sealBody): raw
//     data as JSON, each event's texts, the summary's text (the patterns
//     over the whole text, which reads as the cut deltas joined), headers'
//     values, errors, tool arguments.
//
// Holding a stream costs its raw events and events until its end: at
// most --max-decoded bytes of them are held; past that the rest of the
// stream is forwarded, not recorded, and a read_error says so (as
// --max-stream-text does for what a stream reduces to).
//
// Not covered here: hold mode's decider (hold.go) is asked about a tool
// call as the application will get it.

// heldStream keeps a stream's step updates until it ends.
type heldStream struct {
	us  []session.Update
	n   int64
	max int64
}

// add holds an update; it reports false once the held bytes pass max.
func (h *heldStream) add(u session.Update) bool {
	h.us = append(h.us, u)
	h.n += updateSize
	if st := u.Step; st != nil {
		h.n += int64(len(st.Raw.Data)) + eventSize*int64(len(st.Events))
		for i := range st.Events {
			ev := &st.Events[i]
			h.n += int64(len(ev.Delta) + len(ev.Arguments) + len(ev.Detail))
			if ev.Final != nil {
				h.n += int64(len(*ev.Final))
			}
		}
	}
	return h.n <= h.max
}

// What an update and an event cost held, beyond their texts.
const (
	updateSize = int64(unsafe.Sizeof(session.Update{}) + unsafe.Sizeof(adapters.Step{}))
	eventSize  = int64(unsafe.Sizeof(adapters.Event{}))
)

// overText is the read_error of a stream held past its bound.
func (h *heldStream) overText() string {
	return fmt.Sprintf("the stream passed %d bytes held for body redaction (--max-decoded): the rest was forwarded, not recorded", h.max)
}

// lane says which deltas make one text: an item's text, reasoning,
// refusal or arguments ("" for any other event).
func lane(ev *adapters.Event) string {
	switch ev.Type {
	case adapters.EvTextDelta, adapters.EvReasoningDelta, adapters.EvRefusalDelta, adapters.EvToolArgsDelta:
		return string(ev.Type) + "\x00" + ev.ItemID + "\x00" + ev.CallID
	}
	return ""
}

// deltaCut is what was cut from one delta.
type deltaCut struct {
	orig, cut string
	pieces    []string
}

// cutAcross cuts, in held updates, every match of the patterns that the
// deltas of a lane make together, from the deltas and the raw events
// that carried them. The updates' steps are copied before a change.
func cutAcross(us []session.Update, r *redact.BodyRules) {
	if !r.HasPatterns() {
		return
	}
	type ref struct{ u, e int }
	lanes := map[string][]ref{}
	var order []string
	for ui := range us {
		st := us[ui].Step
		if st == nil {
			continue
		}
		for ei := range st.Events {
			k := lane(&st.Events[ei])
			if k == "" || st.Events[ei].Delta == "" {
				continue
			}
			if lanes[k] == nil {
				order = append(order, k)
			}
			lanes[k] = append(lanes[k], ref{ui, ei})
		}
	}
	cuts := map[int][]deltaCut{}
	copied := map[int]bool{}
	for _, k := range order {
		refs := lanes[k]
		parts := make([]string, len(refs))
		for i, rf := range refs {
			parts[i] = us[rf.u].Step.Events[rf.e].Delta
		}
		split := r.Split(parts)
		if split == nil {
			continue
		}
		for i, rf := range refs {
			if len(split[i]) == 0 {
				continue
			}
			if !copied[rf.u] {
				st := *us[rf.u].Step
				st.Events = append([]adapters.Event(nil), st.Events...)
				us[rf.u].Step, copied[rf.u] = &st, true
			}
			ev := &us[rf.u].Step.Events[rf.e]
			orig := ev.Delta
			ev.Delta = redact.CutText(orig, split[i])
			cuts[rf.u] = append(cuts[rf.u], deltaCut{orig: orig, cut: ev.Delta, pieces: redact.Pieces(orig, split[i])})
		}
	}
	for ui, cs := range cuts {
		st := us[ui].Step
		st.Raw.Data = cutRaw(st.Raw.Data, cs)
	}
}

// cutRaw cuts deltas from an event's raw data: a JSON string that reads
// exactly as a delta did becomes the cut delta; a delta found in no string
// whole has its pieces replaced wherever a string holds them (and in the
// text, when the data is not JSON).
func cutRaw(data string, cs []deltaCut) string {
	done := make([]bool, len(cs))
	out, ok := redact.Strings([]byte(data), func(s string) string {
		for i, c := range cs {
			if s == c.orig {
				done[i] = true
				return c.cut
			}
		}
		return s
	})
	var rest []string
	for i, c := range cs {
		if !done[i] || !ok {
			rest = append(rest, c.pieces...)
		}
	}
	if !ok {
		out = []byte(data)
	}
	if len(rest) == 0 {
		return string(out)
	}
	cutPieces := func(s string) string {
		for _, p := range rest {
			if p != "" && strings.Contains(s, p) {
				s = strings.ReplaceAll(s, p, redact.Redacted)
			}
		}
		return s
	}
	if ok {
		if o, ok2 := redact.Strings(out, cutPieces); ok2 {
			return string(o)
		}
	}
	return cutPieces(string(out))
}

// sealBody applies the body rules to everything an update carries, in
// place (what it points to is copied, never changed).
func sealBody(u *session.Update, r *redact.BodyRules) {
	if !r.Active() {
		return
	}
	u.URL, u.Err, u.Message = r.Text(u.URL), r.Text(u.Err), r.Text(u.Message)
	if r.HasPatterns() && u.Header != nil {
		// An upstream may echo what it read in a header of its own.
		h := make(http.Header, len(u.Header))
		for k, vs := range u.Header {
			cp := make([]string, len(vs))
			for i, v := range vs {
				cp[i] = r.Text(v)
			}
			h[k] = cp
		}
		u.Header = h
	}
	if u.APIError != nil {
		e := *u.APIError
		e.Message = r.Text(e.Message)
		u.APIError = &e
	}
	if u.Request != nil {
		c := *u.Request
		c.Path, c.Body = r.Text(c.Path), r.JSON(c.Body)
		if r.HasPatterns() && c.Headers != nil {
			hs := make(map[string]string, len(c.Headers))
			for k, v := range c.Headers {
				hs[k] = r.Text(v)
			}
			c.Headers = hs
		}
		u.Request = &c
	}
	if len(u.Layers) > 0 {
		ls := append([]session.LayerResult{}, u.Layers...)
		for i := range ls {
			ls[i].Detail = r.Text(ls[i].Detail)
		}
		u.Layers = ls
	}
	if len(u.ResponseBody) > 0 {
		u.ResponseBody = r.JSON(u.ResponseBody)
	}
	if u.Step != nil {
		st := *u.Step
		sealBodyStep(&st, r)
		u.Step = &st
	}
	if u.Summary != nil {
		s := *u.Summary
		sealBodySummary(&s, r)
		u.Summary = &s
	}
	if u.Proposal != nil {
		p := *u.Proposal
		p.Arguments = r.JSONStrings(p.Arguments)
		u.Proposal = &p
	}
	if u.Decision != nil {
		d := *u.Decision
		d.Arguments, d.Reason = r.JSONStrings(d.Arguments), r.Text(d.Reason)
		u.Decision = &d
	}
	if u.Result != nil {
		res := *u.Result
		res.Content = r.Text(res.Content)
		u.Result = &res
	}
	if len(u.Output) > 0 {
		u.Output = r.JSONStrings(u.Output)
	}
}

// sealBodyStep applies the rules to a step: its raw data as a JSON
// document (pointers and patterns), its events' texts by the patterns.
func sealBodyStep(st *adapters.Step, r *redact.BodyRules) {
	if st.Raw.Data != "" {
		st.Raw.Data = string(r.JSON([]byte(st.Raw.Data)))
	}
	if !r.HasPatterns() || len(st.Events) == 0 {
		return
	}
	evs := make([]adapters.Event, len(st.Events))
	for i, ev := range st.Events {
		ev.Delta, ev.Detail = r.Text(ev.Delta), r.Text(ev.Detail)
		if ev.Final != nil {
			f := r.Text(*ev.Final)
			ev.Final = &f
		}
		if len(ev.Arguments) > 0 {
			ev.Arguments = r.JSONStrings(ev.Arguments)
		}
		if ev.Error != nil {
			e := *ev.Error
			e.Message = r.Text(e.Message)
			ev.Error = &e
		}
		evs[i] = ev
	}
	st.Events = evs
}

// sealBodySummary applies the patterns to a summary's texts and tool
// arguments.
func sealBodySummary(s *adapters.Summary, r *redact.BodyRules) {
	if !r.HasPatterns() {
		return
	}
	s.Text, s.Reasoning = r.Text(s.Text), r.Text(s.Reasoning)
	if s.Refusal != nil {
		t := r.Text(*s.Refusal)
		s.Refusal = &t
	}
	if len(s.ToolCalls) > 0 {
		tc := append([]adapters.ToolCall(nil), s.ToolCalls...)
		for i := range tc {
			tc[i].Arguments = r.JSONStrings(tc[i].Arguments)
		}
		s.ToolCalls = tc
	}
	if len(s.IncompleteToolCalls) > 0 {
		ic := append([]adapters.IncompleteCall(nil), s.IncompleteToolCalls...)
		for i := range ic {
			ic[i].PartialArguments = r.Text(ic[i].PartialArguments)
		}
		s.IncompleteToolCalls = ic
	}
	if s.Error != nil {
		e := *s.Error
		e.Message = r.Text(e.Message)
		s.Error = &e
	}
	if len(s.Diagnostics) > 0 {
		ds := append([]adapters.Diagnostic(nil), s.Diagnostics...)
		for i := range ds {
			ds[i].Detail = r.Text(ds[i].Detail)
		}
		s.Diagnostics = ds
	}
}

// titleText is the first user text for the session's title: read from
// the recorded (redacted) body when body rules are set.
func (x *exchange) titleText() string {
	r := x.scrub.body
	if !r.Active() || x.req.protocol == "" {
		return x.req.firstUser
	}
	if len(x.recBody) == 0 {
		return r.Text(x.req.firstUser)
	}
	return r.Text(readRequest(x.req.protocol, strings.SplitN(x.path, "?", 2)[0], x.recBody).firstUser)
}

// redecode records a whole body's events as decoded from the redacted
// body when the rules' pointers change it (a pointer may name the text
// itself): the step's events and the summary recorded are the redacted
// body's; the summary judged stays the original's.
func (x *exchange) redecode(prot adapters.Protocol, b []byte, step *adapters.Step) {
	r := x.scrub.body
	if r == nil || len(r.Pointers) == 0 {
		return
	}
	rb := r.JSON(b)
	if string(rb) == string(b) {
		return
	}
	st := adapters.NewStream(prot)
	step.Raw.Data, step.Events = string(rb), st.FeedBody(rb)
	s := st.Summary()
	x.recSum = &s
}

// shadow decodes a stream a second time, from its raw events as the
// rules' pointers redact them, so that what a pointer names (a delta's
// text, say) is in neither the raw events nor the events and summary
// recorded. Nil without pointers: the stream is decoded once.
type shadow struct {
	r  *redact.BodyRules
	st *adapters.Stream
}

func newShadow(prot adapters.Protocol, r *redact.BodyRules) *shadow {
	if r == nil || len(r.Pointers) == 0 {
		return nil
	}
	return &shadow{r: r, st: adapters.NewStream(prot)}
}

// step replaces a step's raw data and events by the redacted ones.
func (sh *shadow) step(step *adapters.Step) {
	if step.Index < 0 {
		step.Events = sh.st.End(endDiags(step.Events)...)
		return
	}
	raw := step.Raw
	raw.Data = string(sh.r.Pointed([]byte(raw.Data)))
	step.Raw, step.Events = raw, sh.st.Feed(raw)
}

// summary is the redacted stream's summary.
func (sh *shadow) summary() *adapters.Summary {
	s := sh.st.Summary()
	return &s
}

// endDiags are the diagnostics the reading of a stream added at its end
// (adapters.ReadStream), which the shadow's end must carry too.
func endDiags(evs []adapters.Event) []adapters.Event {
	var out []adapters.Event
	for _, ev := range evs {
		if ev.Type != adapters.EvDiagnostic {
			continue
		}
		switch ev.Kind {
		case adapters.DiagReadError, adapters.DiagEventTooLarge, adapters.DiagDiscardedTail, adapters.DiagBOMStripped,
			adapters.DiagBareCR, adapters.DiagInvalidUTF8:
			out = append(out, adapters.Diag(ev.Kind, ev.Detail))
		}
	}
	return out
}
