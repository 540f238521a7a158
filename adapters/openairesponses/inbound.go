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

// promptRole is the prompt role of a message role; false for an
// assistant message (the model's own earlier turn) and anything else.
func promptRole(role string) (adapters.SourceRole, bool) {
	switch role {
	case "system":
		return adapters.RoleSystem, true
	case "developer":
		return adapters.RoleDeveloper, true
	case "user":
		return adapters.RoleUser, true
	}
	return "", false
}

// readPrompt fills the prompt of a checked request: instructions (a
// string, or a list of messages), then input (a string, a user message)
// or the system, developer and user messages among its items, each
// string content or input_text part one part, in request order. With
// previous_response_id the earlier input is the stored chain's, not this
// request's, and is not read.
func (r *request) readPrompt() {
	from := len(r.in.Prompt)
	switch ins := r.top.Get("instructions"); ins.Kind() {
	case wire.KindString:
		r.in.AddPrompt(adapters.RoleSystem, ins.Str())
	case wire.KindArray:
		for m := range ins.All() {
			if role, ok := promptRole(m.Member("role").Str()); ok {
				r.messageParts(role, m.Member("content"))
			}
		}
	}
	r.in.MarkOnce(from)
	if input := r.top.Get("input"); input.Kind() == wire.KindString {
		r.in.AddPrompt(adapters.RoleUser, input.Str())
		return
	}
	for _, it := range r.items {
		if it.typ != "message" {
			continue
		}
		if role, ok := promptRole(it.Get("role").Str()); ok {
			r.messageParts(role, it.Get("content"))
		}
	}
}

// messageParts adds a message's content: a string, or its input_text
// parts (images and files are not text; a malformed part is skipped).
func (r *request) messageParts(role adapters.SourceRole, content wire.Value) {
	if content.Kind() == wire.KindString {
		r.in.AddPrompt(role, content.Str())
		return
	}
	for p := range content.All() {
		if typ, text := p.MemberPair("type", "text"); text.Kind() == wire.KindString && typ.Str() == "input_text" {
			r.in.AddPrompt(role, text.Str())
		}
	}
}
