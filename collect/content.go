package collect

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// reply is what a model call answered, as far as its span says.
type reply struct {
	text    string
	refusal string
	calls   []toolCall
	finish  string
}

type toolCall struct {
	id, name string
	args     json.RawMessage
}

// message is one message of gen_ai.input.messages/gen_ai.output.messages,
// or an older OpenAI-style one ({role, content, tool_calls}), which some
// SDKs put in gen_ai.prompt and gen_ai.completion.
type message struct {
	Role         string          `json:"role"`
	Parts        []part          `json:"parts"`
	FinishReason string          `json:"finish_reason"`
	Content      json.RawMessage `json:"content"`
	ToolCalls    []struct {
		ID       string `json:"id"`
		Function struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
}

type part struct {
	Type      string          `json:"type"`
	Content   json.RawMessage `json:"content"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// vercelCall is one of the Vercel AI SDK's ai.response.toolCalls (args
// in v4, input in v5, both JSON text).
type vercelCall struct {
	ID    string          `json:"toolCallId"`
	Name  string          `json:"toolName"`
	Args  json.RawMessage `json:"args"`
	Input json.RawMessage `json:"input"`
}

// input is what the model was sent, as the span carries it (nil when the
// application did not capture it): the conventions' input messages, or
// an older form of them, verbatim.
func (s *span) input() json.RawMessage {
	if v, ok := s.attrs[keyInput]; ok {
		s.used[keyInput] = true
		return asJSON(v, "")
	}
	if msgs := s.indexed("gen_ai.prompt."); msgs != nil {
		return msgs
	}
	if v, ok := s.attrs[keyPromptText]; ok {
		s.used[keyPromptText] = true
		return asJSON(v, "user")
	}
	var fromEvents []json.RawMessage
	for _, e := range s.events {
		switch {
		case e.attrs[keyInput] != nil:
			return asJSON(e.attrs[keyInput], "")
		case e.name == "gen_ai.content.prompt" && e.attrs[keyPromptText] != nil:
			return asJSON(e.attrs[keyPromptText], "user")
		case strings.HasPrefix(e.name, "gen_ai.") && strings.HasSuffix(e.name, ".message"):
			// gen_ai.system.message, gen_ai.user.message, …: one message each.
			role := strings.TrimSuffix(strings.TrimPrefix(e.name, "gen_ai."), ".message")
			m := map[string]any{"role": role}
			for k, v := range e.attrs {
				m[k] = v
			}
			b, _ := json.Marshal(m)
			fromEvents = append(fromEvents, b)
		}
	}
	if fromEvents != nil {
		b, _ := json.Marshal(fromEvents)
		return b
	}
	return nil
}

// output is what the model answered (nil when not captured).
func (s *span) output() *reply {
	if v, ok := s.attrs[keyOutput]; ok {
		s.used[keyOutput] = true
		return replyOf(asJSON(v, "assistant"))
	}
	if msgs := s.indexed("gen_ai.completion."); msgs != nil {
		return replyOf(msgs)
	}
	if v, ok := s.attrs[keyCompletionText]; ok {
		s.used[keyCompletionText] = true
		return replyOf(asJSON(v, "assistant"))
	}
	text, hasText := s.attrs[keyVercelText]
	calls, hasCalls := s.attrs[keyVercelCalls]
	if hasText || hasCalls {
		s.used[keyVercelText], s.used[keyVercelCalls] = hasText, hasCalls
		r := &reply{}
		r.text, _ = text.(string)
		var vc []vercelCall
		if str, ok := calls.(string); ok {
			_ = json.Unmarshal([]byte(str), &vc)
		}
		for _, c := range vc {
			args := c.Input
			if args == nil {
				args = c.Args
			}
			r.calls = append(r.calls, toolCall{id: c.ID, name: c.Name, args: arguments(args)})
		}
		return r
	}
	for _, e := range s.events {
		switch {
		case e.attrs[keyOutput] != nil:
			return replyOf(asJSON(e.attrs[keyOutput], "assistant"))
		case e.name == "gen_ai.content.completion" && e.attrs[keyCompletionText] != nil:
			return replyOf(asJSON(e.attrs[keyCompletionText], "assistant"))
		case e.name == "gen_ai.choice":
			m := map[string]any{"role": "assistant"}
			if msg, ok := e.attrs["message"].(map[string]any); ok {
				for k, v := range msg {
					m[k] = v
				}
			} else if str, ok := e.attrs["message"].(string); ok {
				_ = json.Unmarshal([]byte(str), &m)
			}
			if fr, ok := e.attrs["finish_reason"]; ok {
				m["finish_reason"] = fr
			}
			b, _ := json.Marshal([]any{m})
			return replyOf(b)
		}
	}
	return nil
}

// indexed gathers OpenLLMetry's flattened messages (gen_ai.prompt.0.role,
// gen_ai.prompt.0.content, gen_ai.completion.0.tool_calls.0.name, …) back
// into a JSON array of messages; nil when there are none.
func (s *span) indexed(prefix string) json.RawMessage {
	msgs := map[int]map[string]any{}
	for k, v := range s.attrs {
		rest, ok := strings.CutPrefix(k, prefix)
		if !ok {
			continue
		}
		idx, field, ok := strings.Cut(rest, ".")
		n, err := strconv.Atoi(idx)
		if !ok || err != nil {
			continue
		}
		s.used[k] = true
		m := msgs[n]
		if m == nil {
			m = map[string]any{}
			msgs[n] = m
		}
		if tc, ok := strings.CutPrefix(field, "tool_calls."); ok {
			ci, f, _ := strings.Cut(tc, ".")
			cn, _ := strconv.Atoi(ci)
			calls, _ := m["tool_calls"].(map[int]map[string]any)
			if calls == nil {
				calls = map[int]map[string]any{}
				m["tool_calls"] = calls
			}
			if calls[cn] == nil {
				calls[cn] = map[string]any{"function": map[string]any{}}
			}
			if f == "id" {
				calls[cn]["id"] = v
			} else {
				calls[cn]["function"].(map[string]any)[f] = v
			}
			continue
		}
		m[field] = v
	}
	if len(msgs) == 0 {
		return nil
	}
	keys := make([]int, 0, len(msgs))
	for k := range msgs {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	out := make([]any, 0, len(keys))
	for _, k := range keys {
		m := msgs[k]
		if calls, ok := m["tool_calls"].(map[int]map[string]any); ok {
			idx := make([]int, 0, len(calls))
			for i := range calls {
				idx = append(idx, i)
			}
			sort.Ints(idx)
			list := make([]any, 0, len(calls))
			for _, i := range idx {
				list = append(list, calls[i])
			}
			m["tool_calls"] = list
		}
		out = append(out, m)
	}
	b, _ := json.Marshal(out)
	return b
}

// asJSON is an attribute's value as JSON: a string that is JSON as it
// is, other text as one message of role (or a JSON string when role is
// ""), a structured value marshalled.
func asJSON(v any, role string) json.RawMessage {
	if str, ok := v.(string); ok {
		if json.Valid([]byte(str)) && strings.ContainsAny(str[:min(len(str), 1)], "[{") {
			return json.RawMessage(str)
		}
		if role == "" {
			b, _ := json.Marshal(str)
			return b
		}
		b, _ := json.Marshal([]map[string]string{{"role": role, "content": str}})
		return b
	}
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(fmt.Sprint(v))
	}
	return b
}

// replyOf reads the assistant's messages: their text, refusals, tool
// calls and finish reason.
func replyOf(b json.RawMessage) *reply {
	var msgs []message
	if err := json.Unmarshal(b, &msgs); err != nil {
		var one message
		if json.Unmarshal(b, &one) != nil {
			return &reply{text: string(b)} // not messages: shown as it came
		}
		msgs = []message{one}
	}
	r := &reply{}
	var text strings.Builder
	for _, m := range msgs {
		if m.FinishReason != "" && r.finish == "" {
			r.finish = m.FinishReason
		}
		for _, p := range m.Parts {
			switch p.Type {
			case "text":
				text.WriteString(textOf(p.Content))
			case "refusal":
				r.refusal += textOf(p.Content)
			case "tool_call":
				r.calls = append(r.calls, toolCall{id: p.ID, name: p.Name, args: arguments(p.Arguments)})
			}
		}
		if len(m.Parts) == 0 {
			text.WriteString(textOf(m.Content))
		}
		for _, c := range m.ToolCalls {
			r.calls = append(r.calls, toolCall{id: c.ID, name: c.Function.Name, args: arguments(c.Function.Arguments)})
		}
	}
	r.text = text.String()
	return r
}

// textOf is a content value as text: a JSON string's value, or the
// text parts of an array of {type, text|content}.
func textOf(b json.RawMessage) string {
	if len(b) == 0 || string(b) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(b, &s) == nil {
		return s
	}
	var parts []struct {
		Type    string `json:"type"`
		Text    string `json:"text"`
		Content string `json:"content"`
	}
	if json.Unmarshal(b, &parts) == nil {
		var out strings.Builder
		for _, p := range parts {
			out.WriteString(p.Text + p.Content)
		}
		return out.String()
	}
	return string(b)
}

// arguments are a tool call's arguments as a JSON value: the text of a
// JSON string holding JSON (how most SDKs send them) becomes that JSON.
func arguments(b json.RawMessage) json.RawMessage {
	if len(b) == 0 {
		return nil
	}
	var s string
	if json.Unmarshal(b, &s) == nil {
		if json.Valid([]byte(s)) {
			return json.RawMessage(s)
		}
		return b
	}
	return b
}
