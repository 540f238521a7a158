package session

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/registry"
)

// Resend makes a fork re-send an application's own requests (a proxied
// or imported session): modelwire has neither the application's sources
// nor its tools, only what it sent. The fork's first request is the
// parent's, as the application sent it (edits made); each later one is
// the request before it plus the answer and the results fed back, in the
// protocol's own words (AppendTurn). A result can only be fed back where
// the parent also ran the call: Ran finds it.
type Resend struct {
	First *adapters.HTTPRequest
	// Ran is the parent's result for a call it also made, from the fork's
	// turn on (same name, semantically equal arguments; an edited result
	// where the fork edits it); false when the parent never ran it.
	Ran func(name string, args json.RawMessage) (adapters.ToolResult, bool)
	// Later are the parent's request bodies of the turns after the first,
	// by turn: what the application sent besides the conversation (a tool
	// choice it changes for the last turn, say) is taken from there.
	Later map[int][]byte
	// Judge, when set, gives the verdicts on the last exchange (the
	// proxy's judge, as the parent was judged); a fork that stopped is
	// judged by Validate, which names why.
	Judge func(last *adapters.HTTPRequest, o Outcome) []LayerResult
}

// next is the request of the turn after the history's last: the first
// request, or the one sent before with the last turn appended.
func (r *Resend) next(protocol, provider string, turn int, sent []*adapters.HTTPRequest, history []adapters.Turn) (*adapters.HTTPRequest, error) {
	if len(sent) == 0 {
		return cloneRequest(r.First, r.First.Body), nil
	}
	last := sent[len(sent)-1]
	body, err := AppendTurn(protocol, provider, last.Body, history[len(history)-1])
	if err != nil {
		return nil, err
	}
	// The parent's request of this turn gives the members besides the
	// conversation, unless it chains on the parent's stored response (a
	// chain the fork's answer is not in).
	field := historyField(protocol)
	if later := r.Later[turn]; later != nil && !chains(protocol, later) {
		if v := gjson.GetBytes(later, field); v.Exists() {
			body = adapters.Splice(later, v, gjson.GetBytes(body, field).Raw)
		}
	}
	return cloneRequest(last, body), nil
}

func cloneRequest(r *adapters.HTTPRequest, body []byte) *adapters.HTTPRequest {
	h := make(map[string]string, len(r.Headers))
	for k, v := range r.Headers {
		h[k] = v
	}
	return &adapters.HTTPRequest{Method: r.Method, Path: r.Path, Headers: h, Body: append(json.RawMessage(nil), body...)}
}

// unran lists the calls the parent never ran, as "name arguments".
func (r *Resend) unran(calls []adapters.ToolCall) []string {
	var out []string
	for _, c := range calls {
		if _, ok := r.Ran(c.Name, c.Arguments); !ok {
			out = append(out, c.Name+" "+string(c.Arguments))
		}
	}
	return out
}

// chainField names the member by which a protocol's request continues a
// stored conversation ("" for none): its descriptor's ChainField.
func chainField(protocol string) string {
	d, _ := registry.Describe(protocol)
	return d.ChainField
}

// chains reports whether a request body continues a stored conversation.
func chains(protocol string, body []byte) bool {
	chain := chainField(protocol)
	return chain != "" && gjson.GetBytes(body, chain).String() != ""
}

// historyField is where a protocol's request carries the conversation:
// its descriptor's HistoryField.
func historyField(protocol string) string {
	d, _ := registry.Describe(protocol)
	return d.HistoryField
}

