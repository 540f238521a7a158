package openairesponses

import (
	"github.com/tidwall/gjson"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/wire"
)

// readChoices fills what a checked request lets the model do: tool_choice
// ("auto", "none", "required", {"type":"function","name":…}),
// parallel_tool_calls and reasoning.
func readChoices(top wire.Object, in *adapters.Inbound) {
	tc := gjson.Parse(top.Get("tool_choice").Raw)
	switch {
	case tc.Type == gjson.String:
		in.Choice.Mode = adapters.ToolChoiceMode(tc.String())
	case tc.Get("type").String() == "function":
		in.Choice = adapters.ToolChoice{Mode: adapters.ToolChoiceNamed, Name: tc.Get("name").String()}
	case tc.Get("type").String() == "allowed_tools":
		in.Choice.Mode = adapters.ToolChoiceMode(tc.Get("mode").String())
		for _, t := range tc.Get("tools.#.name").Array() {
			in.Allowed = append(in.Allowed, t.String())
		}
	}
	in.Serial = top.Get("parallel_tool_calls").Raw == "false"
	reasoning := gjson.Parse(top.Get("reasoning").Raw)
	eff := reasoning.Get("effort").String()
	in.Reasoning = reasoning.IsObject() && eff != "none" && eff != "minimal"
}

// AssignCallIDs gives every call of t the call_id its rendering will carry,
// so the simulator can remember which call ids a stored response issued
// (a chained request answers them by id alone).
func (Protocol) AssignCallIDs(t adapters.ModelTurn, o adapters.ResponseOptions) adapters.ModelTurn {
	return adapters.WithCallIDs(t, func(n int) string { return simCallID(o.Seed, n) })
}
