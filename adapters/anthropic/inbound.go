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
	switch typ := tc.Get("type").String(); typ {
	case "tool":
		in.Choice = adapters.ToolChoice{Mode: adapters.ToolChoiceNamed, Name: tc.Get("name").String()}
	case "auto", "any", "none":
		in.Choice.Mode, _ = wire.ChoiceMode(typ)
	}
	in.Serial = tc.Get("disable_parallel_tool_use").Bool()
	t := gjson.Parse(top.Get("thinking").Raw).Get("type").String()
	in.Reasoning = t == "enabled" || t == "adaptive"
}

// readOutput is the output format a checked request asks for:
// output_config.format {"type":"json_schema","schema":…} (structured
// outputs; the beta's top-level output_format, which the API still
// reads, when output_config has none). Anthropic's format has no name and
// no strict flag: Name is "" and Strict false, as sent.
func readOutput(top wire.Object) adapters.OutputContract {
	f := top.Get("output_config").Member("format")
	if !f.Present() {
		f = top.Get("output_format")
	}
	typ, schema := f.MemberPair("type", "schema")
	if typ.Str() != "json_schema" || !schema.Present() {
		return adapters.OutputContract{}
	}
	return adapters.OutputContract{Mode: adapters.OutputJSONSchema, Schema: adapters.RawView(schema.Raw)}
}
