package samples

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/wire"
	"github.com/modelwire/modelwire/session"
)

// The refund case's simulated model. It is a model, not a tape: it reads
// the request it was sent — which tools are declared, the tool choice,
// whether calls may run in parallel, and the tool results it carries — and
// answers as the chapter's model would. Its knowledge is the task (order
// O-2048, line L1, 150 yuan requested, an unverified history that said 150
// yuan); its answer is computed from the observations, so an edited or
// rejected tool result changes what it says.
//
// Each variant is a behaviour of this model, not another script:
//
//	wrong-cap        trusts the unverified history for the cap
//	fenced           wraps its answer in a markdown fence
//	missing-field    leaves evidence_ids out
//	claims-refunded  writes a draft that says the refund was made
//	bad-args         drops line_id from its first call, then corrects it
//	sequential       never calls tools in parallel
//	refusal          refuses

const (
	refundOrderID        = "O-2048"
	refundLineID         = "L1"
	refundRequestedCents = 15000
	refundHistoryCents   = 15000 // what the unverified history claimed
)

const (
	toolOrder  = "get_order_line"
	toolLedger = "get_refund_ledger"
	toolPolicy = "get_refund_policy"
)

// wireRefund gives the built-in refund case its simulated model.
func wireRefund(sc *session.Scenario) error {
	sc.Responder = refundModel(sc.Variant)
	return nil
}

// refundObs is what one request's tool results tell the model.
type refundObs struct {
	ok       map[string]wire.Object // latest successful result per tool
	failed   map[string]bool        // the latest result of the tool is an error
	attempts map[string]int         // results per tool, errors included
	callIDs  map[string]bool
}

// readRefundObs reads each result's members once with the wire reader (a
// json.Unmarshal into a map per result was a tenth of a request's cost);
// a result that is not a JSON object, or says "status":"error", failed.
func readRefundObs(results []adapters.ToolResult) refundObs {
	o := refundObs{ok: map[string]wire.Object{}, failed: map[string]bool{}, attempts: map[string]int{}, callIDs: map[string]bool{}}
	for _, r := range results {
		o.attempts[r.Name]++
		o.callIDs[r.CallID] = true
		if !r.IsError {
			if v, valid := wire.ParseString(r.Content); valid {
				if m, isObj := v.Members(); isObj && m.Get("status").Str() != "error" {
					o.ok[r.Name], o.failed[r.Name] = m, false
					continue
				}
			}
		}
		o.failed[r.Name] = true
	}
	return o
}

func refundModel(variant string) session.Responder {
	return func(in *adapters.Inbound) (adapters.ModelTurn, error) {
		if variant == "refusal" {
			return adapters.ModelTurn{Stop: adapters.StopRefusal, Items: []adapters.OutputItem{{Kind: adapters.KindRefusal, Text: "抱歉，我无法协助处理这个请求。"}}}, nil
		}
		obs := readRefundObs(in.Results)
		calls := refundCalls(variant, in, obs)
		var turn adapters.ModelTurn
		if len(calls) > 0 {
			turn = adapters.ModelTurn{Stop: adapters.StopToolCall, Items: calls}
			if in.Reasoning {
				turn.Items = append([]adapters.OutputItem{{Kind: adapters.KindReasoning, Text: callReasoning(calls)}}, calls...)
			}
			return turn, nil
		}
		a := assess(variant, obs)
		turn = adapters.ModelTurn{Stop: adapters.StopFinal, Items: []adapters.OutputItem{{Kind: adapters.KindMessage, Text: a.text(variant)}}}
		if in.Reasoning {
			turn.Items = append([]adapters.OutputItem{{Kind: adapters.KindReasoning, Text: a.reasoning()}}, turn.Items...)
		}
		return turn, nil
	}
}

