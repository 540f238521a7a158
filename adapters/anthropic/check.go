package anthropic

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/wire"
)

// Checking a request as POST /v1/messages does (adapters.Simulated): the
// anthropic-version header (any value: the SDK sends its own date, curl
// users 2023-06-01), JSON, the required model/max_tokens/messages, field
// types and ranges, roles (no "system" message), tool_result/tool_use
// pairing and the thinking constraints, each with the API's own message.
// Any API key, or none, is accepted.

// request is one request while it is checked: its body read once, and the
// facts the rules find.
type request struct {
	top       wire.Object
	in        *adapters.Inbound
	maxTokens int64
	// temperature, when the request sets it (thinking allows only 1).
	temperature *float64
	thinking    string // thinking.type
	roles       []string
	blocks      [][]blockIn
}

// blockIn is one content block of a message.
type blockIn struct {
	typ       string
	text      wire.Value
	str       string // text's text, decoded once
	id, name  string
	toolUseID wire.Value
	content   wire.Value
	isError   bool
}

// requestRules are the API's checks in the order it applies them.
var requestRules = []wire.Rule[*request]{
	{Name: "every member is a known parameter", Check: (*request).extraInput},
	{Name: "model is a string", Check: (*request).model},
	{Name: "max_tokens is an integer >= 1", Check: (*request).maxTokensRule},
	{Name: "stream is a boolean", Check: func(r *request) *adapters.SimError {
		if v := r.top.Get("stream"); v.Present() {
			if v.Kind() != wire.KindBool {
				return invalid("stream: Input should be a valid boolean")
			}
			r.in.Stream = v.Bool()
		}
		return nil
	}},
	{Name: "temperature and top_p are in [0, 1]", Check: (*request).sampling},
	{Name: "system is a string or text blocks", Check: (*request).system},
	{Name: "tools are named", Check: (*request).tools},
	{Name: "thinking is a known type with a budget below max_tokens", Check: (*request).thinkingRule},
	{Name: "thinking allows neither forced tool use nor a temperature other than 1", Check: (*request).thinkingConstraints},
	{Name: "messages are user and assistant turns with valid content", Check: (*request).messages},
	{Name: "every tool_use has its tool_result right after, and every tool_result its tool_use", Check: (*request).pairing},
}

// CheckRequest checks a request as POST /v1/messages does (see above) and
// returns its facts.
func (protocol) CheckRequest(method, path string, h http.Header, body []byte) (*adapters.Inbound, *adapters.SimError) {
	if p, _, _ := strings.Cut(path, "?"); method != http.MethodPost || p != Path {
		return nil, protocol{}.ErrorResponse(404, "not_found_error", "Not Found")
	}
	if strings.TrimSpace(h.Get("anthropic-version")) == "" {
		return nil, invalid("anthropic-version: header is required")
	}
	v, ok := wire.Parse(body)
	if !ok {
		var x any
		return nil, notJSON(body, json.Unmarshal(body, &x))
	}
	top, ok := v.Members()
	if !ok {
		return nil, invalid("Input should be a valid dictionary or object to extract fields from")
	}
	r := &request{top: top, in: &adapters.Inbound{}}
	if e := wire.Check(r, requestRules); e != nil {
		return nil, e
	}
	readChoices(top, r.in)
	r.in.Output = readOutput(top)
	return r.in, nil
}

// knownMembers are the request members the API reads: anthropic-sdk-go
// v2.15.0 MessageNewParams and BetaMessageNewParams (beta members are
// accepted whatever the anthropic-beta header says), plus the sampling
// members and stream the SDK sets apart.
var knownMembers = map[string]bool{
	"model": true, "messages": true, "max_tokens": true, "system": true, "metadata": true,
	"stop_sequences": true, "stream": true, "temperature": true, "top_k": true, "top_p": true,
	"thinking": true, "tool_choice": true, "tools": true, "service_tier": true, "container": true,
	"cache_control": true, "inference_geo": true, "output_config": true, "output_format": true,
	"speed": true, "diagnostics": true, "context_management": true, "mcp_servers": true,
	"compaction": true, "fallbacks": true, "thread": true,
}

