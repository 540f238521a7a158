package check

import (
	"strings"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/store"
	"github.com/modelwire/modelwire/validate"
)

// Capability is one thing a target must handle (the chapter's 13.7.5),
// judged by a predicate over a session's recorded turns.
type Capability string

// Mark is a capability's verdict on one session: pass, fail, or n/a when
// the session never exercised it.
type Mark string

const (
	Pass Mark = "pass"
	Fail Mark = "fail"
	NA   Mark = "n/a"
)

// The capabilities, each a predicate over the recorded turns (the last
// attempt's summary, the calls and their results, every attempt, the
// verdicts recorded per turn). "Rejected" below means the turn's answer
// was not taken for the answer: a verdict recorded on that turn failed,
// or a later attempt replaced it, or the session ended failed with it.
const (
	// ToolCallIDs: applies when a turn proposed a call. Passes when every
	// proposed call has a call_id, unique in its turn, and every result
	// fed back names a call its turn proposed.
	ToolCallIDs Capability = "tool_call_ids"
	// ParallelCalls: applies when a turn proposed two calls or more.
	// Passes when each of them, in every such turn, got its own result.
	ParallelCalls Capability = "parallel_calls"
	// StructuredOutput: applies when the session sent an output schema.
	// Passes when the final answer's parse and schema layers pass.
	StructuredOutput Capability = "structured_output"
	// RefusalShown: applies when a response refused (terminal refused,
	// stop reason refusal, or refusal text; Gemini's carry no text).
	// Passes when that turn was rejected: a refusal is never taken for an
	// answer.
	RefusalShown Capability = "refusal_shown"
	// TruncationShown: applies when a response stopped truncated (or
	// ended incomplete). Passes when that turn was rejected: a cut answer
	// surfaces as incomplete, never as an answer.
	TruncationShown Capability = "truncation_shown"
	// EmptyShown: applies when a response ended (its terminal came,
	// whatever its status) with no text, no call and no refusal text (a
	// content filter's stop; Gemini Interactions ends such a turn failed).
	// Passes when that turn was rejected, not taken for an empty answer.
	EmptyShown Capability = "empty_content_shown"
	// UsagePresent: applies when a response completed. Passes when every
	// completed response reported its input and output tokens.
	UsagePresent Capability = "usage_present"
	// ReasoningHandled: applies when a response carried reasoning.
	// Passes when the reasoning stayed out of the answer text and the
	// final answer still parses.
	ReasoningHandled Capability = "reasoning_handled"
	// CutStreamShown: applies when an attempt's stream was cut (no
	// terminal event, a stream_cut or read_error diagnostic, or a
	// transport error after the response began). Passes when that
	// attempt was rejected (retried, or the session failed).
	CutStreamShown Capability = "cut_stream_shown"
	// DuplicatesDropped: applies when a response repeated an event
	// (duplicate_event diagnostic). Passes when the session still passes:
	// the repeat was dropped, not counted twice.
	DuplicatesDropped Capability = "duplicates_dropped"
	// UnknownSkipped: applies when a response carried an event type the
	// protocol does not define (unknown_event). Passes when the session
	// still passes.
	UnknownSkipped Capability = "unknown_events_skipped"
)

// Capabilities lists them in the order the summary prints.
var Capabilities = []Capability{ToolCallIDs, ParallelCalls, StructuredOutput, RefusalShown, TruncationShown, EmptyShown,
	UsagePresent, ReasoningHandled, CutStreamShown, DuplicatesDropped, UnknownSkipped}

func capabilities(s *store.Session, turns []store.TurnRecord, p *Profile) map[Capability]Mark {
	m := map[Capability]Mark{}
	for _, c := range Capabilities {
		m[c] = NA
	}
	judge := func(c Capability, ok bool) {
		if m[c] != Fail {
			m[c] = map[bool]Mark{true: Pass, false: Fail}[ok]
		}
	}
	lastTurn := 0
	if len(turns) > 0 {
		lastTurn = turns[len(turns)-1].Turn
	}
	rejected := func(turn int, laterAttempt bool) bool {
		for _, v := range s.Validations {
			if v.Turn == turn && v.Status == store.VerdictFail {
				return true
			}
		}
		return laterAttempt || (turn >= lastTurn && p.Verdict == "fail")
	}
	for _, t := range turns {
		sum := t.Summary
		proposed := map[string]bool{}
		ok := true
		for _, c := range sum.ToolCalls {
			if c.CallID == "" || proposed[c.CallID] {
				ok = false
			}
			proposed[c.CallID] = true
		}
		answered := map[string]bool{}
		for _, c := range t.Calls {
			if c.HasResult {
				ok = ok && proposed[c.CallID]
				answered[c.CallID] = true
			}
		}
		if len(sum.ToolCalls) > 0 {
			judge(ToolCallIDs, ok)
		}
		if len(sum.ToolCalls) > 1 {
			all := true
			for id := range proposed {
				all = all && answered[id]
			}
			judge(ParallelCalls, all && len(answered) == len(sum.ToolCalls))
		}
		refused := sum.Terminal == adapters.StatusRefused || sum.StopReason == adapters.StopRefusal || sum.Refusal != nil
		refusalText := sum.Refusal != nil && strings.TrimSpace(*sum.Refusal) != ""
		if refused {
			judge(RefusalShown, rejected(t.Turn, false))
		}
		ended := sum.Terminal != "" && sum.Terminal != adapters.StatusUnknown
		if ended && strings.TrimSpace(sum.Text) == "" && len(sum.ToolCalls) == 0 && len(sum.IncompleteToolCalls) == 0 && !refusalText {
			judge(EmptyShown, rejected(t.Turn, false))
		}
		if sum.StopReason == adapters.StopTruncated || (sum.Terminal == adapters.StatusIncomplete && !refused) {
			judge(TruncationShown, rejected(t.Turn, false))
		}
		if sum.Terminal == adapters.StatusCompleted && !refused {
			judge(UsagePresent, sum.Usage != nil && sum.Usage.InputTokens != nil && sum.Usage.OutputTokens != nil)
		}
		if strings.TrimSpace(sum.Reasoning) != "" {
			judge(ReasoningHandled, !strings.Contains(sum.Text, strings.TrimSpace(sum.Reasoning)) && p.Layers[string(validate.Parse)] != string(store.VerdictFail))
		}
		for _, d := range sum.Diagnostics {
			switch d.Kind {
			case adapters.DiagDuplicateEvent:
				judge(DuplicatesDropped, p.Verdict == "pass")
			case adapters.DiagUnknownEvent:
				judge(UnknownSkipped, p.Verdict == "pass")
			}
		}
	}
	for i, a := range s.Attempts {
		if cut(a) {
			later := i+1 < len(s.Attempts) && s.Attempts[i+1].Turn == a.Turn
			judge(CutStreamShown, rejected(a.Turn, later))
		}
	}
	if len(s.Manifest.OutputSchema) > 0 && string(s.Manifest.OutputSchema) != "null" {
		judge(StructuredOutput, p.Layers[string(validate.Parse)] == string(store.VerdictPass) && p.Layers[string(validate.Schema)] == string(store.VerdictPass))
	}
	return m
}

// cut reports whether an attempt's response began and then broke off.
func cut(a store.Attempt) bool {
	if a.StatusCode != 200 || a.Timings.FirstByte == nil {
		return false
	}
	if a.Error != "" {
		return true
	}
	return a.Stream && (a.TerminalStatus == "" || a.TerminalStatus == adapters.StatusUnknown)
}
