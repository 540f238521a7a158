package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/registry"
	"github.com/modelwire/modelwire/session"
)

// What the rules do to a request before it leaves: edit its body, wait,
// hold it for a person, or answer it without the upstream (a fault, a
// stored session played back).

// Faults a rule may inject. The HTTP ones answer as the simulator's
// faults of the same names do (the provider's own error, from the
// protocol's simulator side); FaultDisconnect cuts the response to the
// client after its third event, as a dropped connection does.
const FaultDisconnect = "disconnect"

type faultAnswer struct {
	status        int
	kind, message string
	retryAfter    string
}

// faultAnswers are the simulator's answers (sim/ratelimit.go, sim/server.go
// requestFault), which proxy may not import: TestRuleFaultsAnswerAsTheSimulator
// holds them equal.
var faultAnswers = map[string]faultAnswer{
	"rate-limit":      {http.StatusTooManyRequests, "rate_limit", rateLimited, "1"},
	"rate-limit-long": {http.StatusTooManyRequests, "rate_limit", rateLimited, "120"},
	"server-error":    {http.StatusInternalServerError, "server_error", "The server had an error while processing your request. Sorry about that!", ""},
	"overloaded":      {529, "overloaded_error", "Overloaded", ""},
}

const rateLimited = "Rate limit reached for requests. Please try again later."

