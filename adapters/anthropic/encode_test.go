package anthropic

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/adapterstest"
)

// refundIDs are the ids of the refund captures, so that the encoded
// history replays what the decoder read.
var refundIDs = adapterstest.IDs{
	Call: func(turn, i int) string {
		return [][]string{
			{"toolu_01Kq7XvT3nB8dR2sLp5WmYcA"},
			{"toolu_01Lm4YwU8cP2eS6tHq9XnZdB", "toolu_01Np6ZxV2dQ4fT8uJr3YoAeC"},
		}[turn-1][i]
	},
	Response: func(turn int) string {
		return []string{"msg_01RfT1aQ8wq3VbJ4cZk9LmNp", "msg_01RfT2bW4ex7NcH2dQs8KjUv"}[turn-1]
	},
}

func encode(t *testing.T, req *adapters.Request, provider string) (*adapters.HTTPRequest, map[string]any) {
	t.Helper()
	hr, err := New().Encode(req, provider)
	if err != nil {
		t.Fatal(err)
	}
	var body map[string]any
	if err := json.Unmarshal(hr.Body, &body); err != nil {
		t.Fatalf("body is not JSON: %v\n%s", err, hr.Body)
	}
	return hr, body
}

// at walks a decoded body by a map path such as `messages[0].content[2].text`
// or `output_config.format`.
func at(t *testing.T, v any, path string) any {
	t.Helper()
	for _, seg := range strings.Split(path, ".") {
		name, rest, _ := strings.Cut(seg, "[")
		if name != "" {
			m, ok := v.(map[string]any)
			if !ok {
				t.Fatalf("%s: %q is not in an object", path, name)
			}
			if v, ok = m[name]; !ok {
				t.Fatalf("%s: no field %q", path, name)
			}
		}
		for rest != "" {
			num, after, _ := strings.Cut(rest, "]")
			i, err := strconv.Atoi(num)
			a, ok := v.([]any)
			if err != nil || !ok || i >= len(a) {
				t.Fatalf("%s: bad index [%s]", path, num)
			}
			v = a[i]
			rest = strings.TrimPrefix(after, "[")
		}
	}
	return v
}

func asJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func jsonEq(t *testing.T, what string, got any, want string) {
	t.Helper()
	var w any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, w) {
		t.Errorf("%s = %s, want %s", what, asJSON(got), want)
	}
}

func TestEncodeRefundGoldens(t *testing.T) {
	for turn := 1; turn <= 3; turn++ {
		hr, _ := encode(t, adapterstest.RefundRequest(turn, refundIDs, true), adapters.ProviderAnthropic)
		adapterstest.Golden(t, fmt.Sprintf("encode_refund_turn%d", turn), hr)
	}
}

