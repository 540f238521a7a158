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
			body = splice(later, v, gjson.GetBytes(body, field).Raw)
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
// stored conversation ("" for none).
func chainField(protocol string) string {
	return map[string]string{adapters.OpenAIResponses: "previous_response_id", adapters.GeminiInteractions: "previous_interaction_id"}[protocol]
}

// chains reports whether a request body continues a stored conversation.
func chains(protocol string, body []byte) bool {
	chain := chainField(protocol)
	return chain != "" && gjson.GetBytes(body, chain).String() != ""
}

// historyField is where a protocol's request carries the conversation.
func historyField(protocol string) string {
	switch protocol {
	case adapters.OpenAIChat, adapters.DeepSeekChat, adapters.AnthropicMessages:
		return "messages"
	case adapters.Gemini:
		return "contents"
	}
	return "input" // Responses, Interactions
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
	before := historyArray(gjson.GetBytes(w0.Body, field))
	after := historyArray(gjson.GetBytes(w1.Body, field))
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
		out := splice(body, root.Get(chain), mustJSON(t.ResponseID))
		return splice(out, gjson.GetBytes(out, field), "["+strings.Join(raws, ",")+"]"), nil
	}
	return appendItems(body, field, raws, protocol == adapters.GeminiInteractions)
}

// historyArray is a history field's items (a bare string is one message,
// an object one step, as the APIs read them).
func historyArray(v gjson.Result) []gjson.Result {
	if v.IsArray() {
		return v.Array()
	}
	if v.Exists() {
		return []gjson.Result{v}
	}
	return nil
}

// appendItems adds items at the end of the body's history array; a bare
// string or single object becomes the array's first item.
func appendItems(body []byte, field string, items []string, interactions bool) ([]byte, error) {
	if len(items) == 0 {
		return body, nil
	}
	v := gjson.GetBytes(body, field)
	if !v.Exists() {
		return nil, fmt.Errorf("the request body has no %s to continue", field)
	}
	var first string
	switch {
	case v.IsArray():
		inner := strings.TrimSpace(v.Raw[1 : len(v.Raw)-1])
		if inner != "" {
			first = v.Raw[:len(v.Raw)-1] + ","
		} else {
			first = "["
		}
		return splice(body, v, first+strings.Join(items, ",")+"]"), nil
	case v.Type == gjson.String && field == "input":
		// A bare string input is one user message (Interactions: one
		// user_input step), as HistoryItems reads it.
		msg := mustJSON(map[string]string{"role": "user", "content": v.String()})
		if interactions {
			msg = mustJSON(map[string]any{"type": "user_input", "content": []map[string]string{{"type": "text", "text": v.String()}}})
		}
		return splice(body, v, "["+msg+","+strings.Join(items, ",")+"]"), nil
	case v.IsObject():
		return splice(body, v, "["+v.Raw+","+strings.Join(items, ",")+"]"), nil
	}
	return nil, fmt.Errorf("the request body's %s is not a conversation to continue", field)
}

// splice replaces the value v (found in body) with raw JSON.
func splice(body []byte, v gjson.Result, raw string) []byte {
	out := make([]byte, 0, len(body)+len(raw))
	out = append(out, body[:v.Index]...)
	out = append(out, raw...)
	return append(out, body[v.Index+len(v.Raw):]...)
}

// mustJSON is v as the encoders write JSON (adapters.MarshalBody: no HTML
// escaping); v is always one that encodes.
func mustJSON(v any) string {
	b, _ := adapters.MarshalBody(v)
	return string(b)
}

// BodyResult is one tool result where it sits in a request body.
type BodyResult struct {
	// CallID is the call it answers ("" for a Gemini call without id:
	// then Name says which).
	CallID, Name string
	// Content is the result's text (Gemini: its response object, as the
	// output or error member it holds).
	Content string
	IsError bool
	// at is the content's value in the body.
	at gjson.Result
}