// extraInput is the API's answer to the first top-level member (in body
// order) it does not know: "x: Extra inputs are not permitted", as its
// request model forbids extra fields.
func (r *request) extraInput() *adapters.SimError {
	for _, key := range r.top.Keys {
		if !knownMembers[key] {
			return invalid("%s: Extra inputs are not permitted", key)
		}
	}
	return nil
}

func (r *request) model() *adapters.SimError {
	switch m := r.top.Get("model"); m.Kind() {
	case wire.KindAbsent:
		return invalid("model: Field required")
	case wire.KindString:
		r.in.Model = m.Str()
		return nil
	}
	return invalid("model: Input should be a valid string")
}

func (r *request) maxTokensRule() *adapters.SimError {
	v := r.top.Get("max_tokens")
	if v.Kind() == wire.KindAbsent {
		return invalid("max_tokens: Field required")
	}
	n, ok := integer(v)
	if !ok {
		return invalid("max_tokens: Input should be a valid integer")
	}
	if n < 1 {
		return invalid("max_tokens: Input should be greater than or equal to 1")
	}
	r.maxTokens = n
	r.in.MaxOutputTokens = int(min(n, math.MaxInt32))
	return nil
}

func (r *request) sampling() *adapters.SimError {
	for _, name := range []string{"temperature", "top_p"} {
		v := r.top.Get(name)
		if !v.Present() {
			continue
		}
		f, ok := v.Float()
		if !ok {
			return invalid("%s: Input should be a valid number", name)
		}
		if f < 0 {
			return invalid("%s: Input should be greater than or equal to 0", name)
		}
		if f > 1 {
			return invalid("%s: Input should be less than or equal to 1", name)
		}
		if name == "temperature" {
			r.temperature = &f
		}
	}
	return nil
}

// system: a string or a list of text blocks.
func (r *request) system() *adapters.SimError {
	v := r.top.Get("system")
	switch v.Kind() {
	case wire.KindString:
		r.in.AddPrompt(adapters.RoleSystem, v.Str())
		return nil
	case wire.KindAbsent, wire.KindNull:
		return nil
	case wire.KindArray:
	default:
		return invalid("system: Input should be a valid string")
	}
	blocks, ok := listOfObjects(v)
	if !ok {
		return invalid("system: Input should be a valid list")
	}
	for i, raw := range blocks {
		b, _ := raw.Members()
		if t := b.Get("type"); t.Str() != "text" {
			return invalid("system.%d.type: Input should be 'text'", i)
		}
		if b.Get("text").Kind() != wire.KindString {
			return invalid("system.%d.text: Field required", i)
		}
		r.in.AddPrompt(adapters.RoleSystem, b.Get("text").Str())
	}
	return nil
}

// tools: the names offered.
func (r *request) tools() *adapters.SimError {
	v := r.top.Get("tools")
	if !v.Present() {
		return nil
	}
	tools, ok := listOfObjects(v)
	if !ok {
		return invalid("tools: Input should be a valid list")
	}
	for i, raw := range tools {
		t, ok := raw.Members()
		if !ok {
			return invalid("tools.%d: Input should be a valid dictionary or object to extract fields from", i)
		}
		name := t.Get("name").Str()
		if name == "" {
			return invalid("tools.%d.name: Field required", i)
		}
		r.in.Tools = append(r.in.Tools, name)
		// A custom tool (type absent or "custom") is a function the
		// client runs; server tools (web_search_…, bash_…) are not.
		if typ := t.Get("type"); typ.Present() && typ.Str() != "custom" {
			continue
		}
		if r.in.ToolDefs == nil {
			r.in.ToolDefs = make([]adapters.Tool, 0, len(tools)-i)
		}
		r.in.ToolDefs = append(r.in.ToolDefs, adapters.Tool{Name: name, Description: t.Get("description").Str(),
			Parameters: adapters.RawView(t.Get("input_schema").Raw), Strict: t.Get("strict").Bool()})
	}
	return nil
}

