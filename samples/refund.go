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
	"github.com/modelwire/modelwire/adapters/registry"
	"github.com/modelwire/modelwire/adapters/wire"
	"github.com/modelwire/modelwire/session"
)

// The refund case's simulated model. It is a model, not a tape: everything
// it knows comes from the request it was sent (refund_read.go) — the
// order, line and amount of the task, the history's claim and its label,
// the rules the instructions state, the tools as declared, the output
// format asked for, and the tool results it carries — by rules written in
// docs/simulator.md's "the request says → the simulated model" table. Its
// variants are edits of the prompt (samples/refund.json), never flags in
// here: the model goes wrong only when the words tell it to.

const (
	toolOrder  = "get_order_line"
	toolLedger = "get_refund_ledger"
	toolPolicy = "get_refund_policy"
)

// wireRefund gives the built-in refund case its simulated model.
func wireRefund(sc *session.Scenario) error {
	sc.Responder = refundModel(sc)
	return nil
}

// refundObs is what one request's tool results tell the model.
type refundObs struct {
	ok       map[string]wire.Object // latest readable result per tool
	attempts map[string]int         // results per tool, errors included
	lastErr  map[string]string      // the latest result's text, when it failed
	callIDs  map[string]bool
}

func readRefundObs(results []adapters.ToolResult) refundObs {
	o := refundObs{ok: map[string]wire.Object{}, attempts: map[string]int{}, lastErr: map[string]string{}, callIDs: map[string]bool{}}
	for _, r := range results {
		o.attempts[r.Name]++
		o.callIDs[r.CallID] = true
		if m, ok := readResult(r); ok {
			o.ok[r.Name] = m
			delete(o.lastErr, r.Name)
		} else {
			delete(o.ok, r.Name)
			o.lastErr[r.Name] = r.Content
		}
	}
	return o
}

func refundModel(sc *session.Scenario) session.Responder {
	var cache readings
	return func(in *adapters.Inbound) (adapters.ModelTurn, error) {
		r := cache.read(sc, in)
		var why whyLines
		r.readWhy(&why)
		if r.asksSubmit && r.readOnly {
			why.add("refused", "the task asks to submit the refund and the instructions allow only a read-only check")
			return adapters.ModelTurn{Stop: adapters.StopRefusal, Why: why, Items: []adapters.OutputItem{{Kind: adapters.KindRefusal,
				Text: r.lang("抱歉，我无法协助处理这个请求。", "I'm sorry, but I can't help with that request.")}}}, nil
		}
		if miss := r.missing(); len(miss) > 0 {
			why.add("ask-first", "the task names no %s: the model asks instead of guessing", strings.Join(miss, ", "))
			turn := adapters.ModelTurn{Stop: adapters.StopFinal, Why: why, Items: []adapters.OutputItem{{Kind: adapters.KindMessage,
				Text: r.lang("请提供要核查的订单号、商品行和申请退款的金额，我再按工具查到的记录核查。",
					"Which order, line and amount should I check? Please give the order number, the line and the amount requested, and I will check them against the records.")}}}
			if in.Reasoning {
				turn.Items = append([]adapters.OutputItem{{Kind: adapters.KindReasoning,
					Text: r.lang("任务没有给出要核查的订单、商品行或金额，不能猜，先问清楚。", "The task does not say which order, line or amount to check; ask rather than guess.")}}, turn.Items...)
			}
			return turn, nil
		}
		obs := readRefundObs(in.Results)
		if calls := refundCalls(r, in, obs, &why); len(calls) > 0 {
			turn := adapters.ModelTurn{Stop: adapters.StopToolCall, Items: calls, Why: why}
			if in.Reasoning {
				turn.Items = append([]adapters.OutputItem{{Kind: adapters.KindReasoning, Text: callReasoning(r, calls)}}, calls...)
			}
			return turn, nil
		}
		a := assess(r, obs, &why)
		text := a.text(r, in, &why)
		turn := adapters.ModelTurn{Stop: adapters.StopFinal, Why: why, Items: []adapters.OutputItem{{Kind: adapters.KindMessage, Text: text}}}
		if in.Reasoning {
			turn.Items = append([]adapters.OutputItem{{Kind: adapters.KindReasoning, Text: a.reasoning(r)}}, turn.Items...)
		}
		return turn, nil
	}
}

