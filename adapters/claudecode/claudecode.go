// Package claudecode decodes the Claude Code CLI's `--output-format
// stream-json` transcripts (NDJSON, protocols.md §7). It only decodes:
// the CLI is driven by a prompt, not by a wire request modelwire builds.
//
// # One transcript, one canonical response
//
// A transcript is one CLI session, and a session is usually several API
// responses: the model proposes a tool call, the CLI runs it, the next
// response answers. The Reducer allows one terminal per response, so the
// whole transcript is decoded as ONE canonical response:
//
//   - response.started comes from the `system` init line: response_id is
//     the CLI session_id, model the session's model. (Without an init line,
//     from the first model output.)
//   - every API response's content blocks become items, in transcript order.
//     Item ids are "<message id>#<index>" (tool calls: the tool_use id), so
//     items of different API responses never collide. A message_stop inside
//     the transcript only ends that API message; it is not a terminal.
//   - the terminal and the usage come from the `result` line, where the CLI
//     reports the outcome of the session: success → the status of the last
//     API stop_reason (end_turn → completed/final, …), error_* subtypes and
//     is_error → failed/error. Usage is the result's session total,
//     normalised like Anthropic usage (input = input + cache reads + cache
//     writes). A transcript without a result line was cut: the Reducer ends
//     it as unknown with stream_cut.
//
// So the summary's tool_calls lists every call the model made during the
// session (the CLI has already run them), and text is the text of all API
// responses in order.
//
// # Line types
//
//   - `stream_event` (with --include-partial-messages): `event` is a raw
//     Anthropic stream event, decoded by the anthropic adapter's
//     EmbeddedDecoder. Events of a subagent (parent_tool_use_id set) get
//     their own decoder, since parallel subagents interleave their blocks.
//   - `assistant`: a whole API message (the CLI writes one line per
//     content block). When the same message was already streamed by
//     stream_event lines it is skipped; otherwise its blocks become items
//     that start and close at once. A line with an `error` field is the
//     CLI's own synthetic message ("<synthetic>" model, e.g.
//     authentication_failed): an error_event diagnostic, not model text.
//   - `user`: tool results and prompts are the application's input, not
//     model output: skipped without an event (the raw line is still kept
//     beside the canonical events by the Stream).
//   - `system`: init starts the response; the lifecycle subtypes the SDK
//     knows (tasks, hooks, status) are skipped; other subtypes are
//     provider.unknown "system/<subtype>".
//   - `rate_limit_event`, `conversation_reset`: CLI bookkeeping, skipped.
//   - `result`: its structured_output (--json-schema) as a message item,
//     and, when no model output came before it (--output-format json), its
//     result text; then usage, then the terminal.
//   - any other type: provider.unknown.
package claudecode

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/anthropic"
)

// ErrDecodeOnly is what Encode returns.
var ErrDecodeOnly = errors.New("claude-code is decode-only: modelwire reads the CLI's stream-json output but cannot send requests in it")

type protocol struct{}

// New returns the claude-code protocol (decode only).
func New() adapters.Protocol { return protocol{} }

func (protocol) Name() string              { return adapters.ClaudeCode }
func (protocol) Framing() adapters.Framing { return adapters.FramingNDJSON }

func (protocol) Encode(*adapters.Request, string) (*adapters.HTTPRequest, error) {
	return nil, ErrDecodeOnly
}

func (protocol) NewDecoder() adapters.Decoder { return newDecoder() }

// DecodeError reads an error body of any provider shape; the CLI itself
// has no HTTP error responses.
func (protocol) DecodeError(status int, h http.Header, body []byte) *adapters.APIError {
	return adapters.GenericError(status, h, body)
}

// DecodeBody decodes a whole transcript given at once: NDJSON text, or the
// single result object of `--output-format json`.
func (protocol) DecodeBody(body []byte) []adapters.Event {
	d := newDecoder()
	var out []adapters.Event
	for _, line := range strings.Split(string(body), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			out = append(out, d.Decode(adapters.RawEvent{Data: line})...)
		}
	}
	return append(out, d.Finish()...)
}

// System subtypes the official SDK parses; none is model output.
var knownSystem = map[string]bool{
	"init": true, "task_started": true, "task_progress": true, "task_notification": true,
	"task_updated": true, "hook_started": true, "hook_response": true, "status": true,
	"compact_boundary": true, "mirror_error": true,
}