// thinkingRule: thinking and its budget.
func (r *request) thinkingRule() *adapters.SimError {
	v := r.top.Get("thinking")
	if !v.Present() {
		return nil
	}
	t, ok := v.Members()
	if !ok || !stringOrNull(t.Get("type")) {
		return invalid("thinking: Input should be a valid dictionary or object to extract fields from")
	}
	r.thinking = t.Get("type").Str()
	switch r.thinking {
	case "enabled":
		b := t.Get("budget_tokens")
		if b.Kind() == wire.KindAbsent {
			return invalid("thinking.enabled.budget_tokens: Field required")
		}
		budget, ok := integer(b)
		if !ok {
			return invalid("thinking.enabled.budget_tokens: Input should be a valid integer")
		}
		if budget < 1024 {
			return invalid("thinking.enabled.budget_tokens: Input should be greater than or equal to 1024")
		}
		if budget >= r.maxTokens {
			return invalid("`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size")
		}
	case "disabled", "adaptive":
	default:
		return invalid("thinking: Input tag '%s' found using 'type' does not match any of the expected tags: 'adaptive', 'disabled', 'enabled'", r.thinking)
	}
	return nil
}

func (r *request) thinkingConstraints() *adapters.SimError {
	if r.thinking != "enabled" && r.thinking != "adaptive" {
		return nil
	}
	tc, _ := r.top.Get("tool_choice").Members()
	if t := tc.Get("type").Str(); t == "any" || t == "tool" {
		return invalid("Thinking may not be enabled when tool_choice forces tool use.")
	}
	if r.temperature != nil && *r.temperature != 1 {
		return invalid("`temperature` may only be set to 1 when thinking is enabled. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#feature-compatibility")
	}
	return nil
}

// messages: each a user or assistant message with content, each block of
// it of a valid shape.
func (r *request) messages() *adapters.SimError {
	v := r.top.Get("messages")
	switch v.Kind() {
	case wire.KindAbsent:
		return invalid("messages: Field required")
	case wire.KindArray:
	default:
		return invalid("messages: Input should be a valid list")
	}
	msgs := v.Elements()
	if len(msgs) == 0 {
		return invalid("messages: at least one message is required")
	}
	r.roles = make([]string, len(msgs))
	r.blocks = make([][]blockIn, len(msgs))
	for i, raw := range msgs {
		m, ok := raw.Members()
		if !ok {
			return invalid("messages.%d: Input should be a valid dictionary or object to extract fields from", i)
		}
		role := m.Get("role")
		if role.Kind() == wire.KindAbsent {
			return invalid("messages.%d.role: Field required", i)
		}
		r.roles[i] = role.Str()
		switch r.roles[i] {
		case "user", "assistant":
		case "system":
			return invalid(`messages: Unexpected role "system". The Messages API accepts a top-level ` + "`system`" + ` parameter, not "system" as an input message role.`)
		default:
			return invalid("messages.%d.role: Input should be 'user' or 'assistant'", i)
		}
		var e *adapters.SimError
		if r.blocks[i], e = contentBlocks(m.Get("content"), i, i == len(msgs)-1 && r.roles[i] == "assistant"); e != nil {
			return e
		}
		if r.roles[i] == "user" {
			// The user's words are prompt; tool results (Results) and
			// the assistant's turns are not.
			for _, b := range r.blocks[i] {
				if b.typ == "text" {
					r.in.AddPrompt(adapters.RoleUser, b.str)
				}
			}
		}
	}
	return nil
}

