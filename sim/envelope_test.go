package sim_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/sim"
)

// These tests send raw requests, as curl would, and assert the raw answer.

// raw is one HTTP exchange.
type raw struct {
	status int
	header http.Header
	body   string
}

func do(t *testing.T, method, url string, header map[string]string, body string) raw {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return raw{resp.StatusCode, resp.Header, string(b)}
}

// sseData are the data payloads of an SSE body, with their event names.
func sseData(body string) (names, data []string) {
	for _, block := range strings.Split(strings.ReplaceAll(body, "\r\n", "\n"), "\n\n") {
		name := ""
		for _, line := range strings.Split(block, "\n") {
			if v, ok := strings.CutPrefix(line, "event: "); ok {
				name = v
			}
			if v, ok := strings.CutPrefix(line, "data: "); ok {
				names, data = append(names, name), append(data, v)
			}
		}
	}
	return names, data
}

const orderLineTool = `{"type":"function","name":"get_order_line","description":"order line","parameters":{"type":"object","properties":{"order_id":{"type":"string"},"line_id":{"type":"string"}},"required":["order_id","line_id"],"additionalProperties":false},"strict":true}`

// responsesBody is a first request with every echoed setting given, pretty
// printed (the echo must still fit on one data line).
func responsesBody(stream bool) string {
	v := map[string]any{
		"model": "refund-model", "input": "请核查订单 O-2048 第 L1 行的 150 元退款申请。", "instructions": "只读核查。",
		"tools": []json.RawMessage{json.RawMessage(orderLineTool)}, "tool_choice": "auto", "parallel_tool_calls": false,
		"max_output_tokens": 800, "store": false, "metadata": map[string]string{"case": "refund"},
		"text":   map[string]any{"format": map[string]any{"type": "json_schema", "name": "refund_assessment", "schema": map[string]any{"type": "object"}, "strict": true}},
		"stream": stream,
	}
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}

// checkEcho asserts a Response object repeats the request's settings.
func checkEcho(t *testing.T, where string, obj map[string]json.RawMessage) {
	t.Helper()
	want := map[string]string{
		"instructions": `"只读核查。"`, "tool_choice": `"auto"`, "parallel_tool_calls": "false", "max_output_tokens": "800",
		"store": "false", "metadata": `{"case":"refund"}`, "tools": "[" + orderLineTool + "]",
		"text": `{"format":{"name":"refund_assessment","schema":{"type":"object"},"strict":true,"type":"json_schema"},"verbosity":"medium"}`,
	}
	for k, w := range want {
		if got := compactJSON(obj[k]); got != compactJSON(json.RawMessage(w)) {
			t.Errorf("%s: %s = %s, want %s", where, k, got, w)
		}
	}
}

func compactJSON(b json.RawMessage) string {
	var v any
	if json.Unmarshal(b, &v) != nil {
		return string(b)
	}
	out, _ := json.Marshal(v)
	return string(out)
}

// The Response object echoes tools, tool_choice, text,
// parallel_tool_calls, max_output_tokens, instructions, store and
// metadata, in the body and in the stream's created, in_progress and
// completed events; function_call_arguments.done names its function; and
// created_at is the time of the request.
func TestResponsesEnvelopeEchoesTheRequest(t *testing.T) {
	base := start(t, "", sim.Options{})
	before := time.Now().Unix()
	r := do(t, "POST", base+"/v1/responses", map[string]string{"Content-Type": "application/json"}, responsesBody(false))
	after := time.Now().Unix()
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(r.body), &obj); err != nil {
		t.Fatal(err)
	}
	checkEcho(t, "body", obj)
	var created int64
	_ = json.Unmarshal(obj["created_at"], &created)
	if created < before || created > after {
		t.Errorf("created_at %d, not the time of the request (%d..%d)", created, before, after)
	}

	r = do(t, "POST", base+"/v1/responses", map[string]string{"Content-Type": "application/json"}, responsesBody(true))
	names, data := sseData(r.body)
	seen := map[string]bool{}
	for i, name := range names {
		var ev struct {
			Response map[string]json.RawMessage `json:"response"`
			Name     string                     `json:"name"`
		}
		if err := json.Unmarshal([]byte(data[i]), &ev); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		switch name {
		case "response.created", "response.in_progress", "response.completed":
			checkEcho(t, name, ev.Response)
			seen[name] = true
		case "response.function_call_arguments.done":
			if ev.Name != "get_order_line" {
				t.Errorf("arguments.done names %q: %s", ev.Name, data[i])
			}
			seen[name] = true
		}
	}
	if len(seen) != 4 {
		t.Fatalf("events seen %v in %s", seen, r.body)
	}
}