// The documented shapes of protocols.md §3.2, field by field.
func TestEncodeRefundShapes(t *testing.T) {
	sources := adapterstest.RefundSources()
	for turn := 1; turn <= 3; turn++ {
		t.Run(fmt.Sprint("turn", turn), func(t *testing.T) {
			hr, body := encode(t, adapterstest.RefundRequest(turn, refundIDs, true), adapters.ProviderAnthropic)
			if hr.Method != "POST" || hr.Path != "/v1/messages" {
				t.Errorf("%s %s", hr.Method, hr.Path)
			}
			if hr.Headers["anthropic-version"] != "2023-06-01" || hr.Headers["content-type"] != "application/json" || len(hr.Headers) != 2 {
				t.Errorf("headers = %v", hr.Headers)
			}
			if !strings.HasPrefix(string(hr.Body), `{"model":"refund-model","max_tokens":1800,"system":[`) {
				t.Errorf("body does not start with model, max_tokens, system: %.80s", hr.Body)
			}
			if !strings.Contains(string(hr.Body), `"<knowledge_context source=\"merchant-kb\"`) {
				t.Error("the wire body escapes < in context tags")
			}
			// system: the rules, then the skill (no developer role), each its own block.
			if n := len(at(t, body, "system").([]any)); n != 2 {
				t.Errorf("%d system blocks, want 2 (the schema travels natively)", n)
			}
			jsonEq(t, "system[0]", at(t, body, "system[0]"), asJSON(map[string]string{"type": "text", "text": sources[0].Text}))
			jsonEq(t, "system[1]", at(t, body, "system[1]"), asJSON(map[string]string{"type": "text", "text": sources[1].Text}))
			// The first user message: the task + the five parts of the context package.
			if at(t, body, "messages[0].role") != "user" || len(at(t, body, "messages[0].content").([]any)) != 6 {
				t.Errorf("messages[0] = %s", asJSON(at(t, body, "messages[0]")))
			}
			if s := at(t, body, "messages[0].content[2].text").(string); !strings.HasPrefix(s, `<knowledge_context source="merchant-kb" document_id="KB-guide-9"`) {
				t.Errorf("context block = %q", s)
			}
			// Tools with strict schemas, tool_choice auto (parallel allowed).
			for i, tool := range adapterstest.RefundTools() {
				p := fmt.Sprintf("tools[%d]", i)
				jsonEq(t, p+".input_schema", at(t, body, p+".input_schema"), string(tool.Parameters))
				if at(t, body, p+".name") != tool.Name || at(t, body, p+".strict") != true || at(t, body, p+".description") != tool.Description {
					t.Errorf("%s = %s", p, asJSON(at(t, body, p)))
				}
			}
			jsonEq(t, "tool_choice", at(t, body, "tool_choice"), `{"type":"auto"}`)
			jsonEq(t, "output_config", at(t, body, "output_config"), `{"format":{"type":"json_schema","schema":`+string(adapterstest.RefundSchema())+`}}`)
			if body["max_tokens"] != 1800.0 || body["stream"] != true || body["thinking"] != nil {
				t.Errorf("max_tokens %v stream %v thinking %v", body["max_tokens"], body["stream"], body["thinking"])
			}
			// History.
			msgs := at(t, body, "messages").([]any)
			if want := []int{1, 3, 5}[turn-1]; len(msgs) != want {
				t.Fatalf("%d messages, want %d", len(msgs), want)
			}
			if turn >= 2 {
				jsonEq(t, "messages[1]", msgs[1], `{"role":"assistant","content":[{"type":"tool_use","id":"toolu_01Kq7XvT3nB8dR2sLp5WmYcA","name":"get_order_line","input":{"order_id":"O-2048","line_id":"L1"}}]}`)
				jsonEq(t, "messages[2]", msgs[2], asJSON(map[string]any{"role": "user", "content": []any{
					map[string]any{"type": "tool_result", "tool_use_id": "toolu_01Kq7XvT3nB8dR2sLp5WmYcA", "content": adapterstest.RefundTurn1[0].Result}}}))
			}
			if turn == 3 {
				jsonEq(t, "messages[3]", msgs[3], `{"role":"assistant","content":[`+
					`{"type":"tool_use","id":"toolu_01Lm4YwU8cP2eS6tHq9XnZdB","name":"get_refund_ledger","input":{"order_id":"O-2048","line_id":"L1"}},`+
					`{"type":"tool_use","id":"toolu_01Np6ZxV2dQ4fT8uJr3YoAeC","name":"get_refund_policy","input":{"category":"headphones","received_at":"2026-10-15T12:00:00+08:00","reason":"quality_issue"}}]}`)
				// ONE user message, tool_result blocks first, in call order.
				jsonEq(t, "messages[4]", msgs[4], asJSON(map[string]any{"role": "user", "content": []any{
					map[string]any{"type": "tool_result", "tool_use_id": "toolu_01Lm4YwU8cP2eS6tHq9XnZdB", "content": adapterstest.RefundTurn2[0].Result},
					map[string]any{"type": "tool_result", "tool_use_id": "toolu_01Np6ZxV2dQ4fT8uJr3YoAeC", "content": adapterstest.RefundTurn2[1].Result}}}))
			}
			// Degradation: the skill has no developer role here.
			if len(hr.Degradations) != 1 || !strings.Contains(hr.Degradations[0], "skill:refund_assessment@1.2") {
				t.Errorf("degradations = %q", hr.Degradations)
			}
			checkMap(t, hr, body, sources)
		})
	}
}

