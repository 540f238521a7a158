// Package adapterstest holds what the adapters' tests share: the refund
// case as a canonical request and script, capture helpers, goldens and
// the invariants every decoder must keep; and FakeChat, the toy protocol
// the store's and the file formats' tests record.
package adapterstest

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelwire/modelwire/adapters"
)

// The refund case's captures in testdata were recorded from an earlier
// version of the case (its own evidence ids and policy lookup); these are
// the values they carry, for the decoder tests that read them.
const (
	CaptureModelText = `{"order_id":"O-2048","line_id":"L1","currency":"CNY","requested_refund_cents":15000,"max_refund_cents":13000,"decision":"needs_review","issues":["requested_exceeds_refundable_cap","quality_evidence_missing"],"evidence_ids":["EV-ORDER-O-2048-L1","EV-LEDGER-O-2048-L1","EV-POLICY-aftersale-v3"],"draft_reply":"您好，您申请退款 150 元。根据订单记录，该商品实付 180 元，已退 30 元，另有 20 元处于待处理冻结，目前最多可退 130 元；且尚缺质量问题凭证。我们已转人工复核，复核前不会执行任何退款。"}`
)

// CaptureTurn1 and CaptureTurn2 are the captures' calls and results.
var (
	CaptureTurn1 = []RefundCall{{
		Name:      "get_order_line",
		Arguments: `{"order_id":"O-2048","line_id":"L1"}`,
		Result:    `{"evidence_id":"EV-ORDER-O-2048-L1","order_id":"O-2048","line_id":"L1","sku":"KB-87-BLK","title":"机械键盘（黑色）","paid_cents":18000,"currency":"CNY","status":"delivered","policy_id":"aftersale-v3"}`,
	}}
	CaptureTurn2 = []RefundCall{{
		Name:      "get_refund_ledger",
		Arguments: `{"order_id":"O-2048","line_id":"L1"}`,
		Result:    `{"evidence_id":"EV-LEDGER-O-2048-L1","refunded_cents":3000,"pending_hold_cents":2000,"currency":"CNY","entries":[{"kind":"refund","cents":3000,"at":"2026-10-02"},{"kind":"pending_hold","cents":2000,"at":"2026-11-18"}]}`,
	}, {
		Name:      "get_refund_policy",
		Arguments: `{"policy_id":"aftersale-v3"}`,
		Result:    `{"evidence_id":"EV-POLICY-aftersale-v3","policy_id":"aftersale-v3","max_refund":"paid - refunded - pending_hold","quality_refund_requires":["quality_evidence"],"quality_evidence_on_file":false}`,
	}}
)

// The refund case as the textbook chapter prints it (13.6.3–13.6.6; the
// facts are fictional): a read-only check of a 150 yuan refund request
// over three tools. Literal, so a test fails when samples/refund.json or
// the simulator drifts from the chapter.
const (
	RefundModelText = `{"order_id":"O-2048","line_id":"L1","decision":"needs_review","currency":"CNY","requested_refund_cents":15000,"max_refund_cents":13000,"issues":["requested_amount_exceeds_cap","quality_evidence_missing","unverified_history_amount_conflict"],"evidence_ids":["E-order","E-ledger","E-policy"],"reply_draft":"经核查，该商品目前资金维度可退上限为130元，低于本次申请的150元。申请仍需补充质量凭证，暂不能确认满足全部售后条件。以上为核查结果，未提交退款。"}`
)

// RefundCall is one scripted tool call of the refund case.
type RefundCall struct {
	Name      string
	Arguments string // compact JSON, as the model sends it
	Result    string // the tool result the application feeds back
}

// RefundTurn1 and RefundTurn2 are the model's calls: the order line, then
// the ledger and the policy in parallel, with the chapter's results.
var (
	RefundTurn1 = []RefundCall{{
		Name:      "get_order_line",
		Arguments: `{"order_id":"O-2048","line_id":"L1"}`,
		Result:    `{"status":"ok","evidence_id":"E-order","order_id":"O-2048","line_id":"L1","currency":"CNY","paid_cents":18000,"category":"headphones","received_at":"2026-10-15T12:00:00+08:00","reason":"quality_issue","quality_evidence":"missing","observed_at":"2026-10-20T10:00:01+08:00"}`,
	}}
	RefundTurn2 = []RefundCall{{
		Name:      "get_refund_ledger",
		Arguments: `{"order_id":"O-2048","line_id":"L1"}`,
		Result:    `{"status":"ok","evidence_id":"E-ledger","snapshot":"L42","currency":"CNY","successful_refund_cents":3000,"pending_hold_cents":2000}`,
	}, {
		Name:      "get_refund_policy",
		Arguments: `{"category":"headphones","received_at":"2026-10-15T12:00:00+08:00","reason":"quality_issue"}`,
		Result:    `{"status":"ok","evidence_id":"E-policy","version":"aftersale-v3","within_7_days":true,"quality_evidence_required":true}`,
	}}
)

