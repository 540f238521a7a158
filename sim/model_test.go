package sim_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/modelwire/modelwire/sim"
)

// The simulated model answers the request it was sent: each test sends a
// raw request, as a workshop would with curl, and reads the raw answer.

func post(t *testing.T, base, path, body string, header ...string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+path, strings.NewReader(body))
	req.Header.Set("content-type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

const (
	refundTools = `[{"type":"function","name":"get_order_line","strict":true,"parameters":{"type":"object","properties":{"order_id":{"type":"string"},"line_id":{"type":"string"}},"required":["order_id","line_id"],"additionalProperties":false}},
	{"type":"function","name":"get_refund_ledger","strict":true,"parameters":{"type":"object","properties":{"order_id":{"type":"string"},"line_id":{"type":"string"}},"required":["order_id","line_id"],"additionalProperties":false}},
	{"type":"function","name":"get_refund_policy","strict":true,"parameters":{"type":"object","properties":{"category":{"type":"string"},"received_at":{"type":"string"},"reason":{"type":"string"}},"required":["category","received_at","reason"],"additionalProperties":false}}]`
	task = `{"role":"user","content":"帮我核查订单 O-2048 中商品 L1 的 150 元退款申请。"},{"role":"user","content":"<history verified=\"false\">此前助手推测该商品可能还能退150元。</history>"}`
	// rules and format: the read-only rule and a JSON answer, as the
	// refund case's request has them (without them the model says the
	// refund was made, and answers in prose).
	rules     = `"本任务只读核查，不提交退款。输出证据 ID。"`
	format    = `,"text":{"format":{"type":"json_object"}}`
	orderCall = `{"type":"function_call","call_id":"call_order","name":"get_order_line","arguments":"{\"order_id\":\"O-2048\",\"line_id\":\"L1\"}"}`
	orderOut  = `{"type":"function_call_output","call_id":"call_order","output":"{\"status\":\"ok\",\"evidence_id\":\"E-order\",\"order_id\":\"O-2048\",\"line_id\":\"L1\",\"currency\":\"CNY\",\"paid_cents\":PAID,\"category\":\"headphones\",\"received_at\":\"2026-10-15T12:00:00+08:00\",\"reason\":\"quality_issue\",\"quality_evidence\":\"missing\"}"}`
	turn2Call = `{"type":"function_call","call_id":"call_ledger","name":"get_refund_ledger","arguments":"{\"order_id\":\"O-2048\",\"line_id\":\"L1\"}"},{"type":"function_call","call_id":"call_policy","name":"get_refund_policy","arguments":"{\"category\":\"headphones\",\"received_at\":\"2026-10-15T12:00:00+08:00\",\"reason\":\"quality_issue\"}"}`
	ledgerOK  = `{"type":"function_call_output","call_id":"call_ledger","output":"{\"status\":\"ok\",\"evidence_id\":\"E-ledger\",\"snapshot\":\"L42\",\"currency\":\"CNY\",\"successful_refund_cents\":3000,\"pending_hold_cents\":2000}"}`
	policyOK  = `{"type":"function_call_output","call_id":"call_policy","output":"{\"status\":\"ok\",\"evidence_id\":\"E-policy\",\"version\":\"aftersale-v3\",\"within_7_days\":true,\"quality_evidence_required\":true}"}`
)

// responses sends a non-streaming Responses request with the given input
// items and extra top-level fields.
func respond(t *testing.T, base, input, extra string) gjson.Result {
	t.Helper()
	body := `{"model":"m","instructions":` + rules + `,"input":[` + task + input + `],"tools":` + refundTools + format + extra + `}`
	status, out := post(t, base, "/v1/responses", body)
	if status != http.StatusOK {
		t.Fatalf("status %d: %s", status, out)
	}
	return gjson.Parse(out)
}

func calls(r gjson.Result) []string {
	var out []string
	for _, it := range r.Get(`output.#(type=="function_call")#`).Array() {
		out = append(out, it.Get("name").String()+" "+it.Get("arguments").String())
	}
	return out
}

func answer(t *testing.T, r gjson.Result) gjson.Result {
	t.Helper()
	text := r.Get(`output.#(type=="message").content.0.text`).String()
	if !gjson.Valid(text) {
		t.Fatalf("final text is not JSON: %q (%s)", text, r.Raw)
	}
	return gjson.Parse(text)
}

func TestToolChoiceIsObeyed(t *testing.T) {
	base := start(t, "", sim.Options{})
	for _, c := range []struct {
		name, extra string
		want        []string
	}{
		{"auto", `,"tool_choice":"auto"`, []string{`get_order_line {"order_id":"O-2048","line_id":"L1"}`}},
		{"none", `,"tool_choice":"none"`, nil},
		{"named", `,"tool_choice":{"type":"function","name":"get_refund_ledger"}`, []string{`get_refund_ledger {"order_id":"O-2048","line_id":"L1"}`}},
		{"required", `,"tool_choice":"required"`, []string{`get_order_line {"order_id":"O-2048","line_id":"L1"}`}},
	} {
		r := respond(t, base, "", c.extra)
		if got := calls(r); strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("%s: calls %q, want %q", c.name, got, c.want)
		}
	}
	// tool_choice none: no call, and an answer that says what it could not
	// check instead of inventing amounts.
	a := answer(t, respond(t, base, "", `,"tool_choice":"none"`))
	if a.Get("decision").String() != "unable_to_assess" || a.Get("max_refund_cents").Type != gjson.Null {
		t.Errorf("tool_choice none: %s", a.Raw)
	}
}