// contentBlocks reads message i's content; only a final assistant message
// may be empty (a prefill).
func contentBlocks(content wire.Value, i int, finalAssistant bool) ([]blockIn, *adapters.SimError) {
	switch content.Kind() {
	case wire.KindAbsent:
		return nil, invalid("messages.%d.content: Field required", i)
	case wire.KindString:
		text := content.Str()
		if text == "" && !finalAssistant {
			return nil, invalid("messages: text content blocks must be non-empty")
		}
		if strings.TrimSpace(text) == "" && text != "" && !finalAssistant {
			return nil, invalid("messages: text content blocks must contain non-whitespace text")
		}
		return []blockIn{{typ: "text", text: content, str: text}}, nil
	case wire.KindArray:
	default:
		return nil, invalid("messages.%d.content: Input should be a valid list", i)
	}
	items := content.Elements()
	if len(items) == 0 && !finalAssistant {
		return nil, invalid("messages.%d: all messages must have non-empty content except for the optional final assistant message", i)
	}
	var blocks []blockIn
	for j, item := range items {
		b, ok := item.Members()
		if !ok || !stringOrNull(b.Get("id")) || !stringOrNull(b.Get("name")) || !boolOrNull(b.Get("is_error")) {
			return nil, invalid("messages.%d.content.%d: Input should be a valid dictionary or object to extract fields from", i, j)
		}
		if b.Get("type").Kind() == wire.KindAbsent {
			return nil, invalid("messages.%d.content.%d.type: Field required", i, j)
		}
		blk := blockIn{typ: b.Get("type").Str(), text: b.Get("text"), id: b.Get("id").Str(), name: b.Get("name").Str(),
			toolUseID: b.Get("tool_use_id"), content: b.Get("content"), isError: b.Get("is_error").Bool()}
		switch blk.typ {
		case "text":
			if blk.text.Kind() != wire.KindString {
				return nil, invalid("messages.%d.content.%d.text: Input should be a valid string", i, j)
			}
			text := blk.text.Str()
			blk.str = text
			if text == "" {
				return nil, invalid("messages: text content blocks must be non-empty")
			}
			if strings.TrimSpace(text) == "" && !finalAssistant {
				return nil, invalid("messages: text content blocks must contain non-whitespace text")
			}
		case "tool_use":
			if blk.id == "" {
				return nil, invalid("messages.%d.content.%d.id: Field required", i, j)
			}
			if blk.name == "" {
				return nil, invalid("messages.%d.content.%d.name: Field required", i, j)
			}
		case "tool_result":
			if blk.toolUseID.Kind() != wire.KindString {
				return nil, invalid("messages.%d.content.%d.tool_use_id: Field required", i, j)
			}
		}
		blocks = append(blocks, blk)
	}
	return blocks, nil
}

// pairing: every tool_use of an assistant turn needs its tool_result in the
// next (user) message, and a tool_result needs its tool_use in the
// assistant turn right before it. Consecutive messages of one role are one
// turn, as the API merges them.
func (r *request) pairing() *adapters.SimError {
	names := map[string]string{}
	for i := 0; i < len(r.roles); {
		j := i
		for j < len(r.roles) && r.roles[j] == r.roles[i] {
			j++
		}
		var e *adapters.SimError
		if r.roles[i] == "assistant" {
			e = r.assistantTurn(i, j, names)
		} else {
			e = r.userTurn(i, j, names)
		}
		if e != nil {
			return e
		}
		i = j
	}
	return nil
}