// refundFile is samples/refund.json as the adapters' tests read it
// (importing samples would be an import cycle).
type refundFile struct {
	Sources []adapters.Source       `json:"sources"`
	Tools   []adapters.Tool         `json:"tools"`
	Output  adapters.OutputContract `json:"output"`
	Script  []adapters.ModelTurn    `json:"script"`
	Limits  adapters.Limits         `json:"limits"`
}

var loadRefund = sync.OnceValues(func() (refundFile, error) {
	var f refundFile
	b, err := os.ReadFile(moduleFile("samples/refund.json"))
	if err == nil {
		err = json.Unmarshal(b, &f)
	}
	return f, err
})

// moduleFile finds a file of the module from a test's directory (tests
// run in their package's folder, at any depth).
func moduleFile(rel string) string {
	dir, _ := os.Getwd()
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, rel)
		}
		up := filepath.Dir(dir)
		if up == dir {
			return rel
		}
		dir = up
	}
}

func refund() refundFile {
	f, err := loadRefund()
	if err != nil {
		panic("adapterstest: samples/refund.json: " + err.Error())
	}
	return f
}

// RefundTools are the case's three read-only tools with strict schemas.
func RefundTools() []adapters.Tool { return refund().Tools }

// RefundSchema is the refund_assessment output schema (nine fields).
func RefundSchema() json.RawMessage { return refund().Output.Schema }

// RefundSources are the case's sources in request order.
func RefundSources() []adapters.Source { return refund().Sources }

// IDs gives the provider ids of the scripted turns, so each protocol's
// captures keep its own id formats (call_…, toolu_…, fc_…).
type IDs struct {
	Item     func(turn, index int) string // output item id (Responses fc_…); nil: the call id
	Call     func(turn, index int) string // call_id / tool_use id
	Response func(turn int) string        // response id; nil: none
}

// RefundRequest is the canonical refund request for turn (1, 2 or 3),
// with the scripted model turns and tool results as history.
func RefundRequest(turn int, ids IDs, stream bool) *adapters.Request {
	parallel := true
	req := &adapters.Request{
		Model:   "refund-model",
		Sources: RefundSources(),
		Tools:   RefundTools(),
		Choice:  adapters.ToolChoice{Mode: adapters.ToolChoiceAuto},
		Output:  adapters.OutputContract{Mode: adapters.OutputJSONSchema, Name: "refund_assessment", Schema: RefundSchema(), Strict: true},
		Limits:  adapters.Limits{MaxOutputTokens: 1800, ParallelToolCalls: &parallel},
		Stream:  stream,
		History: adapters.HistoryFull,
	}
	for t, calls := range [][]RefundCall{RefundTurn1, RefundTurn2} {
		if t+1 >= turn {
			break
		}
		var mt adapters.Turn
		if ids.Response != nil {
			mt.ResponseID = ids.Response(t + 1)
		}
		for i, c := range calls {
			call := ids.Call(t+1, i)
			item := call
			if ids.Item != nil {
				item = ids.Item(t+1, i)
			}
			mt.Items = append(mt.Items, adapters.OutputItem{Kind: adapters.KindToolCall, ID: item, CallID: call, Name: c.Name, Arguments: json.RawMessage(c.Arguments)})
			mt.Results = append(mt.Results, adapters.ToolResult{CallID: call, Name: c.Name, Content: c.Result})
		}
		req.Turns = append(req.Turns, mt)
	}
	return req
}

// Script is one model script of the refund case: the base case or a
// variant ("refund/wrong-cap").
type Script struct {
	Name  string
	Turns []adapters.ModelTurn
}

