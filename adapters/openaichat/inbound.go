package openaichat

import (
	"strings"

	"github.com/tidwall/gjson"

	"github.com/modelwire/modelwire/adapters"
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
