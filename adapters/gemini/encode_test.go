package gemini

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/adapterstest"
)

// syntheticIDs gives the refund history the call ids this decoder makes up
// for Gemini calls without an id.
var syntheticIDs = adapterstest.IDs{Call: func(_, i int) string { return SyntheticCallIDPrefix + strconv.Itoa(i) }}

// providerIDs gives the history ids as Gemini 3 may send them.
var providerIDs = adapterstest.IDs{Call: func(turn, i int) string { return fmt.Sprintf("fc-t%d-%d", turn, i) }}

// refundRequest is the refund request at turn, with the model turns of the
// history replaced by what this decoder made of the captures, so that the
// thought signatures travel back as they came. The captures were recorded
// from an earlier version of the case (get_refund_policy took a
// policy_id); each call keeps the case's arguments, so the history answers
// the tools it is sent with.
func refundRequest(t *testing.T, turn int, stream bool) *adapters.Request {
	t.Helper()
	req := adapterstest.RefundRequest(turn, syntheticIDs, stream)
	for i := range req.Turns {
		st := adapters.NewStream(New())
		st.FeedBody(adapterstest.ReadCapture(t, fmt.Sprintf("refund_turn%d.body.json", i+1)))
		decoded := st.Reducer().Turn()
		calls := [][]adapterstest.RefundCall{adapterstest.RefundTurn1, adapterstest.RefundTurn2}[i]
		if len(decoded.Items) != len(calls) {
			t.Fatalf("refund_turn%d.body.json: %d items, want %d calls", i+1, len(decoded.Items), len(calls))
		}
		for j, c := range calls {
			if decoded.Items[j].Kind != adapters.KindToolCall || decoded.Items[j].Name != c.Name {
				t.Fatalf("refund_turn%d.body.json: item %d is %s %s, want the call %s", i+1, j, decoded.Items[j].Kind, decoded.Items[j].Name, c.Name)
			}
			decoded.Items[j].Arguments = json.RawMessage(c.Arguments)
		}
		req.Turns[i].ResponseID = decoded.ResponseID
		req.Turns[i].Items = decoded.Items
	}
	return req
}

func encode(t *testing.T, req *adapters.Request) (*adapters.HTTPRequest, map[string]any) {
	t.Helper()
	hr, err := New().Encode(req, adapters.ProviderGemini)
	if err != nil {
		t.Fatal(err)
	}
	var b map[string]any
	if err := json.Unmarshal(hr.Body, &b); err != nil {
		t.Fatalf("body is not JSON: %v\n%s", err, hr.Body)
	}
	return hr, b
}

// at walks a decoded body by a map path such as
// `contents[0].parts[2].text` or `tools[0].functionDeclarations[1]`.
func at(t *testing.T, v any, path string) any {
	t.Helper()
	seg := regexp.MustCompile(`^([A-Za-z]+)((?:\[\d+\])*)$`)
	idx := regexp.MustCompile(`\[(\d+)\]`)
	for _, p := range strings.Split(path, ".") {
		m := seg.FindStringSubmatch(p)
		if m == nil {
			t.Fatalf("bad path segment %q in %s", p, path)
		}
		obj, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("%s: %q is not in an object", path, m[1])
		}
		if v, ok = obj[m[1]]; !ok {
			t.Fatalf("%s: no field %q", path, m[1])
		}
		for _, im := range idx.FindAllStringSubmatch(m[2], -1) {
			i, _ := strconv.Atoi(im[1])
			arr, ok := v.([]any)
			if !ok || i >= len(arr) {
				t.Fatalf("%s: index %d out of range", path, i)
			}
			v = arr[i]
		}
	}
	return v
}

func jsonEqual(t *testing.T, what string, got any, want string) {
	t.Helper()
	g, _ := json.Marshal(got)
	var a, b any
	if err := json.Unmarshal(g, &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(want), &b); err != nil {
		t.Fatal(err)
	}
	ga, _ := json.Marshal(a)
	gb, _ := json.Marshal(b)
	if !bytes.Equal(ga, gb) {
		t.Fatalf("%s = %s, want %s", what, ga, gb)
	}
}

func TestEncodeRefundGoldens(t *testing.T) {
	for turn := 1; turn <= 3; turn++ {
		for _, stream := range []bool{true, false} {
			name := fmt.Sprintf("encode_turn%d", turn)
			if !stream {
				name += "_nostream"
			}
			t.Run(name, func(t *testing.T) {
				hr, _ := encode(t, refundRequest(t, turn, stream))
				adapterstest.Golden(t, name, hr)
			})
		}
	}
}