// FaultNames are the faults a rule may name.
func FaultNames() []string {
	out := []string{FaultDisconnect}
	for k := range faultAnswers {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// cutAfterEvents is where FaultDisconnect cuts a response.
const cutAfterEvents = 3

// HeldRequest is a request put to a person by a hold rule.
type HeldRequest struct {
	Protocol, Path string
	Turn           int
	Body           []byte // as it would leave now
}

// RequestHolder lets a person edit (or pass) a held request: it returns
// the body to send.
type RequestHolder func(ctx context.Context, h HeldRequest) ([]byte, error)

// info is what a match sees of the exchange.
func (x *exchange) info(path string, tools []string) matchInfo {
	return matchInfo{protocol: x.req.protocol, path: path, model: x.req.model, turn: x.turn, tools: tools}
}

func (x *exchange) offered() []string {
	names := make([]string, 0, len(x.req.toolSchemas))
	for n := range x.req.toolSchemas {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// requestRules runs the request's rules. It returns the body to send and,
// when a rule answers for the upstream, the response to use instead.
func (p *Proxy) requestRules(r *http.Request, x *exchange, body []byte, gzipped bool) ([]byte, *http.Response) {
	rs := p.opts.Rules.Get()
	if rs == nil || x.req.protocol == "" {
		return body, nil
	}
	rules := rs.matching(DirRequest, x.info(r.URL.Path, x.offered()))
	// Response rules that may apply hold the response whole; whether they
	// act is known once it is decoded (a tool name, say).
	x.respRules = rs.matching(DirResponse, matchInfo{protocol: x.req.protocol, path: r.URL.Path, model: x.req.model, turn: x.turn, anyTool: true})
	x.rulesSource = rs.Source
	orig := body
	by := []string{}
	for _, rule := range rules {
		who := rule.who(rs.Source)
		switch {
		case rule.Delay > 0:
			select {
			case <-time.After(rule.Delay):
			case <-r.Context().Done():
			}
		case rule.Edit != nil:
			if gzipped {
				p.log.Warn("a request edit rule skipped: the body is gzip-encoded", "rule", who)
				continue
			}
			nb, err := editRequest(body, rule.Edit)
			if err != nil {
				p.log.Warn("a request edit rule failed; the request goes unchanged by it", "rule", who, "err", err.Error())
				continue
			}
			body = nb
			by = append(by, who)
		case rule.Hold:
			if p.opts.HoldRequest == nil || gzipped {
				continue
			}
			nb, err := p.opts.HoldRequest(r.Context(), HeldRequest{Protocol: x.req.protocol, Path: r.URL.Path, Turn: x.turn, Body: body})
			if err != nil || !json.Valid(nb) {
				continue // no decision, or not JSON: the request goes as it was
			}
			if !bytes.Equal(nb, body) {
				body = nb
				by = append(by, "person (held by "+who+")")
			}
		case rule.Fault == FaultDisconnect:
			x.cut = cutAfterEvents
		case rule.Fault != "":
			x.ruled = fmt.Sprintf("answered by %s with the fault %s, not forwarded", who, rule.Fault)
			return p.edited(x, orig, body, by), faultResponse(x.req.protocol, rule.Fault)
		case rule.Replace != "":
			x.ruled = fmt.Sprintf("answered by %s with stored session %s, not forwarded", who, rule.Replace)
			return p.edited(x, orig, body, by), p.replay(r, rule.Replace, body)
		}
	}
	return p.edited(x, orig, body, by), nil
}

// edited notes a request edit: the recorder stores the edited body as the
// request and a decision with the original beside it.
func (p *Proxy) edited(x *exchange, orig, body []byte, by []string) []byte {
	if len(by) == 0 {
		return body
	}
	key, history := x.req.key, x.req.history
	x.req = readRequest(x.req.protocol, x.urlPath, body)
	// The conversation was linked by what the application sent; its retry
	// and its next turn will quote that, not the edit.
	x.req.key, x.req.history = key, history
	x.recBody = x.scrub.request(body)
	reason := "request edited by " + joinAnd(by)
	x.pre = append(x.pre, session.Update{Kind: session.UpDecision, Turn: x.turn,
		Proposal: &session.Proposal{Turn: x.turn, CallID: EditedRequest, Name: EditedRequest, Arguments: jsonOrNil(x.scrub.request(orig)), Known: true},
		Decision: &session.Decision{Kind: session.Edited, Arguments: jsonOrNil(x.recBody), Reason: reason, By: by[0]}})
	return body
}

// EditedRequest is the name a request edit's decision is stored under
// (Arguments the body the application sent, Edited the one that left):
// session's, which the workbench reads too.
const EditedRequest = session.EditedRequest

func joinAnd(s []string) string {
	out := ""
	for i, v := range s {
		if i > 0 {
			out += ", then "
		}
		out += v
	}
	return out
}

// faultResponse is the provider's own error for an HTTP fault.
func faultResponse(protocol, name string) *http.Response {
	f := faultAnswers[name]
	var e *adapters.SimError
	if prot, err := registry.Lookup(protocol); err == nil {
		if simp, ok := prot.(adapters.Simulated); ok {
			e = simp.ErrorResponse(f.status, f.kind, f.message)
		}
	}
	if e == nil {
		b, _ := jsonMarshal(map[string]any{"error": map[string]any{"message": f.message, "type": f.kind}})
		e = &adapters.SimError{Status: f.status, Body: b}
	}
	h := http.Header{}
	for k, v := range e.Header {
		h[k] = v
	}
	h.Set("Content-Type", "application/json")
	if f.retryAfter != "" {
		h.Set("Retry-After", f.retryAfter)
	}
	h.Set("X-Modelwire-Rule", "fault "+name)
	return synthResponse(e.Status, h, e.Body)
}

// replay answers with a stored session's recorded response for this
// request (Options.Replay: vcr's matching and playback), or a 502 saying
// why it cannot.
func (p *Proxy) replay(r *http.Request, id string, body []byte) *http.Response {
	if p.opts.Replay == nil {
		return proxyErrorResponse(http.StatusBadGateway, "modelwire proxy: a replace rule needs the proxy's database (no --db)")
	}
	h, err := p.opts.Replay(id)
	if err != nil {
		return proxyErrorResponse(http.StatusBadGateway, "modelwire proxy: replace with session "+id+": "+err.Error())
	}
	req := httptest.NewRequestWithContext(r.Context(), http.MethodPost, r.URL.RequestURI(), bytes.NewReader(body))
	req.Header = r.Header.Clone()
	rec := httptest.NewRecorder() // a stored session is small enough to answer whole
	h.ServeHTTP(rec, req)
	out := rec.Result()
	out.Header.Set("X-Modelwire-Rule", "replace "+id)
	out.Header.Del("Content-Length")
	return out
}

func proxyErrorResponse(status int, msg string) *http.Response {
	b, _ := jsonMarshal(map[string]any{"error": map[string]any{"message": msg, "type": "proxy_error"}})
	h := http.Header{"Content-Type": {"application/json"}, "X-Modelwire-Proxy": {"error"}}
	return synthResponse(status, h, b)
}

func synthResponse(status int, h http.Header, body []byte) *http.Response {
	h.Set("Content-Length", strconv.Itoa(len(body)))
	return &http.Response{StatusCode: status, Header: h, Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body))}
}

// cutReader ends a stream with an error after n events (a blank line
// ends each, "\n\n" or "\r\n\r\n").
type cutReader struct {
	r      io.Reader
	left   int
	p1, p2 byte // the two bytes before
}

func (c *cutReader) Read(b []byte) (int, error) {
	if c.left <= 0 {
		return 0, errCut
	}
	n, err := c.r.Read(b)
	for i := 0; i < n; i++ {
		if b[i] == '\n' && (c.p1 == '\n' || c.p1 == '\r' && c.p2 == '\n') {
			c.left--
			if c.left == 0 {
				return i + 1, nil
			}
		}
		c.p2, c.p1 = c.p1, b[i]
	}
	return n, err
}

var errCut = fmt.Errorf("cut by a rule's %s fault after %d events", FaultDisconnect, cutAfterEvents)

// cutBytes is b up to the end of its n-th event.
func cutBytes(b []byte, n int) []byte {
	c := &cutReader{r: bytes.NewReader(b), left: n}
	var out bytes.Buffer
	_, _ = io.Copy(&out, c)
	return out.Bytes()
}