func TestOnlyDeclaredToolsAreCalled(t *testing.T) {
	base := start(t, "", sim.Options{})
	status, out := post(t, base, "/v1/responses", `{"model":"m","input":[`+task+`]}`)
	r := gjson.Parse(out)
	if status != 200 || len(calls(r)) != 0 || r.Get(`output.#(type=="message")`).Exists() == false {
		t.Fatalf("no tools declared: %d %s", status, out)
	}
	// Only the ledger declared after the order result: the policy is not
	// called, and the answer carries no policy evidence.
	body := `{"model":"m","input":[` + task + `,` + orderCall + `,` + strings.Replace(orderOut, "PAID", "18000", 1) + `],"tools":[{"type":"function","name":"get_refund_ledger","parameters":{"type":"object","properties":{"order_id":{"type":"string"},"line_id":{"type":"string"}}}}]}`
	_, out = post(t, base, "/v1/responses", body)
	if got := calls(gjson.Parse(out)); strings.Join(got, "|") != `get_refund_ledger {"order_id":"O-2048","line_id":"L1"}` {
		t.Errorf("calls %q", got)
	}
}

func TestParallelSwitch(t *testing.T) {
	base := start(t, "", sim.Options{})
	in := `,` + orderCall + `,` + strings.Replace(orderOut, "PAID", "18000", 1)
	both := []string{`get_refund_ledger {"order_id":"O-2048","line_id":"L1"}`, `get_refund_policy {"category":"headphones","received_at":"2026-10-15T12:00:00+08:00","reason":"quality_issue"}`}
	if got := calls(respond(t, base, in, "")); strings.Join(got, "|") != strings.Join(both, "|") {
		t.Errorf("parallel allowed: %q", got)
	}
	if got := calls(respond(t, base, in, `,"parallel_tool_calls":false`)); strings.Join(got, "|") != both[0] {
		t.Errorf("parallel_tool_calls false: %q, want only the ledger", got)
	}
	// Anthropic's switch.
	anth := `{"model":"m","max_tokens":1000,"tools":[{"name":"get_refund_ledger","input_schema":{"type":"object"}},{"name":"get_refund_policy","input_schema":{"type":"object"}}],"tool_choice":{"type":"auto","disable_parallel_tool_use":true},` +
		`"messages":[{"role":"user","content":"帮我核查订单 O-2048 中商品 L1 的 150 元退款申请。"},{"role":"assistant","content":[{"type":"tool_use","id":"toolu_order","name":"get_order_line","input":{"order_id":"O-2048","line_id":"L1"}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_order","content":"{\"status\":\"ok\",\"evidence_id\":\"E-order\",\"order_id\":\"O-2048\",\"line_id\":\"L1\",\"paid_cents\":18000,\"category\":\"headphones\",\"received_at\":\"2026-10-15T12:00:00+08:00\",\"reason\":\"quality_issue\",\"quality_evidence\":\"missing\"}"}]}]}`
	_, out := post(t, base, "/v1/messages", anth, "anthropic-version", "2023-06-01")
	uses := gjson.Get(out, `content.#(type=="tool_use")#.name`).Array()
	if len(uses) != 1 || uses[0].String() != "get_refund_ledger" || gjson.Get(out, "content.0.id").String() != "toolu_ledger" {
		t.Errorf("disable_parallel_tool_use: %s", out)
	}
}

