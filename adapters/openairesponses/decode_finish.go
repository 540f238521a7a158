package openairesponses

import (
	"fmt"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/modelwire/modelwire/adapters"
)

// The end of a response, as the decoder reads it: the terminal event or a
// whole Response body (its output, usage and status), and the error event.

// finish handles a terminal event (response.completed, .incomplete,
// .failed) or a whole Response body: items the stream never announced,
// usage, then the terminal.
func (d *decoder) finish(resp gjson.Result, event string) {
	d.ensureStarted(resp)
	d.syncOutput(resp.Get("output"), event)
	if u := resp.Get("usage"); u.IsObject() {
		usage := normaliseUsage(u)
		// Billable web searches are counted beside usage, in the
		// Response's tool_usage (openai-go's ResponseToolUsage).
		if n := resp.Get("tool_usage.web_search.num_requests"); n.Type == gjson.Number {
			usage.WebSearchCalls = adapters.Int(n.Int())
		}
		d.emit(adapters.Event{Type: adapters.EvUsage, Usage: usage})
	}
	status := resp.Get("status").Str
	if status == "" {
		status = strings.TrimPrefix(event, "response.")
	}
	var t adapters.Event
	switch status {
	case "completed":
		switch {
		case d.sawCall:
			t = adapters.Terminal(adapters.StatusCompleted, adapters.StopToolCall, status)
		case d.sawRefusal && !d.sawText:
			t = adapters.Terminal(adapters.StatusRefused, adapters.StopRefusal, status)
		default:
			t = adapters.Terminal(adapters.StatusCompleted, adapters.StopFinal, status)
		}
	case "incomplete":
		reason := resp.Get("incomplete_details.reason").Str
		if reason == "" {
			reason = status
		}
		if reason == "content_filter" {
			t = adapters.Terminal(adapters.StatusRefused, adapters.StopRefusal, reason)
		} else {
			t = adapters.Terminal(adapters.StatusIncomplete, adapters.StopTruncated, reason)
		}
	case "failed":
		t = adapters.Terminal(adapters.StatusFailed, adapters.StopError, status)
		t.Error = responseError(resp.Get("error"))
	case "cancelled":
		t = adapters.Terminal(adapters.StatusCancelled, adapters.StopUnknown, status)
	default:
		// queued / in_progress: a background response that has not ended.
		t = adapters.Terminal(adapters.StatusUnknown, adapters.StopUnknown, status)
	}
	d.emit(t)
	d.terminal = true
}

// syncOutput walks the final output: items the stream announced only give
// their facts; items it never announced are opened and closed here (a
// non-streaming body, or a stream that sent only the terminal).
func (d *decoder) syncOutput(output gjson.Result, event string) {
	i := int64(0)
	output.ForEach(func(_, item gjson.Result) bool {
		typ, id := item.Get("type").Str, item.Get("id").Str
		if id == "" {
			id = fmt.Sprintf("output_%d", i)
		}
		switch typ {
		case "function_call":
			d.sawCall = true
		case "message":
			c := messageContent(item)
			d.sawText = d.sawText || c.text != ""
			d.sawRefusal = d.sawRefusal || c.hasRefusal
		}
		if d.lanes[id] == nil {
			l := d.open(id, typ, i, item, event)
			if modelled(typ) {
				d.close(l, item, event)
			} else {
				l.closed = true
			}
		}
		i++
		return true
	})
}

// normaliseUsage maps Responses usage to the canonical one: input_tokens
// already includes cached_tokens, output_tokens includes reasoning_tokens.
func normaliseUsage(u gjson.Result) *adapters.Usage {
	num := func(path string) *int64 {
		if v := u.Get(path); v.Type == gjson.Number {
			return adapters.Int(v.Int())
		}
		return nil
	}
	return &adapters.Usage{
		InputTokens:      num("input_tokens"),
		OutputTokens:     num("output_tokens"),
		CacheReadTokens:  num("input_tokens_details.cached_tokens"),
		CacheWriteTokens: num("input_tokens_details.cache_write_tokens"),
		ReasoningTokens:  num("output_tokens_details.reasoning_tokens"),
		ProviderUsage:    []byte(u.Raw),
	}
}

// responseError reads Response.error {code, message, type?, param}.
func responseError(e gjson.Result) *adapters.APIError {
	if !e.IsObject() {
		return &adapters.APIError{Type: "response_failed", Message: "the response failed without an error object"}
	}
	out := &adapters.APIError{Code: e.Get("code").Str, Message: e.Get("message").Str}
	out.Type = firstNonEmpty(e.Get("type").Str, out.Code, "response_failed")
	return out
}

// errorEvent handles the `error` event in both shapes: documented flat
// {code, message, param} and the nested {error:{type, code, message,
// param}} seen live (protocols.md §10.1).
func (d *decoder) errorEvent(f *fields) {
	e := &adapters.APIError{}
	switch {
	case f.err.IsObject():
		e.Code, e.Message = f.err.Get("code").Str, f.err.Get("message").Str
		e.Type = firstNonEmpty(f.err.Get("type").Str, e.Code, "error")
	case f.err.Type == gjson.String:
		e.Type, e.Message = "error", f.err.Str
	default:
		e.Code, e.Message = f.code.Str, f.message.Str
		e.Type = firstNonEmpty(e.Code, "error")
	}
	d.emit(adapters.Diag(adapters.DiagErrorEvent, e.Error()))
	t := adapters.Terminal(adapters.StatusFailed, adapters.StopError, "error")
	t.Error = e
	d.emit(t)
	d.terminal = true
}
