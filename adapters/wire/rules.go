package wire

import (
	"strings"

	"github.com/modelwire/modelwire/adapters"
)

// Rule is one check a provider makes of a request: what it checks, by
// name, and the check, which answers with the provider's own error or nil.
// A simulator lists its rules in the order the provider applies them.
type Rule[R any] struct {
	Name  string
	Check func(R) *adapters.SimError
}

// Check runs rules in order and answers with the first error: the
// providers report one problem at a time, the first they meet.
func Check[R any](r R, rules []Rule[R]) *adapters.SimError {
	for _, rule := range rules {
		if e := rule.Check(r); e != nil {
			return e
		}
	}
	return nil
}

// ChoiceMode is the canonical tool-choice mode for the words Anthropic and
// both Gemini APIs share, in any case: auto (and Gemini's validated, auto
// with checked calls), any (a call is required) and none; false for any
// other word.
func ChoiceMode(word string) (adapters.ToolChoiceMode, bool) {
	switch strings.ToLower(word) {
	case "auto", "validated":
		return adapters.ToolChoiceAuto, true
	case "any":
		return adapters.ToolChoiceRequired, true
	case "none":
		return adapters.ToolChoiceNone, true
	}
	return "", false
}
