package proxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/registry"
	"github.com/modelwire/modelwire/jsonschema"
	"github.com/modelwire/modelwire/session"
)

// Hold mode. A response to a request that offers tools is read whole
// before anything of it reaches the client (this changes its timing: a
// stream arrives at once, after the decision), decoded, and, when it
// proposes tool calls, each call is put to the decider in order. Approved
// (every call): the response is passed on byte for byte. Rejected (any
// call): the client gets instead the provider's own error — its status
// (403) and body shape, saying the operator rejected the call — so the
// application's SDK raises the error it knows. As in `run`, a call whose
// arguments fail the request's own tool schema, or that names a tool the
// request did not offer, cannot be approved: approving it rejects it.
// Edited (a call's arguments, by the decider or a rule): the response is
// rebuilt with the edit and re-encoded in the protocol's own wire format
// (rewrite.go); the session records the original, the edit, who made it
// and the bytes the application got.

// holdStatus is the status a rejected response is replaced with.
const holdStatus = http.StatusForbidden

// hold buffers the response, asks, and answers the client.
func (p *Proxy) hold(w http.ResponseWriter, r *http.Request, x *exchange, resp *http.Response, sp *spool, reqBody []byte) {
	var buf bytes.Buffer
	chunk := make([]byte, 32<<10)
	var readErr error
	tooLarge := ""
	for {
		n, err := resp.Body.Read(chunk)
		if n > 0 {
			buf.Write(chunk[:n])
			sp.write(chunk[:n], time.Now())
		}
		if int64(buf.Len()) > p.opts.MaxDecoded {
			// Held whole, a response is held in memory: past --max-decoded
			// it cannot be, and an unapproved one must not pass either.
			// Refused, as a rejection is (fail closed).
			tooLarge = fmt.Sprintf("the response passed %d bytes (--max-decoded) and cannot be held for approval", p.opts.MaxDecoded)
			readErr = errors.New(tooLarge)
			buf = bytes.Buffer{}
			break
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			readErr = err
			break
		}
	}
	if readErr != nil && r.Context().Err() != nil {
		// The client went away while the response was held.
		sp.cancel()
		<-x.summary
		close(x.tail)
		return
	}
	sp.close(readErr)
	sum := <-x.summary
	if readErr != nil && tooLarge == "" {
		// The upstream broke off: the client gets what came, cut the same way.
		close(x.tail)
		x.markFailed("the stream broke: " + readErr.Error())
		copyHeader(w.Header(), resp.Header)
		w.WriteHeader(resp.StatusCode)
		_, _ = w.Write(buf.Bytes())
		panic(http.ErrAbortHandler)
	}
	rejected := tooLarge
	var edit responseEdit
	if rejected == "" {
		rejected, edit = p.respond(r, x, sum)
	}
	if x.respFault != "" && rejected == "" {
		close(x.tail)
		p.waitRespDelay(r, x)
		writeSynth(w, faultResponse(x.req.protocol, x.respFault))
		return
	}
	if rejected == "" {
		header, out := resp.Header, buf.Bytes()
		if !edit.empty() {
			h, b, err := render(x, r, reqBody, resp.Header, sum, edit)
			if err != nil {
				// Fail closed: an edit that cannot be sent is not silently
				// dropped for the original.
				rejected = "the edit could not be re-encoded: " + err.Error()
			} else {
				header, out = h, b
				x.replaced = "edited by the proxy: the application got the edited response"
				x.tail <- clientBytes(x.turn, out)
				x.noteEdits(sum, edit)
			}
		}
		if rejected == "" {
			cut := x.cut > 0
			if cut {
				out = cutBytes(out, x.cut)
				x.markFailed(errCut.Error())
				x.replaced = errCut.Error() + ": the application's response ends there"
			}
			close(x.tail)
			p.waitRespDelay(r, x)
			copyHeader(w.Header(), header)
			if cut || !edit.empty() {
				w.Header().Del("Content-Length")
			}
			w.WriteHeader(resp.StatusCode)
			_, _ = w.Write(out)
			if cut {
				panic(http.ErrAbortHandler)
			}
			copyTrailers(w, resp)
			return
		}
	}
	e := rejection(x.req.protocol, rejected)
	x.replaced = fmt.Sprintf("held for approval and replaced by the proxy's HTTP %d: %s", e.Status, rejected)
	close(x.tail)
	for k, v := range e.Header {
		w.Header()[k] = v
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(e.Body)))
	w.Header().Set("X-Modelwire-Hold", "rejected")
	w.WriteHeader(e.Status)
	_, _ = w.Write(e.Body)
}

