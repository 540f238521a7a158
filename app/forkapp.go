package app

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/registry"
	"github.com/modelwire/modelwire/diff"
	"github.com/modelwire/modelwire/jsonschema"
	"github.com/modelwire/modelwire/proxy"
	"github.com/modelwire/modelwire/redact"
	"github.com/modelwire/modelwire/samples"
	"github.com/modelwire/modelwire/session"
	"github.com/modelwire/modelwire/store"
	"github.com/modelwire/modelwire/validate"
)

// A fork of an application's session — recorded by the proxy, or imported
// — cannot assemble its requests: modelwire has the application's wire,
// not its sources or tools. So it re-sends turn N's request as the
// application sent it (the recorded body, URL and headers; keys from the
// environment, never from the store), edited, and goes on only while the
// parent's own results can answer the calls the answer proposes.

// IsApplication reports whether a session is an application's (its
// requests are the application's wire, not a scenario's sources).
func IsApplication(s *store.Session) bool { return s.Scenario == "" || s.Source == "proxy" }

// parentCall is a call the parent's model proposed, with the result the
// application fed back for it where a later request carries one.
type parentCall struct {
	turn      int
	callID    string
	name      string
	arguments any
	result    *adapters.BodyResult
	// index is the result's place among the results of the request that
	// first carries it (a full history carries it there ever after).
	index int
}

// planResend plans a fork of an application's session at turn.
func planResend(s *store.Session, turns []store.TurnRecord, turn int, e ForkEdits) (*ForkPlan, error) {
	bad := func(format string, a ...any) error { return &SetupError{fmt.Errorf(format, a...)} }
	if e.Protocol != "" && e.Protocol != s.Protocol {
		return nil, bad("--protocol: session %s is an application's (%s): modelwire has only its requests as sent, not its sources, so it cannot re-assemble them in %s's words (--provider or --base-url send them elsewhere)", s.ID, s.Origin(), e.Protocol)
	}
	if s.Protocol == "" {
		return nil, bad("session %s: its requests are not a protocol modelwire decodes, so they cannot be re-sent", s.ID)
	}
	var rec store.TurnRecord
	for _, t := range turns {
		if t.Turn == turn {
			rec = t
		}
	}
	first, err := recordedRequest(rec.Attempt)
	if err != nil {
		return nil, bad("turn %d: %v", turn, err)
	}
	p := &ForkPlan{Parent: s, Turn: turn, Results: map[store.CallRef]string{}, edits: e, Changed: map[string]string{}}
	for _, c := range []struct{ name, v, old string }{{"provider", e.Provider, s.Provider}, {"model", e.Model, s.Model}} {
		if c.v != "" && c.v != c.old {
			p.Changed[c.name] = c.v
		}
	}
	calls := parentCalls(s.Protocol, turns)

	// Edited results: one the turn's request carries is edited where it
	// sits; one the parent got later is fed back in place of its own.
	if err := p.resolveAppResults(calls, e.Results); err != nil {
		return nil, err
	}
	for ref, content := range p.Results {
		if ref.Turn >= turn {
			continue
		}
		i := slices.IndexFunc(calls, func(c parentCall) bool { return c.turn == ref.Turn && c.callID == ref.CallID })
		rs := adapters.BodyResults(s.Protocol, first.Body)
		if calls[i].result == nil || calls[i].index >= len(rs) || !sameResult(rs[calls[i].index], *calls[i].result) {
			return nil, bad("--tool-result %s: turn %d's request does not carry that result (it chains on the provider's stored conversation)", ref.CallID, turn)
		}
		first.Body = adapters.EditResult(s.Protocol, first.Body, rs[calls[i].index], content)
	}
	if m, ok := p.Changed["model"]; ok {
		if first, err = withModel(s.Protocol, first, m); err != nil {
			return nil, bad("--model: %v", err)
		}
	}

	// Body edits (--set, --body) are made on every request the fork sends,
	// as for a scenario's fork; they are checked on this one.
	if err := p.bodyEdits(rec.Attempt.RequestBody); err != nil {
		return nil, err
	}
	if len(p.ops) > 0 {
		if _, err := diff.Apply(first.Body, p.ops); err != nil {
			return nil, bad("--set: %v (in turn %d's request)", err, turn)
		}
	}

	ran := func(name string, args json.RawMessage) (adapters.ToolResult, bool) {
		want, err := jsonschema.ParseJSON(args)
		if err != nil {
			return adapters.ToolResult{}, false
		}
		for _, c := range calls {
			if c.turn < turn || c.result == nil || c.name != name || !diff.Equal(c.arguments, want) {
				continue
			}
			r := adapters.ToolResult{CallID: c.callID, Name: name, Content: c.result.Content, IsError: c.result.IsError}
			if ed, ok := p.Results[store.CallRef{Turn: c.turn, CallID: c.callID}]; ok {
				r.Content = ed
			}
			return r, true
		}
		return adapters.ToolResult{}, false
	}
	tools, schema, schemaName := proxy.Contract(s.Protocol, first.Path, first.Body)
	out := adapters.OutputContract{Mode: adapters.OutputText}
	if len(schema) > 0 {
		out = adapters.OutputContract{Mode: adapters.OutputJSONSchema, Name: schemaName, Schema: schema}
	}
	model := s.Model
	if m, ok := p.Changed["model"]; ok {
		model = m
	}
	sc, err := session.ResendScenario(s.Title, model, out, tools, ran)
	if err != nil {
		return nil, bad("turn %d's request: %v", turn, err)
	}
	// Turns are numbered as the parent's: the limit counts from its last.
	sc.TurnLimit = turns[len(turns)-1].Turn + 8
	later := map[int][]byte{}
	for _, t := range turns {
		if t.Turn > turn {
			later[t.Turn] = t.Attempt.RequestBody
		}
	}
	protocol := s.Protocol
	judge := func(last *adapters.HTTPRequest, o validate.Outcome) []validate.LayerResult {
		return proxy.JudgeExchange(protocol, last.Path, last.Body, o.HTTPStatus, o.TransportErr, o.Final)
	}
	p.app = &appFork{scenario: sc, resend: &session.Resend{First: first, Ran: ran, Later: later, Judge: judge}, stream: streamed(s.Protocol, first)}
	return p, nil
}