// refundCalls are the calls the model proposes next: the order line
// first, then the ledger and the policy (from the order's facts), each
// only if the request lets it call that tool. A lookup that failed is not
// asked again — the answer says what could not be assessed — except the
// bad-args model's own malformed first call, which it corrects.
func refundCalls(variant string, in *adapters.Inbound, obs refundObs) []adapters.OutputItem {
	var want []adapters.OutputItem
	order, haveOrder := obs.ok[toolOrder]
	switch {
	case haveOrder:
		args := func(keys ...string) json.RawMessage { return orderedArgs(keys, order) }
		if obs.attempts[toolLedger] == 0 {
			want = append(want, call(toolLedger, args("order_id", "line_id")))
		}
		if obs.attempts[toolPolicy] == 0 {
			want = append(want, call(toolPolicy, args("category", "received_at", "reason")))
		}
	case obs.attempts[toolOrder] == 0 && variant == "bad-args":
		want = append(want, call(toolOrder, json.RawMessage(`{"order_id":"`+refundOrderID+`"}`)))
	case obs.attempts[toolOrder] == 0 || variant == "bad-args" && obs.attempts[toolOrder] == 1:
		want = append(want, call(toolOrder, json.RawMessage(`{"order_id":"`+refundOrderID+`","line_id":"`+refundLineID+`"}`)))
	}
	if in.Choice.Mode == adapters.ToolChoiceRequired || in.Choice.Mode == adapters.ToolChoiceNamed {
		want = forced(in, want, order, haveOrder)
	}
	var out []adapters.OutputItem
	for _, c := range want {
		if !in.MayCall(c.Name) {
			continue
		}
		if len(out) > 0 && (in.Serial || variant == "sequential") {
			break
		}
		out = append(out, c)
	}
	for i := range out {
		out[i].CallID, out[i].ID = callIDs(in.Protocol, out[i].Name, obs.callIDs)
		obs.callIDs[out[i].CallID] = true
	}
	return out
}

// forced: a request that requires a call gets one even when the model has
// what it needs — the named tool, or the first it would call anyway.
func forced(in *adapters.Inbound, want []adapters.OutputItem, order wire.Object, haveOrder bool) []adapters.OutputItem {
	if in.Choice.Mode == adapters.ToolChoiceNamed {
		for _, c := range want {
			if c.Name == in.Choice.Name {
				return []adapters.OutputItem{c}
			}
		}
	}
	if len(want) > 0 && in.Choice.Mode == adapters.ToolChoiceRequired {
		return want
	}
	args := json.RawMessage(`{"order_id":"` + refundOrderID + `","line_id":"` + refundLineID + `"}`)
	all := []adapters.OutputItem{call(toolOrder, args), call(toolLedger, args)}
	if haveOrder {
		all = append(all, call(toolPolicy, orderedArgs([]string{"category", "received_at", "reason"}, order)))
	}
	for _, c := range all {
		if in.MayCall(c.Name) {
			return []adapters.OutputItem{c}
		}
	}
	return nil
}

func call(name string, args json.RawMessage) adapters.OutputItem {
	return adapters.OutputItem{Kind: adapters.KindToolCall, Name: name, Arguments: args}
}

// orderedArgs writes an argument object with the result's values under
// the given keys (the model's own names, plain ASCII), in that order, as
// the chapter prints them.
func orderedArgs(keys []string, from wire.Object) json.RawMessage {
	b := []byte{'{'}
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, k...)
		b = append(b, '"', ':')
		b = appendArg(b, from.Get(k))
	}
	return append(b, '}')
}

// appendArg writes a value as json.Marshal writes it after a decode (the
// arguments' bytes stay as they were when results were decoded into maps):
// a plain string is its own text; anything else — numbers, escapes, HTML
// characters json.Marshal escapes, objects with keys to sort — takes the
// decode-and-marshal round trip.
func appendArg(b []byte, v wire.Value) []byte {
	if !v.Present() {
		return append(b, "null"...)
	}
	if v.Kind() == wire.KindString && !strings.ContainsAny(v.Raw, "\\<>&\u2028\u2029") && utf8.ValidString(v.Raw) {
		return append(b, v.Raw...)
	}
	var x any
	if json.Unmarshal([]byte(v.Raw), &x) != nil {
		return append(b, "null"...)
	}
	out, _ := json.Marshal(x)
	return append(b, out...)
}