// decide asks about each call in order and returns "" when every call is
// approved (or edited), else what was rejected and why; edits are added to
// e. The decisions are recorded.
func (p *Proxy) decide(r *http.Request, x *exchange, calls []adapters.ToolCall, e *responseEdit) string {
	p.holdMu.Lock()
	defer p.holdMu.Unlock()
	rejected := ""
	for i, c := range calls {
		args := c.Arguments
		if a, ok := e.args[i]; ok {
			args = a // as a rule left them
		}
		prop := session.Proposal{Turn: x.turn, Index: i, Of: len(calls), CallID: c.CallID, Name: c.Name, Arguments: args, Known: true}
		prop.Violations = x.checkCall(adapters.ToolCall{CallID: c.CallID, Name: c.Name, Arguments: args})
		// Each update carries its own copy of the proposal: the recorder
		// reads it on another goroutine while ask may still note an
		// edit's error on prop.
		if rejected != "" {
			d := session.Decision{Kind: session.Rejected, Reason: "not asked: " + rejected, By: "hold"}
			sent := prop
			x.tail <- session.Update{Kind: session.UpDecision, Turn: x.turn, Proposal: &sent, Decision: &d}
			continue
		}
		asked := prop
		x.tail <- session.Update{Kind: session.UpProposal, Turn: x.turn, Proposal: &asked}
		d := p.ask(r, x, &prop)
		decided := prop
		decided.Arguments = c.Arguments // the record keeps the model's own beside the edit
		if _, ruled := e.args[i]; ruled && d.Kind == session.Approved {
			// Approved as a rule left it: the record keeps the edit (the
			// call's row holds one decision).
			d = session.Decision{Kind: session.Edited, Arguments: args, Reason: "approved as the rules edited it", By: d.By}
		}
		if d.Kind == session.Edited {
			e.setArgs(i, d.Arguments)
			d.Reason = strings.TrimPrefix(d.Reason+"; ", "; ") + "edited by " + d.By
		}
		x.tail <- session.Update{Kind: session.UpDecision, Turn: x.turn, Proposal: &decided, Decision: &d}
		if d.Kind == session.Rejected {
			rejected = fmt.Sprintf("the operator rejected the tool call %s (%s): %s", c.Name, c.CallID, d.Reason)
		}
	}
	return rejected
}

// ask gets one decision. An edit must be one JSON object that passes the
// tool's schema: otherwise the decider is asked again with the reason
// (three tries, then the call is rejected, never passed unchecked). An
// approved call that fails its schema is rejected by the gate.
func (p *Proxy) ask(r *http.Request, x *exchange, prop *session.Proposal) session.Decision {
	for try := 0; ; try++ {
		d, err := p.opts.Hold.Decide(r.Context(), *prop)
		switch {
		case err != nil:
			why := "no decision: " + err.Error()
			if r.Context().Err() != nil {
				why = "the client went away while the call waited for a decision"
			}
			return session.Decision{Kind: session.Rejected, Reason: why, By: "hold"}
		case d.Kind == session.Edited:
			args, why := checkEdited(x, prop.Name, d.Arguments)
			if why == "" {
				if d.By == "" {
					d.By = "person"
				}
				d.Arguments = args
				return d
			}
			if try == 2 {
				return session.Decision{Kind: session.Rejected, Reason: "edited three times, never valid: " + why, By: "hold"}
			}
			prop.EditError = why
			continue
		}
		if d.By == "" {
			d.By = "person"
		}
		if d.Kind == session.Approved && !prop.Valid() {
			return session.Decision{Kind: session.Rejected, Reason: "approved, but the arguments fail the tool's schema: " + jsonschema.Joined(prop.Violations), By: "gate"}
		}
		if d.Kind == session.Rejected && d.Reason == "" {
			d.Reason = "rejected by the operator"
		}
		return d
	}
}

// checkEdited checks edited arguments: one JSON object that passes the
// offered tool's schema. It returns them compact, or why not in one line.
func checkEdited(x *exchange, name string, args []byte) (json.RawMessage, string) {
	t := bytes.TrimSpace(args)
	if !json.Valid(t) {
		var v any
		err := json.Unmarshal(t, &v)
		return nil, "the edited arguments are not valid JSON: " + oneLine(fmt.Sprint(err), 200)
	}
	if len(t) == 0 || t[0] != '{' {
		return nil, "the edited arguments must be one JSON object"
	}
	var b bytes.Buffer
	_ = json.Compact(&b, t)
	if vs := x.checkCall(adapters.ToolCall{Name: name, Arguments: b.Bytes()}); len(vs) > 0 {
		return nil, "the edited arguments fail the tool's schema: " + jsonschema.Joined(vs)
	}
	return b.Bytes(), ""
}

// checkCall checks a proposed call against the tools the request offered.
func (x *exchange) checkCall(c adapters.ToolCall) []jsonschema.Violation {
	schema, offered := x.req.toolSchemas[c.Name]
	if !offered {
		return []jsonschema.Violation{{Message: fmt.Sprintf("the request offered no tool named %q", c.Name)}}
	}
	if len(schema) == 0 {
		return nil
	}
	s, err := jsonschema.CompileSchema(schema)
	if err != nil {
		return nil // a schema we cannot compile checks nothing
	}
	return s.Validate(c.Arguments)
}

// rejection is the provider's error for a rejected call: its status and
// body shape, from the adapter's simulator side.
func rejection(protocol, msg string) *adapters.SimError {
	msg = "modelwire proxy: " + msg
	if prot, err := registry.Lookup(protocol); err == nil {
		if sim, ok := prot.(adapters.Simulated); ok {
			if e := sim.ErrorResponse(holdStatus, "permission_error", msg); e != nil {
				if e.Header == nil {
					e.Header = http.Header{}
				}
				return e
			}
		}
	}
	b, _ := jsonMarshal(map[string]any{"error": map[string]any{"message": msg, "type": "permission_error"}})
	return &adapters.SimError{Status: holdStatus, Header: http.Header{}, Body: b}
}
