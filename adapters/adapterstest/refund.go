// Package adapterstest holds what the adapters' tests share: the refund
// case as a canonical request and script, capture helpers, goldens and
// the invariants every decoder must keep.
package adapterstest

import (
	"bytes"
	"encoding/json"
	"os"
	"sort"
	"testing"

	"github.com/modelwire/modelwire/adapters"
)

// The refund case (from a textbook chapter on LLM API protocols; the facts
// are fictional): a read-only check of a 150 yuan refund request over three
// tools. These are the values every protocol's refund captures carry.
const (
	RefundModelText = `{"order_id":"O-2048","line_id":"L1","currency":"CNY","requested_refund_cents":15000,"max_refund_cents":13000,"decision":"needs_review","issues":["requested_exceeds_refundable_cap","quality_evidence_missing"],"evidence_ids":["EV-ORDER-O-2048-L1","EV-LEDGER-O-2048-L1","EV-POLICY-aftersale-v3"],"draft_reply":"您好，您申请退款 150 元。根据订单记录，该商品实付 180 元，已退 30 元，另有 20 元处于待处理冻结，目前最多可退 130 元；且尚缺质量问题凭证。我们已转人工复核，复核前不会执行任何退款。"}`
)

// RefundCall is one scripted tool call of the refund case.
type RefundCall struct {
	Name      string
	Arguments string // compact JSON, as the model sends it
	Result    string // the tool result the application feeds back
}

// RefundTurn1 .. RefundTurn3 are the model's three turns: one call, two
// parallel calls, then the final JSON.
var (
	RefundTurn1 = []RefundCall{{
		Name:      "get_order_line",
		Arguments: `{"order_id":"O-2048","line_id":"L1"}`,
		Result:    `{"evidence_id":"EV-ORDER-O-2048-L1","order_id":"O-2048","line_id":"L1","sku":"KB-87-BLK","title":"机械键盘（黑色）","paid_cents":18000,"currency":"CNY","status":"delivered","policy_id":"aftersale-v3"}`,
	}}
	RefundTurn2 = []RefundCall{{
		Name:      "get_refund_ledger",
		Arguments: `{"order_id":"O-2048","line_id":"L1"}`,
		Result:    `{"evidence_id":"EV-LEDGER-O-2048-L1","refunded_cents":3000,"pending_hold_cents":2000,"currency":"CNY","entries":[{"kind":"refund","cents":3000,"at":"2026-10-02"},{"kind":"pending_hold","cents":2000,"at":"2026-11-18"}]}`,
	}, {
		Name:      "get_refund_policy",
		Arguments: `{"policy_id":"aftersale-v3"}`,
		Result:    `{"evidence_id":"EV-POLICY-aftersale-v3","policy_id":"aftersale-v3","max_refund":"paid - refunded - pending_hold","quality_refund_requires":["quality_evidence"],"quality_evidence_on_file":false}`,
	}}
)

// RefundTools are the case's three read-only tools with strict schemas.
func RefundTools() []adapters.Tool {
	orderLine := `{"type":"object","properties":{"order_id":{"type":"string","pattern":"^O-[0-9]{4}$","description":"订单号，如 O-2048"},"line_id":{"type":"string","pattern":"^L[0-9]+$","description":"订单行号，如 L1"}},"required":["order_id","line_id"],"additionalProperties":false}`
	policy := `{"type":"object","properties":{"policy_id":{"type":"string","description":"售后政策编号"}},"required":["policy_id"],"additionalProperties":false}`
	return []adapters.Tool{
		{Name: "get_order_line", Description: "只读：查询订单行的实付金额（整数分，CNY）、状态与适用的售后政策编号。", Parameters: json.RawMessage(orderLine), Strict: true},
		{Name: "get_refund_ledger", Description: "只读：查询订单行的退款台账：已退金额与待处理冻结金额（整数分）。", Parameters: json.RawMessage(orderLine), Strict: true},
		{Name: "get_refund_policy", Description: "只读：按编号查询售后政策的退款上限规则与所需凭证。", Parameters: json.RawMessage(policy), Strict: true},
	}
}

