package samples

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/adapterstest"
	"github.com/modelwire/modelwire/session"
	"github.com/modelwire/modelwire/sim"
	"github.com/modelwire/modelwire/transport"
)

// The shipped case's tools answer the chapter's calls with the chapter's
// observations (13.6.4, 13.2.8), and its script ends with the chapter's
// object (13.6.6) — literal values, so any drift fails here.
func TestRefundIsTheChapters(t *testing.T) {
	sc, err := Lookup("refund")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, args, want string }{
		{"get_order_line", `{"order_id":"O-2048","line_id":"L1"}`, `{"status":"ok","evidence_id":"E-order","order_id":"O-2048","line_id":"L1","currency":"CNY","paid_cents":18000,"category":"headphones","received_at":"2026-10-15T12:00:00+08:00","reason":"quality_issue","quality_evidence":"missing","observed_at":"2026-10-20T10:00:01+08:00"}`},
		{"get_refund_ledger", `{"order_id":"O-2048","line_id":"L1"}`, `{"status":"ok","evidence_id":"E-ledger","snapshot":"L42","currency":"CNY","successful_refund_cents":3000,"pending_hold_cents":2000}`},
		{"get_refund_policy", `{"category":"headphones","received_at":"2026-10-15T12:00:00+08:00","reason":"quality_issue"}`, `{"status":"ok","evidence_id":"E-policy","version":"aftersale-v3","within_7_days":true,"quality_evidence_required":true}`},
	} {
		got, isErr := sc.RunTool(context.Background(), c.name, json.RawMessage(c.args))
		if isErr || got != c.want {
			t.Errorf("%s%s gives %s, the chapter has %s", c.name, c.args, got, c.want)
		}
	}
	if got, isErr := sc.RunTool(context.Background(), "get_refund_policy", json.RawMessage(`{"category":"shoes","received_at":"2026-10-15T12:00:00+08:00","reason":"quality_issue"}`)); !isErr || !strings.Contains(got, "not_found") {
		t.Errorf("a policy lookup nothing answers: %s (error %v)", got, isErr)
	}
	last := sc.Script[len(sc.Script)-1].Items
	if text := last[len(last)-1].Text; text != adapterstest.RefundModelText {
		t.Errorf("final answer differs from the chapter's:\n%s", text)
	}
	wantSchema := `{"type":"object","properties":{"order_id":{"type":"string"},"line_id":{"type":"string"},"decision":{"type":"string","enum":["needs_review","ready_for_review","unable_to_assess"]},"currency":{"type":"string","enum":["CNY"]},"requested_refund_cents":{"type":"integer"},"max_refund_cents":{"type":["integer","null"]},"issues":{"type":"array","items":{"type":"string"}},"evidence_ids":{"type":"array","items":{"type":"string"}},"reply_draft":{"type":"string"}},"required":["order_id","line_id","decision","currency","requested_refund_cents","max_refund_cents","issues","evidence_ids","reply_draft"],"additionalProperties":false}`
	var b bytes.Buffer
	_ = json.Compact(&b, sc.Output.Schema)
	if b.String() != wantSchema {
		t.Errorf("output schema differs from the chapter's:\n%s", b.String())
	}
}

