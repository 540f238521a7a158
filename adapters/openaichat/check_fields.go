package openaichat

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/modelwire/modelwire/adapters"
	"github.com/tidwall/gjson"
)

// The checks of single request members, and of the messages and their tool
// calls.

// messages checks the messages' shapes (the parser's part); the pairing
// comes later, in toolChain.
func (c *checker) messages(v jval) *adapters.SimError {
	if v.kind() != '[' {
		return c.wrongType("messages", typeArray, v)
	}
	items := readArray(c.s, v)
	if len(items) == 0 {
		if c.p.deepseek {
			return c.invalid("Empty input messages", "", "")
		}
		return c.invalid("Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.", "messages", "empty_array")
	}
	roles := openAIRoles
	if c.p.deepseek {
		roles = deepSeekRoles
	}
	for i, item := range items {
		path := fmt.Sprintf("messages[%d]", i)
		if item.kind() != '{' {
			return c.wrongType(path, typeObject, item)
		}
		m := simMsgIn{obj: readObject(c.s, item.start)}
		role := m.obj.get("role")
		if !m.obj.has("role") || (role.null() && !c.p.deepseek) {
			return c.missing(m.obj, path, "role")
		}
		r, ok := role.str()
		if !ok {
			return c.wrongType(path+".role", typeString, role)
		}
		if !slices.Contains(roles, r) {
			return c.badValue(path+".role", r, roles, role)
		}
		m.role = r
		content := m.obj.get("content")
		switch {
		case content.kind() == '"' || content.null():
		case content.kind() == '[' && (!c.p.deepseek || r == "user"):
		case c.p.deepseek && r == "user":
			return c.deser(path, "data did not match any variant of untagged enum ChatCompletionRequestContent", m.obj.end)
		default:
			// DeepSeek takes text parts in user messages only.
			return c.wrongType(path+".content", typeContent, content)
		}
		if c.p.deepseek && r != "assistant" && !m.obj.has("content") {
			return c.missing(m.obj, path, "content")
		}
		if r == "tool" {
			id := m.obj.get("tool_call_id")
			if id.null() {
				return c.missing(m.obj, path, "tool_call_id")
			}
			s, ok := id.str()
			if !ok {
				return c.wrongType(path+".tool_call_id", typeString, id)
			}
			m.toolCallID = s
		}
		if r == "assistant" {
			if e := c.toolCalls(&m, path); e != nil {
				return e
			}
		}
		c.prompt(r, content)
		c.msgs = append(c.msgs, m)
	}
	return nil
}

// toolCalls reads an assistant message's tool_calls.
func (c *checker) toolCalls(m *simMsgIn, path string) *adapters.SimError {
	tc := m.obj.get("tool_calls")
	if tc.null() {
		return nil
	}
	path += ".tool_calls"
	if tc.kind() != '[' {
		return c.wrongType(path, typeArray, tc)
	}
	calls := readArray(c.s, tc)
	if len(calls) == 0 && !c.p.deepseek {
		return c.invalid("Invalid '"+path+"': empty array. Expected an array with minimum length 1, but got an empty array instead.", path, "empty_array")
	}
	for j, call := range calls {
		cp := fmt.Sprintf("%s[%d]", path, j)
		if call.kind() != '{' {
			return c.wrongType(cp, typeObject, call)
		}
		o := readObject(c.s, call.start)
		id, ok := o.get("id").str()
		if o.get("id").null() {
			return c.missing(o, cp, "id")
		} else if !ok {
			return c.wrongType(cp+".id", typeString, o.get("id"))
		}
		fn := o.get("function")
		if fn.null() {
			return c.missing(o, cp, "function")
		}
		if fn.kind() != '{' {
			return c.wrongType(cp+".function", typeObject, fn)
		}
		fo := readObject(c.s, fn.start)
		for _, k := range []string{"name", "arguments"} {
			if fo.get(k).null() {
				return c.missing(fo, cp+".function", k)
			}
			if fo.get(k).kind() != '"' {
				return c.wrongType(cp+".function."+k, typeString, fo.get(k))
			}
		}
		name, _ := fo.get("name").str()
		m.calls = append(m.calls, simCallIn{id: id, name: name})
	}
	return nil
}

