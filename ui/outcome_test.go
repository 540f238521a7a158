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
		// Each call by its own dialog line (the assembly panel lists
		// every tool, so a tool's name alone says nothing): decided, then
		// gone before the next is looked for.
		for _, name := range []string{"get_order_line", "get_refund_ledger", "get_refund_policy"} {
			line := name + "  call_id"
			f.waitText(line)
			if reject && name == "get_refund_ledger" {
				for _, k := range []string{"r", "n", "o"} {
					f.key(k)
				}
				f.key("enter")
			} else {
				f.key("a")
			}
			f.waitFor(name+" decided", func(s string) bool { return !strings.Contains(s, line) })
		}
		if reject {
			f.waitText("5/5 pass", "unable_to_assess")
		} else {
			f.waitText("5/5 pass", "needs_review", "13000")
		}
	}
}
