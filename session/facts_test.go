package session_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/samples"
	"github.com/modelwire/modelwire/session"
)

// chapterAnswer is the refund case's answer (the chapter's, 13.6.6).
const chapterAnswer = `{"order_id":"O-2048","line_id":"L1","decision":"needs_review","currency":"CNY","requested_refund_cents":15000,"max_refund_cents":13000,"issues":["requested_amount_exceeds_cap","quality_evidence_missing","unverified_history_amount_conflict"],"evidence_ids":["E-order","E-ledger","E-policy"],"reply_draft":"经核查，该商品目前资金维度可退上限为130元，低于本次申请的150元。申请仍需补充质量凭证，暂不能确认满足全部售后条件。以上为核查结果，未提交退款。"}`

// refundObservations runs the refund case's three tools as the chapter
// calls them; reject names a tool whose call was rejected instead.
func refundObservations(t *testing.T, sc *session.Scenario, reject string) *session.Observations {
	t.Helper()
	obs := &session.Observations{Prompt: session.PromptOf(sc.Request(true, adapters.HistoryFull))}
	for i, c := range []struct{ name, args string }{
		{"get_order_line", `{"order_id":"O-2048","line_id":"L1"}`},
		{"get_refund_ledger", `{"order_id":"O-2048","line_id":"L1"}`},
		{"get_refund_policy", `{"category":"headphones","received_at":"2026-10-15T12:00:00+08:00","reason":"quality_issue"}`},
	} {
		content, isErr := sc.RunTool(context.Background(), c.name, json.RawMessage(c.args))
		if c.name == reject {
			content, isErr = "call rejected by the application: no", true
		}
		obs.Results = append(obs.Results, session.ObservedResult{CallID: "call_" + string(rune('a'+i)), Name: c.name, Arguments: json.RawMessage(c.args), Content: content, IsError: isErr})
	}
	return obs
}

// The domain layer's working is kept on a pass: every check with the
// values it showed, and each fact with its value, the observed values
// its expression read (with their evidence ids) and its arithmetic with
// those values written in — read from the scenario's expression.
func TestExplainDomain(t *testing.T) {
	sc, err := samples.Lookup("refund")
	if err != nil {
		t.Fatal(err)
	}
	obs := refundObservations(t, sc, "")
	layers := []session.LayerResult{{Layer: session.LayerDomain, Status: session.Pass}}
	d := session.ExplainDomain(sc, layers, json.RawMessage(chapterAnswer), obs)
	if d == nil || len(d.Checks) != len(sc.Checks) {
		t.Fatalf("domain %+v, want %d checks", d, len(sc.Checks))
	}
	for _, c := range d.Checks {
		if !c.Pass || len(c.Shown) == 0 {
			t.Errorf("check %s: pass %v, shown %v", c.ID, c.Pass, c.Shown)
		}
		if c.ID == "cap-from-observations" {
			got, _ := json.Marshal(c.Shown)
			if string(got) != `[{"expr":"answer.max_refund_cents","value":13000},{"expr":"cap","value":13000}]` {
				t.Errorf("cap-from-observations shows %s", got)
			}
		}
	}
	cap := d.Facts[0]
	if cap.Name != "cap" || string(cap.Value) != "13000" || cap.Formula != "18000 - 3000 - 2000" {
		t.Errorf("cap: %s = %s by %q", cap.Name, cap.Value, cap.Formula)
	}
	want := []string{"obs.get_order_line.paid_cents=18000 E-order", "obs.get_refund_ledger.successful_refund_cents=3000 E-ledger", "obs.get_refund_ledger.pending_hold_cents=2000 E-ledger"}
	var got []string
	for _, r := range cap.Reads {
		got = append(got, r.Path+"="+string(r.Value)+" "+r.Evidence)
	}
	if strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Errorf("cap reads\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if ev := d.Facts[1]; ev.Name != "evidence_missing" || string(ev.Value) != "true" || ev.Formula != "" || len(ev.Reads) != 2 {
		t.Errorf("evidence_missing: %+v", ev)
	}

	// The ledger call rejected: no cap, and the working says why.
	obs = refundObservations(t, sc, "get_refund_ledger")
	d = session.ExplainDomain(sc, layers, json.RawMessage(strings.Replace(chapterAnswer, `"max_refund_cents":13000`, `"max_refund_cents":null`, 1)), obs)
	cap = d.Facts[0]
	if string(cap.Value) != "null" || cap.Formula != "" || len(cap.Because) != 1 || !strings.HasSuffix(cap.Because[0], "= false") {
		t.Errorf("cap without the ledger: %+v", cap)
	}
	for _, r := range cap.Reads {
		if strings.HasPrefix(r.Path, "obs.get_refund_ledger.") && string(r.Value) != "null" {
			t.Errorf("%s reads %s without a ledger result", r.Path, r.Value)
		}
	}

	// Not judged, not explained.
	if d := session.ExplainDomain(sc, []session.LayerResult{{Layer: session.LayerDomain, Status: session.Skip}}, json.RawMessage(chapterAnswer), obs); d != nil {
		t.Errorf("a skipped domain layer explained: %+v", d)
	}
}