// The answer is computed from the observations the request carries.
func TestAnswerFollowsTheObservations(t *testing.T) {
	base := start(t, "", sim.Options{})
	final := func(paid, ledger string) gjson.Result {
		in := `,` + orderCall + `,` + strings.Replace(orderOut, "PAID", paid, 1) + `,` + turn2Call + `,` + ledger + `,` + policyOK
		return answer(t, respond(t, base, in, `,"tool_choice":"none"`))
	}
	a := final("18000", ledgerOK)
	if a.Get("max_refund_cents").Int() != 13000 || a.Get("decision").String() != "needs_review" ||
		a.Get("issues").Raw != `["requested_amount_exceeds_cap","quality_evidence_missing","unverified_history_amount_conflict"]` {
		t.Errorf("chapter facts: %s", a.Raw)
	}
	a = final("20000", ledgerOK)
	if a.Get("max_refund_cents").Int() != 15000 || a.Get("issues").Raw != `["quality_evidence_missing"]` ||
		!strings.Contains(a.Get("reply_draft").String(), "可退上限为150元") {
		t.Errorf("paid 20000: %s", a.Raw)
	}
	failed := `{"type":"function_call_output","call_id":"call_ledger","output":"{\"status\":\"error\",\"error\":\"not_found\"}"}`
	a = final("18000", failed)
	if a.Get("decision").String() != "unable_to_assess" || a.Get("max_refund_cents").Type != gjson.Null ||
		!strings.Contains(a.Get("reply_draft").String(), "账务记录暂不可用") || a.Get("evidence_ids").Raw != `["E-order","E-policy"]` {
		t.Errorf("ledger failed: %s", a.Raw)
	}
	// The order line unreadable: the ledger and the policy are not looked
	// up (the policy's arguments come from the order line), and the answer
	// says they were not checked — not that they were unavailable.
	brokenOrder := `{"type":"function_call_output","call_id":"call_order","output":"{\"status\":\"ok\""}`
	a = answer(t, respond(t, base, `,`+orderCall+`,`+brokenOrder, ""))
	if a.Get("decision").String() != "unable_to_assess" || a.Get("max_refund_cents").Type != gjson.Null ||
		a.Get("issues").Raw != `["order_line_unavailable","ledger_not_checked","policy_not_checked"]` ||
		!strings.Contains(a.Get("reply_draft").String(), "商品行信息暂不可用，账务记录、适用政策未能核查，无法确认当前可退金额") {
		t.Errorf("order line unreadable: %s", a.Raw)
	}
}

func TestOutputTokenLimitTruncates(t *testing.T) {
	base := start(t, "", sim.Options{})
	in := `,` + orderCall + `,` + strings.Replace(orderOut, "PAID", "18000", 1) + `,` + turn2Call + `,` + ledgerOK + `,` + policyOK
	r := respond(t, base, in, `,"tool_choice":"none","max_output_tokens":20`)
	if r.Get("status").String() != "incomplete" || r.Get("incomplete_details.reason").String() != "max_output_tokens" {
		t.Fatalf("max_output_tokens 20: %s", r.Raw)
	}
	if n := r.Get("usage.output_tokens").Int(); n > 20 || n == 0 {
		t.Errorf("output_tokens %d, want 1..20", n)
	}
	for p, c := range map[string]struct{ path, body, stop string }{
		"chat":      {"/v1/chat/completions", `{"model":"m","max_completion_tokens":5,"messages":[{"role":"user","content":"帮我核查订单 O-2048 中商品 L1 的 150 元退款申请。"}]}`, `choices.0.finish_reason`},
		"anthropic": {"/v1/messages", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"帮我核查订单 O-2048 中商品 L1 的 150 元退款申请。"}]}`, `stop_reason`},
		"gemini":    {"/v1beta/models/m:generateContent", `{"contents":[{"role":"user","parts":[{"text":"帮我核查订单 O-2048 中商品 L1 的 150 元退款申请。"}]}],"generationConfig":{"maxOutputTokens":5}}`, `candidates.0.finishReason`},
	} {
		_, out := post(t, base, c.path, c.body, "anthropic-version", "2023-06-01")
		want := map[string]string{"chat": "length", "anthropic": "max_tokens", "gemini": "MAX_TOKENS"}[p]
		if got := gjson.Get(out, c.stop).String(); got != want {
			t.Errorf("%s: stop %q, want %q (%s)", p, got, want, out)
		}
	}
}

func TestReasoningOnlyWhenAsked(t *testing.T) {
	base := start(t, "", sim.Options{})
	r := respond(t, base, "", "")
	if r.Get(`output.#(type=="reasoning")`).Exists() {
		t.Errorf("reasoning without being asked: %s", r.Raw)
	}
	r = respond(t, base, "", `,"reasoning":{"effort":"medium"}`)
	if !r.Get(`output.#(type=="reasoning")`).Exists() {
		t.Errorf("reasoning asked, none given: %s", r.Raw)
	}
	ds := func(thinking string) string {
		_, out := post(t, base, "/chat/completions", `{"model":"deepseek-v4-flash","messages":[{"role":"user","content":"帮我核查订单 O-2048 中商品 L1 的 150 元退款申请。"}]`+thinking+`}`)
		return out
	}
	if out := ds(`,"thinking":{"type":"disabled"}`); gjson.Get(out, "choices.0.message.reasoning_content").String() != "" {
		t.Errorf("DeepSeek thinking disabled still reasons: %s", out)
	}
	if out := ds(`,"thinking":{"type":"enabled"}`); gjson.Get(out, "choices.0.message.reasoning_content").String() == "" {
		t.Errorf("DeepSeek thinking enabled gives no reasoning_content: %s", out)
	}
	anth := func(thinking string) string {
		_, out := post(t, base, "/v1/messages", `{"model":"m","max_tokens":4000,"messages":[{"role":"user","content":"帮我核查订单 O-2048 中商品 L1 的 150 元退款申请。"}]`+thinking+`}`, "anthropic-version", "2023-06-01")
		return out
	}
	if out := anth(""); gjson.Get(out, `content.#(type=="thinking")`).Exists() {
		t.Errorf("Anthropic thinks unasked: %s", out)
	}
	if out := anth(`,"thinking":{"type":"enabled","budget_tokens":1024}`); gjson.Get(out, `content.#(type=="thinking").signature`).String() == "" {
		t.Errorf("Anthropic thinking asked: no signed thinking block: %s", out)
	}
	gem := func(cfg string) string {
		_, out := post(t, base, "/v1beta/models/m:generateContent", `{"contents":[{"role":"user","parts":[{"text":"帮我核查订单 O-2048 中商品 L1 的 150 元退款申请。"}]}]`+cfg+`}`)
		return out
	}
	if out := gem(""); gjson.Get(out, `candidates.0.content.parts.#(thought==true)`).Exists() {
		t.Errorf("Gemini thinks unasked: %s", out)
	}
	if out := gem(`,"generationConfig":{"thinkingConfig":{"includeThoughts":true}}`); !gjson.Get(out, `candidates.0.content.parts.#(thought==true)`).Exists() {
		t.Errorf("Gemini includeThoughts: no thought part: %s", out)
	}
}

