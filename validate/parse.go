package validate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/modelwire/modelwire/adapters"
)

// ParseObject reads text as exactly one JSON object and returns it
// compacted, or says what is wrong with it (problem). The parse layer of a
// session and the schema layer of an exchange read an answer by it; the
// scope words a markdown fence as its caller always has.
func ParseObject(text string, scope Scope) (obj json.RawMessage, problem string) {
	t := strings.TrimSpace(text)
	switch {
	case t == "":
		return nil, "the final text is empty"
	case strings.HasPrefix(t, "```") && scope == Exchange:
		return nil, "the JSON is wrapped in a markdown code fence, not one JSON object"
	case strings.HasPrefix(t, "```"):
		return nil, "the JSON is wrapped in a markdown code fence; the contract asks for exactly one JSON object"
	case !strings.HasPrefix(t, "{"):
		return nil, fmt.Sprintf("the final text does not start with a JSON object: %q", OneLine(t, 40))
	}
	dec := json.NewDecoder(strings.NewReader(t))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return nil, "not valid JSON: " + err.Error()
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Sprintf("text after the JSON object: %q", OneLine(t[dec.InputOffset():], 40))
	}
	var b bytes.Buffer
	_ = json.Compact(&b, raw)
	return b.Bytes(), ""
}

// TerminalProblem says what is wrong with a response's terminal state for
// the protocol layer — a cut stream, a refusal, a truncation, a failure —
// or "" when it completed.
func TerminalProblem(f *adapters.Summary) string {
	switch f.Terminal {
	case adapters.StatusCompleted:
		return ""
	case adapters.StatusUnknown:
		d := "no terminal event: the stream was cut"
		if n := len(f.IncompleteToolCalls); n > 0 {
			d += fmt.Sprintf("; %d tool call(s) never closed, so none was proposed", n)
		}
		return d
	case adapters.StatusRefused:
		d := "the model refused"
		if f.Refusal != nil && *f.Refusal != "" {
			d += ": " + OneLine(*f.Refusal, 120)
		}
		return d
	case adapters.StatusIncomplete:
		return fmt.Sprintf("truncated (%s)", f.ProviderStopReason)
	case adapters.StatusFailed:
		d := "the response failed"
		if f.Error != nil {
			d += ": " + f.Error.Error()
		}
		return d
	}
	return fmt.Sprintf("terminal %s", f.Terminal)
}

// TerminalAdvice says what the application may do next after a terminal
// state that is not an answer (13.4.2): "" for a completed response.
func TerminalAdvice(status adapters.Status, stop adapters.StopReason) string {
	switch {
	case stop == adapters.StopPause:
		return "paused (Anthropic pause_turn): send the response back as the assistant turn, unchanged, to let it continue; it is not a final answer"
	case status == adapters.StatusRefused:
		return "refused (refusal or content filter): do not retry the same request; show the user an explainable message, record the event, or change the request and ask again"
	case status == adapters.StatusIncomplete:
		return "truncated: the text is not an answer and no cut tool call may run; raise the output budget, shorten the input, or ask for less"
	case status == adapters.StatusUnknown:
		return "no terminal event: the stream was cut; do not run half-received calls, do not assume SSE resumes; a new attempt is a new generation"
	case status == adapters.StatusFailed:
		return "the provider failed mid-response: treat it as a failed attempt; the usage received so far is billed"
	}
	return ""
}

// OneLine folds s onto one line and cuts it to n runes, for a verdict's
// detail.
func OneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
