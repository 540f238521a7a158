package cli

import (
	"testing"

	"github.com/modelwire/modelwire/adapters"
)

// run --json's session.result lists every attempt's six time points (the
// retried 429 too) and the provider's server figure apart, and its cost
// carries the billing buckets; a cut stream's cost is "to reconcile".
func TestRunJSONTimingsAndCostBuckets(t *testing.T) {
	code, lines, stderr := runJSON(t, "--protocol", adapters.OpenAIResponses, "--approve", "auto", "--fault", "rate-limit")
	res := sessionResult(t, lines)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	times, _ := res["timings"].([]any)
	if len(times) != 4 { // turn 1's 429 and its retry, turns 2 and 3
		t.Fatalf("%d attempts timed, want 4: %v", len(times), res["timings"])
	}
	num := func(m map[string]any, k string) float64 { v, _ := m[k].(float64); return v }
	for i, x := range times {
		m := x.(map[string]any)
		if _, ok := m["request_start_ms"]; !ok || num(m, "request_start_ms") != 0 {
			t.Errorf("attempt %d: request_start_ms %v, want 0 (the origin)", i, m["request_start_ms"])
		}
		if num(m, "headers_ms") <= 0 {
			t.Errorf("attempt %d: no headers time: %v", i, m)
		}
		sv, _ := m["server"].(map[string]any)
		if i > 0 && (sv == nil || sv["source"] != "openai-processing-ms" || num(sv, "ms") <= 0) {
			t.Errorf("attempt %d: server figure %v", i, m["server"])
		}
		if i == 0 {
			if m["turn"] != 1.0 || m["attempt"] != 1.0 || num(m, "first_event_ms") != 0 {
				t.Errorf("the 429: %v", m)
			}
			continue
		}
		h, e, k, end := num(m, "headers_ms"), num(m, "first_event_ms"), num(m, "first_token_ms"), num(m, "terminal_ms")
		if !(h <= e && e <= k && k < end) {
			t.Errorf("attempt %d: points out of order: %v", i, m)
		}
	}
	if last := times[3].(map[string]any); num(last, "first_text_ms") < num(last, "first_token_ms") || num(last, "first_text_ms") == 0 {
		t.Errorf("the answer's first text: %v", last)
	}
	cost := res["cost"].(map[string]any)
	b, _ := cost["buckets"].(map[string]any)
	if b == nil || num(b, "input") <= 0 || num(b, "output") <= 0 || num(b, "total") != num(cost, "total") {
		t.Errorf("cost buckets %v (total %v)", cost["buckets"], cost["total"])
	}

	_, lines, _ = runJSON(t, "--protocol", adapters.OpenAIResponses, "--approve", "auto", "--fault", "disconnect-mid-args")
	cost = sessionResult(t, lines)["cost"].(map[string]any)
	if cost["to_reconcile"] != 1.0 || cost["complete"] != false {
		t.Errorf("a cut stream's cost: to_reconcile %v, complete %v", cost["to_reconcile"], cost["complete"])
	}
}
