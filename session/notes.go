package session

import (
	"fmt"
	"regexp"
	"strconv"

	"github.com/modelwire/modelwire/jsonschema"
)

// Teaching notes are keyed by the protocol step they explain, and may be
// narrowed to one turn and to one variant:
//
//	"results"                 every turn's results step
//	"results@1"               turn 1's (a fact the ledger gives at turn 2
//	                          is not named at turn 1)
//	"sequential/results@2"    turn 2's when the variant "sequential" runs
//	"sequential/results"      every turn's in that variant
//
// The most specific key wins: the variant's for the turn, the variant's,
// the turn's, the step's. A variant's turns can differ from the base
// case's (one tool at a time takes four turns), so its own notes come
// first; a file with plain step keys reads as before.

// noteKey is the grammar of a notes member's name.
var noteKey = regexp.MustCompile(`^(?:([a-z0-9][a-z0-9_-]*)/)?([a-z_]+)(?:@([1-9][0-9]*))?$`)

// Note is the teaching note for step at turn (0: no turn, e.g. the
// validated step) of the run this scenario was loaded for.
func (sc *Scenario) Note(step string, turn int) string {
	var keys []string
	if sc.Variant != "" {
		if turn > 0 {
			keys = append(keys, fmt.Sprintf("%s/%s@%d", sc.Variant, step, turn))
		}
		keys = append(keys, sc.Variant+"/"+step)
	}
	if turn > 0 {
		keys = append(keys, fmt.Sprintf("%s@%d", step, turn))
	}
	for _, k := range append(keys, step) {
		if n, ok := sc.Notes[k]; ok {
			return n
		}
	}
	return ""
}

// checkNotes: every note names a step, and a variant the file has.
func (sc *Scenario) checkNotes() error {
	for k := range sc.Notes {
		m := noteKey.FindStringSubmatch(k)
		ptr := "/notes/" + jsonschema.EscapeToken(k)
		if m == nil {
			return sc.fail(ptr, "a note is keyed step, step@turn or variant/step[@turn]")
		}
		if !isStep(m[2]) {
			return sc.fail(ptr, "%q is not a step (%v)", m[2], Steps)
		}
		if _, ok := sc.Variants[m[1]]; m[1] != "" && !ok {
			return sc.fail(ptr, "names variant %q, which the file does not have", m[1])
		}
		if m[3] != "" {
			if n, _ := strconv.Atoi(m[3]); n > 64 {
				return sc.fail(ptr, "turn %d: a session has at most 64 turns", n)
			}
		}
	}
	return nil
}

func isStep(s string) bool {
	for _, st := range Steps {
		if st == s {
			return true
		}
	}
	return false
}