// checkMap asserts every source is mapped once and its path finds its text.
func checkMap(t *testing.T, hr *adapters.HTTPRequest, body map[string]any, sources []adapters.Source) {
	t.Helper()
	byID := map[string]adapters.FieldMapping{}
	for _, m := range hr.Map {
		if strings.HasPrefix(m.Source, "history:turn") {
			// A carried call or its result: the block with that id
			// (a call and its result share the row's name).
			b, _ := at(t, body, m.Field).(map[string]any)
			id, _ := b["id"].(string)
			if b["type"] == "tool_result" {
				id, _ = b["tool_use_id"].(string)
			}
			if id == "" || !strings.HasSuffix(m.Source, " "+id) || m.Trust != adapters.TrustVerified || !strings.HasPrefix(m.Note, b["type"].(string)+" ") {
				t.Errorf("map %s → %s finds %v (note %q)", m.Source, m.Field, b, m.Note)
			}
			continue
		}
		if _, dup := byID[m.Source]; dup {
			t.Errorf("source %s mapped twice", m.Source)
		}
		byID[m.Source] = m
	}
	for _, s := range sources {
		m, ok := byID[s.ID]
		if !ok {
			t.Errorf("source %s is not in the map", s.ID)
			continue
		}
		if m.Trust != s.Trust {
			t.Errorf("%s trust %s, want %s", s.ID, m.Trust, s.Trust)
		}
		if got := at(t, body, m.Field); got != adapters.SourceText(s) {
			t.Errorf("%s at %s = %.60q", s.ID, m.Field, got)
		}
		if s.Role == adapters.RoleDeveloper && m.Note == "" {
			t.Errorf("%s: the degradation has no note", s.ID)
		}
	}
	for i, tool := range adapterstest.RefundTools() {
		m := byID["tool:"+tool.Name]
		if m.Field != fmt.Sprintf("tools[%d]", i) || at(t, body, m.Field+".name") != tool.Name || m.Trust != adapters.TrustTrusted {
			t.Errorf("tool map %+v", m)
		}
	}
	if m, ok := byID["output_schema"]; !ok {
		t.Error("output_schema is not in the map")
	} else {
		at(t, body, m.Field)
	}
}

func TestEncodeSchemaAsTextWhereNotNative(t *testing.T) {
	// DeepSeek's Anthropic-format endpoint has no output_config.format and
	// ignores disable_parallel_tool_use.
	req := adapterstest.RefundRequest(1, refundIDs, false)
	f := false
	req.Limits.ParallelToolCalls = &f
	hr, body := encode(t, req, adapters.ProviderDeepSeek)
	if body["output_config"] != nil || body["stream"] != nil {
		t.Errorf("output_config %v stream %v", body["output_config"], body["stream"])
	}
	if got := at(t, body, "system[2].text").(string); got != adapters.SchemaInstruction(req.Output) {
		t.Errorf("system[2] = %.80q", got)
	}
	jsonEq(t, "tool_choice", body["tool_choice"], `{"type":"auto"}`)
	var m adapters.FieldMapping
	for _, fm := range hr.Map {
		if fm.Source == "output_schema" {
			m = fm
		}
	}
	if m.Field != "system[2].text" || m.Note == "" {
		t.Errorf("output_schema map = %+v", m)
	}
	if len(hr.Degradations) != 3 {
		t.Errorf("degradations = %q", hr.Degradations)
	}
}

func TestEncodeToolChoice(t *testing.T) {
	f := false
	for _, c := range []struct {
		choice   adapters.ToolChoice
		parallel *bool
		want     string
	}{
		{adapters.ToolChoice{Mode: adapters.ToolChoiceAuto}, &f, `{"type":"auto","disable_parallel_tool_use":true}`},
		{adapters.ToolChoice{Mode: adapters.ToolChoiceRequired}, nil, `{"type":"any"}`},
		{adapters.ToolChoice{Mode: adapters.ToolChoiceRequired}, &f, `{"type":"any","disable_parallel_tool_use":true}`},
		{adapters.ToolChoice{Mode: adapters.ToolChoiceNamed, Name: "get_refund_policy"}, nil, `{"type":"tool","name":"get_refund_policy"}`},
		{adapters.ToolChoice{Mode: adapters.ToolChoiceNone}, &f, `{"type":"none"}`},
	} {
		req := adapterstest.RefundRequest(1, refundIDs, true)
		req.Choice, req.Limits.ParallelToolCalls = c.choice, c.parallel
		_, body := encode(t, req, adapters.ProviderAnthropic)
		jsonEq(t, "tool_choice "+string(c.choice.Mode), body["tool_choice"], c.want)
	}
}

