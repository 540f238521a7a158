package gemini

import (
	"github.com/tidwall/gjson"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/wire"
)

// readChoices fills what a checked request lets the model do:
// toolConfig.functionCallingConfig (mode AUTO|ANY|NONE|VALIDATED,
// allowedFunctionNames) and thinkingConfig.includeThoughts. Gemini has no
// switch for parallel calls. Field names are read in both the REST
// camelCase and the proto snake_case the API also accepts.
func readChoices(top wire.Object, in *adapters.Inbound) {
	fc := first(gjson.Parse(simGet(top, "toolConfig").Raw), "functionCallingConfig", "function_calling_config")
	in.Choice.Mode, _ = wire.ChoiceMode(first(fc, "mode").String())
	for _, n := range first(fc, "allowedFunctionNames", "allowed_function_names").Array() {
		in.Allowed = append(in.Allowed, n.String())
	}
	if in.Choice.Mode == adapters.ToolChoiceRequired && len(in.Allowed) == 1 {
		in.Choice = adapters.ToolChoice{Mode: adapters.ToolChoiceNamed, Name: in.Allowed[0]}
	}
	gc := gjson.Parse(simGet(top, "generationConfig").Raw)
	in.Reasoning = first(gc, "thinkingConfig.includeThoughts", "thinking_config.include_thoughts").Bool()
}

func first(r gjson.Result, paths ...string) gjson.Result {
	for _, p := range paths {
		if v := r.Get(p); v.Exists() {
			return v
		}
	}
	return gjson.Result{}
}