// appFork is what a fork of an application's session sends and how it
// stands in for the application.
type appFork struct {
	scenario *session.Scenario
	resend   *session.Resend
	stream   bool
}

// recordedRequest is a recorded attempt's request as the fork sends it
// again: its path and query (without key parameters), its headers without
// the keys and the transport's own (the provider's key is added from the
// environment as for run), its body.
func recordedRequest(a store.Attempt) (*adapters.HTTPRequest, error) {
	if len(a.RequestBody) == 0 || !gjson.ValidBytes(a.RequestBody) || !gjson.ParseBytes(a.RequestBody).IsObject() {
		return nil, fmt.Errorf("the recorded request body is not a JSON object")
	}
	u, err := url.Parse(a.URL)
	if err != nil || u.Path == "" {
		return nil, fmt.Errorf("the recorded URL %q has no path", a.URL)
	}
	path := u.Path
	q := u.Query()
	for k, vs := range q {
		if redact.IsSecretName(k) || slices.ContainsFunc(vs, func(v string) bool { return strings.Contains(v, store.Redacted) }) {
			q.Del(k)
		}
	}
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	h := map[string]string{}
	for k, vs := range a.RequestHeader {
		if redact.IsSecretName(k) {
			continue
		}
		switch strings.ToLower(k) {
		case "host", "content-length", "accept-encoding", "connection", "transfer-encoding", "keep-alive", "te", "upgrade":
			continue
		}
		if len(vs) == 0 || strings.Contains(vs[0], store.Redacted) {
			continue
		}
		h[http.CanonicalHeaderKey(k)] = strings.Join(vs, ", ")
	}
	if _, ok := h["Content-Type"]; !ok {
		h["Content-Type"] = "application/json"
	}
	method := a.Method
	if method == "" {
		method = http.MethodPost
	}
	return &adapters.HTTPRequest{Method: method, Path: path, Headers: h, Body: append(json.RawMessage(nil), a.RequestBody...)}, nil
}