type decoder struct {
	started bool
	// threads are the embedded Anthropic decoders, by parent_tool_use_id
	// ("" is the main conversation).
	threads  map[string]*anthropic.EventDecoder
	streamed map[string]bool // message ids seen in stream_event message_start
	sawEvent bool
	blockN   map[string]int64 // whole-message blocks seen per message id
	callIDs  map[string]bool
	messages int
	lastStop string // the main conversation's last stop_reason
	output   bool   // a model output line (assistant or stream_event) was seen
}

func newDecoder() *decoder {
	return &decoder{
		threads:  map[string]*anthropic.EventDecoder{},
		streamed: map[string]bool{},
		blockN:   map[string]int64{},
		callIDs:  map[string]bool{},
	}
}

// Decode handles one NDJSON line.
func (d *decoder) Decode(raw adapters.RawEvent) []adapters.Event {
	line := raw.Data
	if !gjson.Valid(line) {
		return []adapters.Event{adapters.Diag(adapters.DiagMalformedEvent, "a line that is not valid JSON: "+clip(line))}
	}
	typ := gjson.Get(line, "type")
	if typ.Type != gjson.String || typ.Str == "" {
		return []adapters.Event{adapters.Diag(adapters.DiagMalformedEvent, "a line without a type: "+clip(line))}
	}
	switch typ.Str {
	case "stream_event":
		return d.streamEvent(line)
	case "assistant":
		return d.assistant(line)
	case "result":
		return d.result(line)
	case "system":
		sub := gjson.Get(line, "subtype").String()
		if sub == "init" {
			if d.started {
				return nil
			}
			d.started = true
			return []adapters.Event{{Type: adapters.EvResponseStarted, ResponseID: gjson.Get(line, "session_id").String(), Model: gjson.Get(line, "model").String()}}
		}
		if knownSystem[sub] {
			return nil
		}
		return []adapters.Event{{Type: adapters.EvUnknown, RawType: "system/" + sub}}
	case "user", "rate_limit_event", "conversation_reset":
		return nil
	}
	return []adapters.Event{{Type: adapters.EvUnknown, RawType: typ.Str}}
}

// Finish adds nothing: without a result line the session did not end, and
// the Reducer reports the cut.
func (d *decoder) Finish() []adapters.Event { return nil }

// start emits response.started once, from the first model output when the
// transcript has no init line.
func (d *decoder) start(out []adapters.Event, line, model string) []adapters.Event {
	if d.started {
		return out
	}
	d.started = true
	return append(out, adapters.Event{Type: adapters.EvResponseStarted, ResponseID: gjson.Get(line, "session_id").String(), Model: model})
}

func (d *decoder) streamEvent(line string) []adapters.Event {
	ev := gjson.Get(line, "event")
	if !ev.IsObject() {
		return []adapters.Event{adapters.Diag(adapters.DiagMalformedEvent, "a stream_event line without an event object: "+clip(line))}
	}
	parent := gjson.Get(line, "parent_tool_use_id").String()
	th := d.threads[parent]
	if th == nil {
		th = anthropic.NewEmbeddedDecoder()
		d.threads[parent] = th
	}
	var out []adapters.Event
	d.output = true
	if ev.Get("type").String() == "message_start" {
		msg := ev.Get("message")
		d.sawEvent = true
		if id := msg.Get("id").String(); id != "" {
			d.streamed[id] = true
		}
		out = d.start(out, line, msg.Get("model").String())
	}
	// The embedded decoder may reuse its result slice: copy it out now.
	out = append(out, th.DecodeEvent("", ev.Raw)...)
	if parent == "" {
		if r := th.StopReason(); r != "" {
			d.lastStop = r
		}
	}
	return out
}

func (d *decoder) assistant(line string) []adapters.Event {
	msg := gjson.Get(line, "message")
	if e := gjson.Get(line, "error"); e.Exists() && e.Type != gjson.Null {
		var text []string
		msg.Get("content").ForEach(func(_, b gjson.Result) bool {
			if t := b.Get("text"); t.Exists() {
				text = append(text, t.String())
			}
			return true
		})
		return []adapters.Event{adapters.Diag(adapters.DiagErrorEvent, fmt.Sprintf("the CLI reported %s: %s", e.String(), clip(strings.Join(text, " "))))}
	}
	id := msg.Get("id").String()
	if d.streamed[id] || (id == "" && d.sawEvent) {
		return nil // already decoded from its stream events
	}
	d.output = true
	out := d.start(nil, line, msg.Get("model").String())
	key := id
	if key == "" {
		d.messages++
		key = fmt.Sprintf("message%d", d.messages)
	}
	msg.Get("content").ForEach(func(_, b gjson.Result) bool {
		n := d.blockN[key]
		d.blockN[key] = n + 1
		itemID := anthropic.ItemID(key, n)
		if b.Get("type").String() == "tool_use" {
			if call := b.Get("id").String(); call != "" {
				if d.callIDs[call] {
					out = append(out, adapters.Diag(adapters.DiagConflictingCallID, fmt.Sprintf("tool_use id %s seen twice; the second is item %s", call, itemID)))
				} else {
					d.callIDs[call] = true
					itemID = call
				}
			}
		}
		out = append(out, anthropic.ContentBlockEvents(itemID, b.Raw)...)
		return true
	})
	if r := msg.Get("stop_reason"); r.Type == gjson.String && r.Str != "" && gjson.Get(line, "parent_tool_use_id").String() == "" {
		d.lastStop = r.Str
	}
	return out
}

