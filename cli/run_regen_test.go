package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// run --json reports the budget of each request, the one regeneration as
// its own line, and a failed session's cannot_complete with the evidence
// and the cost estimate; --regenerate=false asks once only.
func TestRunJSONRegenerationBudgetAndCost(t *testing.T) {
	code, lines, stderr := runJSON(t, "--protocol", "anthropic-messages", "--approve", "auto", "--scenario", "refund/wrong-cap")
	if code != 1 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	budgets, regens := 0, 0
	for _, l := range lines {
		switch l["type"] {
		case "request.budget":
			budgets++
			if l["counted_by"] != "count_tokens" || l["estimate"].(float64) <= 0 {
				t.Fatalf("budget line %v", l)
			}
		case "regeneration":
			regens++
			if l["turn"].(float64) != 4 || l["of_turn"].(float64) != 3 {
				t.Fatalf("regeneration line %v", l)
			}
		}
	}
	res := sessionResult(t, lines)
	cc, _ := res["cannot_complete"].(map[string]any)
	cost, _ := res["cost"].(map[string]any)
	if budgets != 4 || regens != 1 || res["regenerated"] != true || cc == nil || len(cc["evidence"].([]any)) != 3 ||
		cost == nil || cost["total"].(float64) <= 0 || cost["table_date"] == "" {
		t.Fatalf("%d budgets, %d regenerations, result %v", budgets, regens, res)
	}
	code, lines, _ = runJSON(t, "--protocol", "anthropic-messages", "--approve", "auto", "--scenario", "refund/wrong-cap", "--regenerate=false")
	for _, l := range lines {
		if l["type"] == "regeneration" {
			t.Fatal("regenerated with --regenerate=false")
		}
	}
	if res := sessionResult(t, lines); code != 1 || res["regenerated"] != false {
		t.Fatalf("exit %d, %v", code, res)
	}
}

// A session whose regeneration fails too delivers "cannot complete" in
// text mode as --json does: the answer the validation rejected is not
// printed as the output, the tool results are the evidence (issue 27).
func TestRunTextWithholdsTheRejectedAnswer(t *testing.T) {
	db := filepath.Join(t.TempDir(), "m.db")
	code, out, errs := mw(t, "--db", db, "run", "--protocol", "anthropic-messages", "--approve", "auto", "--scenario", "refund/wrong-cap")
	if code != ExitFailed {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if strings.Contains(out, "\noutput ") {
		t.Errorf("the rejected answer is printed as the output:\n%s", out)
	}
	if !strings.Contains(out, "\ncannot complete: the answer is withheld") {
		t.Errorf("no cannot complete:\n%s", out)
	}
	for _, id := range []string{"toolu_order", "toolu_ledger", "toolu_policy"} {
		if !strings.Contains(out, "  evidence "+id+" ") {
			t.Errorf("evidence %s missing:\n%s", id, out)
		}
	}
	// A session that passes still prints its output.
	if code, out, errs := mw(t, "--db", db, "run", "--protocol", "anthropic-messages", "--approve", "auto"); code != 0 ||
		!strings.Contains(out, "\noutput {") || strings.Contains(out, "cannot complete") {
		t.Errorf("passing run: exit %d %s\n%s", code, errs, out)
	}
}
