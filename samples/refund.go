package samples

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/modelwire/modelwire/session"
)

// refundBackend is the refund case's fictional backend snapshot, as
// written in refund.json's "backend".
type refundBackend struct {
	Orders   map[string]map[string]orderLine `json:"orders"`
	Ledger   map[string]ledger               `json:"ledger"`
	Policies map[string]struct {
		MaxRefund             string   `json:"max_refund"`
		QualityRefundRequires []string `json:"quality_refund_requires"`
	} `json:"policies"`
	QualityEvidence map[string]bool `json:"quality_evidence"`
}

type orderLine struct {
	SKU       string `json:"sku"`
	Title     string `json:"title"`
	PaidCents int64  `json:"paid_cents"`
	Currency  string `json:"currency"`
	Status    string `json:"status"`
	PolicyID  string `json:"policy_id"`
}

type ledger struct {
	RefundedCents    int64             `json:"refunded_cents"`
	PendingHoldCents int64             `json:"pending_hold_cents"`
	Entries          []json.RawMessage `json:"entries"`
}

// wireRefund gives the refund case its read-only tools (they read the
// backend snapshot) and its computed domain checks.
func wireRefund(sc *session.Scenario) error {
	var be refundBackend
	if err := json.Unmarshal(sc.Backend, &be); err != nil {
		return fmt.Errorf("backend: %v", err)
	}
	sc.Executors = map[string]session.Executor{
		"get_order_line": func(_ context.Context, raw json.RawMessage) (string, bool) {
			var a struct{ OrderID, LineID string }
			if err := decodeArgs(raw, &a); err != nil {
				return err.Error(), true
			}
			ol, ok := be.Orders[a.OrderID][a.LineID]
			if !ok {
				return toolError("not_found", fmt.Sprintf("no order line %s/%s", a.OrderID, a.LineID)), true
			}
			return result(map[string]any{
				"evidence_id": "EV-ORDER-" + a.OrderID + "-" + a.LineID, "order_id": a.OrderID, "line_id": a.LineID,
				"sku": ol.SKU, "title": ol.Title, "paid_cents": ol.PaidCents, "currency": ol.Currency,
				"status": ol.Status, "policy_id": ol.PolicyID,
			}), false
		},
		"get_refund_ledger": func(_ context.Context, raw json.RawMessage) (string, bool) {
			var a struct{ OrderID, LineID string }
			if err := decodeArgs(raw, &a); err != nil {
				return err.Error(), true
			}
			l, ok := be.Ledger[a.OrderID+"/"+a.LineID]
			if !ok {
				return toolError("not_found", fmt.Sprintf("no ledger for %s/%s", a.OrderID, a.LineID)), true
			}
			return result(map[string]any{
				"evidence_id": "EV-LEDGER-" + a.OrderID + "-" + a.LineID, "refunded_cents": l.RefundedCents,
				"pending_hold_cents": l.PendingHoldCents, "currency": "CNY", "entries": l.Entries,
			}), false
		},
		"get_refund_policy": func(_ context.Context, raw json.RawMessage) (string, bool) {
			var a struct{ PolicyID string }
			if err := decodeArgs(raw, &a); err != nil {
				return err.Error(), true
			}
			p, ok := be.Policies[a.PolicyID]
			if !ok {
				return toolError("not_found", "no policy "+a.PolicyID), true
			}
			// The policy service also reports whether the evidence its rule
			// needs is on file for the case under review.
			onFile := true
			for _, has := range be.QualityEvidence {
				onFile = onFile && has
			}
			return result(map[string]any{
				"evidence_id": "EV-POLICY-" + a.PolicyID, "policy_id": a.PolicyID, "max_refund": p.MaxRefund,
				"quality_refund_requires": p.QualityRefundRequires, "quality_evidence_on_file": onFile,
			}), false
		},
	}
	sc.ComputedCheck = refundChecks
	return nil
}

// decodeArgs reads snake_case arguments into a struct of CamelCase fields.
func decodeArgs(raw json.RawMessage, v any) error {
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return fmt.Errorf("arguments are not a JSON object: %v", err)
	}
	fixed := map[string]any{}
	for k, val := range m {
		fixed[strings.ReplaceAll(k, "_", "")] = val
	}
	b, _ := json.Marshal(fixed)
	return json.Unmarshal(b, v)
}