// RefundSchema is the refund_assessment output schema (nine fields).
const RefundSchema = `{"type":"object","properties":{"order_id":{"type":"string"},"line_id":{"type":"string"},"currency":{"type":"string","enum":["CNY"]},"requested_refund_cents":{"type":"integer"},"max_refund_cents":{"type":"integer"},"decision":{"type":"string","enum":["approve","reject","needs_review"]},"issues":{"type":"array","items":{"type":"string"}},"evidence_ids":{"type":"array","items":{"type":"string"}},"draft_reply":{"type":"string"}},"required":["order_id","line_id","currency","requested_refund_cents","max_refund_cents","decision","issues","evidence_ids","draft_reply"],"additionalProperties":false}`

// RefundSources are the case's sources in request order.
func RefundSources() []adapters.Source {
	return []adapters.Source{
		{ID: "system-rules", Role: adapters.RoleSystem, Trust: adapters.TrustTrusted,
			Text: "你是售后退款核查助手。只读核查，绝不执行退款。只相信工具返回的数据；历史对话与用户陈述都是待核实的说法。金额一律用整数分（CNY）。最终只输出一个符合 refund_assessment 模式的 JSON 对象。"},
		{ID: "skill:refund_assessment@1.2", Role: adapters.RoleDeveloper, Trust: adapters.TrustTrusted,
			Text: "技能 refund_assessment@1.2：先查订单行，再并行查退款台账与售后政策。可退上限 = 实付 − 已退 − 待处理冻结。申请金额超过上限或缺少质量凭证时，decision 为 needs_review，并在 issues 中写明。evidence_ids 只能填写本次工具结果中出现的 evidence_id。"},
		{ID: "task", Role: adapters.RoleUser, Trust: adapters.TrustVerified,
			Text: "请核查订单 O-2048 第 L1 行的退款申请：顾客申请退款 150 元，理由是质量问题。"},
		{ID: "knowledge:KB-guide-9", Role: adapters.RoleContext, Trust: adapters.TrustVerified, Label: "知识库 KB-guide-9",
			Text: "质量问题退款须附质量凭证（照片或检测报告）；缺凭证时转人工复核，不得直接拒绝。"},
		{ID: "memory:mem-language-3", Role: adapters.RoleContext, Trust: adapters.TrustVerified, Label: "记忆 mem-language-3",
			Text: "顾客偏好中文回复。（仅为语言偏好，不含任何业务事实。）"},
		{ID: "history:unverified-claim", Role: adapters.RoleContext, Trust: adapters.TrustUnverified, Label: "未核实的历史对话",
			Text: "上一位客服曾说：“这单应该还能退 150 元，上限是 15000 分。”"},
		{ID: "workspace:data-contract", Role: adapters.RoleContext, Trust: adapters.TrustTrusted, Label: "工作区数据约定",
			Text: "所有金额字段为整数分，币种 CNY；order_id 形如 O-2048，line_id 形如 L1。"},
	}
}

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
		Output:  adapters.OutputContract{Mode: adapters.OutputJSONSchema, Name: "refund_assessment", Schema: json.RawMessage(RefundSchema), Strict: true},
		Limits:  adapters.Limits{MaxOutputTokens: 2048, ParallelToolCalls: &parallel},
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

// RefundScripts loads the refund case's script and its variants (sorted)
// from samples/refund.json, read as JSON: an adapter package importing
// samples would be an import cycle. Tests run in adapters/<pkg>/.
func RefundScripts(t testing.TB) []Script {
	t.Helper()
	b, err := os.ReadFile("../../samples/refund.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Script   []adapters.ModelTurn `json:"script"`
		Variants map[string]struct {
			Script []adapters.ModelTurn `json:"script"`
		} `json:"variants"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	out := []Script{{"refund", f.Script}}
	names := make([]string, 0, len(f.Variants))
	for n := range f.Variants {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		out = append(out, Script{"refund/" + n, f.Variants[n].Script})
	}
	if len(out) < 8 || len(out[0].Turns) != 3 {
		t.Fatalf("refund.json: %d scripts, %d turns in the main one", len(out), len(out[0].Turns))
	}
	return out
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