func (d *decoder) result(line string) []adapters.Event {
	out := d.start(nil, line, resultModel(line))
	out = append(out, d.answer(line)...)
	if u := anthropic.NormaliseUsage(gjson.Get(line, "usage").Raw); u != nil {
		out = append(out, adapters.Event{Type: adapters.EvUsage, Usage: u})
	}
	sub := gjson.Get(line, "subtype").String()
	isErr := gjson.Get(line, "is_error").Bool()
	if isErr || strings.HasPrefix(sub, "error") {
		e := &adapters.APIError{Type: sub, Code: gjson.Get(line, "terminal_reason").String(), HTTPStatus: int(gjson.Get(line, "api_error_status").Int())}
		if !strings.HasPrefix(sub, "error") {
			e.Type = "error"
			if e.HTTPStatus != 0 {
				e.Type = "api_error"
			}
		}
		if r := gjson.Get(line, "result"); r.Type == gjson.String {
			e.Message = r.Str
		} else {
			var msgs []string
			gjson.Get(line, "errors").ForEach(func(_, v gjson.Result) bool {
				msgs = append(msgs, v.String())
				return true
			})
			e.Message = strings.Join(msgs, "; ")
		}
		t := adapters.Terminal(adapters.StatusFailed, adapters.StopError, sub)
		t.Error = e
		return append(out, t)
	}
	reason := gjson.Get(line, "stop_reason").String()
	if reason == "" {
		reason = d.lastStop
	}
	if reason == "" {
		// The CLI says the session succeeded but no API stop_reason was
		// seen (an old CLI, or a transcript without model lines).
		return append(out, adapters.Terminal(adapters.StatusCompleted, adapters.StopFinal, sub))
	}
	return append(out, anthropic.TerminalFor(reason)...)
}

// answer turns what the result line delivers into a message item: the
// structured_output object (--json-schema) always, since it is the
// validated answer and no other line carries it; the result text only
// when no model output was seen (--output-format json is that one line).
func (d *decoder) answer(line string) []adapters.Event {
	sid := gjson.Get(line, "session_id").String()
	var text, id string
	if so := gjson.Get(line, "structured_output"); so.Exists() && so.Type != gjson.Null {
		text, id = compactJSON(so.Raw), sid+"#structured_output"
	} else if r := gjson.Get(line, "result"); !d.output && r.Type == gjson.String && r.Str != "" && !gjson.Get(line, "is_error").Bool() {
		text, id = r.Str, sid+"#result"
	}
	if text == "" {
		return nil
	}
	return []adapters.Event{
		{Type: adapters.EvItemStarted, ItemID: id, Kind: string(adapters.KindMessage)},
		{Type: adapters.EvTextDelta, ItemID: id, Delta: text},
		{Type: adapters.EvItemDone, ItemID: id},
	}
}

// resultModel is the model of a result line's modelUsage when it names
// exactly one (a result-only transcript has no other source).
func resultModel(line string) string {
	var names []string
	gjson.Get(line, "modelUsage").ForEach(func(k, _ gjson.Result) bool {
		names = append(names, k.String())
		return true
	})
	if len(names) == 1 {
		return names[0]
	}
	return ""
}

func compactJSON(raw string) string {
	var b bytes.Buffer
	if json.Compact(&b, []byte(raw)) != nil {
		return raw
	}
	return b.String()
}

func clip(s string) string {
	if len(s) > 200 {
		n := 200
		for n > 0 && s[n]&0xC0 == 0x80 {
			n--
		}
		s = s[:n] + "…"
	}
	return fmt.Sprintf("%q", s)
}
