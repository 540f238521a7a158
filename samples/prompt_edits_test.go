package samples

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/registry"
	"github.com/modelwire/modelwire/session"
)

// The simulated model reads the prompt: an edit of one source changes the
// answer, and the checks, which read the same prompt, follow it.

// edited is the refund case with one source's words replaced.
func edited(t *testing.T, source, find, replace string) *session.Scenario {
	t.Helper()
	sc, err := Lookup("refund")
	if err != nil {
		t.Fatal(err)
	}
	cp := *sc
	cp.Sources = append([]adapters.Source(nil), sc.Sources...)
	for i, s := range cp.Sources {
		if s.ID == source {
			if !strings.Contains(s.Text, find) {
				t.Fatalf("source %s does not say %q", source, find)
			}
			cp.Sources[i].Text = strings.ReplaceAll(s.Text, find, replace)
			return &cp
		}
	}
	t.Fatalf("no source %s", source)
	return nil
}

// answerOf is the session's parsed final object.
func answerOf(t *testing.T, res *session.Result) map[string]any {
	t.Helper()
	var a map[string]any
	if err := json.Unmarshal(res.Output, &a); err != nil {
		t.Fatalf("no answer object (%v): %+v", err, res.Layers)
	}
	return a
}

func TestEditingTheTaskAmountChangesTheAnswer(t *testing.T) {
	sc := edited(t, "task", "150 元", "120 元")
	for _, p := range registry.Protocols {
		for _, stream := range []bool{true, false} {
			res := runRefund(t, sc, p, stream)
			if f := failedAt(res); f != "" {
				t.Errorf("%s stream %v: 120 元 fails at %s: %+v", p, stream, f, res.Layers)
				continue
			}
			a := answerOf(t, res)
			issues, _ := json.Marshal(a["issues"])
			if a["requested_refund_cents"] != 12000.0 || a["max_refund_cents"] != 13000.0 || strings.Contains(string(issues), "requested_amount_exceeds_cap") {
				t.Errorf("%s stream %v: %v", p, stream, a)
			}
			if d := a["reply_draft"].(string); !strings.Contains(d, "不低于本次申请的120元") {
				t.Errorf("%s: draft %q", p, d)
			}
		}
	}
}

// The checks read the task too: an answer that ignored the edit fails the
// domain layer, naming the task's amount.
func TestChecksReadTheSamePrompt(t *testing.T) {
	sc := edited(t, "task", "150 元", "120 元")
	// The scenario file's own script (a tape: it says 15000 whatever the
	// task) stands in for a model that ignored the edit.
	sc.Responder = nil
	res := runRefund(t, sc, adapters.OpenAIResponses, false)
	if failedAt(res) != "domain" || !strings.Contains(res.Layers[4].Detail, "requested-amount") || !strings.Contains(res.Layers[4].Detail, "requested_cents = 12000") {
		t.Fatalf("an answer that ignored the edit: %+v", res.Layers)
	}
}

func TestEditingTheHistoryClaim(t *testing.T) {
	sc := edited(t, "history:unverified", "还能退150元", "还能退130元")
	res := runRefund(t, sc, adapters.AnthropicMessages, true)
	a := answerOf(t, res)
	issues, _ := json.Marshal(a["issues"])
	if failedAt(res) != "" || strings.Contains(string(issues), "unverified_history_amount_conflict") {
		t.Fatalf("history 130: %s %+v", issues, res.Layers)
	}
	// Taking the label away makes the model trust the claim: the cap is the
	// history's, and the domain layer catches it.
	sc = edited(t, "history:unverified", ` verified="false"`, "")
	res = runRefund(t, sc, adapters.OpenAIChat, true)
	if a := answerOf(t, res); a["max_refund_cents"] != 15000.0 || failedAt(res) != "domain" {
		t.Fatalf("an unlabelled history: %v %+v", a, res.Layers)
	}
}

func TestTaskWithoutAnAmountGetsAQuestion(t *testing.T) {
	sc := edited(t, "task", "的 150 元退款申请", "的退款申请")
	res := runRefund(t, sc, adapters.OpenAIResponses, true)
	if len(res.Requests) < 1 || len(res.Turns) == 0 {
		t.Fatal("no turn")
	}
	for _, tr := range res.Turns {
		if len(tr.ToolCalls) > 0 {
			t.Fatalf("the model called %v without an amount to check", tr.ToolCalls)
		}
	}
	if failedAt(res) != "parse" || !strings.Contains(res.Turns[0].Text, "金额") {
		t.Fatalf("a task without an amount: %q %+v", res.Turns[0].Text, res.Layers)
	}
}