// TestEncodeRefundShape checks the documented shape field by field.
func TestEncodeRefundShape(t *testing.T) {
	hr, b := encode(t, refundRequest(t, 1, true))
	if hr.Method != "POST" || hr.Path != "/v1beta/models/refund-model:streamGenerateContent?alt=sse" {
		t.Fatalf("%s %s", hr.Method, hr.Path)
	}
	if len(hr.Headers) != 1 || hr.Headers["Content-Type"] != "application/json" {
		t.Fatalf("headers = %v (the session adds x-goog-api-key)", hr.Headers)
	}
	// Body keys in the order of the REST reference.
	var keys []string
	dec := json.NewDecoder(bytes.NewReader(hr.Body))
	dec.Token()
	for dec.More() {
		k, _ := dec.Token()
		keys = append(keys, k.(string))
		var skip json.RawMessage
		dec.Decode(&skip)
	}
	if strings.Join(keys, ",") != "contents,tools,toolConfig,systemInstruction,generationConfig" {
		t.Fatalf("body keys = %v", keys)
	}

	src := adapterstest.RefundSources()
	// systemInstruction: the rules, then the skill (no developer role).
	if at(t, b, "systemInstruction.parts[0].text") != src[0].Text || at(t, b, "systemInstruction.parts[1].text") != src[1].Text {
		t.Fatal("systemInstruction does not hold the rules then the skill")
	}
	if n := len(at(t, b, "systemInstruction.parts").([]any)); n != 2 {
		t.Fatalf("systemInstruction has %d parts; the schema travels natively", n)
	}
	// The first user content: one part per user-side source, in order.
	if at(t, b, "contents[0].role") != "user" || len(b["contents"].([]any)) != 1 {
		t.Fatalf("contents = %v", b["contents"])
	}
	for i, s := range src[2:] {
		if got := at(t, b, fmt.Sprintf("contents[0].parts[%d].text", i)); got != adapters.SourceText(s) {
			t.Fatalf("part %d = %q, want %q", i, got, adapters.SourceText(s))
		}
	}
	// Context sources carry their own tags (the chapter's 13.6.3) and go
	// verbatim, the package note first.
	if !strings.HasPrefix(at(t, b, "contents[0].parts[1].text").(string), `<context_package task_time="2026-10-20T10:00:00+08:00">`) ||
		!strings.HasPrefix(at(t, b, "contents[0].parts[2].text").(string), `<knowledge_context source="merchant-kb" document_id="KB-guide-9"`) {
		t.Fatal("context material is not sent as tagged")
	}
	// Tools: full JSON Schema in parametersJsonSchema, no strict flag.
	for i, tool := range adapterstest.RefundTools() {
		d := at(t, b, fmt.Sprintf("tools[0].functionDeclarations[%d]", i)).(map[string]any)
		if d["name"] != tool.Name || d["description"] != tool.Description {
			t.Fatalf("declaration %d = %v", i, d)
		}
		jsonEqual(t, "parametersJsonSchema", d["parametersJsonSchema"], string(tool.Parameters))
		if _, ok := d["parameters"]; ok {
			t.Fatal("parameters (OpenAPI subset) must not be sent")
		}
	}
	if bytes.Contains(hr.Body, []byte(`"strict"`)) {
		t.Fatal("gemini has no strict flag")
	}
	jsonEqual(t, "toolConfig", b["toolConfig"], `{"functionCallingConfig":{"mode":"AUTO"}}`)
	// generationConfig: max tokens and the schema as responseJsonSchema.
	gc := b["generationConfig"].(map[string]any)
	if gc["maxOutputTokens"] != 1800.0 || gc["responseMimeType"] != "application/json" {
		t.Fatalf("generationConfig = %v", gc)
	}
	jsonEqual(t, "responseJsonSchema", gc["responseJsonSchema"], string(adapterstest.RefundSchema()))
	if _, ok := gc["responseSchema"]; ok {
		t.Fatal("responseSchema (OpenAPI subset) must not be sent")
	}
	if _, ok := gc["thinkingConfig"]; ok {
		t.Fatal("no reasoning was asked")
	}
	// Degradations: the skill, strict, and parallel_tool_calls.
	d := strings.Join(hr.Degradations, "\n")
	for _, want := range []string{"skill:refund_assessment@1.2", "strict", "parallel"} {
		if !strings.Contains(d, want) {
			t.Fatalf("degradations %q lack %q", hr.Degradations, want)
		}
	}
}