// runRefund runs a scenario end to end against the simulator, as `run
// --approve auto` does.
func runRefund(t *testing.T, sc *session.Scenario, protocol string, stream bool) *session.Result {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	base, err := sim.New(sim.Options{Scenario: sc}).Start(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s, err := session.New(session.Config{Scenario: sc, Protocol: protocol, Provider: transport.Provider{Name: "sim", BaseURL: base, Key: "k"},
		Stream: stream, Policy: session.PolicyAuto}, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func failedAt(res *session.Result) string {
	for _, l := range res.Layers {
		if l.Status == session.Fail {
			return string(l.Layer)
		}
	}
	return ""
}

// Each variant is a behaviour of the simulated model and fails exactly at
// the layer it is meant to, on every protocol, streaming and not; the base
// case passes all five with cap 13000 and needs_review.
func TestVariantsFailAtTheirLayer(t *testing.T) {
	base, _ := Lookup("refund")
	want := map[string]string{"": "", "wrong-cap": "domain", "fenced": "parse", "missing-field": "schema", "claims-refunded": "domain", "bad-args": "", "sequential": "", "refusal": "protocol"}
	if len(base.VariantNames()) != len(want)-1 {
		t.Fatalf("variants %v: add the new one to this table", base.VariantNames())
	}
	for v, layer := range want {
		name := strings.TrimSuffix("refund/"+v, "/")
		sc, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		if v != "" && sc.Variants[v].FailsAt != layer {
			t.Errorf("%s says it fails at %q; this test expects %q", name, sc.Variants[v].FailsAt, layer)
		}
		for _, p := range []string{adapters.OpenAIResponses, adapters.OpenAIChat, adapters.AnthropicMessages, adapters.Gemini, adapters.GeminiInteractions, adapters.DeepSeekChat} {
			for _, stream := range []bool{true, false} {
				res := runRefund(t, sc, p, stream)
				if got := failedAt(res); got != layer {
					t.Errorf("%s on %s (stream %v) fails at %q, want %q: %+v", name, p, stream, got, layer, res.Layers)
				}
				// A failing parse, schema or domain layer gets one regeneration.
				turns := map[string]int{"sequential": 4, "bad-args": 4, "refusal": 1, "wrong-cap": 4, "fenced": 4, "missing-field": 4, "claims-refunded": 4}[v]
				if turns == 0 {
					turns = 3
				}
				if len(res.Requests) != turns {
					t.Errorf("%s on %s: %d requests, want %d", name, p, len(res.Requests), turns)
				}
			}
		}
	}
}

// A copy of the case loaded from a file has no Go parts, yet is checked
// exactly as the built-in one: its domain checks are in the file.
func TestScenarioFileCarriesItsDomainChecks(t *testing.T) {
	data, err := files.ReadFile("refund.json")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "my-refund.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	sc, err := Lookup(path)
	if err != nil {
		t.Fatal(err)
	}
	if sc.Responder != nil {
		t.Fatal("a scenario file must not get the built-in Go model")
	}
	res := runRefund(t, sc, adapters.OpenAIResponses, false)
	if failedAt(res) != "" || res.Layers[4].Detail != "10 business checks pass" {
		t.Fatalf("the file's script: %+v", res.Layers)
	}
	// The same file with a wrong cap in its script fails at the domain
	// layer, naming the rule.
	wrong := strings.Replace(string(data), `\"max_refund_cents\":13000`, `\"max_refund_cents\":15000`, 1)
	if wrong == string(data) {
		t.Fatal("the script's final answer has no max_refund_cents 13000 to change")
	}
	_ = os.WriteFile(path, []byte(wrong), 0o644)
	sc, err = Lookup(path)
	if err != nil {
		t.Fatal(err)
	}
	res = runRefund(t, sc, adapters.OpenAIResponses, false)
	if failedAt(res) != "domain" || !strings.Contains(res.Layers[4].Detail, "cap-from-observations") {
		t.Fatalf("a wrong cap in a scenario file: %+v", res.Layers)
	}
	// A file with no checks says the domain layer was skipped, and why.
	var doc map[string]any
	_ = json.Unmarshal(data, &doc)
	delete(doc, "checks")
	delete(doc, "facts")
	bare, _ := json.Marshal(doc)
	_ = os.WriteFile(path, bare, 0o644)
	sc, err = Lookup(path)
	if err != nil {
		t.Fatal(err)
	}
	res = runRefund(t, sc, adapters.OpenAIResponses, false)
	if res.Layers[4].Status != session.Skip || !strings.Contains(res.Layers[4].Detail, "no business checks") {
		t.Fatalf("no checks: %+v", res.Layers[4])
	}
}

func TestBadScenarioFilesNameThePlace(t *testing.T) {
	dir := t.TempDir()
	cases := map[string]struct{ doc, want string }{
		"bad-role":  {`{"name":"x","title":"t","sources":[{"id":"a","role":"boss","trust":"trusted","text":"hi"}],"script":[{"stop":"final","items":[{"kind":"message","text":"ok"}]}]}`, "/sources/0/role"},
		"dup-tool":  {`{"name":"x","title":"t","sources":[{"id":"a","role":"user","trust":"trusted","text":"hi"}],"tools":[{"name":"f","description":"","parameters":{"type":"object"}},{"name":"f","description":"","parameters":{"type":"object"}}],"script":[{"stop":"final","items":[{"kind":"message","text":"ok"}]}]}`, "/tools/1/name: tool \"f\" is defined twice"},
		"bad-call":  {`{"name":"x","title":"t","sources":[{"id":"a","role":"user","trust":"trusted","text":"hi"}],"script":[{"stop":"tool_call","items":[{"kind":"tool_call","name":"nope","arguments":{}}]}]}`, "/script/0/items/0/name"},
		"not-json":  {`{"name":`, "x.json: /"},
		"bad-expr":  {`{"name":"x","title":"t","sources":[{"id":"a","role":"user","trust":"trusted","text":"hi"}],"checks":[{"id":"c","expr":"answer.cap =="}],"script":[{"stop":"final","items":[{"kind":"message","text":"ok"}]}]}`, "/checks/0/expr"},
		"bad-final": {`{"name":"x","title":"t","sources":[{"id":"a","role":"user","trust":"trusted","text":"hi"}],"final_turn":{"after":["nope"],"tool_choice":{"mode":"none"}},"script":[{"stop":"final","items":[{"kind":"message","text":"ok"}]}]}`, "/final_turn/after/0"},
		"bad-check": {`{"name":"x","title":"t","sources":[{"id":"a","role":"user","trust":"trusted","text":"hi"}],"checks":[{"id":"c","pointer":"/a","lt":"ten"}],"script":[{"stop":"final","items":[{"kind":"message","text":"ok"}]}]}`, "/checks/0/lt"},
	}
	for name, c := range cases {
		path := filepath.Join(dir, name, "x.json")
		_ = os.MkdirAll(filepath.Dir(path), 0o755)
		_ = os.WriteFile(path, []byte(c.doc), 0o644)
		_, err := Lookup(path)
		t.Log(err)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: error %v, want it to name %s and %q", name, err, path, c.want)
		}
	}
	if _, err := Lookup("refund/nope"); err == nil || !strings.Contains(err.Error(), "no variant \"nope\"") {
		t.Errorf("unknown variant: %v", err)
	}
}