func TestEncodeLimits(t *testing.T) {
	t.Run("max_tokens defaults to 4096 and says so", func(t *testing.T) {
		req := adapterstest.RefundRequest(1, refundIDs, true)
		req.Limits.MaxOutputTokens = 0
		hr, body := encode(t, req, adapters.ProviderAnthropic)
		if body["max_tokens"] != 4096.0 || !strings.Contains(strings.Join(hr.Degradations, "\n"), "max_tokens") {
			t.Errorf("%v %q", body["max_tokens"], hr.Degradations)
		}
	})
	t.Run("thinking", func(t *testing.T) {
		req := adapterstest.RefundRequest(1, refundIDs, true)
		req.Limits.MaxOutputTokens, req.Limits.Reasoning = 32000, "high"
		temp := 0.2
		req.Limits.Temperature = &temp
		hr, body := encode(t, req, adapters.ProviderAnthropic)
		jsonEq(t, "thinking", body["thinking"], `{"type":"enabled","budget_tokens":16384}`)
		if body["temperature"] != nil || len(hr.Degradations) != 2 {
			t.Errorf("temperature %v degradations %q", body["temperature"], hr.Degradations)
		}
	})
	t.Run("thinking budget below max_tokens", func(t *testing.T) {
		req := adapterstest.RefundRequest(1, refundIDs, true)
		req.Limits.Reasoning = "high" // max_tokens 1800
		hr, body := encode(t, req, adapters.ProviderAnthropic)
		jsonEq(t, "thinking", body["thinking"], `{"type":"enabled","budget_tokens":1799}`)
		if !strings.Contains(strings.Join(hr.Degradations, "\n"), "budget") {
			t.Errorf("degradations %q", hr.Degradations)
		}
	})
	t.Run("thinking with a forced tool is an error", func(t *testing.T) {
		req := adapterstest.RefundRequest(1, refundIDs, true)
		req.Limits.Reasoning, req.Choice = "low", adapters.ToolChoice{Mode: adapters.ToolChoiceRequired}
		if _, err := New().Encode(req, adapters.ProviderAnthropic); err == nil {
			t.Error("no error")
		}
	})
	t.Run("temperature without thinking", func(t *testing.T) {
		req := adapterstest.RefundRequest(1, refundIDs, true)
		temp := 0.0
		req.Limits.Temperature = &temp
		_, body := encode(t, req, adapters.ProviderAnthropic)
		if v, ok := body["temperature"]; !ok || v != 0.0 {
			t.Errorf("temperature %v", v)
		}
	})
}

