package adapters

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"unicode/utf8"
	"unsafe"
)

// This file is the simulator's side of each wire format: reading a request
// the way the provider checks it, and writing a scripted model turn as the
// provider's exact bytes. The server itself lives in package sim.

// ModelTurn is one scripted model response, provider-neutral.
type ModelTurn struct {
	// Items in output order: reasoning, message text, tool calls (Arguments
	// is the exact argument text the model sends), refusal.
	Items []OutputItem `json:"items"`
	// Stop is final, tool_call, truncated or refusal.
	Stop StopReason `json:"stop"`
	// Usage reported for the turn; nil fields are left out where the
	// protocol allows.
	Usage Usage `json:"usage"`
	// Why names the rules of the simulated model that shaped this turn,
	// one line each ("history-trusted: …"); the simulator sends them in
	// WhyHeader, never in the provider's body.
	Why []string `json:"why,omitempty"`
}

// WhyHeader is the simulator's response header that says which rules of
// its model fired, one value per rule.
const WhyHeader = "X-Modelwire-Why"

// Phase says what a wire event carries, so faults can pick their moment
// (cut the connection in the middle of tool arguments, drop the terminal…)
// without knowing the protocol.
type Phase string

// Phases.
const (
	PhaseStart     Phase = "start"     // response created, item or block started
	PhaseText      Phase = "text"      // a text delta
	PhaseReasoning Phase = "reasoning" // a reasoning delta
	PhaseArgs      Phase = "args"      // a tool-argument delta
	PhaseItemDone  Phase = "item_done" // an item or block closed
	PhaseUsage     Phase = "usage"     // a usage-only event
	PhaseTerminal  Phase = "terminal"  // the terminal event(s), incl. [DONE]
	PhaseOther     Phase = "other"     // pings and the like
)

// WireEvent is one SSE event the simulator writes.
type WireEvent struct {
	Event string `json:"event,omitempty"` // SSE event name; "" for data-only protocols
	Data  string `json:"data"`
	Phase Phase  `json:"phase"`
	// ID is written as an SSE id field when set (the duplicate-events
	// fault numbers events so a client can drop the repeats).
	ID string `json:"id,omitempty"`
}

