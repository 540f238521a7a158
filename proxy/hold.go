package proxy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
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
// Editing is not offered: the proxy does not rewrite responses.

// holdStatus is the status a rejected response is replaced with.
const holdStatus = http.StatusForbidden

// editRefused is what the decider is told when it answers with an edit.
const editRefused = "hold mode passes a response on unchanged or replaces it with an error: editing the arguments is not available here; approve or reject"

// hold buffers the response, asks, and answers the client.
func (p *Proxy) hold(w http.ResponseWriter, r *http.Request, x *exchange, resp *http.Response, sp *spool) {
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
	if rejected == "" && len(sum.ToolCalls) > 0 {
		rejected = p.decide(r, x, sum.ToolCalls)
	}
	if rejected == "" {
		close(x.tail)
		copyHeader(w.Header(), resp.Header)
		w.WriteHeader(resp.StatusCode)
		_, _ = w.Write(buf.Bytes())
		copyTrailers(w, resp)
		return
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
// approved, else what was rejected and why. The decisions are recorded.
func (p *Proxy) decide(r *http.Request, x *exchange, calls []adapters.ToolCall) string {
	p.holdMu.Lock()
	defer p.holdMu.Unlock()
	rejected := ""
	for i, c := range calls {
		prop := session.Proposal{Turn: x.turn, Index: i, Of: len(calls), CallID: c.CallID, Name: c.Name, Arguments: c.Arguments, Known: true, NoEdit: true}
		prop.Violations = x.checkCall(c)
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
		d := p.ask(r, &prop)
		decided := prop
		x.tail <- session.Update{Kind: session.UpDecision, Turn: x.turn, Proposal: &decided, Decision: &d}
		if d.Kind != session.Approved {
			rejected = fmt.Sprintf("the operator rejected the tool call %s (%s): %s", c.Name, c.CallID, d.Reason)
		}
	}
	return rejected
}

// ask gets one decision: an edit is refused (asked again, three times at
// most), an approved call that fails its schema is rejected by the gate.
func (p *Proxy) ask(r *http.Request, prop *session.Proposal) session.Decision {
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
			if try == 2 {
				return session.Decision{Kind: session.Rejected, Reason: "edited three times; " + editRefused, By: "hold"}
			}
			prop.EditError = editRefused
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