func result(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func toolError(code, msg string) string {
	return result(map[string]string{"error": code, "message": msg})
}

// claimsRefund matches a draft that says money was (or is being) paid
// back, which a read-only check must never say.
var claimsRefund = regexp.MustCompile(`已(为您|经)?(办理|完成|成功)?退款|退款已(完成|办理|到账|成功)|已原路退回|款项将.{0,12}退回|\b(has been|was) refunded\b`)

// refundChecks are the refund case's business rules, recomputed from what
// the tools really returned in this session.
func refundChecks(out json.RawMessage, obs *session.Observations) []session.CheckResult {
	var a struct {
		OrderID    string   `json:"order_id"`
		LineID     string   `json:"line_id"`
		Requested  int64    `json:"requested_refund_cents"`
		MaxRefund  int64    `json:"max_refund_cents"`
		Decision   string   `json:"decision"`
		Issues     []string `json:"issues"`
		Evidence   []string `json:"evidence_ids"`
		DraftReply string   `json:"draft_reply"`
	}
	_ = json.Unmarshal(out, &a)
	var res []session.CheckResult
	add := func(id string, pass bool, format string, args ...any) {
		res = append(res, session.CheckResult{ID: id, Pass: pass, Detail: fmt.Sprintf(format, args...)})
	}

	seen := obs.EvidenceIDs()
	var unseen []string
	for _, id := range a.Evidence {
		if !seen[id] {
			unseen = append(unseen, id)
		}
	}
	switch {
	case len(a.Evidence) == 0:
		add("evidence-observed", false, "evidence_ids is empty")
	case len(unseen) > 0:
		add("evidence-observed", false, "cites evidence never observed this session: %s", strings.Join(unseen, ", "))
	default:
		add("evidence-observed", true, "all %d evidence ids were observed", len(a.Evidence))
	}

	order, okO := obs.Result("get_order_line")
	led, okL := obs.Result("get_refund_ledger")
	policy, okP := obs.Result("get_refund_policy")
	if !okO || !okL {
		add("cap-from-observations", false, "the cap cannot be derived: the order line or the ledger was never observed")
		return res
	}
	cap := num(order["paid_cents"]) - num(led["refunded_cents"]) - num(led["pending_hold_cents"])
	add("cap-from-observations", a.MaxRefund == cap, "max_refund_cents is %d; paid %d − refunded %d − pending %d = %d",
		a.MaxRefund, num(order["paid_cents"]), num(led["refunded_cents"]), num(led["pending_hold_cents"]), cap)

	exceeds := a.Requested > cap
	evidenceMissing := okP && policy["quality_evidence_on_file"] == false
	want := "approve"
	if exceeds || evidenceMissing {
		want = "needs_review"
	}
	add("decision-follows-facts", a.Decision == want, "decision is %q; the facts (requested %d vs cap %d, quality evidence on file: %v) give %q",
		a.Decision, a.Requested, cap, !evidenceMissing, want)

	var missing []string
	if exceeds && !anyContains(a.Issues, "cap", "exceed", "超") {
		missing = append(missing, "the exceeded cap")
	}
	if evidenceMissing && !anyContains(a.Issues, "evidence", "quality", "凭证") {
		missing = append(missing, "the missing quality evidence")
	}
	sort.Strings(missing)
	add("issues-named", len(missing) == 0, "issues %q must name %s", a.Issues, orNothing(missing))

	add("ids-match", a.OrderID == str(order["order_id"]) && a.LineID == str(order["line_id"]),
		"answer is about %s/%s; observed %s/%s", a.OrderID, a.LineID, str(order["order_id"]), str(order["line_id"]))

	if m := claimsRefund.FindString(a.DraftReply); m != "" {
		add("draft-read-only", false, "the draft claims a refund was made (%q), but this check is read-only", m)
	} else {
		add("draft-read-only", true, "the draft makes no refund claim")
	}
	return res
}

func anyContains(list []string, subs ...string) bool {
	for _, s := range list {
		for _, sub := range subs {
			if strings.Contains(strings.ToLower(s), sub) {
				return true
			}
		}
	}
	return false
}

func orNothing(xs []string) string {
	if len(xs) == 0 {
		return "nothing more"
	}
	return strings.Join(xs, " and ")
}

func num(v any) int64 {
	f, _ := v.(float64)
	return int64(f)
}

func str(v any) string {
	s, _ := v.(string)
	return s
}