// BodyResults lists the tool results a request body carries, in order:
// Responses function_call_output, Chat and DeepSeek role:tool messages,
// Anthropic tool_result blocks, Gemini functionResponse parts,
// Interactions function_result steps.
func BodyResults(protocol string, body []byte) []BodyResult {
	root := gjson.ParseBytes(body)
	names := map[string]string{} // call id → tool name, from the calls the body carries
	var out []BodyResult
	switch protocol {
	case adapters.OpenAIResponses:
		for _, it := range historyArray(root.Get("input")) {
			switch it.Get("type").String() {
			case "function_call":
				names[it.Get("call_id").String()] = it.Get("name").String()
			case "function_call_output":
				out = append(out, BodyResult{CallID: it.Get("call_id").String(), Content: text(it.Get("output")), at: it.Get("output")})
			}
		}
	case adapters.GeminiInteractions:
		for _, it := range historyArray(root.Get("input")) {
			switch it.Get("type").String() {
			case "function_call":
				names[it.Get("id").String()] = it.Get("name").String()
			case "function_result":
				out = append(out, BodyResult{CallID: it.Get("call_id").String(), Name: it.Get("name").String(),
					Content: text(it.Get("result")), IsError: it.Get("is_error").Bool(), at: it.Get("result")})
			}
		}
	case adapters.OpenAIChat, adapters.DeepSeekChat:
		for _, m := range root.Get("messages").Array() {
			for _, c := range m.Get("tool_calls").Array() {
				names[c.Get("id").String()] = c.Get("function.name").String()
			}
			if m.Get("role").String() == "tool" {
				out = append(out, BodyResult{CallID: m.Get("tool_call_id").String(), Content: text(m.Get("content")), at: m.Get("content")})
			}
		}
	case adapters.AnthropicMessages:
		for _, m := range root.Get("messages").Array() {
			for _, b := range m.Get("content").Array() {
				switch b.Get("type").String() {
				case "tool_use":
					names[b.Get("id").String()] = b.Get("name").String()
				case "tool_result":
					out = append(out, BodyResult{CallID: b.Get("tool_use_id").String(), Content: text(b.Get("content")),
						IsError: b.Get("is_error").Bool(), at: b.Get("content")})
				}
			}
		}
	case adapters.Gemini:
		for _, c := range root.Get("contents").Array() {
			for _, p := range c.Get("parts").Array() {
				fr := p.Get("functionResponse")
				if !fr.Exists() {
					fr = p.Get("function_response")
				}
				if !fr.Exists() {
					continue
				}
				r := BodyResult{CallID: fr.Get("id").String(), Name: fr.Get("name").String(), at: fr.Get("response")}
				switch resp := fr.Get("response"); {
				case resp.Get("error").Exists() && len(resp.Map()) == 1:
					r.Content, r.IsError = text(resp.Get("error")), true
				case resp.Get("output").Exists() && len(resp.Map()) == 1:
					r.Content = text(resp.Get("output"))
				default:
					r.Content = resp.Raw
				}
				out = append(out, r)
			}
		}
	}
	for i := range out {
		if out[i].Name == "" {
			out[i].Name = names[out[i].CallID]
		}
	}
	return out
}

// CarriedResults pairs a turn's calls (call_id and name each) with the
// results the next request carries back for them: by call_id, or for a
// Gemini call without one by name, in order, among the results that
// request adds to those of body, the turn's own request (a request that
// chains on a stored response carries only new ones). It returns next's
// results and, per call, the index of its result there (-1: none).
func CarriedResults(protocol string, body, next []byte, calls [][2]string) ([]BodyResult, []int) {
	rs := BodyResults(protocol, next)
	from := 0
	if !chains(protocol, next) {
		from = min(len(BodyResults(protocol, body)), len(rs))
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

// text is a result's content as text: a string as itself, content parts
// as their texts joined, anything else as its JSON.
func text(v gjson.Result) string {
	switch {
	case v.Type == gjson.String:
		return v.String()
	case v.IsArray():
		var b strings.Builder
		all := true
		for _, p := range v.Array() {
			t := p.Get("text")
			if t.Type != gjson.String {
				all = false
				break
			}
			b.WriteString(t.String())
		}
		if all {
			return b.String()
		}
	}
	return v.Raw
}

// EditResult replaces a result's content where it sits in the body, in
// the shape the protocol gives it: a JSON string (Responses output, Chat
// content, Anthropic content), Gemini's response object (as the encoder
// writes one from a result: {"output": …} or {"error": …}).
func EditResult(protocol string, body []byte, r BodyResult, content string) []byte {
	raw := mustJSON(content)
	if protocol == adapters.Gemini || protocol == adapters.GeminiInteractions && r.at.IsObject() {
		raw = string(adapters.ResultObject(adapters.ToolResult{Content: content, IsError: r.IsError}))
	}
	return splice(body, r.at, raw)
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