// tools reads the offered tools' names.
func (c *checker) tools(v jval) *adapters.SimError {
	if v.kind() != '[' {
		return c.wrongType("tools", typeArray, v)
	}
	tools := readArray(c.s, v)
	for i, t := range tools {
		path := fmt.Sprintf("tools[%d]", i)
		if t.kind() != '{' {
			return c.wrongType(path, typeObject, t)
		}
		o := readObject(c.s, t.start)
		fn := o.get("function")
		if fn.null() {
			return c.missing(o, path, "function")
		}
		if fn.kind() != '{' {
			return c.wrongType(path+".function", typeObject, fn)
		}
		fo := readObject(c.s, fn.start)
		name := fo.get("name")
		if name.null() {
			return c.missing(fo, path+".function", "name")
		}
		s, ok := name.str()
		if !ok {
			return c.wrongType(path+".function.name", typeString, name)
		}
		if s == "" && !c.p.deepseek {
			return c.invalid("Invalid '"+path+".function.name': empty string. Expected a string with minimum length 1, but got an empty string instead.", path+".function.name", "empty_string")
		}
		c.in.Tools = append(c.in.Tools, s)
		if c.in.ToolDefs == nil {
			c.in.ToolDefs = make([]adapters.Tool, 0, len(tools)-i)
		}
		desc, _ := fo.get("description").str()
		c.in.ToolDefs = append(c.in.ToolDefs, adapters.Tool{Name: s, Description: desc,
			Parameters: adapters.RawView(fo.get("parameters").raw), Strict: fo.get("strict").raw == "true"})
	}
	return nil
}

// responseFormat: OpenAI's type enum and json_schema members (DeepSeek's
// json_object rule is in deepSeekValues).
func (c *checker) responseFormat(v jval) *adapters.SimError {
	if v.kind() != '{' {
		return c.wrongType("response_format", typeObject, v)
	}
	o := readObject(c.s, v.start)
	t := o.get("type")
	if t.null() {
		return c.missing(o, "response_format", "type")
	}
	s, ok := t.str()
	if !ok {
		return c.wrongType("response_format.type", typeString, t)
	}
	allowed := []string{"json_object", "json_schema", "text"}
	if c.p.deepseek {
		allowed = []string{"text", "json_object"}
	}
	if !slices.Contains(allowed, s) {
		return c.badValue("response_format.type", s, allowed, t)
	}
	switch s {
	case "json_object":
		c.in.Output.Mode = adapters.OutputJSON
	case "json_schema":
		js := o.get("json_schema")
		if js.null() {
			return c.missing(o, "response_format", "json_schema")
		}
		if js.kind() != '{' {
			return c.wrongType("response_format.json_schema", typeObject, js)
		}
		jo := readObject(c.s, js.start)
		if jo.get("name").null() {
			return c.missing(jo, "response_format.json_schema", "name")
		}
		name, _ := jo.get("name").str()
		c.in.Output = adapters.OutputContract{Mode: adapters.OutputJSONSchema, Name: name,
			Schema: adapters.RawView(jo.get("schema").raw), Strict: jo.get("strict").raw == "true"}
	}
	return nil
}

// jsonNumber reads a JSON number.
func jsonNumber(v jval) (float64, bool) {
	if k := v.kind(); k != '-' && (k < '0' || k > '9') {
		return 0, false
	}
	f, err := strconv.ParseFloat(v.raw, 64)
	return f, err == nil
}

func (c *checker) maxTokens(name string) func(v jval) *adapters.SimError {
	return func(v jval) *adapters.SimError {
		if c.p.deepseek && name != "max_tokens" {
			return nil // not a DeepSeek field: its parser skips it
		}
		f, ok := jsonNumber(v)
		if !ok {
			return c.wrongType(name, typeInteger, v)
		}
		if f != math.Trunc(f) {
			if c.p.deepseek {
				return c.deser(name, "invalid type: "+serdeUnexpected(v.raw)+", expected u32", v.end)
			}
			return c.invalid("Invalid type for '"+name+"': expected an integer, but got a decimal number instead.", name, "invalid_type")
		}
		if c.p.deepseek {
			if f < 0 || f > math.MaxUint32 {
				return c.deser(name, "invalid value: integer `"+v.raw+"`, expected u32", v.end)
			}
			// The range is DeepSeek's own check, after parsing
			// (deepSeekValues).
		} else if f < 1 {
			return c.invalid(fmt.Sprintf("Invalid '%s': integer below minimum value. Expected a value >= 1, but got %s instead.", name, v.raw), name, "integer_below_min_value")
		}
		if name == "max_completion_tokens" || c.in.MaxOutputTokens == 0 {
			c.in.MaxOutputTokens = int(min(f, math.MaxInt32))
		}
		return nil
	}
}