func TestEnglishTaskGetsAnEnglishDraft(t *testing.T) {
	sc := edited(t, "task", "帮我核查订单 O-2048 中商品 L1 的 150 元退款申请。确认适用规则和当前可退上限，给客服一段中文回复草稿。只做核查，不提交退款，不发消息。",
		"Please check the refund request of 150 yuan for line L1 of order O-2048. Check only; do not submit a refund.")
	res := runRefund(t, sc, adapters.Gemini, false)
	a := answerOf(t, res)
	d, _ := a["reply_draft"].(string)
	if failedAt(res) != "" || session.HasHan(d) || !strings.Contains(d, "cap is 130 yuan") {
		t.Fatalf("english task: %q %+v", d, res.Layers)
	}
}

// Each variant is its edit of the prompt alone: the same edit made by
// hand to the base case gives the variant's answer.
func TestVariantsAreTheirEdits(t *testing.T) {
	for _, v := range []string{"wrong-cap", "claims-refunded", "refusal", "sequential"} {
		vs, err := Lookup("refund/" + v)
		if err != nil {
			t.Fatal(err)
		}
		e := vs.Variants[v].Edits[0]
		byHand := edited(t, e.Source, e.Find, e.Replace)
		a, b := runRefund(t, vs, adapters.OpenAIResponses, false), runRefund(t, byHand, adapters.OpenAIResponses, false)
		if string(a.Output) != string(b.Output) || failedAt(a) != failedAt(b) || len(a.Requests) != len(b.Requests) {
			t.Errorf("%s: the variant gives %s (%s), its edit by hand %s (%s)", v, a.Output, failedAt(a), b.Output, failedAt(b))
		}
	}
}

func TestVariantEditsAreChecked(t *testing.T) {
	data, _ := files.ReadFile("refund.json")
	for name, c := range map[string]struct{ from, to, want string }{
		"unknown source": {`"source": "history:unverified"`, `"source": "nope"`, `/variants/wrong-cap/edits/0: no source "nope"`},
		"missing words":  {`"find": "不把生成回复等同于执行退款。本任务只读核查，不提交退款，不发送消息。"`, `"find": "不存在的句子"`, `/variants/claims-refunded/edits/0: source system-rules does not say`},
		"no parent":      {`"pointer": "/output/strict"`, `"pointer": "/nowhere/strict"`, `/variants/missing-field/edits/1: pointer /nowhere/strict: its parent is not in the scenario`},
	} {
		doc := strings.Replace(string(data), c.from, c.to, 1)
		if doc == string(data) {
			t.Fatalf("%s: nothing to change", name)
		}
		_, err := session.ParseScenario("refund.json", []byte(doc), "")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
}

// The example of a case of one's own in docs/scenario-format.md: its facts come from the
// task's words, its script uses them, and its checks read the same words,
// so an edit of the task reaches the call, the answer and the verdict.
func TestOwnCaseFollowsItsTask(t *testing.T) {
	sc, err := Lookup(filepath.Join("..", "docs", "examples", "late-delivery.json"))
	if err != nil {
		t.Fatal(err)
	}
	res := runRefund(t, sc, adapters.OpenAIChat, true)
	if failedAt(res) != "" || len(res.Obs.Results) != 1 || string(res.Obs.Results[0].Arguments) != `{"order_id":"A-77"}` {
		t.Fatalf("the example as written: %+v %+v", res.Layers, res.Obs.Results)
	}
	cp := *sc
	cp.Sources = append([]adapters.Source(nil), sc.Sources...)
	cp.Sources[1].Text = strings.NewReplacer("A-77", "A-78", "¥20", "¥10.50").Replace(cp.Sources[1].Text)
	res = runRefund(t, &cp, adapters.AnthropicMessages, false)
	if len(res.Obs.Results) < 1 || string(res.Obs.Results[0].Arguments) != `{"order_id":"A-78"}` {
		t.Fatalf("the call did not follow the task: %+v", res.Obs.Results)
	}
	if a := answerOf(t, res); a["order_id"] != "A-78" || a["requested_credit_cents"] != 1050.0 {
		t.Errorf("the answer did not follow the task: %v", a)
	}
	// A script cannot reason: its decision is still "above_cap", and the
	// checks, which read the edited task, say so.
	if failedAt(res) != "domain" || !strings.Contains(res.Layers[4].Detail, "decision") {
		t.Errorf("the verdict on a scripted decision: %+v", res.Layers)
	}
}