// Chat Completions' created is the time of the request.
func TestChatCreatedIsNow(t *testing.T) {
	base := start(t, "", sim.Options{})
	before := time.Now().Unix()
	r := do(t, "POST", base+"/v1/chat/completions", nil, `{"model":"refund-model","messages":[{"role":"user","content":"核查订单 O-2048 第 L1 行的 150 元退款申请"}]}`)
	after := time.Now().Unix()
	var body struct{ Created int64 }
	if err := json.Unmarshal([]byte(r.body), &body); err != nil || r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	if body.Created < before || body.Created > after {
		t.Errorf("created %d, not the time of the request (%d..%d)", body.Created, before, after)
	}
}

const geminiBody = `{"contents":[{"role":"user","parts":[{"text":"请核查订单 O-2048 第 L1 行的 150 元退款申请。"}]}],"tools":[{"functionDeclarations":[{"name":"get_order_line","parameters":{"type":"OBJECT","properties":{"order_id":{"type":"STRING"},"line_id":{"type":"STRING"}}}}]}]}`

// streamGenerateContent without alt=sse answers one JSON array of the
// chunks; with alt=sse, SSE.
func TestGeminiStreamWithoutSSEIsOneArray(t *testing.T) {
	base := start(t, "", sim.Options{})
	r := do(t, "POST", base+"/v1beta/models/refund-model:streamGenerateContent", nil, geminiBody)
	if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
		t.Fatalf("%d %s: %s", r.status, r.header.Get("Content-Type"), r.body)
	}
	var chunks []struct {
		Candidates []struct {
			Content struct {
				Parts []struct {
					FunctionCall *struct{ Name string } `json:"functionCall"`
				}
			}
			FinishReason string
		}
		ResponseID string `json:"responseId"`
	}
	if err := json.Unmarshal([]byte(r.body), &chunks); err != nil {
		t.Fatalf("not one JSON array: %v\n%s", err, r.body)
	}
	if len(chunks) < 2 || chunks[len(chunks)-1].Candidates[0].FinishReason != "STOP" || chunks[0].ResponseID == "" {
		t.Fatalf("chunks %+v", chunks)
	}
	call := ""
	for _, c := range chunks {
		for _, p := range c.Candidates[0].Content.Parts {
			if p.FunctionCall != nil {
				call = p.FunctionCall.Name
			}
		}
	}
	if call != "get_order_line" {
		t.Errorf("no get_order_line call in %s", r.body)
	}

	r = do(t, "POST", base+"/v1beta/models/refund-model:streamGenerateContent?alt=sse", nil, geminiBody)
	if _, data := sseData(r.body); !strings.HasPrefix(r.header.Get("Content-Type"), "text/event-stream") || len(data) != len(chunks) {
		t.Fatalf("alt=sse: %s, %d chunks, want %d", r.header.Get("Content-Type"), len(data), len(chunks))
	}
}

