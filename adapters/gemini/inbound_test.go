package gemini

import (
	"testing"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/adapterstest"
)

// The refund request as this package encodes it: CheckRequest reads
// systemInstruction's parts (the rules, then the skill, which has no
// developer role here) and the user contents' text parts in order and
// decoded, the function declarations and generationConfig's JSON schema;
// not the model contents or the function responses.
func TestCheckRequestReadsPromptToolsOutput(t *testing.T) {
	// Gemini has no strict flag, and its schemas no name.
	adapterstest.CheckRefundReads(t, adapterstest.Reading{Protocol: New(), Provider: adapters.ProviderGemini, Sim: simP, IDs: providerIDs},
		adapterstest.RulesAndSkill(adapters.RoleSystem),
		adapters.OutputContract{Mode: adapters.OutputJSONSchema, Schema: adapterstest.RefundSchema()}, nil)
}

// The API's other forms: snake_case names, systemInstruction.parts as one
// part (the API's curl examples write it so), a content without a role
// (user), thought and inline data parts, a model content's text, the
// OpenAPI-subset parameters and responseSchema, a bare JSON MIME type,
// and an enum schema (not JSON).
func TestCheckRequestReadsOtherForms(t *testing.T) {
	sys, user := adapters.RoleSystem, adapters.RoleUser
	schema := `{"type":"OBJECT","properties":{"a":{"type":"STRING"}}}`
	adapterstest.CheckForms(t, simP, "/v1beta/models/gemini-2.5-flash:generateContent", nil, false, []adapterstest.Form{{
		Name: "snake case and one part",
		Body: `{"system_instruction":{"parts":{"text":"规则\n\"只读\" \u4e2d"}},"contents":[{"parts":[{"text":"任务"}]}],
			"generation_config":{"response_mime_type":"application/json","response_json_schema":{"type":"object"}}}`,
		Prompt: []adapters.PromptPart{{Role: sys, Text: "规则\n\"只读\" 中"}, {Role: user, Text: "任务"}},
		Output: adapters.OutputContract{Mode: adapters.OutputJSONSchema, Schema: []byte(`{"type":"object"}`)},
	}, {
		Name: "parts",
		Body: `{"systemInstruction":{"role":"system","parts":[{"text":"s1"},{"text":"s2"}]},
			"contents":[{"role":"user","parts":[{"inlineData":{"mimeType":"image/png","data":"AAAA"}},{"text":"u1"},{"text":"t","thought":true}]},
			{"role":"model","parts":[{"text":"a1"},{"functionCall":{"name":"f","args":{}}}]},
			{"role":"user","parts":[{"functionResponse":{"name":"f","response":{"output":"r1"}}},{"text":"u2"}]}],
			"tools":[{"functionDeclarations":[{"name":"f","description":"F","parameters":` + schema + `}]},{"googleSearch":{}},{"functionDeclarations":[{"name":"g"}]}],
			"generationConfig":{"responseMimeType":"application/json","responseSchema":` + schema + `}}`,
		Prompt: []adapters.PromptPart{{Role: sys, Text: "s1"}, {Role: sys, Text: "s2"}, {Role: user, Text: "u1"}, {Role: user, Text: "u2"}},
		Tools:  []adapters.Tool{{Name: "f", Description: "F", Parameters: []byte(schema)}, {Name: "g"}},
		Output: adapters.OutputContract{Mode: adapters.OutputJSONSchema, Schema: []byte(schema)},
	}, {
		Name:   "JSON mode",
		Body:   `{"contents":[{"role":"user","parts":[{"text":"x"}]}],"generationConfig":{"responseMimeType":"application/json"}}`,
		Prompt: []adapters.PromptPart{{Role: user, Text: "x"}},
		Output: adapters.OutputContract{Mode: adapters.OutputJSON},
	}, {
		Name:   "enum",
		Body:   `{"contents":[{"role":"user","parts":[{"text":"x"}]}],"generationConfig":{"responseMimeType":"text/x.enum","responseSchema":{"type":"STRING","enum":["a","b"]}}}`,
		Prompt: []adapters.PromptPart{{Role: user, Text: "x"}},
	}})
}

// simGet matches a snake_case name in place: the same member simSnake's
// name finds.
func TestSimGetSnakeCase(t *testing.T) {
	for _, camel := range []string{"responseMimeType", "parts", "thoughtSignature", "a", "functionCallingConfig"} {
		for _, key := range []string{camel, simSnake(camel), simSnake(camel) + "x", "x" + simSnake(camel), "response_mime", "responsemimetype", ""} {
			if got, want := isSnakeOf(key, camel), key == simSnake(camel); got != want {
				t.Errorf("isSnakeOf(%q, %q) = %v, want %v", key, camel, got, want)
			}
		}
	}
}

// BenchmarkCheckRequest: the refund case's last request (its full
// history), checked as the simulator checks every request.
//
//	go test ./adapters/gemini -run '^$' -bench CheckRequest -benchmem
func BenchmarkCheckRequest(b *testing.B) {
	hr, err := New().Encode(adapterstest.RefundRequest(3, providerIDs, true), adapters.ProviderGemini)
	if err != nil {
		b.Fatal(err)
	}
	adapterstest.BenchCheckRequest(b, simP, hr)
}
