package anthropic

import (
	"fmt"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/modelwire/modelwire/adapters"
)

// DecodeBody decodes a whole (non-streaming) Message object:
// {"id","type":"message","model","content":[blocks],"stop_reason","usage"}.
// Each block becomes an item that starts and closes at once, with the
// block's full text as Final. An error body ({"type":"error",…}) becomes an
// error_event diagnostic and a failed terminal.
func (protocol) DecodeBody(body []byte) []adapters.Event {
	s := string(body)
	if !gjson.Valid(s) {
		return []adapters.Event{adapters.Diag(adapters.DiagMalformedEvent, "the body is not valid JSON: "+quote(s))}
	}
	msg := gjson.Parse(s)
	if !msg.IsObject() {
		return []adapters.Event{adapters.Diag(adapters.DiagMalformedEvent, "the body is not a JSON object: "+quote(s))}
	}
	typ := msg.Get("type").String()
	if typ == "error" || (typ == "" && msg.Get("error").Exists()) {
		e := adapters.GenericError(0, nil, body)
		t := adapters.Terminal(adapters.StatusFailed, adapters.StopError, e.Type)
		t.Error = e
		return []adapters.Event{adapters.Diag(adapters.DiagErrorEvent, "error body: "+e.Error()), t}
	}
	if typ != "message" && typ != "" {
		return []adapters.Event{{Type: adapters.EvUnknown, RawType: typ}}
	}
	msgID := msg.Get("id").String()
	out := []adapters.Event{{Type: adapters.EvResponseStarted, ResponseID: msgID, Model: msg.Get("model").String()}}
	if msgID == "" {
		msgID = "message1"
	}
	seen := map[string]struct{}{}
	i := int64(0)
	msg.Get("content").ForEach(func(_, b gjson.Result) bool {
		id := ItemID(msgID, i)
		if b.Get("type").String() == "tool_use" {
			if call := b.Get("id").String(); call != "" {
				if _, dup := seen[call]; dup {
					out = append(out, adapters.Diag(adapters.DiagConflictingCallID, fmt.Sprintf("tool_use id %s used by a second block (index %d); that block is item %s", call, i, id)))
				} else {
					seen[call] = struct{}{}
					id = call
				}
			}
		}
		out = append(out, ContentBlockEvents(id, b.Raw)...)
		i++
		return true
	})
	if u := NormaliseUsage(msg.Get("usage").Raw); u != nil {
		out = append(out, adapters.Event{Type: adapters.EvUsage, Usage: u})
	}
	return append(out, TerminalFor(msg.Get("stop_reason").String())...)
}

// ContentBlockEvents turns one whole content block of a Message into an
// item that starts and closes at once: text → message, thinking and
// redacted_thinking → reasoning (with the signature to replay), tool_use →
// tool_call (its input as the argument text). Other blocks (server tools
// run by Anthropic) are reported as provider.unknown.
func ContentBlockEvents(itemID, raw string) []adapters.Event {
	b := gjson.Parse(raw)
	typ := b.Get("type").String()
	start := adapters.Event{Type: adapters.EvItemStarted, ItemID: itemID}
	done := adapters.Event{Type: adapters.EvItemDone, ItemID: itemID}
	var final string
	switch typ {
	case "text":
		start.Kind = string(adapters.KindMessage)
		final = b.Get("text").String()
	case "thinking":
		start.Kind = string(adapters.KindReasoning)
		final = b.Get("thinking").String()
		done.Signature = b.Get("signature").String()
	case "redacted_thinking":
		start.Kind = string(adapters.KindReasoning)
		done.Signature = RedactedPrefix + b.Get("data").String()
	case "tool_use":
		start.Kind = string(adapters.KindToolCall)
		start.CallID, start.Name = b.Get("id").String(), b.Get("name").String()
		done.CallID = start.CallID
		final = "{}"
		if in := b.Get("input"); in.Exists() {
			final = strings.TrimSpace(in.Raw)
		}
	default:
		if typ == "" {
			typ = "(none)"
		}
		return []adapters.Event{{Type: adapters.EvUnknown, RawType: "content/" + typ}}
	}
	done.Final = &final
	return []adapters.Event{start, done}
}
