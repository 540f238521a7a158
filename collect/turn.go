package collect

import (
	"cmp"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/session"
	"github.com/modelwire/modelwire/store"
	"github.com/modelwire/modelwire/timeline"
	"github.com/modelwire/modelwire/validate"
)

// turn records a model-call span as a turn: one attempt, its reply as
// canonical events, its verdict.
func (c *Collector) turn(t *openTrace, sp *span) error {
	turn, attempt := t.turns+1, 1
	if n := sp.num(keyMWTurn); n != nil && *n > 0 {
		turn = int(*n)
		if a := sp.num(keyMWAttempt); a != nil && *a > 0 {
			attempt = int(*a)
		}
	}
	t.turns = max(t.turns, turn)
	body := []byte(sp.str(keyMWBody))
	if len(body) == 0 {
		body = sp.input()
	}
	out := sp.output()
	captured := out != nil || len(body) > 0
	status := 0
	if n := sp.num("http.response.status_code"); n != nil {
		status = int(*n)
	} else if !sp.failed {
		status = 200
	}
	errText := ""
	if sp.failed {
		errText = sp.message
		if e := sp.str(keyErrorType); errText == "" && e != "" {
			errText = e
		}
		if errText == "" {
			errText = "the span ended with status ERROR"
		}
	}
	if attempt == 1 {
		c.observe(t, session.Update{Kind: session.UpAssembled, Turn: turn, At: sp.start,
			Request: &adapters.HTTPRequest{Method: "POST", Path: sp.name, Body: jsonOrNil(body)}})
	}
	url := serverOf(sp)
	off := max(0, sp.start.Sub(t.created))
	dur := max(0, sp.end.Sub(sp.start))
	times := spanTimes(sp, off, dur)
	u := session.Update{Kind: session.UpAttempt, Turn: turn, Attempt: attempt, URL: url, HTTPStatus: status, At: sp.start}
	meta := store.AttemptMeta{Protocol: t.protocol, Method: "POST", URL: url, Body: body, RetryReason: sp.str(keyMWRetry)}
	if err := t.j.ImportAttempt(u, meta, times); err != nil {
		return err
	}
	c.observe(t, u)

	evs := c.events(t, sp, out, captured)
	raw, _ := protojson.Marshal(sp.raw)
	step := adapters.Step{Index: 0, Raw: adapters.RawEvent{Event: "otlp.span", Data: string(raw)}, Events: evs}
	ms := float64(dur) / float64(time.Millisecond)
	timings := &session.Timings{Headers: msOf(times.Headers), FirstEvent: msOf(times.FirstEvent), FirstToken: msOf(times.FirstToken),
		FirstText: msOf(times.FirstText), Terminal: msOf(cmp.Or(times.Terminal, dur))}
	if err := c.record(t, session.Update{Kind: session.UpStep, Turn: turn, Attempt: attempt, Step: &step, OffsetMS: ms, Timings: timings, At: sp.end}); err != nil {
		return err
	}
	if err := c.record(t, session.Update{Kind: session.UpResponse, Turn: turn, Attempt: attempt, Err: errText, At: sp.end}); err != nil {
		return err
	}
	if out != nil {
		if len(t.proposed)+len(out.calls) > maxCalls {
			// A trace that never ends must not grow without bound: the
			// oldest proposals are forgotten (their executions then
			// attach to the latest turn).
			clear(t.proposed)
			clear(t.callTurn)
		}
		for _, call := range out.calls {
			t.proposed[call.id], t.callTurn[call.id] = call, turn
		}
	}
	if sp.failed {
		t.failed = true
	}
	layers := restoredVerdict(sp)
	if layers == nil {
		layers = verdict(sp, status, errText, captured)
	}
	if err := c.verdictEntry(t, turn, layers, sp.end); err != nil {
		return err
	}
	c.observe(t, session.Update{Kind: session.UpValidated, Turn: turn, Layers: layers, At: sp.end})
	return nil
}

// maxCalls bounds the tool calls a trace remembers, to place their executions.
const maxCalls = 4096