// TestEncodeMapResolves walks the body by every map path.
func TestEncodeMapResolves(t *testing.T) {
	for turn := 1; turn <= 3; turn++ {
		hr, b := encode(t, refundRequest(t, turn, true))
		bySource := map[string]adapters.Source{}
		for _, s := range adapterstest.RefundSources() {
			bySource[s.ID] = s
		}
		tools := map[string]adapters.Tool{}
		for _, tl := range adapterstest.RefundTools() {
			tools[tl.Name] = tl
		}
		seen := map[string]bool{}
		for _, m := range hr.Map {
			seen[m.Source] = true
			v := at(t, b, m.Field)
			switch {
			case m.Source == "output_schema":
				jsonEqual(t, m.Field, v, string(adapterstest.RefundSchema()))
				if m.Trust != adapters.TrustTrusted || m.Note == "" {
					t.Fatalf("output_schema mapping %+v", m)
				}
			case strings.HasPrefix(m.Source, "tool:"):
				name := strings.TrimPrefix(m.Source, "tool:")
				if v.(map[string]any)["name"] != name || m.Trust != adapters.TrustTrusted {
					t.Fatalf("%s → %s holds %v", m.Source, m.Field, v)
				}
				jsonEqual(t, m.Field, v.(map[string]any)["parametersJsonSchema"], string(tools[name].Parameters))
			case strings.HasPrefix(m.Source, "history:turn"):
				// A carried call or its response: the part with its id
				// (its name where it has none).
				delete(seen, m.Source)
				p, _ := v.(map[string]any)
				var it map[string]any
				kind := "functionCall"
				if c, ok := p["functionCall"].(map[string]any); ok {
					it = c
				} else {
					it, _ = p["functionResponse"].(map[string]any)
					kind = "functionResponse"
				}
				id, _ := it["id"].(string)
				if id == "" {
					id, _ = it["name"].(string)
				}
				if id == "" || !strings.HasSuffix(m.Source, " "+id) || m.Trust != adapters.TrustVerified || !strings.HasPrefix(m.Note, kind+" ") {
					t.Fatalf("%s → %s holds %v (note %q)", m.Source, m.Field, v, m.Note)
				}
			default:
				s, ok := bySource[m.Source]
				if !ok {
					t.Fatalf("map names unknown source %q", m.Source)
				}
				if v != adapters.SourceText(s) || m.Trust != s.Trust {
					t.Fatalf("%s → %s holds %q (trust %s)", m.Source, m.Field, v, m.Trust)
				}
				if s.Role == adapters.RoleDeveloper && m.Note == "" {
					t.Fatal("the skill's degradation has no note")
				}
			}
		}
		if len(seen) != len(bySource)+len(tools)+1 {
			t.Fatalf("map covers %d sources, want %d", len(seen), len(bySource)+len(tools)+1)
		}
	}
}

// TestEncodeHistory: turn 3 replays both model turns verbatim (with their
// thought signatures) and answers the calls by call_id, in call order.
func TestEncodeHistory(t *testing.T) {
	req := refundRequest(t, 3, true)
	// Results fed back in the reverse order still land in call order.
	r := req.Turns[1].Results
	r[0], r[1] = r[1], r[0]
	_, b := encode(t, req)
	contents := b["contents"].([]any)
	if len(contents) != 5 {
		t.Fatalf("%d contents, want user, model, user, model, user", len(contents))
	}
	for i, role := range []string{"user", "model", "user", "model", "user"} {
		if at(t, b, fmt.Sprintf("contents[%d].role", i)) != role {
			t.Fatalf("contents[%d].role = %v", i, at(t, b, fmt.Sprintf("contents[%d].role", i)))
		}
	}
	sig1 := sigOf(t, "refund_turn1.body.json", 0)
	sig2 := sigOf(t, "refund_turn2.body.json", 0)
	jsonEqual(t, "contents[1]", contents[1], `{"role":"model","parts":[{"functionCall":{"name":"get_order_line","args":{"order_id":"O-2048","line_id":"L1"}},"thoughtSignature":"`+sig1+`"}]}`)
	jsonEqual(t, "contents[2]", contents[2], `{"role":"user","parts":[{"functionResponse":{"name":"get_order_line","response":{"output":`+adapterstest.RefundTurn1[0].Result+`}}}]}`)
	jsonEqual(t, "contents[3]", contents[3], `{"role":"model","parts":[`+
		`{"functionCall":{"name":"get_refund_ledger","args":{"order_id":"O-2048","line_id":"L1"}},"thoughtSignature":"`+sig2+`"},`+
		`{"functionCall":{"name":"get_refund_policy","args":{"category":"headphones","received_at":"2026-10-15T12:00:00+08:00","reason":"quality_issue"}}}]}`)
	jsonEqual(t, "contents[4]", contents[4], `{"role":"user","parts":[`+
		`{"functionResponse":{"name":"get_refund_ledger","response":{"output":`+adapterstest.RefundTurn2[0].Result+`}}},`+
		`{"functionResponse":{"name":"get_refund_policy","response":{"output":`+adapterstest.RefundTurn2[1].Result+`}}}]}`)
}