func (c *checker) temperature(v jval) *adapters.SimError {
	f, ok := jsonNumber(v)
	if !ok {
		return c.wrongType("temperature", typeDecimal, v)
	}
	if c.p.deepseek {
		return nil // the range is checked after parsing
	}
	switch {
	case f > 2:
		return c.invalid("Invalid 'temperature': decimal above maximum value. Expected a value <= 2, but got "+v.raw+" instead.", "temperature", "decimal_above_max_value")
	case f < 0:
		return c.invalid("Invalid 'temperature': decimal below minimum value. Expected a value >= 0, but got "+v.raw+" instead.", "temperature", "decimal_below_min_value")
	}
	return nil
}

// reasoningEffort: a string; DeepSeek parses it into its enum.
func (c *checker) reasoningEffort(v jval) *adapters.SimError {
	s, ok := v.str()
	if !ok {
		return c.wrongType("reasoning_effort", typeString, v)
	}
	if efforts := []string{"none", "minimal", "low", "medium", "high", "xhigh", "max"}; c.p.deepseek && !slices.Contains(efforts, s) {
		return c.badValue("reasoning_effort", s, efforts, v)
	}
	return nil
}

// thinking is DeepSeek's switch; OpenAI does not read it.
func (c *checker) thinking(v jval) *adapters.SimError {
	if !c.p.deepseek {
		return nil
	}
	if v.kind() != '{' {
		return c.wrongType("thinking", typeObject, v)
	}
	o := readObject(c.s, v.start)
	t := o.get("type")
	if t.null() {
		return c.missing(o, "thinking", "type")
	}
	s, ok := t.str()
	if !ok {
		return c.wrongType("thinking.type", typeString, t)
	}
	if kinds := []string{"enabled", "disabled"}; !slices.Contains(kinds, s) {
		return c.badValue("thinking.type", s, kinds, t)
	}
	return nil
}

func (c *checker) stream(v jval) *adapters.SimError {
	if v.raw != "true" && v.raw != "false" {
		return c.wrongType("stream", typeBool, v)
	}
	c.in.Stream = v.raw == "true"
	return nil
}

func (c *checker) streamOptions(v jval) *adapters.SimError {
	if v.kind() != '{' {
		return c.wrongType("stream_options", typeObject, v)
	}
	o := readObject(c.s, v.start)
	if iu := o.get("include_usage"); !iu.null() {
		if iu.raw != "true" && iu.raw != "false" {
			return c.wrongType("stream_options.include_usage", typeBool, iu)
		}
		c.in.IncludeUsage = iu.raw == "true"
	}
	if !c.p.deepseek && c.top.get("stream").raw != "true" {
		return c.invalid("The 'stream_options' parameter is only allowed when 'stream' is enabled.", "stream_options", "")
	}
	return nil
}

// deepSeekValues are DeepSeek's checks after parsing, in its order.
func (c *checker) deepSeekValues() *adapters.SimError {
	if !c.p.deepseek {
		return nil
	}
	if rf := c.top.get("response_format"); rf.kind() == '{' {
		if t, _ := readObject(c.s, rf.start).get("type").str(); t == "json_object" && !c.mentionsJSON() {
			return c.invalid("Prompt must contain the word 'json' in some form to use 'response_format' of type 'json_object'.", "", "")
		}
	}
	if f, ok := jsonNumber(c.top.get("temperature")); ok && (f < 0 || f > 2) {
		return c.invalid("Invalid temperature value, the valid range of temperature is [0, 2]", "", "")
	}
	if f, ok := jsonNumber(c.top.get("max_tokens")); ok && (f < 1 || f > 393216) {
		return c.invalid("Invalid max_tokens value, the valid range of max_tokens is [1, 393216]", "", "")
	}
	return nil
}

// mentionsJSON: some message's text says "json", in any case.
func (c *checker) mentionsJSON() bool {
	for _, m := range c.msgs {
		if strings.Contains(strings.ToLower(messageText(m.obj.get("content"))), "json") {
			return true
		}
	}
	return false
}

// messageText is a message content's text: the string, or the text parts
// joined.
func messageText(v jval) string {
	switch v.kind() {
	case '"':
		s, _ := v.str()
		return s
	case '[':
		var b strings.Builder
		for _, part := range gjson.Parse(v.raw).Array() {
			if part.Get("type").String() == "text" {
				b.WriteString(part.Get("text").String())
			}
		}
		return b.String()
	}
	return ""
}