// callIDs are the chapter's ids for each protocol: Responses
// call_order/fc_order (13.6.4–13.6.5), Anthropic toolu_…, DeepSeek call_d…;
// a repeated call gets a numbered suffix so ids stay unique.
func callIDs(protocol, tool string, used map[string]bool) (callID, itemID string) {
	short := map[string]string{toolOrder: "order", toolLedger: "ledger", toolPolicy: "policy"}[tool]
	prefix := "call_"
	switch protocol {
	case adapters.AnthropicMessages:
		prefix = "toolu_"
	case adapters.Gemini:
		return "", "" // Gemini's calls carry no id; results match by name
	}
	base := prefix + short
	callID = base
	for n := 2; used[callID]; n++ {
		callID = base + "_" + strconv.Itoa(n)
	}
	return callID, "fc_" + strings.TrimPrefix(callID, prefix)
}

func callReasoning(calls []adapters.OutputItem) string {
	if calls[0].Name == toolOrder {
		return "先查商品行：历史里“还能退150元”的说法未经核实，金额必须以工具结果为准。"
	}
	return "商品行已给出类别、签收时间和原因；账务与适用政策互不依赖，分别查询。"
}

// assessment is the model's answer, computed from the observations.
type assessment struct {
	cap             *int64
	issues          []string
	evidence        []string
	decision        string
	evidenceMissing bool
	unavailable     []string // core sources whose lookup failed
	unchecked       []string // core sources never looked up (a lookup they need failed, or no call was allowed)
}

func assess(variant string, obs refundObs) assessment {
	var a assessment
	order, okO := obs.ok[toolOrder]
	ledger, okL := obs.ok[toolLedger]
	policy, okP := obs.ok[toolPolicy]
	for _, src := range []struct {
		name, what string
		ok         bool
		res        wire.Object
	}{{toolOrder, "商品行信息", okO, order}, {toolLedger, "账务记录", okL, ledger}, {toolPolicy, "适用政策", okP, policy}} {
		switch {
		case !src.ok && obs.attempts[src.name] == 0:
			a.unchecked = append(a.unchecked, src.what)
			continue
		case !src.ok:
			a.unavailable = append(a.unavailable, src.what)
			continue
		}
		if id := src.res.Get("evidence_id"); id.Kind() == wire.KindString {
			a.evidence = append(a.evidence, id.Str())
		}
	}
	if okO && okL {
		c := cents(order.Get("paid_cents")) - cents(ledger.Get("successful_refund_cents")) - cents(ledger.Get("pending_hold_cents"))
		a.cap = &c
	}
	if variant == "wrong-cap" {
		c := int64(refundHistoryCents)
		a.cap = &c
	}
	a.evidenceMissing = okO && order.Get("quality_evidence").Str() == "missing" && (!okP || policy.Get("quality_evidence_required").Bool())
	if a.cap != nil && refundRequestedCents > *a.cap {
		a.issues = append(a.issues, "requested_amount_exceeds_cap")
	}
	if a.evidenceMissing {
		a.issues = append(a.issues, "quality_evidence_missing")
	}
	if a.cap != nil && *a.cap != refundHistoryCents {
		a.issues = append(a.issues, "unverified_history_amount_conflict")
	}
	for _, u := range []struct{ name, issue string }{{toolOrder, "order_line"}, {toolLedger, "ledger"}, {toolPolicy, "policy"}} {
		switch _, ok := obs.ok[u.name]; {
		case ok:
		case obs.attempts[u.name] == 0:
			a.issues = append(a.issues, u.issue+"_not_checked")
		default:
			a.issues = append(a.issues, u.issue+"_unavailable")
		}
	}
	switch {
	case len(a.unavailable)+len(a.unchecked) > 0:
		a.decision = "unable_to_assess"
	case len(a.issues) > 0:
		a.decision = "needs_review"
	default:
		a.decision = "ready_for_review"
	}
	if a.issues == nil {
		a.issues = []string{}
	}
	if a.evidence == nil {
		a.evidence = []string{}
	}
	return a
}

func cents(v wire.Value) int64 {
	f, _ := v.Float()
	return int64(f)
}

func yuan(c int64) string {
	return strconv.FormatFloat(float64(c)/100, 'f', -1, 64)
}

