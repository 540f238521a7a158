package geminiinteractions

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/wire"
)

// This file is the simulator's side of the Interactions API
// (adapters.Simulated): checking a request as the API does and writing a
// scripted model turn as its bytes. Shapes (testdata/SOURCES.md):
//   - the stream: `event: NAME` then `data: {…,"event_type":NAME}` with LF
//     line ends; interaction.created and interaction.status_update, a
//     step.start / step.delta… / step.stop cycle per step, then
//     interaction.completed with status and usage but no steps, and
//     `event: done` `data: [DONE]` (go-genai's stream reader fails a stream
//     without that sentinel). Transcripts: ai.google.dev docs/streaming.
//   - a thought step streams thought_summary deltas, then its
//     thought_signature as the last delta before step.stop; a function_call
//     step starts with its id, name and "arguments":{} and streams the
//     argument text in arguments_delta pieces.
//   - the body is the Interaction: id, status, the output steps (thought
//     with signature and summary, model_output, function_call with an
//     argument object), usage, times, object and model, pretty-printed.
//   - the status: requires_action when the model calls functions,
//     completed, incomplete (max_output_tokens), and for a refusal failed
//     with the blocked-generation code "safety" in errors (api-errors lists
//     the code; where it travels is our reading of the Interaction's
//     errors field, not a capture).
//   - errors: {"error":{"code":"invalid_request","message":…}} with the
//     api-errors codes; in a stream, `event: error` with the same object.

var _ adapters.Simulated = Protocol{}

const simDefaultModel = "gemini-3-flash-preview"

// ---- ids -------------------------------------------------------------

const (
	simSaltID   = 0x696e74 // "int"
	simSaltCall = 0x63616c // "cal"
	simSaltSig  = 0x736967 // "sig"
)

// simInteractionID is an interaction id: "v1_" and 32 characters of
// base64url; the first 8 bytes are a bijection of the seed.
func simInteractionID(seed uint64) string {
	var raw [24]byte
	binary.BigEndian.PutUint64(raw[0:], adapters.SimWord(seed, simSaltID))
	binary.BigEndian.PutUint64(raw[8:], adapters.SimWord(seed, simSaltID+1))
	binary.BigEndian.PutUint64(raw[16:], adapters.SimWord(seed, simSaltID+2))
	return "v1_" + base64.RawURLEncoding.EncodeToString(raw[:])
}

// simCallID is a function call id as the API writes them: 8 characters of
// [a-z0-9] ("ktr5aysg" in the docs).
func simCallID(seed uint64, n int) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	w := adapters.SimWord(seed, simSaltCall<<8+uint64(n))
	b := make([]byte, 8)
	for i := range b {
		b[i] = alphabet[w%36]
		w /= 36
	}
	return string(b)
}

// simSignature is an opaque thought signature: base64 of bytes drawn from
// the seed, 0x12 first (real ones start "E…").
func simSignature(seed uint64) string {
	raw := []byte{0x12}
	for i := uint64(0); len(raw) < 96; i++ {
		raw = binary.LittleEndian.AppendUint64(raw, adapters.SimWord(seed, simSaltSig<<16+i))
	}
	return base64.StdEncoding.EncodeToString(raw[:96])
}

// simTime is the created/updated time: fixed per seed, so a seed renders
// the same bytes.
func simTime(seed uint64) string {
	return time.Date(2026, 6, 8, 9, 0, 0, 0, time.UTC).Add(time.Duration(seed%86400) * time.Second).Format(time.RFC3339)
}

// ---- the wire objects, fields in the API's order --------------------------

type simText struct {
	Text string `json:"text"`
	Type string `json:"type"`
}

