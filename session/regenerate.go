package session

import (
	"context"
	"fmt"
	"slices"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/validate"
)

// The chapter's budget (13.6.6): when the answer fails the parse, schema or
// domain layer, ask at most once more, telling the model exactly what
// failed; if that answer fails too, deliver "cannot complete" with the
// evidence so far. A regeneration only changes the candidate answer: the
// tool observations are sent back unchanged and no tool runs again.

// RegenerationLead starts every regeneration message, so a reader (and
// the simulator) can tell the request apart from the scenario's own turns.
const RegenerationLead = "Your previous answer failed validation"

// Regeneration is what the one regeneration of a session was about.
type Regeneration struct {
	// Turn is the turn that asked again; Turn-1 gave the failing answer.
	Turn int `json:"turn"`
	// Layer and Detail are the failure the model was told about.
	Layer  validate.Layer `json:"layer"`
	Detail string         `json:"detail"`
	// Message is the exact text sent.
	Message string `json:"message"`
	// FirstValidation is the verdict on the first answer.
	FirstValidation []LayerResult `json:"first_validation"`
}

// CannotComplete is what a failed session delivers instead of an answer.
type CannotComplete struct {
	Reason   string           `json:"reason"`
	Evidence []ObservedResult `json:"evidence"`
}

// regenerable returns the failed layer a regeneration may fix: parse,
// schema or domain. A transport or protocol failure is not the answer's
// fault and asking again would not fix it.
func regenerable(layers []LayerResult) (LayerResult, bool) {
	for _, l := range layers {
		if l.Status != Fail {
			continue
		}
		switch l.Layer {
		case LayerParse, LayerSchema, LayerDomain:
			return l, true
		}
		return l, false
	}
	return LayerResult{}, false
}

// RegenerationMessage is the user message that asks for a new answer,
// naming exactly what failed.
func RegenerationMessage(failed LayerResult) string {
	return fmt.Sprintf("%s at the %s layer: %s. Answer again with one corrected final answer that fixes exactly this. "+
		"The tool results above are the only observations; do not call tools and do not change or add facts.",
		RegenerationLead, failed.Layer, failed.Detail)
}

// regenerate makes the one regeneration request: the history with the
// failing answer, followed by the validation error as a user message.
func (s *Session) regenerate(ctx context.Context, res *Result, outcome *Outcome, answer adapters.Turn, first []LayerResult, failed LayerResult) error {
	turn := s.firstTurn() + len(res.Requests)
	msg := RegenerationMessage(failed)
	res.Regeneration = &Regeneration{Turn: turn, Layer: failed.Layer, Detail: failed.Detail, Message: msg, FirstValidation: first}
	if err := s.emit(Update{Kind: UpRegenerate, Turn: turn, Layers: first, Message: msg}); err != nil {
		return err
	}
	answer.FollowUp = msg
	history := append(slices.Clone(res.History), answer)
	red, err := s.exchange(ctx, res, outcome, turn, history)
	if err != nil || red == nil {
		return err
	}
	if sum := outcome.Final; sum.StopReason == adapters.StopToolCall || len(sum.ToolCalls) > 0 {
		// Running tools now could change the observations the first
		// answer was judged on.
		outcome.Stopped = "the regeneration proposed tool calls; a regeneration may not change the tool observations, so none ran"
		outcome.Unanswered = callIDs(sum.ToolCalls)
	}
	return s.pause(ctx, StepFinal, turn)
}

// FirstFailure says which layer failed first and why.
func FirstFailure(layers []LayerResult) string {
	for _, l := range layers {
		if l.Status == Fail {
			return fmt.Sprintf("the %s layer failed: %s", l.Layer, l.Detail)
		}
	}
	return "not every layer passed"
}
