package anthropic

import (
	"github.com/tidwall/gjson"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/wire"
)

// readChoices fills what a checked request lets the model do: tool_choice
// {"type":"auto"|"any"|"tool"|"none"} with disable_parallel_tool_use, and
// thinking (enabled or adaptive).
func readChoices(top wire.Object, in *adapters.Inbound) {
	tc := gjson.Parse(top.Get("tool_choice").Raw)
	switch tc.Get("type").String() {
	case "auto":
		in.Choice.Mode = adapters.ToolChoiceAuto
	case "any":
		in.Choice.Mode = adapters.ToolChoiceRequired
	case "none":
		in.Choice.Mode = adapters.ToolChoiceNone
	case "tool":
		in.Choice = adapters.ToolChoice{Mode: adapters.ToolChoiceNamed, Name: tc.Get("name").String()}
	}
	in.Serial = tc.Get("disable_parallel_tool_use").Bool()
	t := gjson.Parse(top.Get("thinking").Raw).Get("type").String()
	in.Reasoning = t == "enabled" || t == "adaptive"
}
