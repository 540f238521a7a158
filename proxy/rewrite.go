package proxy

import (
	"encoding/json"
	"errors"
	"hash/fnv"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/registry"
	sse "github.com/modelwire/modelwire/adapters/wire"
)

// An edited response is not patched byte by byte: it is rebuilt from its
// decoded summary as a model turn, with the edit applied, and rendered by
// the protocol's own simulator side — as a stream (SSE, or Gemini's JSON
// array) or a body, whichever the upstream sent — under the upstream's
// response id, model and call ids. The application's SDK then assembles
// the edited call from argument deltas that agree with their done events,
// as it would from the provider. The turn is built from the decoded
// output items in order — reasoning with its signature (Anthropic's
// thinking, Responses' encrypted content) and Responses' fc_ item ids
// kept; Gemini's thought signatures are the simulator's, not the
// provider's.

// responseEdit is what changes in a held response.
type responseEdit struct {
	args map[int]json.RawMessage // by index in Summary.ToolCalls
	text *string
	stop adapters.StopReason
}

func (e responseEdit) empty() bool { return len(e.args) == 0 && e.text == nil && e.stop == "" }

func (e *responseEdit) setArgs(i int, a json.RawMessage) {
	if e.args == nil {
		e.args = map[int]json.RawMessage{}
	}
	e.args[i] = a
}

// turnOf is the decoded response as a model turn, the edit applied: its
// output items in order (reasoning with its signature, the upstream's
// item ids), else the summary's (text, calls, refusal). Each call's
// arguments go as their exact text (a JSON string: ArgumentText sends it
// as it is).
func turnOf(sum adapters.Summary, items []adapters.OutputItem, e responseEdit) adapters.ModelTurn {
	if len(items) == 0 {
		items = itemsOf(sum)
	}
	var mt adapters.ModelTurn
	calls, texted := 0, false
	for _, it := range items {
		switch it.Kind {
		case adapters.KindMessage:
			if e.text != nil {
				if texted {
					continue // the edited text replaces the whole answer
				}
				it.Text, texted = *e.text, true
			}
		case adapters.KindToolCall:
			args := it.Text
			if a, ok := e.args[calls]; ok {
				args = string(a)
			} else if args == "" && calls < len(sum.ToolCalls) {
				args = string(sum.ToolCalls[calls].Arguments)
			}
			it.Arguments, _ = json.Marshal(args)
			it.Text = ""
			calls++
		}
		mt.Items = append(mt.Items, it)
	}
	if e.text != nil && !texted && *e.text != "" {
		mt.Items = append([]adapters.OutputItem{{Kind: adapters.KindMessage, Text: *e.text}}, mt.Items...)
	}
	mt.Stop = sum.StopReason
	if e.stop != "" {
		mt.Stop = e.stop
	}
	switch mt.Stop {
	case adapters.StopFinal, adapters.StopToolCall, adapters.StopTruncated, adapters.StopRefusal:
	default:
		mt.Stop = adapters.StopFinal
		if calls > 0 {
			mt.Stop = adapters.StopToolCall
		}
	}
	if sum.Usage != nil {
		mt.Usage = *sum.Usage
	}
	return mt
}

// itemsOf is a summary's output as items: text, calls, refusal.
func itemsOf(sum adapters.Summary) []adapters.OutputItem {
	var items []adapters.OutputItem
	if sum.Text != "" {
		items = append(items, adapters.OutputItem{Kind: adapters.KindMessage, Text: sum.Text})
	}
	for _, c := range sum.ToolCalls {
		items = append(items, adapters.OutputItem{Kind: adapters.KindToolCall, CallID: c.CallID, Name: c.Name, Text: string(c.Arguments)})
	}
	if sum.Refusal != nil {
		items = append(items, adapters.OutputItem{Kind: adapters.KindRefusal, Text: *sum.Refusal})
	}
	return items
}

// render writes the edited response in the protocol's wire format: the
// headers to send (the upstream's, re-framed) and the body.
func render(x *exchange, r *http.Request, reqBody []byte, upstream http.Header, sum adapters.Summary, e responseEdit) (http.Header, []byte, error) {
	prot, err := registry.Lookup(x.req.protocol)
	if err != nil {
		return nil, nil, err
	}
	simp, ok := prot.(adapters.Simulated)
	if !ok {
		return nil, nil, errors.New("the protocol " + x.req.protocol + " cannot be re-encoded")
	}
	h := fnv.New64a()
	h.Write([]byte(sum.ResponseID))
	o := adapters.ResponseOptions{Model: sum.Model, ResponseID: sum.ResponseID, Seed: h.Sum64(), Created: time.Now().Unix(), Request: reqBody}
	if in, serr := simp.CheckRequest(r.Method, r.URL.Path, r.Header, reqBody); serr == nil && in != nil {
		// What the request switched on that the rendering repeats
		// (Chat's usage chunk, Responses' echoed settings).
		o.IncludeUsage, o.Echo = in.IncludeUsage, in.Echo
	}
	mt := turnOf(sum, x.items, e)
	out := upstream.Clone()
	for _, k := range []string{"Content-Length", "Content-Encoding", "Transfer-Encoding", "Etag"} {
		out.Del(k)
	}
	out.Set("X-Modelwire-Edit", "edited")
	ct := strings.ToLower(upstream.Get("Content-Type"))
	if !x.req.stream && !strings.HasPrefix(ct, "text/event-stream") {
		body := simp.Body(mt, o)
		out.Set("Content-Length", strconv.Itoa(len(body)))
		return out, body, nil
	}
	events := simp.StreamEvents(mt, o)
	var buf []byte
	if strings.HasPrefix(ct, "text/event-stream") {
		for _, ev := range events {
			buf = sse.AppendEvent(buf, ev, simp.LineEnd())
		}
		return out, buf, nil
	}
	// A stream the path asked for as one JSON array (Gemini without
	// alt=sse): the same chunks, as array elements.
	buf = append(buf, '[')
	for i, ev := range events {
		if i > 0 {
			buf = append(buf, ",\r\n"...)
		}
		buf = append(buf, ev.Data...)
	}
	buf = append(buf, ']')
	return out, buf, nil
}

// keepItems keeps a held response's output items (read by the handler
// once the summary has been handed over).
func (x *exchange) keepItems(st *adapters.Stream) {
	if !x.held {
		return
	}
	for _, it := range st.Reducer().Items() {
		switch it.Kind {
		case adapters.KindMessage, adapters.KindReasoning, adapters.KindRefusal:
			x.items = append(x.items, adapters.OutputItem{Kind: it.Kind, ID: it.ID, Text: it.Text, Signature: it.Signature})
		case adapters.KindToolCall:
			if it.State == adapters.ItemParsed { // as the summary's calls: the parsed ones
				x.items = append(x.items, adapters.OutputItem{Kind: it.Kind, ID: it.ID, CallID: it.CallID, Name: it.Name, Text: it.Text})
			}
		}
	}
}