// parentCalls lists the calls the parent's turns proposed, each with the
// result the next request fed back for it (matched by call_id, or for
// Gemini calls without ids by name, in order).
func parentCalls(protocol string, turns []store.TurnRecord) []parentCall {
	var out []parentCall
	for i, t := range turns {
		var items []adapters.OutputItem
		var ids [][2]string
		for _, it := range t.History().Items {
			if it.Kind == adapters.KindToolCall {
				items = append(items, it)
				ids = append(ids, [2]string{it.CallID, it.Name})
			}
		}
		var next []adapters.BodyResult
		at := make([]int, len(items))
		if i+1 < len(turns) {
			next, at = session.CarriedResults(protocol, t.Attempt.RequestBody, turns[i+1].Attempt.RequestBody, ids)
		}
		for k, it := range items {
			args, _ := jsonschema.ParseJSON(it.Arguments)
			c := parentCall{turn: t.Turn, callID: it.CallID, name: it.Name, arguments: args}
			if i+1 < len(turns) && at[k] >= 0 {
				c.result, c.index = &next[at[k]], at[k]
			}
			out = append(out, c)
		}
	}
	return out
}

func sameResult(a, b adapters.BodyResult) bool {
	return a.CallID == b.CallID && a.Name == b.Name && a.Content == b.Content
}

// resolveAppResults finds each edited result's call among the parent's
// calls: a call_id alone must name one call (Gemini's calls may have no
// id: then the call is named by its tool, with the turn).
func (p *ForkPlan) resolveAppResults(calls []parentCall, results []ForkResult) error {
	bad := func(format string, a ...any) error { return &SetupError{fmt.Errorf(format, a...)} }
	var known []string
	for _, c := range calls {
		if c.result != nil && !slices.Contains(known, c.callID) {
			known = append(known, c.callID)
		}
	}
	for _, r := range results {
		callID, turn := r.Ref, 0
		if t, c, ok := strings.Cut(r.Ref, ":"); ok {
			if n, err := strconv.Atoi(t); err == nil {
				callID, turn = c, n
			}
		}
		var match []parentCall
		for _, c := range calls {
			if (c.callID == callID || c.name == callID) && c.result != nil && (turn == 0 || c.turn == turn) {
				match = append(match, c)
			}
		}
		switch {
		case len(known) == 0:
			return bad("--tool-result %s: session %s fed back no tool results", r.Ref, p.Parent.ID)
		case len(match) == 0:
			return bad("--tool-result %s: no call with a recorded result is named so (there are %s)", r.Ref, strings.Join(known, ", "))
		case len(match) > 1:
			var where []string
			for _, c := range match {
				where = append(where, fmt.Sprintf("%d:%s", c.turn, c.callID))
			}
			return bad("--tool-result %s: that names several calls (%s); name one as TURN:CALL_ID", r.Ref, strings.Join(where, ", "))
		}
		p.Results[store.CallRef{Turn: match[0].turn, CallID: match[0].callID}] = strings.TrimRight(r.Content, "\r\n")
	}
	return nil
}

// withModel asks for another model: in the URL path for a protocol whose
// descriptor names the model there (Gemini's models/{model}:generateContent),
// else the body's model.
func withModel(protocol string, r *adapters.HTTPRequest, model string) (*adapters.HTTPRequest, error) {
	if d, ok := registry.Describe(protocol); ok && d.ModelInPath() {
		path, ok := d.WithPathModel(r.Path, model)
		if !ok {
			p, _, _ := strings.Cut(r.Path, "?")
			return nil, fmt.Errorf("the recorded path %s names no model", p)
		}
		r.Path = path
		return r, nil
	}
	body, err := diff.Apply(r.Body, []diff.Op{{Path: []string{"model"}, Value: model}})
	if err != nil {
		return nil, err
	}
	r.Body = body
	return r, nil
}

// streamed says whether the request asks for a stream, as its protocol's
// descriptor reads it (the body's switch or the path's action); the body's
// stream for a protocol the registry does not know.
func streamed(protocol string, r *adapters.HTTPRequest) bool {
	if d, ok := registry.Describe(protocol); ok {
		return d.Declared(r.Path, gjson.ParseBytes(r.Body)).Stream
	}
	return gjson.GetBytes(r.Body, "stream").Bool()
}

// appSetup is the setup of a fork of an application's session: the
// stand-in scenario, the parent's protocol, its provider and base URL
// (or the changed ones; the simulator, when it answers, plays what
// `proxy --upstream sim` plays).
func (p *ForkPlan) appSetup(st *session.Setup) error {
	st.Scenario, st.Stream, st.History = p.app.scenario, p.app.stream, adapters.HistoryFull
	if st.Provider == adapters.ProviderSim && st.BaseURL == "" {
		sc, err := samples.Lookup("refund")
		if err != nil {
			return err
		}
		st.Simulate = sc
	}
	return nil
}