// draft is the reply draft, stating exactly what the fields say.
func (a assessment) draft(variant string) string {
	var b strings.Builder
	b.WriteString("经核查，")
	if a.cap != nil {
		fmt.Fprintf(&b, "该商品目前资金维度可退上限为%s元", yuan(*a.cap))
		if refundRequestedCents > *a.cap {
			fmt.Fprintf(&b, "，低于本次申请的%s元。", yuan(refundRequestedCents))
		} else {
			fmt.Fprintf(&b, "，不低于本次申请的%s元。", yuan(refundRequestedCents))
		}
	}
	if variant == "claims-refunded" {
		b.WriteString("已为您办理退款，款项将在1至3个工作日内原路退回。")
		return b.String()
	}
	if a.evidenceMissing {
		b.WriteString("申请仍需补充质量凭证，暂不能确认满足全部售后条件。")
	}
	if len(a.unavailable) > 0 {
		fmt.Fprintf(&b, "%s暂不可用，", strings.Join(a.unavailable, "、"))
	}
	if len(a.unchecked) > 0 {
		fmt.Fprintf(&b, "%s未能核查，", strings.Join(a.unchecked, "、"))
	}
	if len(a.unavailable)+len(a.unchecked) > 0 {
		if a.cap == nil {
			b.WriteString("无法确认当前可退金额。")
		} else {
			b.WriteString("暂不能确认满足全部售后条件。")
		}
	}
	b.WriteString("以上为核查结果，未提交退款。")
	return b.String()
}

// text is the final answer as the model writes it: one JSON object with
// the schema's fields in the chapter's order.
func (a assessment) text(variant string) string {
	fields := []struct {
		key string
		val any
	}{
		{"order_id", refundOrderID}, {"line_id", refundLineID}, {"decision", a.decision}, {"currency", "CNY"},
		{"requested_refund_cents", refundRequestedCents}, {"max_refund_cents", a.cap}, {"issues", a.issues},
		{"evidence_ids", a.evidence}, {"reply_draft", a.draft(variant)},
	}
	if variant == "missing-field" {
		fields = slices.DeleteFunc(fields, func(f struct {
			key string
			val any
		}) bool {
			return f.key == "evidence_ids"
		})
	}
	b := make([]byte, 0, 1024)
	b = append(b, '{')
	for i, f := range fields {
		if i > 0 {
			b = append(b, ',')
		}
		b = adapters.AppendJSONString(b, f.key)
		b = append(b, ':')
		b = appendJSONValue(b, f.val)
	}
	b = append(b, '}')
	if variant == "fenced" {
		var pretty strings.Builder
		_ = indentTo(&pretty, string(b))
		return "```json\n" + pretty.String() + "\n```"
	}
	return string(b)
}

// appendJSONValue appends v as encoding/json writes it (HTML escaping
// off) for the answer's types, without reflection: every turn that ends
// the case writes one.
func appendJSONValue(b []byte, v any) []byte {
	switch v := v.(type) {
	case string:
		return adapters.AppendJSONString(b, v)
	case int:
		return strconv.AppendInt(b, int64(v), 10)
	case *int64:
		if v == nil {
			return append(b, "null"...)
		}
		return strconv.AppendInt(b, *v, 10)
	case []string:
		if v == nil {
			return append(b, "null"...)
		}
		b = append(b, '[')
		for i, s := range v {
			if i > 0 {
				b = append(b, ',')
			}
			b = adapters.AppendJSONString(b, s)
		}
		return append(b, ']')
	}
	m, _ := adapters.MarshalBody(v)
	return append(b, m...)
}

func (a assessment) reasoning() string {
	if a.cap == nil {
		return "核心来源不可用或未能核查（" + strings.Join(append(slices.Clone(a.unavailable), a.unchecked...), "、") + "），无法计算可退上限，结论 unable_to_assess。"
	}
	return fmt.Sprintf("可退上限按账务计算为 %d 分，申请 %d 分；问题：%s。结论 %s。", *a.cap, refundRequestedCents, strings.Join(a.issues, "、"), a.decision)
}

func indentTo(w *strings.Builder, s string) error {
	var b bytes.Buffer
	err := json.Indent(&b, []byte(s), "", "  ")
	w.Write(b.Bytes())
	return err
}
