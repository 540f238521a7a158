package openairesponses

import (
	"reflect"
	"testing"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/adapterstest"
)

// The refund request as this package encodes it: CheckRequest reads the
// rules (a system message), the skill (a developer message), the task
// and the context material (user text parts) in order and decoded, the
// tools as declared and text.format; not the earlier turns' calls,
// results or assistant text.
func TestCheckRequestReadsPromptToolsOutput(t *testing.T) {
	adapterstest.CheckRefundReads(t, adapterstest.Reading{Protocol: New(), Provider: adapters.ProviderSim, Sim: simP, IDs: refundRequestIDs(), Strict: true},
		adapterstest.RulesAndSkill(adapters.RoleDeveloper),
		adapters.OutputContract{Mode: adapters.OutputJSONSchema, Name: "refund_assessment", Schema: adapterstest.RefundSchema(), Strict: true},
		func(_ bool, _ *adapters.Request, in *adapters.Inbound) {
			if len(in.Results) != 3 {
				t.Errorf("%d results", len(in.Results))
			}
		})

	// Chained on a stored response, the request carries no prompt of its
	// own (only the last results).
	req := adapterstest.RefundRequest(3, refundRequestIDs(), false)
	req.Output = adapters.OutputContract{}
	req.History = adapters.HistoryPreviousResponse
	hr, err := New().Encode(req, adapters.ProviderSim)
	if err != nil {
		t.Fatal(err)
	}
	in := adapterstest.Check(t, simP, hr)
	if len(in.Prompt) != 0 || in.PreviousResponseID == "" {
		t.Errorf("chained: prompt %+v", in.Prompt)
	}
}

// The API's other forms: instructions and input as strings; instructions
// as a list; typed messages with input_text parts beside images; an
// assistant message; tools without description or strict beside hosted
// tools; json_object and text formats.
func TestCheckRequestReadsOtherForms(t *testing.T) {
	sys := adapters.RoleSystem
	adapterstest.CheckForms(t, simP, "/v1/responses", nil, true, []adapterstest.Form{{
		Name:   "strings",
		Body:   `{"model":"gpt-5","instructions":"规则：\n\"只读\"","input":"任务 \u4e2d\u6587 \\ end","text":{"format":{"type":"json_object"}}}`,
		Prompt: []adapters.PromptPart{{Role: sys, Text: "规则：\n\"只读\""}, {Role: adapters.RoleUser, Text: "任务 中文 \\ end"}},
		Output: adapters.OutputContract{Mode: adapters.OutputJSON},
	}, {
		Name: "items",
		Body: `{"model":"gpt-5","instructions":[{"role":"developer","content":"d1"},{"type":"message","role":"system","content":[{"type":"input_text","text":"s1"}]}],
			"input":[{"type":"message","role":"developer","content":[{"type":"input_text","text":"d2"},{"type":"input_image","image_url":"https://x/y.png"},"oops",{"type":"input_text"},{"type":"input_text","text":"d3"}]},
			{"role":"user","content":[{"type":"input_text","text":"u1"}]},
			{"type":"message","role":"assistant","content":[{"type":"output_text","text":"a1","annotations":[]}]},
			{"type":"function_call","call_id":"call_1","name":"f","arguments":"{}"},
			{"type":"function_call_output","call_id":"call_1","output":"r1"},
			{"role":"system","content":"s2"}],
			"tools":[{"type":"web_search"},{"type":"function","name":"f","parameters":{"type":"object"},"strict":null},{"type":"function","name":"g","description":"G","strict":false}],
			"text":{"format":{"type":"text"}}}`,
		Prompt: []adapters.PromptPart{{Role: adapters.RoleDeveloper, Text: "d1"}, {Role: sys, Text: "s1"}, {Role: adapters.RoleDeveloper, Text: "d2"},
			{Role: adapters.RoleDeveloper, Text: "d3"}, {Role: adapters.RoleUser, Text: "u1"}, {Role: sys, Text: "s2"}},
		Tools: []adapters.Tool{{Name: "f", Parameters: []byte(`{"type":"object"}`)}, {Name: "g", Description: "G"}},
	}, {
		Name:   "schema without strict",
		Body:   `{"model":"gpt-5","input":"x","text":{"format":{"type":"json_schema","name":"n","schema":{"type":"object","properties":{}}}}}`,
		Prompt: []adapters.PromptPart{{Role: adapters.RoleUser, Text: "x"}},
		Output: adapters.OutputContract{Mode: adapters.OutputJSONSchema, Name: "n", Schema: []byte(`{"type":"object","properties":{}}`)},
	}})
}

// BenchmarkCheckRequest: the refund case's last request (its full
// history), checked as the simulator checks every request.
//
//	go test ./adapters/openairesponses -run '^$' -bench CheckRequest -benchmem
func BenchmarkCheckRequest(b *testing.B) {
	hr, err := New().Encode(adapterstest.RefundRequest(3, refundRequestIDs(), true), adapters.ProviderSim)
	if err != nil {
		b.Fatal(err)
	}
	adapterstest.BenchCheckRequest(b, simP, hr)
}

// Top-level instructions are not carried over by previous_response_id;
// an input message of role system is: only the first is Once.
func TestInstructionsAreOnce(t *testing.T) {
	in := adapterstest.Check(t, simP, &adapters.HTTPRequest{Method: "POST", Path: "/v1/responses", Headers: map[string]string{"content-type": "application/json"},
		Body: []byte(`{"model":"m","instructions":"rules","input":[{"role":"system","content":"carried"},{"role":"user","content":"task"}]}`)})
	want := []adapters.PromptPart{{Role: adapters.RoleSystem, Text: "rules", Once: true}, {Role: adapters.RoleSystem, Text: "carried"}, {Role: adapters.RoleUser, Text: "task"}}
	if !reflect.DeepEqual(in.Prompt, want) {
		t.Errorf("prompt %+v, want %+v", in.Prompt, want)
	}
}
