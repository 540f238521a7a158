package samples

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/adapterstest"
	"github.com/modelwire/modelwire/session"
)

// The adapters' refund fixtures and the shipped scenario must not drift.
func TestRefundMatchesAdapterFixtures(t *testing.T) {
	sc, err := Lookup("refund")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(sc.Sources, adapterstest.RefundSources()) {
		t.Error("sources differ from adapterstest.RefundSources")
	}
	tools := adapterstest.RefundTools()
	for i, tl := range sc.Tools {
		if tl.Name != tools[i].Name || tl.Description != tools[i].Description || !jsonEq(tl.Parameters, tools[i].Parameters) {
			t.Errorf("tool %d differs from adapterstest", i)
		}
	}
	if !jsonEq(sc.Output.Schema, json.RawMessage(adapterstest.RefundSchema)) {
		t.Error("output schema differs")
	}
	for turn, calls := range [][]adapterstest.RefundCall{adapterstest.RefundTurn1, adapterstest.RefundTurn2} {
		for _, c := range calls {
			got, isErr := sc.RunTool(context.Background(), c.Name, json.RawMessage(c.Arguments))
			if isErr || !jsonEq(json.RawMessage(got), json.RawMessage(c.Result)) {
				t.Errorf("turn %d %s: tool gives %s, fixture has %s", turn+1, c.Name, got, c.Result)
			}
		}
	}
	last := sc.Script[len(sc.Script)-1].Items
	if text := last[len(last)-1].Text; text != adapterstest.RefundModelText {
		t.Errorf("final answer differs from adapterstest.RefundModelText:\n%s", text)
	}
}

func jsonEq(a, b json.RawMessage) bool {
	var x, y any
	_ = json.Unmarshal(a, &x)
	_ = json.Unmarshal(b, &y)
	return reflect.DeepEqual(x, y)
}

// observeAll runs every tool call of the script as the session would and
// records the results.
func observeAll(t *testing.T, sc *session.Scenario) *session.Observations {
	obs := &session.Observations{}
	for _, turn := range sc.Script {
		for _, it := range turn.Items {
			if it.Kind != adapters.KindToolCall {
				continue
			}
			if vs := sc.ToolSchema(it.Name).Validate(it.Arguments); vs != nil {
				obs.Results = append(obs.Results, session.ObservedResult{Name: it.Name, Content: session.Joined(vs), IsError: true})
				continue
			}
			content, isErr := sc.RunTool(context.Background(), it.Name, it.Arguments)
			obs.Results = append(obs.Results, session.ObservedResult{Name: it.Name, Arguments: it.Arguments, Content: content, IsError: isErr})
		}
	}
	return obs
}

// Each variant's final answer fails at the layer it is meant to fail at,
// and the base case passes all five with cap 13000 and needs_review.
func TestVariantsFailAtTheirLayer(t *testing.T) {
	base, _ := Lookup("refund")
	names := append([]string{""}, base.VariantNames()...)
	for _, v := range names {
		name := "refund"
		if v != "" {
			name += "/" + v
		}
		t.Run(name, func(t *testing.T) {
			sc, err := Lookup(name)
			if err != nil {
				t.Fatal(err)
			}
			last := sc.Script[len(sc.Script)-1]
			final := adapters.Summary{Terminal: adapters.StatusCompleted, StopReason: adapters.StopFinal, ProviderStopReason: "stop"}
			if last.Stop == adapters.StopRefusal {
				r := last.Items[0].Text
				final = adapters.Summary{Terminal: adapters.StatusRefused, StopReason: adapters.StopRefusal, Refusal: &r}
			} else {
				final.Text = last.Items[len(last.Items)-1].Text
			}
			layers, out := session.Validate(sc, session.Outcome{HTTPStatus: 200, Final: &final}, observeAll(t, sc))
			want := sc.Variants[v].FailsAt
			var failedAt string
			for _, l := range layers {
				if l.Status == session.Fail {
					failedAt = l.Layer
					break
				}
			}
			for _, l := range layers {
				t.Logf("%-9s %-4s %s", l.Layer, l.Status, l.Detail)
			}
			if failedAt != want {
				t.Fatalf("fails at %q, want %q: %+v", failedAt, want, layers)
			}
			if want == "" {
				var o map[string]any
				_ = json.Unmarshal(out, &o)
				if o["max_refund_cents"] != float64(13000) || o["decision"] != "needs_review" {
					t.Fatalf("output %s", out)
				}
			}
		})
	}
}

func TestBadScenarioFilesNameThePlace(t *testing.T) {
	dir := t.TempDir()
	cases := map[string]struct{ doc, want string }{
		"bad-role":  {`{"name":"x","title":"t","sources":[{"id":"a","role":"boss","trust":"trusted","text":"hi"}],"script":[{"stop":"final","items":[{"kind":"message","text":"ok"}]}]}`, "/sources/0/role"},
		"dup-tool":  {`{"name":"x","title":"t","sources":[{"id":"a","role":"user","trust":"trusted","text":"hi"}],"tools":[{"name":"f","description":"","parameters":{"type":"object"}},{"name":"f","description":"","parameters":{"type":"object"}}],"script":[{"stop":"final","items":[{"kind":"message","text":"ok"}]}]}`, "/tools/1/name: tool \"f\" is defined twice"},
		"bad-call":  {`{"name":"x","title":"t","sources":[{"id":"a","role":"user","trust":"trusted","text":"hi"}],"script":[{"stop":"tool_call","items":[{"kind":"tool_call","name":"nope","arguments":{}}]}]}`, "/script/0/items/0/name"},
		"not-json":  {`{"name":`, "x.json: /"},
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