func TestDeepSeekRefusesForcedToolsWhileThinking(t *testing.T) {
	base := start(t, "", sim.Options{})
	status, out := post(t, base, "/chat/completions", `{"model":"deepseek-v4-flash","messages":[{"role":"user","content":"帮我核查订单 O-2048 中商品 L1 的 150 元退款申请。"}],"tools":[{"type":"function","function":{"name":"get_order_line","parameters":{"type":"object"}}}],"tool_choice":"required","thinking":{"type":"enabled"}}`)
	if status != 400 || !strings.Contains(out, "tool_choice") {
		t.Errorf("forced tool choice in thinking mode: %d %s", status, out)
	}
	status, _ = post(t, base, "/chat/completions", `{"model":"deepseek-v4-flash","messages":[{"role":"user","content":"帮我核查订单 O-2048 中商品 L1 的 150 元退款申请。"}],"tools":[{"type":"function","function":{"name":"get_order_line","parameters":{"type":"object"}}}],"tool_choice":"required","thinking":{"type":"disabled"}}`)
	if status != 200 {
		t.Errorf("forced tool choice without thinking: %d", status)
	}
}

func TestGeminiFunctionCallingConfig(t *testing.T) {
	base := start(t, "", sim.Options{})
	decl := `"tools":[{"functionDeclarations":[{"name":"get_order_line","parameters":{"type":"OBJECT"}},{"name":"get_refund_ledger","parameters":{"type":"OBJECT"}}]}]`
	for cfg, want := range map[string]string{
		`{"mode":"NONE"}`: ``,
		`{"mode":"AUTO"}`: `get_order_line`,
		`{"mode":"ANY","allowedFunctionNames":["get_refund_ledger"]}`: `get_refund_ledger`,
	} {
		_, out := post(t, base, "/v1beta/models/m:generateContent", `{"contents":[{"role":"user","parts":[{"text":"帮我核查订单 O-2048 中商品 L1 的 150 元退款申请。"}]}],`+decl+`,"toolConfig":{"functionCallingConfig":`+cfg+`}}`)
		got := gjson.Get(out, `candidates.0.content.parts.#(functionCall).functionCall.name`).String()
		if got != want {
			t.Errorf("%s: called %q, want %q (%s)", cfg, got, want, out)
		}
	}
}
