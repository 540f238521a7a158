package wire

import "github.com/modelwire/modelwire/adapters"

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