func TestEncodeHistoryReplay(t *testing.T) {
	req := adapterstest.RefundRequest(2, refundIDs, true)
	// A thinking turn: thinking (signed), redacted thinking, text, then the
	// call; results given in the opposite order still answer by call id.
	req.Turns = []adapters.Turn{{
		Items: []adapters.OutputItem{
			{Kind: adapters.KindReasoning, Text: "先查订单。", Signature: "sig_A"},
			{Kind: adapters.KindReasoning, Signature: RedactedPrefix + "opaque=="},
			{Kind: adapters.KindReasoning, Text: "unsigned"},
			{Kind: adapters.KindMessage, Text: "我先查询。"},
			{Kind: adapters.KindToolCall, CallID: "toolu_a", Name: "get_refund_ledger", Arguments: json.RawMessage(`{"order_id":"O-2048","line_id":"L1"}`)},
			{Kind: adapters.KindToolCall, CallID: "toolu_b", Name: "get_refund_policy", Arguments: json.RawMessage(`{"category":"headphones","received_at":"2026-10-15T12:00:00+08:00","reason":"quality_issue"}`)},
		},
		Results: []adapters.ToolResult{
			{CallID: "toolu_b", Content: "policy", IsError: true},
			{CallID: "toolu_a", Content: "ledger"},
		},
	}}
	hr, body := encode(t, req, adapters.ProviderAnthropic)
	jsonEq(t, "messages[1]", at(t, body, "messages[1]"), `{"role":"assistant","content":[`+
		`{"type":"thinking","thinking":"先查订单。","signature":"sig_A"},`+
		`{"type":"redacted_thinking","data":"opaque=="},`+
		`{"type":"text","text":"我先查询。"},`+
		`{"type":"tool_use","id":"toolu_a","name":"get_refund_ledger","input":{"order_id":"O-2048","line_id":"L1"}},`+
		`{"type":"tool_use","id":"toolu_b","name":"get_refund_policy","input":{"category":"headphones","received_at":"2026-10-15T12:00:00+08:00","reason":"quality_issue"}}]}`)
	jsonEq(t, "messages[2]", at(t, body, "messages[2]"), `{"role":"user","content":[`+
		`{"type":"tool_result","tool_use_id":"toolu_a","content":"ledger"},`+
		`{"type":"tool_result","tool_use_id":"toolu_b","content":"policy","is_error":true}]}`)
	if !strings.Contains(strings.Join(hr.Degradations, "\n"), "without a signature") {
		t.Errorf("degradations %q", hr.Degradations)
	}

	t.Run("a call without a result", func(t *testing.T) {
		r := adapterstest.RefundRequest(2, refundIDs, true)
		r.Turns[0].Results = nil
		if _, err := New().Encode(r, adapters.ProviderAnthropic); err == nil {
			t.Error("no error")
		}
	})
	t.Run("a result for a call not made", func(t *testing.T) {
		r := adapterstest.RefundRequest(2, refundIDs, true)
		r.Turns[0].Results = append(r.Turns[0].Results, adapters.ToolResult{CallID: "toolu_other", Content: "x"})
		if _, err := New().Encode(r, adapters.ProviderAnthropic); err == nil {
			t.Error("no error")
		}
	})
}

// A decoded turn is history Encode accepts as it is.
func TestDecodedTurnRoundTrip(t *testing.T) {
	st := adapters.NewStream(New())
	_ = adapters.ReadStream(New(), st, strings.NewReader(string(adapterstest.ReadCapture(t, "refund_turn2.sse"))), func(adapters.Step) error { return nil })
	turn := st.Reducer().Turn()
	for _, c := range turn.Items {
		if c.Kind == adapters.KindToolCall {
			turn.Results = append(turn.Results, adapters.ToolResult{CallID: c.CallID, Name: c.Name, Content: "ok"})
		}
	}
	req := adapterstest.RefundRequest(1, refundIDs, true)
	req.Turns = []adapters.Turn{turn}
	_, body := encode(t, req, adapters.ProviderAnthropic)
	jsonEq(t, "messages[1].content[0]", at(t, body, "messages[1].content[0]"), `{"type":"text","text":"订单行已确认：实付 18000 分。接下来并行查询退款台账与售后政策。"}`)
	if at(t, body, "messages[1].content[2].id") != "toolu_01Np6ZxV2dQ4fT8uJr3YoAeC" || at(t, body, "messages[2].content[1].tool_use_id") != "toolu_01Np6ZxV2dQ4fT8uJr3YoAeC" {
		t.Errorf("round trip: %s", asJSON(body["messages"]))
	}
}

func TestEncodeErrors(t *testing.T) {
	if _, err := New().Encode(adapterstest.RefundRequest(1, refundIDs, true), "nobody"); err == nil {
		t.Error("unknown provider accepted")
	}
	req := adapterstest.RefundRequest(1, refundIDs, true)
	req.History = adapters.HistoryPreviousResponse
	if _, err := New().Encode(req, adapters.ProviderAnthropic); err == nil {
		t.Error("previous-response-id accepted")
	}
}
