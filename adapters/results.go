package adapters

import (
	"fmt"
	"strings"

	"github.com/tidwall/gjson"
)

// Where each protocol's request body carries the tool results fed back,
// and how a body's conversation is continued: what a fork that re-sends an
// application's own requests reads and edits (session.Resend).

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
	case OpenAIResponses:
		for _, it := range HistoryArray(root.Get("input")) {
			switch it.Get("type").String() {
			case "function_call":
				names[it.Get("call_id").String()] = it.Get("name").String()
			case "function_call_output":
				out = append(out, BodyResult{CallID: it.Get("call_id").String(), Content: text(it.Get("output")), at: it.Get("output")})
			}
		}
	case GeminiInteractions:
		for _, it := range HistoryArray(root.Get("input")) {
			switch it.Get("type").String() {
			case "function_call":
				names[it.Get("id").String()] = it.Get("name").String()
			case "function_result":
				out = append(out, BodyResult{CallID: it.Get("call_id").String(), Name: it.Get("name").String(),
					Content: text(it.Get("result")), IsError: it.Get("is_error").Bool(), at: it.Get("result")})
			}
		}
	case OpenAIChat, DeepSeekChat:
		for _, m := range root.Get("messages").Array() {
			for _, c := range m.Get("tool_calls").Array() {
				names[c.Get("id").String()] = c.Get("function.name").String()
			}
			if m.Get("role").String() == "tool" {
				out = append(out, BodyResult{CallID: m.Get("tool_call_id").String(), Content: text(m.Get("content")), at: m.Get("content")})
			}
		}
	case AnthropicMessages:
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
	case Gemini:
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

// EditResult replaces a result's content where it sits in the body, in
// the shape the protocol gives it: a JSON string (Responses output, Chat
// content, Anthropic content), Gemini's response object (as the encoder
// writes one from a result: {"output": …} or {"error": …}).
func EditResult(protocol string, body []byte, r BodyResult, content string) []byte {
	raw := mustJSON(content)
	if protocol == Gemini || protocol == GeminiInteractions && r.at.IsObject() {
		raw = string(ResultObject(ToolResult{Content: content, IsError: r.IsError}))
	}
	return Splice(body, r.at, raw)
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

// AppendHistory adds items (JSON texts) at the end of the history array a
// request body carries in field (its descriptor's HistoryField); a bare
// string or single object becomes the array's first item, as
// HistoryItems reads it.
func AppendHistory(protocol string, body []byte, field string, items []string) ([]byte, error) {
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
		return Splice(body, v, first+strings.Join(items, ",")+"]"), nil
	case v.Type == gjson.String && (protocol == OpenAIResponses || protocol == GeminiInteractions):
		// A bare string input is one user message (Interactions: one
		// user_input step), as HistoryItems reads it.
		msg := mustJSON(map[string]string{"role": "user", "content": v.String()})
		if protocol == GeminiInteractions {
			msg = mustJSON(map[string]any{"type": "user_input", "content": []map[string]string{{"type": "text", "text": v.String()}}})
		}
		return Splice(body, v, "["+msg+","+strings.Join(items, ",")+"]"), nil
	case v.IsObject():
		return Splice(body, v, "["+v.Raw+","+strings.Join(items, ",")+"]"), nil
	}
	return nil, fmt.Errorf("the request body's %s is not a conversation to continue", field)
}

// HistoryArray is a history field's items (a bare string is one message,
// an object one step, as the APIs read them).
func HistoryArray(v gjson.Result) []gjson.Result {
	if v.IsArray() {
		return v.Array()
	}
	if v.Exists() {
		return []gjson.Result{v}
	}
	return nil
}

// Splice replaces the value v (found in body) with raw JSON.
func Splice(body []byte, v gjson.Result, raw string) []byte {
	out := make([]byte, 0, len(body)+len(raw))
	out = append(out, body[:v.Index]...)
	out = append(out, raw...)
	return append(out, body[v.Index+len(v.Raw):]...)
}

// mustJSON is v as the encoders write JSON (MarshalBody: no HTML
// escaping); v is always one that encodes.
func mustJSON(v any) string {
	b, _ := MarshalBody(v)
	return string(b)
}
