package ui

import (
	"strings"
	"testing"

	"github.com/modelwire/modelwire/app"
)

// The simulated model reads the tool results it is sent, so a person's
// decision in the workbench changes the answer: rejecting the ledger call
// leaves the cap unknown, and the real engine and simulator end with
// unable_to_assess and a null cap — where approving everything ends with
// the chapter's needs_review and 13000.
func TestRejectingTheLedgerChangesTheAnswer(t *testing.T) {
	for _, reject := range []bool{false, true} {
		rc := DefaultRunConfig()
		rc.StepMode = false
		f := startFlow(t, Options{Backend: &EngineBackend{Engine: &app.Engine{}}, Run: rc, Getenv: func(string) string { return "" }}, 160, 48)
		for i := 0; i < 3; i++ {
			s := f.waitText("Tool proposal")
			switch {
			case reject && strings.Contains(s, "get_refund_ledger"):
				for _, k := range []string{"r", "n", "o"} {
					f.key(k)
				}
				f.key("enter")
			default:
				f.key("a")
			}
			f.waitFor("the proposal to be decided", func(s2 string) bool { return s2 != s })
			if i == 0 {
				continue
			}
			if strings.Contains(f.frame.Load().(string), "5/5 pass") {
				break
			}
		}
		if reject {
			f.waitText("5/5 pass", "unable_to_assess")
		} else {
			f.waitText("5/5 pass", "needs_review", "13000")
		}
	}
}