// GET on each provider's models path lists the scenario's model in that
// provider's shape, and gets it by name.
func TestModelsList(t *testing.T) {
	base := start(t, "", sim.Options{})
	cases := []struct {
		name, path string
		header     map[string]string
		want       string // the listed model, as a JSON path's value
		get        func(v map[string]any) any
	}{
		{"openai", "/v1/models", nil, "refund-model", func(v map[string]any) any {
			return v["object"].(string) + " " + first(v["data"])["id"].(string) + " " + first(v["data"])["owned_by"].(string)
		}},
		{"deepseek", "/models", nil, "refund-model", func(v map[string]any) any {
			return v["object"].(string) + " " + first(v["data"])["id"].(string) + " " + first(v["data"])["owned_by"].(string)
		}},
		{"anthropic", "/v1/models", map[string]string{"anthropic-version": "2023-06-01"}, "refund-model", func(v map[string]any) any {
			return first(v["data"])["type"].(string) + " " + first(v["data"])["id"].(string) + " " + v["first_id"].(string)
		}},
		{"gemini", "/v1beta/models", nil, "refund-model", func(v map[string]any) any { return first(v["models"])["name"] }},
	}
	want := map[string]string{
		"openai": "list refund-model system", "deepseek": "list refund-model deepseek",
		"anthropic": "model refund-model refund-model", "gemini": "models/refund-model",
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := do(t, "GET", base+c.path, c.header, "")
			var v map[string]any
			if err := json.Unmarshal([]byte(r.body), &v); err != nil || r.status != 200 {
				t.Fatalf("%d %s", r.status, r.body)
			}
			if got := c.get(v); got != want[c.name] {
				t.Errorf("got %v, want %s in %s", got, want[c.name], r.body)
			}
			if r := do(t, "GET", base+c.path+"/"+c.want, c.header, ""); r.status != 200 || !strings.Contains(r.body, c.want) {
				t.Errorf("get one: %d %s", r.status, r.body)
			}
			if r := do(t, "GET", base+c.path+"/no-such-model", c.header, ""); r.status != 404 {
				t.Errorf("get unknown: %d %s", r.status, r.body)
			}
		})
	}
}

func first(v any) map[string]any {
	list, _ := v.([]any)
	if len(list) == 0 {
		return map[string]any{}
	}
	m, _ := list[0].(map[string]any)
	return m
}