// sigOf reads the thoughtSignature of part i of a body capture.
func sigOf(t *testing.T, name string, i int) string {
	var body struct {
		Candidates []struct {
			Content struct {
				Parts []struct {
					ThoughtSignature string `json:"thoughtSignature"`
				} `json:"parts"`
			} `json:"content"`
		} `json:"candidates"`
	}
	if err := json.Unmarshal(adapterstest.ReadCapture(t, name), &body); err != nil {
		t.Fatal(err)
	}
	s := body.Candidates[0].Content.Parts[i].ThoughtSignature
	if s == "" {
		t.Fatalf("%s part %d has no signature", name, i)
	}
	return s
}

// TestEncodeProviderIDs: call ids the provider sent go back on both the
// functionCall and the functionResponse.
func TestEncodeProviderIDs(t *testing.T) {
	_, b := encode(t, adapterstest.RefundRequest(3, providerIDs, false))
	if at(t, b, "contents[1].parts[0].functionCall.id") != "fc-t1-0" || at(t, b, "contents[2].parts[0].functionResponse.id") != "fc-t1-0" {
		t.Fatal("turn 1 ids not replayed")
	}
	if at(t, b, "contents[3].parts[1].functionCall.id") != "fc-t2-1" || at(t, b, "contents[4].parts[1].functionResponse.id") != "fc-t2-1" {
		t.Fatal("turn 2 ids not replayed")
	}
	// With synthetic ids, no id at all.
	hr, _ := encode(t, adapterstest.RefundRequest(3, syntheticIDs, false))
	if bytes.Contains(hr.Body, []byte(`"id"`)) {
		t.Fatal("a made-up call id was sent")
	}
	if hr.Path != "/v1beta/models/refund-model:generateContent" {
		t.Fatalf("path %s", hr.Path)
	}
}

// TestEncodeReplaysTextAndThoughts: message and reasoning items come back
// as text parts (thought: true for reasoning) with their signatures.
func TestEncodeReplaysTextAndThoughts(t *testing.T) {
	st := adapters.NewStream(New())
	st.FeedBody(adapterstest.ReadCapture(t, "thinking.body.json"))
	req := adapterstest.RefundRequest(1, syntheticIDs, true)
	req.Turns = []adapters.Turn{st.Reducer().Turn()}
	_, b := encode(t, req)
	sig := sigOf(t, "thinking.body.json", 1)
	jsonEqual(t, "contents[1]", at(t, b, "contents[1]"), `{"role":"model","parts":[`+
		`{"text":"**Checking the cap**\n\nPaid 180, refunded 30, hold 20: the cap is 130.","thought":true},`+
		`{"text":"最多可退 130 元（13000 分）。","thoughtSignature":"`+sig+`"}]}`)
	if len(b["contents"].([]any)) != 2 {
		t.Fatal("a turn without calls needs no functionResponse content")
	}
}

func TestEncodeToolChoice(t *testing.T) {
	cases := []struct {
		choice adapters.ToolChoice
		want   string
	}{
		{adapters.ToolChoice{Mode: adapters.ToolChoiceAuto}, `{"functionCallingConfig":{"mode":"AUTO"}}`},
		{adapters.ToolChoice{}, `{"functionCallingConfig":{"mode":"AUTO"}}`},
		{adapters.ToolChoice{Mode: adapters.ToolChoiceNone}, `{"functionCallingConfig":{"mode":"NONE"}}`},
		{adapters.ToolChoice{Mode: adapters.ToolChoiceRequired}, `{"functionCallingConfig":{"mode":"ANY"}}`},
		{adapters.ToolChoice{Mode: adapters.ToolChoiceNamed, Name: "get_refund_policy"}, `{"functionCallingConfig":{"mode":"ANY","allowedFunctionNames":["get_refund_policy"]}}`},
	}
	for _, c := range cases {
		req := adapterstest.RefundRequest(1, syntheticIDs, true)
		req.Choice = c.choice
		_, b := encode(t, req)
		jsonEqual(t, "toolConfig for "+string(c.choice.Mode), b["toolConfig"], c.want)
	}
	req := adapterstest.RefundRequest(1, syntheticIDs, true)
	req.Tools = nil
	req.Choice = adapters.ToolChoice{Mode: adapters.ToolChoiceAuto}
	_, b := encode(t, req)
	if _, ok := b["toolConfig"]; ok {
		t.Fatal("toolConfig without tools")
	}
}