type simStep struct {
	ID        string          `json:"id,omitempty"`
	Type      string          `json:"type"`
	Name      string          `json:"name,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Signature string          `json:"signature,omitempty"`
	Summary   []simText       `json:"summary,omitempty"`
	Content   []simText       `json:"content,omitempty"`
}

type simModality struct {
	Modality string `json:"modality"`
	Tokens   int64  `json:"tokens"`
}

type simUsage struct {
	TotalTokens        int64         `json:"total_tokens"`
	TotalInputTokens   int64         `json:"total_input_tokens"`
	InputByModality    []simModality `json:"input_tokens_by_modality,omitempty"`
	TotalCachedTokens  int64         `json:"total_cached_tokens"`
	TotalOutputTokens  int64         `json:"total_output_tokens"`
	TotalToolUseTokens int64         `json:"total_tool_use_tokens"`
	TotalThoughtTokens int64         `json:"total_thought_tokens"`
}

type simErrorObj struct {
	Code    string `json:"code,omitempty"`
	Message string `json:"message"`
}

// simInteraction is the Interaction; Steps is left out of the stream's
// lifecycle events.
type simInteraction struct {
	ID          string        `json:"id"`
	Status      string        `json:"status"`
	Steps       []simStep     `json:"steps,omitempty"`
	Errors      []simErrorObj `json:"errors,omitempty"`
	Usage       *simUsage     `json:"usage,omitempty"`
	Created     string        `json:"created,omitempty"`
	Updated     string        `json:"updated,omitempty"`
	ServiceTier string        `json:"service_tier,omitempty"`
	Object      string        `json:"object"`
	Model       string        `json:"model"`
}

// simMarshal is compact JSON with <>& left as they are.
func simMarshal(v any) string {
	b, _ := adapters.MarshalBody(v)
	return string(b)
}

// ---- rendering a turn -------------------------------------------------

type simTurn struct {
	id, model, status, created string
	steps                      []simStep
	argText                    map[int]string // a call's exact argument text, by step
	errors                     []simErrorObj
	usage                      simUsage
}

// simStatus is the interaction status for a canonical stop.
func simStatus(s adapters.StopReason, hasCalls bool) string {
	switch s {
	case adapters.StopTruncated:
		return "incomplete"
	case adapters.StopRefusal:
		return "failed"
	}
	if hasCalls {
		return "requires_action"
	}
	return "completed"
}

func simRender(t adapters.ModelTurn, o adapters.ResponseOptions) simTurn {
	st := simTurn{id: Protocol{}.ResponseID(o), model: o.Model, created: simTime(o.Seed), argText: map[int]string{}}
	if st.model == "" {
		st.model = simDefaultModel
	}
	calls, outChars := 0, 0
	for _, it := range t.Items {
		switch it.Kind {
		case adapters.KindReasoning:
			s := simStep{Type: "thought", Signature: simSignature(o.Seed + uint64(len(st.steps)))}
			if it.Text != "" {
				s.Summary = []simText{{Text: it.Text, Type: "text"}}
			}
			st.steps = append(st.steps, s)
		case adapters.KindMessage:
			if it.Text == "" {
				continue
			}
			st.steps = append(st.steps, simStep{Type: "model_output", Content: []simText{{Text: it.Text, Type: "text"}}})
		case adapters.KindToolCall:
			st.argText[len(st.steps)] = adapters.ArgumentText(it.Arguments)
			id := it.CallID
			if id == "" {
				id = simCallID(o.Seed, calls)
			}
			st.steps = append(st.steps, simStep{ID: id, Type: "function_call", Name: it.Name})
			calls++
		case adapters.KindRefusal:
			st.errors = append(st.errors, simErrorObj{Code: "safety", Message: "The response was blocked by safety filters."})
			continue
		}
		outChars += utf8.RuneCountInString(it.Text) + len(adapters.ArgumentText(it.Arguments))
	}
	st.status = simStatus(t.Stop, calls > 0)
	c := wire.UsageCounts(t.Usage, outChars)
	// A given output count includes the thoughts; an estimate is of the
	// output alone.
	out := c.Output
	if c.OutputGiven {
		out = max(0, c.Output-c.Reasoning)
	}
	st.usage = simUsage{TotalInputTokens: c.Input, TotalCachedTokens: c.CacheRead,
		TotalOutputTokens: out, TotalThoughtTokens: c.Reasoning}
	if st.usage.TotalInputTokens > 0 {
		st.usage.InputByModality = []simModality{{Modality: "text", Tokens: st.usage.TotalInputTokens}}
	}
	st.usage.TotalTokens = st.usage.TotalInputTokens + st.usage.TotalOutputTokens + c.Reasoning
	return st
}

// final is the Interaction at the end (steps only in a body).
func (st simTurn) final(steps []simStep) simInteraction {
	u := st.usage
	return simInteraction{ID: st.id, Status: st.status, Steps: steps, Errors: st.errors, Usage: &u, Created: st.created,
		Updated: st.created, ServiceTier: "standard", Object: "interaction", Model: st.model}
}

// simEvent writes one SSE event; v is marshalled and event_type appended
// last, as the API orders it.
func simEvent(name string, ph adapters.Phase, v any) adapters.WireEvent {
	data := simMarshal(v)
	data = strings.TrimSuffix(data, "}") + `,"event_type":` + simMarshal(name) + "}"
	return adapters.WireEvent{Event: name, Data: data, Phase: ph}
}

// simDone is the stream's end: `event: done` `data: [DONE]`.
var simDone = adapters.WireEvent{Event: "done", Data: "[DONE]", Phase: adapters.PhaseTerminal}

// StreamEvents renders a turn as the API's stream (see the top).
func (Protocol) StreamEvents(t adapters.ModelTurn, o adapters.ResponseOptions) []adapters.WireEvent {
	st := simRender(t, o)
	frag := o.Fragmenter()
	type idx struct {
		Index int `json:"index"`
	}
	type start struct {
		Index int     `json:"index"`
		Step  simStep `json:"step"`
	}
	type delta struct {
		Index int `json:"index"`
		Delta any `json:"delta"`
	}
	type textDelta struct {
		Text string `json:"text"`
		Type string `json:"type"`
	}
	type summaryDelta struct {
		Content simText `json:"content"`
		Type    string  `json:"type"`
	}
	type sigDelta struct {
		Signature string `json:"signature"`
		Type      string `json:"type"`
	}
	type argsDelta struct {
		Arguments string `json:"arguments"`
		Type      string `json:"type"`
	}
	type lifecycle struct {
		Interaction simInteraction `json:"interaction"`
	}
	type statusUpdate struct {
		InteractionID string `json:"interaction_id"`
		Status        string `json:"status"`
	}
	begin := simInteraction{ID: st.id, Status: "in_progress", Object: "interaction", Model: st.model}
	out := []adapters.WireEvent{
		simEvent("interaction.created", adapters.PhaseStart, lifecycle{begin}),
		simEvent("interaction.status_update", adapters.PhaseOther, statusUpdate{st.id, "in_progress"}),
	}
	for i, s := range st.steps {
		switch s.Type {
		case "thought":
			out = append(out, simEvent("step.start", adapters.PhaseStart, start{i, simStep{Type: "thought"}}))
			for _, c := range s.Summary {
				for _, f := range frag(c.Text) {
					out = append(out, simEvent("step.delta", adapters.PhaseReasoning, delta{i, summaryDelta{simText{f, "text"}, "thought_summary"}}))
				}
			}
			out = append(out, simEvent("step.delta", adapters.PhaseReasoning, delta{i, sigDelta{s.Signature, "thought_signature"}}))
		case "model_output":
			out = append(out, simEvent("step.start", adapters.PhaseStart, start{i, simStep{Type: "model_output"}}))
			for _, f := range frag(s.Content[0].Text) {
				out = append(out, simEvent("step.delta", adapters.PhaseText, delta{i, textDelta{f, "text"}}))
			}
		case "function_call":
			head := s
			head.Arguments = json.RawMessage("{}")
			out = append(out, simEvent("step.start", adapters.PhaseStart, start{i, head}))
			for _, f := range frag(st.argText[i]) {
				out = append(out, simEvent("step.delta", adapters.PhaseArgs, delta{i, argsDelta{f, "arguments_delta"}}))
			}
		}
		out = append(out, simEvent("step.stop", adapters.PhaseItemDone, idx{i}))
	}
	out = append(out, simEvent("interaction.completed", adapters.PhaseTerminal, lifecycle{st.final(nil)}), simDone)
	return out
}

// Body renders a turn as the Interaction a non-streaming create returns:
// the same ids and signatures as StreamEvents for the same seed. A call
// whose scripted argument text is not a JSON object cannot be written as
// a function_call step (arguments is an object) and is left out.
func (Protocol) Body(t adapters.ModelTurn, o adapters.ResponseOptions) []byte {
	st := simRender(t, o)
	steps := make([]simStep, 0, len(st.steps))
	for i, s := range st.steps {
		if s.Type == "function_call" {
			args := []byte(st.argText[i])
			var obj map[string]json.RawMessage
			if json.Unmarshal(args, &obj) != nil || obj == nil {
				continue
			}
			var b bytes.Buffer
			_ = json.Compact(&b, args)
			s.Arguments = b.Bytes()
		}
		steps = append(steps, s)
	}
	compact := simMarshal(st.final(steps))
	b, _ := wire.AppendIndent(nil, compact)
	return append(b, '\n')
}

// AssignCallIDs gives every call of t the id its rendering will carry, so
// the simulator can check a chained request's function_result steps (they
// answer calls by id alone) and name their tools.
func (Protocol) AssignCallIDs(t adapters.ModelTurn, o adapters.ResponseOptions) adapters.ModelTurn {
	return adapters.WithCallIDs(t, func(n int) string { return simCallID(o.Seed, n) })
}

// ResponseID is the interaction id (previous_interaction_id chains on it).
func (Protocol) ResponseID(o adapters.ResponseOptions) string {
	if o.ResponseID != "" {
		return o.ResponseID
	}
	return simInteractionID(o.Seed)
}

// ResponseHeaders are the headers of Google's front end (no request id,
// no rate-limit headers).
func (Protocol) ResponseHeaders(bool) http.Header {
	h := http.Header{}
	h["Vary"] = []string{"Origin", "X-Origin", "Referer"}
	h.Set("Server", "scaffolding on HTTPServer2")
	h.Set("X-Content-Type-Options", "nosniff")
	return h
}

// LineEnd: the docs' transcripts end lines with LF.
func (Protocol) LineEnd() string { return "\n" }

// ---- errors -----------------------------------------------------------

// simCodes are the api-errors codes by HTTP status.
var simCodes = map[int]string{400: "invalid_request", 401: "authentication", 403: "permission_denied", 404: "not_found",
	409: "aborted", 429: "rate_limit_exceeded", 499: "cancelled", 500: "api_error", 501: "unimplemented",
	503: "service_unavailable", 504: "deadline_exceeded"}

// simErrorFor maps a fault kind (or a status) to the API's status and code.
// Anthropic's 529 does not exist here: overload is 503.
func simErrorFor(status int, kind, message string) (int, simErrorObj) {
	switch kind {
	case "rate_limit", "rate_limit_error", "rate_limit_exceeded":
		status, message = 429, "You have exceeded the per-minute request or token limit. Please retry after a short wait."
	case "server_error", "api_error":
		status, message = 500, "An unexpected error occurred on the server. Please retry."
	case "overloaded", "overloaded_error", "service_unavailable":
		status, message = 503, "The service is temporarily overloaded. Please retry."
	case "invalid_request_error", "invalid_request", "request_too_large":
		status = 400
	case "authentication_error":
		status = 401
	case "permission_error":
		status = 403
	case "not_found_error":
		status = 404
	case "timeout_error":
		status = 504
	}
	if _, ok := simCodes[status]; !ok {
		status = 500
	}
	if message == "" {
		message = http.StatusText(status)
	}
	return status, simErrorObj{Code: simCodes[status], Message: message}
}

func simError(status int, e simErrorObj) *adapters.SimError {
	var b bytes.Buffer
	_ = json.Indent(&b, []byte(simMarshal(struct {
		Error simErrorObj `json:"error"`
	}{e})), "", "  ")
	b.WriteByte('\n')
	return &adapters.SimError{Status: status, Header: Protocol{}.ResponseHeaders(false), Body: b.Bytes()}
}

func simInvalid(format string, a ...any) *adapters.SimError {
	return simError(400, simErrorObj{Code: "invalid_request", Message: fmt.Sprintf(format, a...)})
}

// ErrorResponse is the API's HTTP error: {"error":{code,message}}.
func (Protocol) ErrorResponse(status int, kind, message string) *adapters.SimError {
	return simError(simErrorFor(status, kind, message))
}

// ErrorEvent is the in-stream error (docs/streaming "error"), then the
// stream's done marker.
func (Protocol) ErrorEvent(kind, message string) []adapters.WireEvent {
	_, e := simErrorFor(0, kind, message)
	return []adapters.WireEvent{simEvent("error", adapters.PhaseTerminal, struct {
		Error simErrorObj `json:"error"`
	}{simErrorObj{Message: e.Message, Code: e.Code}}), simDone}
}

// UnknownEvent is an event of a type the API does not define (yet).
func (Protocol) UnknownEvent() adapters.WireEvent {
	return simEvent("interaction.heartbeat", adapters.PhaseOther, struct {
		At string `json:"at"`
	}{"2026-06-08T09:00:00Z"})
}

// UnknownPrevious is the answer when previous_interaction_id names no
// stored interaction (the server keeps the ids it issued).
func (Protocol) UnknownPrevious(id string) *adapters.SimError {
	return simError(404, simErrorObj{Code: "not_found", Message: fmt.Sprintf("Interaction %s not found.", id)})
}

// UnmatchedResult is the answer when a function_result answers no
// function_call of the interaction it continues.
func (Protocol) UnmatchedResult(callID string) *adapters.SimError {
	return simInvalid("No function call found for function_result with call_id %s.", callID)
}