// An unknown top-level member gets each provider's own 400; DeepSeek, whose
// parser skips unknown members, answers.
func TestUnknownParameters(t *testing.T) {
	base := start(t, "", sim.Options{})
	anth := map[string]string{"anthropic-version": "2023-06-01"}
	cases := []struct {
		name, path string
		header     map[string]string
		body       string
		status     int
		want       string
	}{
		{"responses", "/v1/responses", nil, `{"model":"refund-model","input":"hi","foo":1}`, 400, `"message": "Unknown parameter: 'foo'."`},
		{"chat", "/v1/chat/completions", nil, `{"model":"refund-model","messages":[{"role":"user","content":"hi"}],"thinking":{"type":"enabled"}}`, 400,
			`"message": "Unrecognized request argument supplied: thinking"`},
		{"anthropic", "/v1/messages", anth, `{"model":"refund-model","max_tokens":100,"messages":[{"role":"user","content":"hi"}],"response_format":{}}`, 400,
			`{"type":"invalid_request_error","message":"response_format: Extra inputs are not permitted"}`},
		{"gemini", "/v1beta/models/refund-model:generateContent", nil, `{"contents":[{"parts":[{"text":"hi"}]}],"foo":1}`, 400, `Unknown name \"foo\": Cannot find field.`},
		{"deepseek", "/chat/completions", nil, `{"model":"refund-model","messages":[{"role":"user","content":"hi"}],"foo":1}`, 200, `"chat.completion"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := do(t, "POST", base+c.path, c.header, c.body)
			if r.status != c.status || !strings.Contains(r.body, c.want) {
				t.Fatalf("%d %s\nwant %d with %s", r.status, r.body, c.status, c.want)
			}
		})
	}
}

// With RequireKey, a missing or wrong key gets the provider's own answer
// (with no part of the key in it), the expected key passes, and a
// protocol with no expected key takes any key.
func TestRequireKey(t *testing.T) {
	base := start(t, "", sim.Options{RequireKey: true, Keys: map[string]string{
		adapters.OpenAIResponses: "sk-right", adapters.OpenAIChat: "sk-right", adapters.AnthropicMessages: "sk-ant-right",
		adapters.DeepSeekChat: "sk-ds-right", adapters.Gemini: "AIza-right", adapters.GeminiInteractions: "AIza-right",
	}})
	anth := func(k string) map[string]string {
		h := map[string]string{"anthropic-version": "2023-06-01"}
		if k != "" {
			h["x-api-key"] = k
		}
		return h
	}
	bearer := func(k string) map[string]string {
		if k == "" {
			return nil
		}
		return map[string]string{"Authorization": "Bearer " + k}
	}
	goog := func(k string) map[string]string {
		if k == "" {
			return nil
		}
		return map[string]string{"x-goog-api-key": k}
	}
	chat := `{"model":"refund-model","messages":[{"role":"user","content":"hi"}]}`
	cases := []struct {
		name, path, body, right string
		header                  func(string) map[string]string
		missing, wrong          int
		missingText, wrongText  string
	}{
		{"responses", "/v1/responses", `{"model":"refund-model","input":"hi"}`, "sk-right", bearer, 401, 401, "You didn't provide an API key.", `"code": "invalid_api_key"`},
		{"chat", "/v1/chat/completions", chat, "sk-right", bearer, 401, 401, "You didn't provide an API key.", "Incorrect API key provided: *********. You can find"},
		{"deepseek", "/chat/completions", chat, "sk-ds-right", bearer, 401, 401, "Authentication Fails (auth header format should be Bearer sk-...)", `"type":"authentication_error"`},
		{"anthropic", "/v1/messages", `{"model":"refund-model","max_tokens":100,"messages":[{"role":"user","content":"hi"}]}`, "sk-ant-right", anth, 401, 401,
			"x-api-key header is required", `"message":"invalid x-api-key"`},
		{"gemini", "/v1beta/models/refund-model:generateContent", geminiBody, "AIza-right", goog, 403, 400, "PERMISSION_DENIED", "API_KEY_INVALID"},
		// issue 29: Interactions reads x-goog-api-key, and the count
		// endpoints are no way around the key.
		{"interactions", "/v1beta/interactions", `{"model":"refund-model","input":"hi"}`, "AIza-right", goog, 403, 401, "unregistered callers", "API key not valid"},
		{"anthropic count", "/v1/messages/count_tokens", `{"model":"refund-model","messages":[{"role":"user","content":"hi"}]}`, "sk-ant-right", anth, 401, 401,
			"x-api-key header is required", `"message":"invalid x-api-key"`},
		{"gemini count", "/v1beta/models/refund-model:countTokens", geminiBody, "AIza-right", goog, 403, 400, "PERMISSION_DENIED", "API_KEY_INVALID"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if r := do(t, "POST", base+c.path, c.header(""), c.body); r.status != c.missing || !strings.Contains(r.body, c.missingText) {
				t.Errorf("missing: %d %s", r.status, r.body)
			}
			r := do(t, "POST", base+c.path, c.header("wrong-key"), c.body)
			if r.status != c.wrong || !strings.Contains(r.body, c.wrongText) || strings.Contains(r.body, "wrong") {
				t.Errorf("wrong: %d %s", r.status, r.body)
			}
			if r := do(t, "POST", base+c.path, c.header(c.right), c.body); r.status != 200 {
				t.Errorf("right: %d %s", r.status, r.body)
			}
		})
	}
	t.Run("interactions ignores a bearer token", func(t *testing.T) {
		if r := do(t, "POST", base+"/v1beta/interactions", bearer("wrong-key"), `{"model":"refund-model","input":"hi"}`); r.status != 403 {
			t.Errorf("bearer: %d %s", r.status, r.body)
		}
	})
	t.Run("query key and models", func(t *testing.T) {
		if r := do(t, "GET", base+"/v1beta/models?key=AIza-right", nil, ""); r.status != 200 {
			t.Errorf("?key=: %d %s", r.status, r.body)
		}
		if r := do(t, "GET", base+"/v1/models", nil, ""); r.status != 401 {
			t.Errorf("models without a key: %d %s", r.status, r.body)
		}
	})
	t.Run("any key when none is expected", func(t *testing.T) {
		base := start(t, "", sim.Options{RequireKey: true})
		if r := do(t, "POST", base+"/v1/chat/completions", bearer("anything"), chat); r.status != 200 {
			t.Errorf("any key: %d %s", r.status, r.body)
		}
		if r := do(t, "POST", base+"/v1/chat/completions", nil, chat); r.status != 401 {
			t.Errorf("no key: %d %s", r.status, r.body)
		}
	})
}