// events are a model call's canonical events: started, its text,
// refusal and tool calls as items, usage, what was not captured or not
// mapped, and the terminal.
func (c *Collector) events(t *openTrace, sp *span, out *reply, captured bool) []adapters.Event {
	in := []adapters.Event{{Type: adapters.EvResponseStarted, ResponseID: sp.str(keyRespID), Model: sp.str(keyRespModel)}}
	if out != nil {
		if out.text != "" {
			in = append(in, adapters.Event{Type: adapters.EvItemStarted, ItemID: "text", Kind: string(adapters.KindMessage)},
				adapters.Event{Type: adapters.EvTextDelta, ItemID: "text", Delta: out.text},
				adapters.Event{Type: adapters.EvItemDone, ItemID: "text"})
		}
		if out.refusal != "" {
			in = append(in, adapters.Event{Type: adapters.EvItemStarted, ItemID: "refusal", Kind: string(adapters.KindRefusal)},
				adapters.Event{Type: adapters.EvRefusalDelta, ItemID: "refusal", Delta: out.refusal},
				adapters.Event{Type: adapters.EvItemDone, ItemID: "refusal"})
		}
		for i, call := range out.calls {
			id := fmt.Sprintf("call_%d", i)
			in = append(in, adapters.Event{Type: adapters.EvItemStarted, ItemID: id, Kind: string(adapters.KindToolCall), CallID: call.id, Name: call.name},
				adapters.Event{Type: adapters.EvToolArgsDelta, ItemID: id, Delta: string(call.args)},
				adapters.Event{Type: adapters.EvItemDone, ItemID: id})
		}
	}
	if u := usageOf(sp); u != nil {
		in = append(in, adapters.Event{Type: adapters.EvUsage, Usage: u})
	}
	if !captured {
		in = append(in, adapters.Diag(diagNotCaptured, NotCaptured))
	}
	in = append(in, terminal(sp, out))
	if extra := sp.unmapped(); len(extra) > 0 {
		sort.Strings(extra)
		in = append(in[:len(in)-1], adapters.Diag(diagUnmapped, "attributes modelwire does not map, kept in the span: "+strings.Join(extra, ", ")), in[len(in)-1])
	}
	return adapters.NewReducer(t.protocol).Apply(in)
}

// usageOf is the usage the span reports (nil when none).
func usageOf(sp *span) *adapters.Usage {
	u := &adapters.Usage{InputTokens: sp.num(keyInputTokens), OutputTokens: sp.num(keyOutputTokens),
		CacheReadTokens: sp.num(keyCacheRead), CacheWriteTokens: sp.num(keyCacheWrite)}
	if u.InputTokens == nil && u.OutputTokens == nil && u.CacheReadTokens == nil && u.CacheWriteTokens == nil {
		return nil
	}
	return u
}

// stops maps the finish reasons providers and SDKs report to canonical
// stop reasons; one not listed is kept as the provider's and read as final.
var stops = map[string]adapters.StopReason{
	"stop": adapters.StopFinal, "end_turn": adapters.StopFinal, "STOP": adapters.StopFinal, "completed": adapters.StopFinal,
	"tool_calls": adapters.StopToolCall, "tool_use": adapters.StopToolCall, "tool-calls": adapters.StopToolCall, "tool_call": adapters.StopToolCall,
	"length": adapters.StopTruncated, "max_tokens": adapters.StopTruncated, "MAX_TOKENS": adapters.StopTruncated,
	"content_filter": adapters.StopRefusal, "content-filter": adapters.StopRefusal, "refusal": adapters.StopRefusal, "SAFETY": adapters.StopRefusal,
	"stop_sequence": adapters.StopStopSequence, "error": adapters.StopError,
}

// terminal is how the call ended: as modelwire's export says, else from
// the span's status and finish reason.
func terminal(sp *span, out *reply) adapters.Event {
	finish := sp.str(keyFinish)
	if finish == "" && out != nil {
		finish = out.finish
	}
	if st := sp.str(keyMWTerminal); st != "" {
		return adapters.Terminal(adapters.Status(st), adapters.StopReason(sp.str(keyMWStop)), finish)
	}
	if sp.failed {
		ev := adapters.Terminal(adapters.StatusFailed, adapters.StopError, finish)
		ev.Error = &adapters.APIError{Message: sp.message}
		return ev
	}
	reason, ok := stops[finish]
	switch {
	case !ok && out != nil && len(out.calls) > 0:
		reason = adapters.StopToolCall
	case !ok:
		reason = adapters.StopFinal
	}
	status := adapters.StatusCompleted
	switch reason {
	case adapters.StopTruncated:
		status = adapters.StatusIncomplete
	case adapters.StopRefusal:
		status = adapters.StatusRefused
	}
	return adapters.Terminal(status, reason, finish)
}

