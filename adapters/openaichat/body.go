package openaichat

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/modelwire/modelwire/adapters"
)

// completion is a non-streaming response, the `chat.completion` object
// (protocols.md §2.4; DeepSeek adds message.reasoning_content).
type completion struct {
	ID      string             `json:"id"`
	Object  string             `json:"object"`
	Model   string             `json:"model"`
	Choices []completionChoice `json:"choices"`
	Usage   json.RawMessage    `json:"usage"`
	Error   json.RawMessage    `json:"error"`
}

type completionChoice struct {
	Index   int `json:"index"`
	Message struct {
		// Content is a string; a few compatible servers send text parts.
		Content          json.RawMessage `json:"content"`
		Refusal          *string         `json:"refusal"`
		ReasoningContent *string         `json:"reasoning_content"`
		ToolCalls        []struct {
			ID       string `json:"id"`
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
		FunctionCall *struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function_call"`
	} `json:"message"`
	FinishReason *string `json:"finish_reason"`
}

// DecodeBody decodes a whole chat.completion body into the events a stream
// of it would produce: each item opens and closes with its full text as
// Final. DeepSeek may send blank keep-alive lines before the JSON while
// the request is queued; they are white space to the JSON decoder.
func (p protocol) DecodeBody(body []byte) []adapters.Event {
	var c completion
	if err := json.Unmarshal(body, &c); err != nil {
		return []adapters.Event{
			adapters.Diag(adapters.DiagMalformedEvent, fmt.Sprintf("the body is not a chat.completion object: %v", err)),
			adapters.Terminal(adapters.StatusUnknown, adapters.StopUnknown, ""),
		}
	}
	if len(c.Error) > 0 && string(c.Error) != "null" {
		e := adapters.GenericError(0, nil, body)
		t := adapters.Terminal(adapters.StatusFailed, adapters.StopError, e.Type)
		t.Error = e
		return []adapters.Event{adapters.Diag(adapters.DiagErrorEvent, e.Error()), t}
	}

	var out []adapters.Event
	if c.ID != "" || c.Model != "" {
		out = append(out, adapters.Event{Type: adapters.EvResponseStarted, ResponseID: c.ID, Model: c.Model})
	}
	var choice *completionChoice
	for i := range c.Choices {
		if c.Choices[i].Index == 0 && choice == nil {
			choice = &c.Choices[i]
		} else {
			out = append(out, adapters.Diag(adapters.DiagUnknownEvent, fmt.Sprintf("choice %d ignored: only choice 0 is decoded", c.Choices[i].Index)))
		}
	}
	var usage []adapters.Event
	if len(c.Usage) > 0 && c.Usage[0] == '{' {
		usage = []adapters.Event{usageEvent(string(c.Usage), p.deepseek)}
	}
	if choice == nil {
		out = append(out, adapters.Diag(diagMissingFinish, "the body has no choice 0"))
		out = append(out, usage...)
		return append(out, adapters.Terminal(adapters.StatusUnknown, adapters.StopUnknown, ""))
	}

	m := &choice.Message
	item := func(id string, kind adapters.ItemKind, callID, name, text string) {
		t := text
		out = append(out,
			adapters.Event{Type: adapters.EvItemStarted, ItemID: id, Kind: string(kind), CallID: callID, Name: name},
			adapters.Event{Type: adapters.EvItemDone, ItemID: id, CallID: callID, Name: name, Final: &t})
	}
	if m.ReasoningContent != nil && *m.ReasoningContent != "" {
		item(itemReasoning, adapters.KindReasoning, "", "", *m.ReasoningContent)
	}
	text, ok := contentText(m.Content)
	if !ok {
		out = append(out, adapters.Diag(adapters.DiagMalformedEvent, "message.content is neither a string nor text parts: "+clip(string(m.Content))))
	}
	if text != "" {
		item(itemMessage, adapters.KindMessage, "", "", text)
	}
	refused := m.Refusal != nil && *m.Refusal != ""
	if refused {
		item(itemRefusal, adapters.KindRefusal, "", "", *m.Refusal)
	}
	for i, tc := range m.ToolCalls {
		item(toolItemID(int64(i)), adapters.KindToolCall, tc.ID, tc.Function.Name, tc.Function.Arguments)
	}
	if fc := m.FunctionCall; fc != nil {
		item(itemFunction, adapters.KindToolCall, "", fc.Name, fc.Arguments)
	}
	out = append(out, usage...)
	if choice.FinishReason == nil || *choice.FinishReason == "" {
		out = append(out, adapters.Diag(diagMissingFinish, "choice 0 has no finish_reason"))
		return append(out, adapters.Terminal(adapters.StatusUnknown, adapters.StopUnknown, ""))
	}
	return append(out, terminalFor(*choice.FinishReason, refused))
}

// contentText reads message.content: null, a string, or an array of
// {"type":"text","text"} parts.
func contentText(raw json.RawMessage) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", true
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, true
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return "", false
	}
	var b bytes.Buffer
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String(), true
}