// AppendTurn adds a model turn (its output items, then the results fed
// back) to the conversation a request body carries, in the protocol's own
// words: the protocol's encoder writes the turn — the same code that
// writes every history modelwire sends — and its new items are spliced
// into the body after the application's, every other byte left as the
// application sent it. A Responses or Interactions body that chains on a
// previous response carries only what is new: it chains on this turn's
// response and sends the results alone.
func AppendTurn(protocol, provider string, body []byte, t adapters.Turn) ([]byte, error) {
	p, err := registry.Lookup(protocol)
	if err != nil {
		return nil, err
	}
	field := historyField(protocol)
	root := gjson.ParseBytes(body)
	chain := chainField(protocol)
	chained := chains(protocol, body)
	if chained && t.ResponseID == "" {
		return nil, fmt.Errorf("the request chains on %s, and the answer has no id to chain on", chain)
	}
	// The encoder writes a one-source conversation without the turn, and
	// with it (chained: with it as history, so only what follows it is
	// written): what the second adds is the turn.
	base := adapters.Request{Model: root.Get("model").String(), Output: adapters.OutputContract{Mode: adapters.OutputText},
		Sources: []adapters.Source{{ID: "user", Role: adapters.RoleUser, Trust: adapters.TrustTrusted, Text: "."}}}
	if base.Model == "" {
		base.Model = "model"
	}
	with := base
	with.Turns = []adapters.Turn{t}
	if chained {
		with.History = adapters.HistoryPreviousResponse
	}
	w0, err := p.Encode(&base, provider)
	if err != nil {
		return nil, fmt.Errorf("writing the turn in %s's words: %w", protocol, err)
	}
	w1, err := p.Encode(&with, provider)
	if err != nil {
		return nil, fmt.Errorf("writing the turn in %s's words: %w", protocol, err)
	}
	before := adapters.HistoryArray(gjson.GetBytes(w0.Body, field))
	after := adapters.HistoryArray(gjson.GetBytes(w1.Body, field))
	added := after
	if !chained {
		if len(after) < len(before) {
			return nil, fmt.Errorf("writing the turn in %s's words: the encoder wrote no history", protocol)
		}
		added = after[len(before):]
	}
	raws := make([]string, len(added))
	for i, a := range added {
		raws[i] = a.Raw
	}
	if chained {
		out := adapters.Splice(body, root.Get(chain), mustJSON(t.ResponseID))
		return adapters.Splice(out, gjson.GetBytes(out, field), "["+strings.Join(raws, ",")+"]"), nil
	}
	return adapters.AppendHistory(protocol, body, field, raws)
}

// CarriedResults pairs a turn's calls (call_id and name each) with the
// results the next request carries back for them: by call_id, or for a
// Gemini call without one by name, in order, among the results that
// request adds to those of body, the turn's own request (a request that
// chains on a stored response carries only new ones). It returns next's
// results and, per call, the index of its result there (-1: none).
func CarriedResults(protocol string, body, next []byte, calls [][2]string) ([]adapters.BodyResult, []int) {
	rs := adapters.BodyResults(protocol, next)
	from := 0
	if !chains(protocol, next) {
		from = min(len(adapters.BodyResults(protocol, body)), len(rs))
	}
	at := make([]int, len(calls))
	taken := map[int]bool{}
	for i, c := range calls {
		at[i] = -1
		for j := from; j < len(rs); j++ {
			r := rs[j]
			if !taken[j] && (r.CallID != "" && r.CallID == c[0] || r.CallID == "" && r.Name == c[1]) {
				taken[j], at[i] = true, j
				break
			}
		}
	}
	return rs, at
}

// mustJSON is v as the encoders write JSON (adapters.MarshalBody: no HTML
// escaping); v is always one that encodes.
func mustJSON(v any) string {
	b, _ := adapters.MarshalBody(v)
	return string(b)
}

// ResendScenario stands in for the application in a fork that re-sends
// its requests: the tools its request offers (their schemas gate the
// proposals as a scenario's do; a tool given without a JSON Schema takes
// any object), the output schema it asks for (the parse and schema layers
// judge the answer against it), and as each tool's executor the parent's
// recorded result. It has no business checks: modelwire does not know the
// application's rules.
func ResendScenario(title, model string, output adapters.OutputContract, tools map[string]json.RawMessage, ran func(name string, args json.RawMessage) (adapters.ToolResult, bool)) (*Scenario, error) {
	sc := &Scenario{Title: title, Model: model, Output: output, Executors: map[string]Executor{}, application: true}
	for _, name := range slices.Sorted(maps.Keys(tools)) {
		schema := tools[name]
		if len(schema) == 0 {
			schema = json.RawMessage(`{"type":"object"}`)
		}
		sc.Tools = append(sc.Tools, ScenarioTool{Tool: adapters.Tool{Name: name, Parameters: schema}})
		sc.Executors[name] = func(_ context.Context, args json.RawMessage) (string, bool) {
			r, ok := ran(name, args)
			if !ok {
				return fmt.Sprintf("the parent session never ran %s with these arguments: modelwire has no result to send", name), true
			}
			return r.Content, r.IsError
		}
	}
	if err := sc.prepare(); err != nil {
		return nil, err
	}
	return sc, nil
}