// verdict judges a collected call with what a span can know: transport
// and protocol from its status; the layers that read the body are skipped,
// saying why.
func verdict(sp *span, status int, errText string, captured bool) []session.LayerResult {
	transport := session.LayerResult{Layer: session.LayerTransport, Status: session.Pass, Detail: "the span's status is not an error"}
	protocol := session.LayerResult{Layer: session.LayerProtocol, Status: session.Pass, Detail: "the span reports a finished call"}
	if status != 0 {
		transport.Detail = fmt.Sprintf("HTTP %d", status)
	}
	if sp.failed {
		if status >= 400 || status == 0 {
			transport.Status, transport.Detail = session.Fail, errText
			protocol = session.LayerResult{Layer: session.LayerProtocol, Status: session.Skip, Detail: "the call failed in transport"}
		} else {
			protocol.Status, protocol.Detail = session.Fail, errText
		}
	}
	why := "collected from a trace: the application's output contract is not known"
	if !captured {
		why = NotCaptured
	}
	return []session.LayerResult{transport, protocol,
		{Layer: session.LayerParse, Status: session.Skip, Detail: why},
		{Layer: session.LayerSchema, Status: session.Skip, Detail: why},
		{Layer: session.LayerDomain, Status: session.Skip, Detail: why}}
}

// restoredVerdict is the verdict a modelwire export carried on the span
// (modelwire.validation events), nil when it carried none.
func restoredVerdict(sp *span) []session.LayerResult {
	var out []session.LayerResult
	for _, e := range sp.events {
		if e.name != "modelwire.validation" {
			continue
		}
		layer, _ := e.attrs["modelwire.validation.layer"].(string)
		status, _ := e.attrs["modelwire.validation.status"].(string)
		detail, _ := e.attrs["modelwire.validation.detail"].(string)
		out = append(out, session.LayerResult{Layer: validate.Layer(layer), Status: session.Verdict(status), Detail: detail})
	}
	return out
}

// tool records an execute_tool span: the call's decision (it ran) and,
// when captured, its result.
func (c *Collector) tool(t *openTrace, sp *span) error {
	id, name := sp.str(keyToolCallID), sp.str(keyToolName)
	turn := max(1, t.turns)
	if n := sp.num(keyMWTurn); n != nil && *n > 0 {
		turn = int(*n)
	} else if pt, ok := t.callTurn[id]; ok {
		turn = pt
	}
	args := arguments(json.RawMessage(strconvQuote(sp.str(keyToolArgs))))
	kind := session.Approved
	if d := sp.str(keyMWDecision); d != "" {
		kind = session.DecisionKind(d)
	}
	p := &session.Proposal{Turn: turn, CallID: id, Name: name, Arguments: args}
	d := &session.Decision{Kind: kind, Reason: sp.str(keyMWReason), By: "trace"}
	sp.str("gen_ai.tool.type") // the conventions' function/extension/datastore: all run as a call
	_, hasResult := sp.attrs[keyToolResult]
	result := sp.str(keyToolResult)
	if extra := sp.unmapped(); len(extra) > 0 {
		// A decision has no raw event: its reason keeps what the span
		// said that modelwire does not read.
		sort.Strings(extra)
		d.Reason = strings.TrimSpace(d.Reason + " (span attributes modelwire does not map: " + strings.Join(extra, ", ") + ")")
	}
	if prop, ok := t.proposed[id]; ok && kind == session.Edited {
		p.Arguments, d.Arguments = prop.args, args
	}
	if d.Kind != "" {
		args, original := jsonOrNil(p.Arguments), json.RawMessage(nil)
		if kind == session.Edited {
			args, original = jsonOrNil(d.Arguments), jsonOrNil(p.Arguments)
		}
		if err := c.entry(t, sp.start, map[string]any{"type": store.EntryDecision, "turn": turn, "call_id": id, "name": name,
			"decision": kind, "arguments": args, "original_arguments": original, "reason": d.Reason, "at": sp.start}); err != nil {
			return err
		}
		c.observe(t, session.Update{Kind: session.UpDecision, Turn: turn, Proposal: p, Decision: d, At: sp.start})
	}
	if hasResult {
		r := &adapters.ToolResult{CallID: id, Name: name, Content: result, IsError: sp.failed}
		if err := c.entry(t, sp.end, map[string]any{"type": store.EntryToolResult, "turn": turn, "call_id": id, "name": name,
			"is_error": r.IsError, "content": r.Content, "at": sp.end}); err != nil {
			return err
		}
		c.observe(t, session.Update{Kind: session.UpResult, Turn: turn, Result: r, At: sp.end})
	}
	return nil
}