// nullContent is OpenAI's last field check: every message needs content,
// except an assistant message that carries tool_calls, a function_call or
// a refusal instead.
func (c *checker) nullContent() *adapters.SimError {
	if c.p.deepseek {
		return nil
	}
	for i, m := range c.msgs {
		if !m.obj.get("content").null() {
			continue
		}
		if m.role == "assistant" && (len(m.calls) > 0 || !m.obj.get("function_call").null() || !m.obj.get("refusal").null() || !m.obj.get("audio").null()) {
			continue
		}
		if m.role == "developer" {
			return c.missing(m.obj, fmt.Sprintf("messages[%d]", i), "content")
		}
		return c.invalid("Invalid value for 'content': expected a string, got null.", fmt.Sprintf("messages.[%d].content", i), "")
	}
	return nil
}

// toolChain checks that tool results answer calls: each role:"tool"
// message answers a call of the assistant message before its run of tool
// messages, and every call of that message is answered before the next
// other message (or the end). It counts the model turns and collects the
// results.
func (c *checker) toolChain() *adapters.SimError {
	names := map[string]string{}
	var pending []string // the open assistant message's unanswered ids
	open := -1           // that message's index; -1: none
	answered := map[string]bool{}
	unanswered := func() *adapters.SimError {
		if len(pending) == 0 {
			return nil
		}
		if c.p.deepseek {
			return c.invalid("An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. (insufficient tool messages following tool_calls message)", "", "")
		}
		return c.invalid("An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: "+strings.Join(pending, ", "),
			fmt.Sprintf("messages.[%d].role", open), "")
	}
	for i, m := range c.msgs {
		if m.role != "tool" {
			if e := unanswered(); e != nil {
				return e
			}
			pending, open, answered = nil, -1, map[string]bool{}
			if m.role == "assistant" {
				c.in.ModelTurns++
				if len(m.calls) > 0 {
					open = i
					for _, call := range m.calls {
						pending = append(pending, call.id)
						names[call.id] = call.name
					}
				}
			}
			continue
		}
		id := m.toolCallID
		isPending := slices.Contains(pending, id)
		switch {
		case (!c.p.deepseek && open < 0) || (c.p.deepseek && len(pending) == 0):
			// DeepSeek consumes a call as it is answered, so an answer
			// after the last one is an orphan too.
			if c.p.deepseek {
				return c.invalid("Messages with role 'tool' must be a response to a preceding message with 'tool_calls'", "", "")
			}
			return c.invalid("Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.", fmt.Sprintf("messages.[%d].role", i), "")
		case !isPending && (c.p.deepseek || !answered[id]):
			if c.p.deepseek {
				return c.invalid("An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id', The following tool_call_ids did not have response messages: "+id, "", "")
			}
			return c.invalid("Invalid parameter: 'tool_call_id' of '"+id+"' not found in 'tool_calls' of previous message.", fmt.Sprintf("messages.[%d].tool_call_id", i), "")
		}
		if isPending {
			answered[id] = true
			pending = slices.DeleteFunc(pending, func(x string) bool { return x == id })
		}
		c.in.Results = append(c.in.Results, adapters.ToolResult{CallID: id, Name: names[id], Content: messageText(m.obj.get("content"))})
	}
	return unanswered()
}

// passback is DeepSeek's thinking-mode rule: a request that continues a
// tool loop (it ends on a tool result) must carry the reasoning_content of
// the assistant message that made the calls. Thinking is on unless the
// request turns it off (thinking disabled, reasoning_effort none, or the
// legacy non-thinking model name deepseek-chat); the vision model does not
// enforce it. The check is on presence: "" passes, null does not.
func (c *checker) passback() *adapters.SimError {
	if !c.p.deepseek || len(c.msgs) == 0 || c.msgs[len(c.msgs)-1].role != "tool" {
		return nil
	}
	if !deepseekThinks(gjson.Parse(c.s), c.in.Model) {
		return nil
	}
	for i := len(c.msgs) - 1; i >= 0; i-- {
		if m := c.msgs[i]; m.role == "assistant" {
			if m.obj.get("reasoning_content").kind() != '"' {
				return c.invalid("The `reasoning_content` in the thinking mode must be passed back to the API.", "", "")
			}
			break
		}
	}
	return nil
}