func TestEncodeLimits(t *testing.T) {
	temp := 0.2
	req := adapterstest.RefundRequest(1, syntheticIDs, true)
	req.Limits.Temperature = &temp
	req.Limits.Reasoning = "low"
	_, b := encode(t, req)
	gc := b["generationConfig"].(map[string]any)
	if gc["temperature"] != 0.2 {
		t.Fatalf("temperature = %v", gc["temperature"])
	}
	jsonEqual(t, "thinkingConfig", gc["thinkingConfig"], `{"includeThoughts":true,"thinkingBudget":1024}`)

	req.Model = "gemini-3-pro-preview"
	req.Limits.Reasoning = "high"
	_, b = encode(t, req)
	jsonEqual(t, "thinkingConfig", at(t, b, "generationConfig.thinkingConfig"), `{"includeThoughts":true,"thinkingLevel":"HIGH"}`)

	req.Limits.Reasoning = "extreme"
	if _, err := New().Encode(req, adapters.ProviderGemini); err == nil {
		t.Fatal("unknown reasoning effort accepted")
	}
}

func TestEncodeOutputModes(t *testing.T) {
	req := adapterstest.RefundRequest(1, syntheticIDs, true)
	req.Output = adapters.OutputContract{Mode: adapters.OutputJSON}
	req.Limits = adapters.Limits{}
	hr, b := encode(t, req)
	jsonEqual(t, "generationConfig", b["generationConfig"], `{"responseMimeType":"application/json"}`)
	found := false
	for _, m := range hr.Map {
		found = found || m.Source == "output_schema" && m.Field == "generationConfig.responseMimeType"
	}
	if !found {
		t.Fatal("json mode not mapped")
	}

	req.Output = adapters.OutputContract{Mode: adapters.OutputText}
	_, b = encode(t, req)
	if _, ok := b["generationConfig"]; ok {
		t.Fatal("generationConfig with nothing in it")
	}
}

func TestEncodeModelPath(t *testing.T) {
	req := adapterstest.RefundRequest(1, syntheticIDs, true)
	req.Model = "models/gemini-2.5-flash"
	hr, _ := encode(t, req)
	if hr.Path != "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse" {
		t.Fatalf("path %s", hr.Path)
	}
	req.Model = ""
	if _, err := New().Encode(req, adapters.ProviderGemini); err == nil {
		t.Fatal("no model accepted")
	}
}

func TestEncodeErrors(t *testing.T) {
	req := adapterstest.RefundRequest(2, syntheticIDs, true)
	req.Turns[0].Results = nil
	if _, err := New().Encode(req, adapters.ProviderGemini); err == nil || !strings.Contains(err.Error(), "has no tool result") {
		t.Fatalf("a call without result: %v", err)
	}
	req = adapterstest.RefundRequest(2, syntheticIDs, true)
	req.Turns[0].Results = append(req.Turns[0].Results, adapters.ToolResult{CallID: "stray", Content: "{}"})
	if _, err := New().Encode(req, adapters.ProviderGemini); err == nil || !strings.Contains(err.Error(), "stray") {
		t.Fatalf("a result without call: %v", err)
	}
	req = adapterstest.RefundRequest(1, syntheticIDs, true)
	if _, err := New().Encode(req, adapters.ProviderOpenAI); err == nil {
		t.Fatal("openai does not speak gemini")
	}
	req.Choice = adapters.ToolChoice{Mode: adapters.ToolChoiceNamed, Name: "missing"}
	if _, err := New().Encode(req, adapters.ProviderSim); err == nil {
		t.Fatal("a named tool that does not exist")
	}
}

// TestEncodeErrorResult: an error result travels under "error".
func TestEncodeErrorResult(t *testing.T) {
	req := adapterstest.RefundRequest(2, syntheticIDs, true)
	req.Turns[0].Results[0] = adapters.ToolResult{CallID: req.Turns[0].Results[0].CallID, Content: "order not found", IsError: true}
	_, b := encode(t, req)
	jsonEqual(t, "response", at(t, b, "contents[2].parts[0].functionResponse.response"), `{"error":"order not found"}`)
}
