package openaichat

import (
	"strings"

	"github.com/tidwall/gjson"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/wire"
)

// readChoices fills what a checked request lets the model do: tool_choice
// ("auto", "none", "required", {"type":"function","function":{"name":…}}),
// parallel_tool_calls, and DeepSeek's thinking mode (on unless the request
// turns it off, as in passback).
func (p protocol) readChoices(body string, in *adapters.Inbound) {
	r := gjson.Parse(body)
	tc := r.Get("tool_choice")
	switch {
	case tc.Type == gjson.String:
		in.Choice.Mode = adapters.ToolChoiceMode(tc.String())
	case tc.Get("type").String() == "function":
		in.Choice = adapters.ToolChoice{Mode: adapters.ToolChoiceNamed, Name: tc.Get("function.name").String()}
	}
	in.Serial = r.Get("parallel_tool_calls").Type == gjson.False
	in.Reasoning = p.deepseek && deepseekThinks(r, in.Model)
}

// deepseekThinks: thinking mode is on unless the request turns it off
// (thinking disabled, reasoning_effort none, or the non-thinking model
// name deepseek-chat).
func deepseekThinks(r gjson.Result, model string) bool {
	switch {
	case r.Get("thinking.type").String() == "disabled",
		r.Get("reasoning_effort").String() == "none",
		model == "deepseek-chat", strings.Contains(model, "vision"):
		return false
	}
	return true
}

// prompt adds a system, developer or user message's text to the prompt:
// a string content, or each of its text parts (images, audio and files
// are not text; a malformed part is skipped). Assistant and tool
// messages are not prompt.
func (c *checker) prompt(role string, content jval) {
	var r adapters.SourceRole
	switch role {
	case "system":
		r = adapters.RoleSystem
	case "developer":
		r = adapters.RoleDeveloper
	case "user":
		r = adapters.RoleUser
	default:
		return
	}
	switch content.kind() {
	case '"':
		c.in.AddPrompt(r, wire.Unquote(content.raw))
	case '[':
		for e := wire.IterElements(content.raw); ; {
			part, ok := e.Next()
			if !ok {
				break
			}
			if text, ok := partText(part); ok {
				c.in.AddPrompt(r, text)
			}
		}
	}
}

// partText is the text of a content part {"type":"text","text":…}, read
// in place; false for any other part.
func partText(part string) (string, bool) {
	if part[0] != '{' {
		return "", false
	}
	var typ, text string
	isText := false
	for m := wire.IterMembers(part); ; {
		k, ok := m.Key()
		if !ok {
			break
		}
		switch k {
		case "type":
			typ, _ = m.Str()
		case "text":
			text, isText = m.Str()
		default:
			m.Value()
		}
	}
	return text, isText && typ == "text"
}