// View is bytes as a string, without a copy, for bytes that are never
// written again: a request body, which the simulator reads into a buffer
// of its own (copying a body of tens of kilobytes for each reading of it
// was a tenth of a request's cost), or a stream's finished event buffer.
func View(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// RawView is raw JSON text read from a request body (a View, or a
// sub-string of one) as a json.RawMessage, without a copy: a tool's
// parameter schema or an output schema, which CheckRequest hands on as
// the request states it. The bytes are the body's: never write them.
func RawView(s string) json.RawMessage {
	if s == "" {
		return nil
	}
	return unsafe.Slice(unsafe.StringData(s), len(s))
}

// EventWriter writes a simulated stream's event data one event after
// another into one buffer, Buf, each event's data then a slice of it: a
// stream is hundreds of events, and a string each was most of what a
// stream allocated. Append an event's data to Buf, then call End.
type EventWriter struct {
	Buf    []byte
	events []WireEvent
	ends   []int // where each event's data ends in Buf
}

// NewEventWriter makes room for about n events of about size bytes each,
// in buf (ResponseOptions.Buf) when it has room for them.
func NewEventWriter(buf []byte, n, size int) *EventWriter {
	if cap(buf) < n*size {
		buf = make([]byte, 0, n*size)
	}
	return &EventWriter{Buf: buf[:0], events: make([]WireEvent, 0, n), ends: make([]int, 0, n)}
}

// End ends the event whose data was appended since the last End.
func (w *EventWriter) End(event string, ph Phase) {
	w.events = append(w.events, WireEvent{Event: event, Phase: ph})
	w.ends = append(w.ends, len(w.Buf))
}

// Events are the events written, their data slices of the buffer (View:
// it is not written again).
func (w *EventWriter) Events() []WireEvent {
	all, from := View(w.Buf), 0
	for i, to := range w.ends {
		w.events[i].Data = all[from:to]
		from = to
	}
	return w.events
}

// Inbound is what the simulator needs from a request after checking it.
type Inbound struct {
	Model  string
	Stream bool
	// IncludeUsage: Chat's stream_options.include_usage.
	IncludeUsage bool
	// ModelTurns is how many model turns the request's history carries
	// (for previous_response_id, the length of the stored chain is added
	// by the server).
	ModelTurns int
	// Results are the tool results the request carries, in order.
	Results []ToolResult
	// PreviousResponseID and Store are the chaining fields of the stateful
	// APIs: OpenAI Responses' previous_response_id, the Interactions API's
	// previous_interaction_id.
	PreviousResponseID string
	Store              *bool
	MaxOutputTokens    int
	// Tools are the names of the tools the request offers.
	Tools []string

	// What the request lets the model do, in canonical words, so one
	// simulated model obeys every protocol's switches alike.

	// Protocol is the wire format the request came in (the server sets it).
	Protocol string
	// Choice is the tool choice the request states; Mode "" when it
	// states none (the provider default, auto). Allowed narrows the
	// tools the model may call (Gemini allowedFunctionNames).
	Choice  ToolChoice
	Allowed []string
	// Serial: the request forbids parallel calls (parallel_tool_calls
	// false, Anthropic disable_parallel_tool_use).
	Serial bool
	// Reasoning: the request asks to see reasoning (OpenAI reasoning,
	// Anthropic thinking, Gemini includeThoughts, DeepSeek thinking mode).
	Reasoning bool
	// Echo is what the protocol's response repeats of the request, raw
	// JSON by name (Responses' settings), read while checking it: the
	// response need not read the body again (ResponseOptions.Echo).
	Echo map[string]string

	// What the request says to the model, so a simulated model can read
	// the prompt as a model does (facts from the task, rules from the
	// instructions) and not only its switches.

	// Prompt is every text the request gives the model as instructions
	// or as the user's words, in request order, one part per text part
	// on the wire: system and developer instructions (RoleSystem,
	// RoleDeveloper; a protocol's top-level system field is RoleSystem)
	// and user messages (RoleUser; context material travels there).
	// The model's own earlier turns and the tool results are not here.
	// A top-level system field comes first wherever the body puts it
	// (Gemini's systemInstruction follows contents), as the model reads
	// it first.
	Prompt []PromptPart
	// ToolDefs are the declared function tools as the request states
	// them (description and parameter schema as raw JSON), in order.
	ToolDefs []Tool
	// Output is the output format the request asks for in its own
	// fields (Responses text.format, Chat response_format, Anthropic
	// output_config.format, Gemini responseMimeType/responseSchema, …):
	// Mode "" when it asks for none, OutputJSON for a bare JSON mode,
	// OutputJSONSchema with Name, Schema and Strict as sent.
	//
	// Like the strings, a tool's Parameters and the Output's Schema may
	// share the body's memory (RawView): they are read, never written.
	Output OutputContract
}

// AddPrompt appends a prompt part. The first makes room for eight, a
// request's usual count (rules, a skill, the task, some context): one
// allocation, not one per doubling.
func (in *Inbound) AddPrompt(role SourceRole, text string) {
	if in.Prompt == nil {
		in.Prompt = make([]PromptPart, 0, 8)
	}
	in.Prompt = append(in.Prompt, PromptPart{Role: role, Text: text})
}

// PromptPart is one text of a request's prompt and the role it came in.
type PromptPart struct {
	Role SourceRole
	Text string
	// Once: the text came in a top-level instructions field that a
	// continuation does not carry over (Responses instructions, the
	// Interactions API's system_instruction): the next request of a
	// chain must send it again.
	Once bool
}

// MarkOnce marks the prompt's parts from index from on as Once.
func (in *Inbound) MarkOnce(from int) {
	for i := from; i < len(in.Prompt); i++ {
		in.Prompt[i].Once = true
	}
}

// MayCall reports whether the request lets the model call the tool name.
func (in *Inbound) MayCall(name string) bool {
	if in.Choice.Mode == ToolChoiceNone {
		return false
	}
	if in.Choice.Mode == ToolChoiceNamed && in.Choice.Name != name {
		return false
	}
	if len(in.Allowed) > 0 && !slices.Contains(in.Allowed, name) {
		return false
	}
	return slices.Contains(in.Tools, name)
}

// WithCallIDs gives every tool call of t that has no call id the one id(n)
// returns, n counting the turn's calls from 0: a protocol's simulator
// names the ids its rendering will carry, so the server can remember
// which calls a stored response issued.
func WithCallIDs(t ModelTurn, id func(n int) string) ModelTurn {
	items := append([]OutputItem(nil), t.Items...)
	calls := 0
	for i, it := range items {
		if it.Kind != KindToolCall {
			continue
		}
		if it.CallID == "" {
			items[i].CallID = id(calls)
		}
		calls++
	}
	t.Items = items
	return t
}

// ResponseOptions shape one simulated response.
type ResponseOptions struct {
	Model string
	// ResponseID, when set, is the id the response carries instead of
	// one derived from Seed: the proxy re-renders an edited response
	// under the upstream's own id, which the next request may quote.
	ResponseID string
	// Seed makes ids deterministic: the same seed gives the same ids.
	Seed uint64
	// IncludeUsage: Chat's usage-only chunk before [DONE].
	IncludeUsage bool
	// Fragment splits text and argument text into realistic pieces; nil
	// uses the default (a few bytes, never inside a UTF-8 character).
	Fragment func(s string) []string
	// Created is the response's creation time in Unix seconds (the server
	// passes now); 0 derives it from Seed, so tests get the same bytes for
	// the same seed.
	Created int64
	// Request is the request body the response answers: protocols whose
	// responses echo request parameters (Responses' tools, tool_choice,
	// text, instructions…) read them from it.
	Request []byte
	// Echo is Inbound.Echo, the echoed parameters as CheckRequest read
	// them; nil: the protocol reads them from Request.
	Echo map[string]string
	// Buf is room the response may be written into (a body, a stream's
	// event data), which the server reuses once the response is written:
	// a response is kilobytes, allocated and cleared for each request
	// otherwise. nil: the protocol allocates.
	Buf []byte
}

// Fragmenter is o.Fragment, or Fragments when the options set none.
func (o ResponseOptions) Fragmenter() func(s string) []string {
	if o.Fragment != nil {
		return o.Fragment
	}
	return Fragments
}

// Simulated is implemented by every adapter the simulator can speak.
type Simulated interface {
	// CheckRequest validates a request as the real provider does and
	// returns its facts, or the provider's own error (status and body).
	// The facts' strings may share body's memory (wire.View): body must
	// not change after.
	CheckRequest(method, path string, h http.Header, body []byte) (*Inbound, *SimError)
	// StreamEvents renders a turn as the provider's stream events.
	StreamEvents(t ModelTurn, o ResponseOptions) []WireEvent
	// Body renders a turn as the provider's non-streaming JSON body.
	Body(t ModelTurn, o ResponseOptions) []byte
	// ErrorResponse is the provider's HTTP error for a fault (status, body,
	// headers), e.g. a 429 with Retry-After or Anthropic's 529.
	ErrorResponse(status int, kind, message string) *SimError
	// ErrorEvent is the in-stream error after a 200.
	ErrorEvent(kind, message string) []WireEvent
	// UnknownEvent is a well-formed event of a type the protocol does not
	// (yet) define, as a newer server might send.
	UnknownEvent() WireEvent
	// ResponseID is the id a rendered response carries (the server keeps
	// it for previous_response_id); "" where the protocol has none.
	ResponseID(o ResponseOptions) string
	// ResponseHeaders are the headers the provider sends with a response.
	ResponseHeaders(stream bool) http.Header
	// LineEnd is the SSE line ending the provider uses ("\n", or "\r\n"
	// for Gemini).
	LineEnd() string
}

// SimWord is a pseudo-random word for (seed, salt), for simulated ids: for
// a fixed salt it is a bijection of the seed (splitmix64's finaliser), so
// ids built from it differ across seeds and repeat for the same seed.
func SimWord(seed, salt uint64) uint64 {
	z := seed*0x9e3779b97f4a7c15 + salt
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// FixedHeaders are response headers that never change, keyed as net/http
// writes them (canonical), built once: a response's headers were a map
// and a canonicalised Set per header per request.
type FixedHeaders http.Header

// NewFixedHeaders builds FixedHeaders from name, value pairs.
func NewFixedHeaders(pairs ...string) FixedHeaders {
	f := FixedHeaders{}
	for i := 0; i+1 < len(pairs); i += 2 {
		f[http.CanonicalHeaderKey(pairs[i])] = []string{pairs[i+1]}
	}
	return f
}

// Header is a new header holding f, with room for extra more. The value
// slices are shared with f: the server only writes them out, and Set or
// Add on the new header replaces or grows its own slice.
func (f FixedHeaders) Header(extra int) http.Header {
	h := make(http.Header, len(f)+extra)
	for k, v := range f {
		h[k] = v
	}
	return h
}

// SimHex is "prefix" and two words as 32 lowercase hex digits, the shape
// of OpenAI's and DeepSeek's request ids (fmt's %016x%016x, without fmt).
func SimHex(prefix string, a, b uint64) string {
	buf := make([]byte, 0, len(prefix)+32)
	buf = append(buf, prefix...)
	return string(AppendHex(AppendHex(buf, a, 16), b, 16))
}

// AppendHex appends v's last digits hex digits, lowercase, with leading
// zeros (fmt's %0<digits>x for a v that fits).
func AppendHex(dst []byte, v uint64, digits int) []byte {
	for shift := 4 * (digits - 1); shift >= 0; shift -= 4 {
		dst = append(dst, "0123456789abcdef"[v>>uint(shift)&15])
	}
	return dst
}

// Fragments splits text the way providers stream it: a few bytes at a
// time, several pieces per word, never inside a UTF-8 character. The same
// text always splits the same way.
func Fragments(s string) []string {
	var out []string
	size := 0
	start := 0
	for i, r := range s {
		if i > start && (size >= 4+len(out)%5 || r == ' ' && size >= 2) {
			out = append(out, s[start:i])
			start, size = i, 0
		}
		size += utf8.RuneLen(r)
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// ArgumentText is the exact argument text of a scripted call: a JSON
// string holds raw text (possibly malformed on purpose), anything else is
// sent as compact JSON.
func ArgumentText(args json.RawMessage) string {
	if len(args) > 0 && (args[0] == '{' || args[0] == '[') && !bytes.ContainsAny(args, " \t\r\n") {
		// An object or array without white space is what Compact would
		// return (valid or not); the simulator reads each call's
		// arguments several times a response.
		return string(args)
	}
	var s string
	if json.Unmarshal(args, &s) == nil {
		return s
	}
	var b bytes.Buffer
	if json.Compact(&b, args) != nil {
		return string(args)
	}
	return b.String()
}

// JSONString is s as a JSON string the way the providers write one: UTF-8
// as is (中文, not \u4e2d), no HTML escaping (AppendJSONString). Text
// that needs no escape, most of what a stream writes, is quoted as it is.
func JSONString(s string) string {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == '"' || c == '\\' ||
			c == 0xe2 && i+2 < len(s) && s[i+1] == 0x80 && (s[i+2] == 0xa8 || s[i+2] == 0xa9) { // U+2028, U+2029
			return string(AppendJSONString(make([]byte, 0, len(s)+8), s))
		}
	}
	if !utf8.ValidString(s) {
		return string(AppendJSONString(make([]byte, 0, len(s)+8), s))
	}
	return `"` + s + `"`
}

// AppendJSONString appends s as a JSON string, as encoding/json writes it
// with HTML escaping off (so text stays readable: 中文, <, &): invalid UTF-8
// becomes U+FFFD, U+2028 and U+2029 are escaped.
func AppendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\u202`...)
			dst = append(dst, hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// SimError is an HTTP error the simulator answers with.
type SimError struct {
	Status int
	Header http.Header
	Body   json.RawMessage
}

func (e *SimError) Error() string { return string(e.Body) }