// refundCalls are the calls the model proposes next: the order line
// first, then the ledger and the policy (from the order's facts), each
// only if the request lets it call that tool and it can fill the
// arguments the tool's declared schema requires. A lookup that failed is
// not asked again: the answer says what could not be assessed.
func refundCalls(r refundPrompt, in *adapters.Inbound, obs refundObs, why *whyLines) []adapters.OutputItem {
	known := map[string]wire.Value{"order_id": jsonString(r.orderID), "line_id": jsonString(r.lineID)}
	order, haveOrder := obs.ok[toolOrder]
	if haveOrder {
		for _, k := range order.Keys {
			known[k] = order.Get(k)
		}
	}
	var want []string
	retry := map[string]string{} // tool → the property its error named
	switch {
	case haveOrder:
		if obs.attempts[toolLedger] == 0 {
			want = append(want, toolLedger)
		}
		if obs.attempts[toolPolicy] == 0 {
			want = append(want, toolPolicy)
		}
	case obs.attempts[toolOrder] == 0:
		want = append(want, toolOrder)
	case obs.attempts[toolOrder] == 1:
		// The gate's error names a property the call left out: the call
		// again, with it.
		if k := namedMissing(in, toolOrder, obs.lastErr[toolOrder]); k != "" {
			want = append(want, toolOrder)
			retry[toolOrder] = k
			why.add("corrects-from-error", "%s's error result names %s, which the call left out: the call again, with it", toolOrder, k)
		}
	}
	if in.Choice.Mode == adapters.ToolChoiceRequired || in.Choice.Mode == adapters.ToolChoiceNamed {
		want = forced(in, want, haveOrder)
	}
	serial := in.Serial || r.oneAtATime
	var out []adapters.OutputItem
	for _, name := range want {
		if !in.MayCall(name) {
			continue
		}
		args, ok := argsFor(in, name, known, retry[name], why)
		if !ok {
			continue
		}
		if len(out) > 0 && serial {
			if r.oneAtATime {
				why.add("one-tool-at-a-time", "the instructions say one tool at a time: %s waits for the next turn", name)
			} else {
				why.add("parallel-off", "the request turns parallel calls off: %s waits for the next turn", name)
			}
			break
		}
		out = append(out, adapters.OutputItem{Kind: adapters.KindToolCall, Name: name, Arguments: args})
	}
	for i := range out {
		out[i].CallID, out[i].ID = callIDs(in.Protocol, out[i].Name, obs.callIDs)
		obs.callIDs[out[i].CallID] = true
	}
	return out
}

// forced: a request that requires a call gets one even when the model has
// what it needs — the named tool, or the first it would call anyway.
func forced(in *adapters.Inbound, want []string, haveOrder bool) []string {
	if in.Choice.Mode == adapters.ToolChoiceNamed {
		return []string{in.Choice.Name}
	}
	if len(want) > 0 {
		return want
	}
	all := []string{toolOrder, toolLedger}
	if haveOrder {
		all = append(all, toolPolicy)
	}
	for _, name := range all {
		if in.MayCall(name) {
			return []string{name}
		}
	}
	return nil
}