// assistantTurn: messages i..j-1 are one model turn; j, if any, answers it.
func (r *request) assistantTurn(i, j int, names map[string]string) *adapters.SimError {
	if j < len(r.roles) {
		r.in.ModelTurns++
	}
	var ids []string
	firstAt := -1
	for k := i; k < j; k++ {
		for _, b := range r.blocks[k] {
			if b.typ == "tool_use" {
				ids = append(ids, b.id)
				names[b.id] = b.name
				if firstAt < 0 {
					firstAt = k
				}
			}
		}
	}
	if len(ids) == 0 || j >= len(r.roles) {
		return nil
	}
	answered := map[string]bool{}
	for _, b := range r.blocks[j] {
		if b.typ == "tool_result" {
			answered[b.toolUseID.Str()] = true
		}
	}
	var missing []string
	for _, id := range ids {
		if !answered[id] {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		return invalid("messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after: %s. Each `tool_use` block must have a corresponding `tool_result` block in the next message.", firstAt, strings.Join(missing, ", "))
	}
	return nil
}

// userTurn: user messages i..j-1; their tool_results answer the assistant
// turn right before (the first user message only).
func (r *request) userTurn(i, j int, names map[string]string) *adapters.SimError {
	prev := map[string]bool{}
	for k := i - 1; k >= 0 && r.roles[k] == "assistant"; k-- {
		for _, b := range r.blocks[k] {
			if b.typ == "tool_use" {
				prev[b.id] = true
			}
		}
	}
	for k := i; k < j; k++ {
		for n, b := range r.blocks[k] {
			if b.typ != "tool_result" {
				continue
			}
			id := b.toolUseID.Str()
			if k != i || !prev[id] {
				return invalid("messages.%d.content.%d: unexpected `tool_use_id` found in `tool_result` blocks: %s. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.", k, n, id)
			}
			r.in.Results = append(r.in.Results, adapters.ToolResult{CallID: id, Name: names[id], Content: resultText(b.content), IsError: b.isError})
		}
	}
	return nil
}

// ---- the API's words and readings ---------------------------------------------

func invalid(format string, args ...any) *adapters.SimError {
	return protocol{}.ErrorResponse(400, "invalid_request_error", fmt.Sprintf(format, args...))
}

// listOfObjects: v is a list whose elements are objects or null, what the
// API's list-of-dictionaries reader accepts before it looks inside (a
// null element reads as an empty object).
func listOfObjects(v wire.Value) ([]wire.Value, bool) {
	if v.Kind() != wire.KindArray {
		return nil, false
	}
	elems := v.Elements()
	for _, e := range elems {
		if k := e.Kind(); k != wire.KindObject && k != wire.KindNull {
			return nil, false
		}
	}
	return elems, true
}

func stringOrNull(v wire.Value) bool {
	k := v.Kind()
	return k == wire.KindAbsent || k == wire.KindNull || k == wire.KindString
}

func boolOrNull(v wire.Value) bool {
	k := v.Kind()
	return k == wire.KindAbsent || k == wire.KindNull || k == wire.KindBool
}

// notJSON is the API's message for a body that does not parse: its parser's
// reason and position, as "The request body is not valid JSON: <reason>:
// line L column C (char N)" (the form seen in real 400s).
func notJSON(body []byte, err error) *adapters.SimError {
	reason, at := "unexpected character", 0
	var se *json.SyntaxError
	switch {
	case len(strings.TrimSpace(string(body))) == 0:
		reason = "Input is a zero-length, empty document"
	case errors.As(err, &se):
		at = max(0, int(se.Offset)-1)
		switch {
		case strings.Contains(se.Error(), "unexpected end"):
			reason, at = "unexpected end of data", len(body)
		case strings.Contains(se.Error(), "after top-level value"):
			reason = "unexpected content after document"
		}
	}
	at = min(at, len(body))
	prefix := string(body[:at])
	line := strings.Count(prefix, "\n") + 1
	col := utf8.RuneCountInString(prefix[strings.LastIndexByte(prefix, '\n')+1:]) + 1
	return invalid("The request body is not valid JSON: %s: line %d column %d (char %d)", reason, line, col, utf8.RuneCountInString(prefix))
}

// integer reads a JSON integer (1024 or 1024.0, not "1024").
func integer(v wire.Value) (int64, bool) {
	f, ok := v.Float()
	if !ok || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, false
	}
	return int64(f), true
}

// resultText is a tool_result's content as text: the string, or its text
// blocks joined.
func resultText(v wire.Value) string {
	switch v.Kind() {
	case wire.KindString:
		return v.Str()
	case wire.KindArray:
		var b strings.Builder
		for _, p := range v.Elements() {
			if part, ok := p.Members(); ok && part.Get("type").Str() == "text" {
				b.WriteString(part.Get("text").Str())
			}
		}
		return b.String()
	}
	return ""
}