// RefundScripts are the refund case's script (samples/refund.json) and, as
// scripts, what each of its model's behaviours sends — a reasoning turn, a
// malformed call, a fenced or shortened answer, a refusal, one call per
// turn — so every renderer is tried on each shape.
func RefundScripts(t testing.TB) []Script {
	t.Helper()
	f, err := loadRefund()
	if err != nil {
		t.Fatal(err)
	}
	base := f.Script
	if len(base) != 3 {
		t.Fatalf("refund.json: %d turns in the script, want 3", len(base))
	}
	final := func(text string) adapters.ModelTurn {
		return adapters.ModelTurn{Stop: adapters.StopFinal, Items: []adapters.OutputItem{{Kind: adapters.KindMessage, Text: text}}}
	}
	think := func(t adapters.ModelTurn, text string) adapters.ModelTurn {
		t.Items = append([]adapters.OutputItem{{Kind: adapters.KindReasoning, Text: text}}, t.Items...)
		return t
	}
	call1, ledger, policy := base[0].Items[0], base[1].Items[0], base[1].Items[1]
	one := func(c adapters.OutputItem) adapters.ModelTurn {
		return adapters.ModelTurn{Stop: adapters.StopToolCall, Items: []adapters.OutputItem{c}}
	}
	bad := call1
	bad.Arguments = json.RawMessage(`{"order_id":"O-2048"}`)
	var answer map[string]any
	_ = json.Unmarshal([]byte(RefundModelText), &answer)
	delete(answer, "evidence_ids")
	missing, _ := json.Marshal(answer)
	scripts := []Script{
		{"refund", base},
		{"refund/bad-args", []adapters.ModelTurn{one(bad), think(one(call1), "工具返回参数错误：缺少 line_id。按模式补全后重试。"), base[1], base[2]}},
		{"refund/claims-refunded", []adapters.ModelTurn{base[0], base[1], final(strings.Replace(RefundModelText, "未提交退款", "已为您办理退款", 1))}},
		{"refund/fenced", []adapters.ModelTurn{base[0], base[1], final("```json\n" + RefundModelText + "\n```")}},
		{"refund/missing-field", []adapters.ModelTurn{base[0], base[1], final(string(missing))}},
		{"refund/refusal", []adapters.ModelTurn{{Stop: adapters.StopRefusal, Items: []adapters.OutputItem{{Kind: adapters.KindRefusal, Text: "抱歉，我无法协助处理这个请求。"}}}}},
		{"refund/sequential", []adapters.ModelTurn{base[0], one(ledger), one(policy), base[2]}},
		{"refund/wrong-cap", []adapters.ModelTurn{
			think(base[0], "先查商品行：历史里“还能退150元”的说法未经核实，金额必须以工具结果为准。"),
			think(base[1], "商品行已给出类别、签收时间和原因；账务与适用政策互不依赖，分别查询。"),
			think(final(strings.Replace(RefundModelText, `"max_refund_cents":13000`, `"max_refund_cents":15000`, 1)), "历史说还能退150元，就按150元。")}},
	}
	// Every turn reports usage, as the base script's do.
	for _, sc := range scripts {
		for i := range sc.Turns {
			if sc.Turns[i].Usage.InputTokens == nil {
				sc.Turns[i].Usage = adapters.Usage{InputTokens: adapters.Int(int64(1500 + 100*i)), OutputTokens: adapters.Int(40), CacheReadTokens: adapters.Int(0)}
			}
		}
	}
	return scripts
}

// SSE writes simulated events as the simulator's server does.
func SSE(events []adapters.WireEvent, lineEnd string) []byte {
	var b bytes.Buffer
	for _, e := range events {
		if e.Event != "" {
			b.WriteString("event: " + e.Event + lineEnd)
		}
		if e.ID != "" {
			b.WriteString("id: " + e.ID + lineEnd)
		}
		b.WriteString("data: " + e.Data + lineEnd + lineEnd)
	}
	return b.Bytes()
}

// SDKPrompt is a case's prompt as an SDK user writes it into one system
// text and one user message: the system and developer sources, then the
// task and the context material (each as it is sent), in source order.
// The simulated model reads the whole prompt, so a test that left the
// skill or the history out would get another answer.
func SDKPrompt(sources []adapters.Source) (system, user string) {
	var sys, usr []string
	for _, s := range sources {
		if s.Role == adapters.RoleSystem || s.Role == adapters.RoleDeveloper {
			sys = append(sys, s.Text)
		} else {
			usr = append(usr, adapters.SourceText(s))
		}
	}
	return strings.Join(sys, "\n\n"), strings.Join(usr, "\n")
}