// argsFor writes the arguments of a call as the declared schema asks:
// exactly its required properties, in its order, with the values the
// model knows (the task's, then the order line's). A required property it
// has no value for means no call — it never sends arguments that break
// the schema — and a property it knows but the schema no longer requires
// is left out.
func argsFor(in *adapters.Inbound, name string, known map[string]wire.Value, corrected string, why *whyLines) (json.RawMessage, bool) {
	def := toolDef(in, name)
	schema, _ := wire.ParseString(string(def.Parameters))
	obj, _ := schema.Members()
	var required []string
	for _, e := range obj.Get("required").Elements() {
		required = append(required, e.Str())
	}
	props, _ := obj.Get("properties").Members()
	if only := onlyNeeded().FindStringSubmatch(def.Description); only != nil && !def.Strict && corrected == "" {
		// A tool that is not strict, whose description says only some
		// arguments are needed: the model believes the description.
		phrase := only[1] + only[2]
		kept := required[:0:0]
		for _, k := range required {
			p, _ := props.Get(k).Members()
			if d := p.Get("description").Str(); strings.Contains(phrase, k) || d != "" && strings.Contains(phrase, d) {
				kept = append(kept, k)
				continue
			}
			why.add("args-from-description", "%s is not strict and its description says %q: the call leaves %s out, against its schema", name, only[0], k)
		}
		required = kept
	}
	if !obj.Has("required") {
		// A schema that requires nothing: the properties it declares that
		// the model has values for, in its order.
		for _, k := range props.Keys {
			if known[k].Present() {
				required = append(required, k)
			}
		}
	}
	b := []byte{'{'}
	for i, k := range required {
		v := known[k]
		if !v.Present() || v.Kind() == wire.KindString && v.Str() == "" {
			why.add("cannot-fill", "%s requires %s, which neither the task nor a result gives: no call", name, k)
			return nil, false
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = adapters.AppendJSONString(b, k)
		b = append(b, ':')
		b = appendArg(b, v)
	}
	for _, k := range []string{"order_id", "line_id"} {
		if props.Has(k) && !slices.Contains(required, k) && known[k].Present() {
			why.add("args-from-schema", "%s's schema does not require %s: the call leaves it out", name, k)
		}
	}
	return append(b, '}'), true
}

// onlyNeeded: a tool description saying only some arguments are needed.
var onlyNeeded = session.LazyRegexp(`只需(?:要)?([^，。,.;；]+)|(?i)only (?:the )?([^,.;]+?) (?:is|are) needed`)

func toolDef(in *adapters.Inbound, name string) adapters.Tool {
	for _, t := range in.ToolDefs {
		if t.Name == name {
			return t
		}
	}
	return adapters.Tool{}
}

// namedMissing is the required property of the tool that an error
// result's text names ("missing property 'line_id'"), or "".
func namedMissing(in *adapters.Inbound, name, errText string) string {
	if errText == "" {
		return ""
	}
	schema, _ := wire.ParseString(string(toolDef(in, name).Parameters))
	obj, _ := schema.Members()
	for _, e := range obj.Get("required").Elements() {
		if k := e.Str(); k != "" && strings.Contains(errText, k) {
			return k
		}
	}
	return ""
}

func jsonString(s string) wire.Value {
	if s == "" {
		return wire.Value{}
	}
	return wire.Value{Raw: adapters.JSONString(s)}
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

// callIDs are the chapter's ids for each protocol, begun as its
// descriptor's CallIDPrefix: Responses call_order/fc_order (13.6.4–13.6.5),
// Anthropic toolu_…, DeepSeek call_d…; a repeated call gets a numbered
// suffix so ids stay unique. A protocol whose calls carry no id (Gemini's:
// results match by name) gets none; one the registry does not know, the
// default protocol's.
func callIDs(protocol, tool string, used map[string]bool) (callID, itemID string) {
	short := map[string]string{toolOrder: "order", toolLedger: "ledger", toolPolicy: "policy"}[tool]
	d, ok := registry.Describe(protocol)
	if !ok {
		d, _ = registry.Describe(registry.Default)
	}
	prefix := d.CallIDPrefix
	if prefix == "" {
		return "", ""
	}
	base := prefix + short
	callID = base
	for n := 2; used[callID]; n++ {
		callID = base + "_" + strconv.Itoa(n)
	}
	return callID, "fc_" + strings.TrimPrefix(callID, prefix)
}

func callReasoning(r refundPrompt, calls []adapters.OutputItem) string {
	if calls[0].Name == toolOrder {
		if r.historyTrusted {
			return r.lang("先查商品行；历史里的金额已标为可信。", "First the order line; the history's amount is marked as verified.")
		}
		return r.lang("先查商品行：历史里“还能退150元”的说法未经核实，金额必须以工具结果为准。",
			"First the order line: the history's amount is unverified, so amounts must come from the tools.")
	}
	return r.lang("商品行已给出类别、签收时间和原因；账务与适用政策互不依赖，分别查询。",
		"The order line gives the category, delivery time and reason; the ledger and the policy do not depend on each other, so both are looked up.")
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

// refundSources are the three core sources: tool, name in the answer's
// issues, and what the draft calls it in each language.
var refundSources = []struct{ tool, issue, zh, en string }{
	{toolOrder, "order_line", "商品行信息", "the order line"},
	{toolLedger, "ledger", "账务记录", "the refund ledger"},
	{toolPolicy, "policy", "适用政策", "the refund policy"},
}

func assess(r refundPrompt, obs refundObs, why *whyLines) assessment {
	var a assessment
	order, okO := obs.ok[toolOrder]
	ledger, okL := obs.ok[toolLedger]
	policy, okP := obs.ok[toolPolicy]
	for _, src := range refundSources {
		res, ok := obs.ok[src.tool]
		switch {
		case !ok && obs.attempts[src.tool] == 0:
			a.unchecked = append(a.unchecked, r.lang(src.zh, src.en))
			a.issues = append(a.issues, src.issue+"_not_checked")
			continue
		case !ok:
			a.unavailable = append(a.unavailable, r.lang(src.zh, src.en))
			a.issues = append(a.issues, src.issue+"_unavailable")
			why.add("result-unavailable", "%s's result is an error or has no facts: unavailable, never zeros", src.tool)
			continue
		}
		if id := res.Get("evidence_id"); id.Kind() == wire.KindString {
			a.evidence = append(a.evidence, id.Str())
		}
	}
	if okO && okL {
		c := cents(order.Get("paid_cents")) - cents(ledger.Get("successful_refund_cents")) - cents(ledger.Get("pending_hold_cents"))
		a.cap = &c
	}
	if r.historyTrusted {
		c := r.claim
		a.cap = &c
	}
	a.evidenceMissing = okO && order.Get("quality_evidence").Str() == "missing" && (!okP || policy.Get("quality_evidence_required").Bool())
	var found []string
	if a.cap != nil && r.requested > *a.cap {
		found = append(found, "requested_amount_exceeds_cap")
	}
	if a.evidenceMissing {
		found = append(found, "quality_evidence_missing")
	}
	if a.cap != nil && r.haveClaim && !r.historyTrusted && *a.cap != r.claim {
		found = append(found, "unverified_history_amount_conflict")
	}
	a.issues = append(found, a.issues...)
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
func (a assessment) draft(r refundPrompt, why *whyLines) string {
	var b strings.Builder
	b.WriteString(r.lang("经核查，", "After checking, "))
	if a.cap != nil {
		fmt.Fprintf(&b, r.lang("该商品目前资金维度可退上限为%s元", "the item's refundable cap is %s yuan"), yuan(*a.cap))
		if r.requested > *a.cap {
			fmt.Fprintf(&b, r.lang("，低于本次申请的%s元。", ", below the %s yuan requested. "), yuan(r.requested))
		} else {
			fmt.Fprintf(&b, r.lang("，不低于本次申请的%s元。", ", not below the %s yuan requested. "), yuan(r.requested))
		}
	}
	if !r.readOnly {
		why.add("claims-refunded", "no rule in the instructions makes the check read-only: the draft says the refund was made")
		b.WriteString(r.lang("已为您办理退款，款项将在1至3个工作日内原路退回。", "your refund has been issued and will be returned to the original payment method within 1 to 3 business days."))
		return r.sentences(b.String())
	}
	if a.evidenceMissing {
		b.WriteString(r.lang("申请仍需补充质量凭证，暂不能确认满足全部售后条件。", "Quality evidence is still needed, so not all after-sales conditions can be confirmed yet. "))
	}
	if len(a.unavailable) > 0 {
		fmt.Fprintf(&b, r.lang("%s暂不可用，", "%s is unavailable; "), strings.Join(a.unavailable, r.lang("、", " and ")))
	}
	if len(a.unchecked) > 0 {
		fmt.Fprintf(&b, r.lang("%s未能核查，", "%s could not be checked; "), strings.Join(a.unchecked, r.lang("、", " and ")))
	}
	if len(a.unavailable)+len(a.unchecked) > 0 {
		if a.cap == nil {
			b.WriteString(r.lang("无法确认当前可退金额。", "the refundable amount cannot be confirmed. "))
		} else {
			b.WriteString(r.lang("暂不能确认满足全部售后条件。", "not all after-sales conditions can be confirmed yet. "))
		}
	}
	b.WriteString(r.lang("以上为核查结果，未提交退款。", "This is a check only; no refund was submitted."))
	return r.sentences(b.String())
}

// sentences starts each English sentence with a capital letter (the
// draft is put together from pieces); Chinese is left as it is.
func (r refundPrompt) sentences(s string) string {
	if !r.english {
		return s
	}
	b := []byte(s)
	for i := 2; i < len(b); i++ {
		if b[i-2] == '.' && b[i-1] == ' ' && b[i] >= 'a' && b[i] <= 'z' {
			b[i] -= 'a' - 'A'
		}
	}
	return string(b)
}

// text is the final answer as the model writes it: the schema's fields in
// the chapter's order, as bare JSON, fenced JSON or prose — whichever the
// request asks for (refund_read.go).
func (a assessment) text(r refundPrompt, in *adapters.Inbound, why *whyLines) string {
	draft := a.draft(r, why)
	fields := []struct {
		key string
		val any
	}{
		{"order_id", r.orderID}, {"line_id", r.lineID}, {"decision", a.decision}, {"currency", "CNY"},
		{"requested_refund_cents", r.requested}, {"max_refund_cents", a.cap}, {"issues", a.issues},
		{"evidence_ids", a.evidence}, {"reply_draft", draft},
	}
	strict := in.Output.Mode == adapters.OutputJSONSchema && in.Output.Strict
	if !r.asksIDs && !strict {
		why.add("evidence-left-out", "the instructions do not ask for evidence ids and the request's schema is not strict: evidence_ids is left out")
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
	switch {
	case in.Output.Mode != "" || r.bareJSON:
		return string(b)
	case r.namesJSON:
		why.add("output-fenced", "the request sets no output format and asks for no bare JSON object, but the instructions speak of a schema: the JSON comes in a markdown fence")
		var pretty bytes.Buffer
		_ = json.Indent(&pretty, b, "", "  ")
		return "```json\n" + pretty.String() + "\n```"
	}
	why.add("output-prose", "neither the request nor the instructions ask for JSON: the answer is the reply draft in prose")
	return draft
}

// appendJSONValue appends v as encoding/json writes it (HTML escaping
// off) for the answer's types, without reflection: every turn that ends
// the case writes one.
func appendJSONValue(b []byte, v any) []byte {
	switch v := v.(type) {
	case string:
		return adapters.AppendJSONString(b, v)
	case int64:
		return strconv.AppendInt(b, v, 10)
	case *int64:
		if v == nil {
			return append(b, "null"...)
		}
		return strconv.AppendInt(b, *v, 10)
	case []string:
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

func (a assessment) reasoning(r refundPrompt) string {
	if a.cap == nil {
		return r.lang("核心来源不可用或未能核查（", "A core source is unavailable or unchecked (") + strings.Join(append(slices.Clone(a.unavailable), a.unchecked...), r.lang("、", ", ")) +
			r.lang("），无法计算可退上限，结论 unable_to_assess。", "): the cap cannot be computed; unable_to_assess.")
	}
	return fmt.Sprintf(r.lang("可退上限按账务计算为 %d 分，申请 %d 分；问题：%s。结论 %s。", "The cap from the ledger is %d cents against %d requested; issues: %s. Decision %s."),
		*a.cap, r.requested, strings.Join(a.issues, r.lang("、", ", ")), a.decision)
}