// entry writes a session-level entry (a decision, a tool result, a
// verdict) in the store's own form, placed in the session when the span
// says rather than when it is written: as an import restores one.
func (c *Collector) entry(t *openTrace, at time.Time, fields map[string]any) error {
	for k, v := range fields {
		if raw, ok := v.(json.RawMessage); ok && raw == nil {
			delete(fields, k) // omitted, as the store omits it
		}
	}
	raw, err := json.Marshal(fields)
	if err != nil {
		return err
	}
	return t.j.RestoreEntry(max(0, at.Sub(t.created)), raw)
}

// verdictEntry records the layers' verdict on a turn (0: the session's).
func (c *Collector) verdictEntry(t *openTrace, turn int, layers []session.LayerResult, at time.Time) error {
	vs := make([]store.Validation, len(layers))
	for i, l := range layers {
		vs[i] = l.Stored()
	}
	return c.entry(t, at, map[string]any{"type": store.EntryValidation, "turn": turn, "results": vs, "at": at})
}

// jsonOrNil is b when it is JSON.
func jsonOrNil(b []byte) json.RawMessage {
	if len(b) == 0 || !json.Valid(b) {
		return nil
	}
	return b
}

// strconvQuote is s as a JSON string ("" stays empty).
func strconvQuote(s string) string {
	if s == "" {
		return ""
	}
	b, _ := json.Marshal(s)
	return string(b)
}

// validID reports whether b is a trace (16 bytes) or span (8) id, not all zero.
func validID(b []byte, n int) bool {
	return len(b) == n && strings.Trim(hex.EncodeToString(b), "0") != ""
}

// spanMarks name the span events that carry an attempt's time points:
// modelwire's own export (telemetry), its older name for the headers, and
// the Vercel AI SDK's first stream chunk (a first event; whether it held
// output the span does not say).
var spanMarks = map[string][]func(*timeline.AttemptTimes) *time.Duration{
	"modelwire.first_response": {func(t *timeline.AttemptTimes) *time.Duration { return &t.Headers }},
	"modelwire.first_byte":     {func(t *timeline.AttemptTimes) *time.Duration { return &t.Headers }},
	"modelwire.first_event":    {func(t *timeline.AttemptTimes) *time.Duration { return &t.FirstEvent }},
	"modelwire.first_token":    {func(t *timeline.AttemptTimes) *time.Duration { return &t.FirstToken }},
	"modelwire.first_text":     {func(t *timeline.AttemptTimes) *time.Duration { return &t.FirstText }},
	"modelwire.terminal":       {func(t *timeline.AttemptTimes) *time.Duration { return &t.Terminal }},
	"ai.stream.firstChunk":     {func(t *timeline.AttemptTimes) *time.Duration { return &t.FirstEvent }},
}

// spanTimes are a model-call span's time points: those its events mark,
// the span's end for the rest (a span without marks knows only when the
// call began and ended, so its reply arrived, whole, at the end).
func spanTimes(sp *span, off, dur time.Duration) timeline.AttemptTimes {
	t := timeline.AttemptTimes{Started: sp.start, Offset: off, End: dur}
	for _, e := range sp.events {
		for _, field := range spanMarks[e.name] {
			if p := field(&t); *p == 0 {
				*p = max(time.Microsecond, min(dur, e.at.Sub(sp.start)))
			}
		}
	}
	for _, p := range []*time.Duration{&t.Headers, &t.FirstEvent} {
		if *p == 0 {
			*p = dur
		}
	}
	return t
}

func msOf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
