package geminiinteractions

import (
	"testing"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/adapterstest"
)

// The refund request as this package encodes it: CheckRequest reads
// system_instruction (the rules and the skill, joined into the one string
// the API takes) and the user_input step's text contents in order and
// decoded, the function tools and response_format; not the model steps or
// the function results.
func TestCheckRequestReadsPromptToolsOutput(t *testing.T) {
	system := func(req *adapters.Request) []adapters.PromptPart {
		return []adapters.PromptPart{{Role: adapters.RoleSystem,
			Text: adapterstest.SourceText(req, "system-rules") + "\n\n" + adapterstest.SourceText(req, "skill:refund_assessment@1.2")}}
	}
	// The API has no strict flag, and its schemas no name. The follow-up
	// is a user_input step after the results.
	adapterstest.CheckRefundReads(t, adapterstest.Reading{Protocol: New(), Provider: adapters.ProviderSim, Sim: sim, IDs: refundIDs}, system,
		adapters.OutputContract{Mode: adapters.OutputJSONSchema, Schema: adapterstest.RefundSchema()},
		func(chatter bool, req *adapters.Request, _ *adapters.Inbound) {
			// Chained, the user's words live on the server; the settings
			// are sent again.
			req.History = adapters.HistoryPreviousResponse
			hr, err := New().Encode(req, adapters.ProviderSim)
			if err != nil {
				t.Fatal(err)
			}
			in := adapterstest.Check(t, sim, hr)
			want := system(req)
			if chatter {
				want = append(want, adapters.PromptPart{Role: adapters.RoleUser, Text: adapterstest.FollowUp})
			}
			adapterstest.CheckPrompt(t, in, want)
			adapterstest.CheckToolDefs(t, in, adapterstest.RefundTools(), false)
		})
}

// The API's other forms: input as a string, as one content, as a list of
// contents; a user_input step with a string content and contents that
// are not text; tools that are not functions; response_format as a list,
// without a schema, and the form it replaced (response_mime_type with the
// schema as response_format).
func TestCheckRequestReadsOtherForms(t *testing.T) {
	sys, user := adapters.RoleSystem, adapters.RoleUser
	adapterstest.CheckForms(t, sim, Path, nil, false, []adapterstest.Form{{
		Name:   "string input",
		Body:   `{"model":"gemini-3-flash","system_instruction":"规则\n\"只读\" \u4e2d","input":"任务 \"x\"\n","response_format":[{"type":"audio"},{"type":"text","mime_type":"application/json"}]}`,
		Prompt: []adapters.PromptPart{{Role: sys, Text: "规则\n\"只读\" 中"}, {Role: user, Text: "任务 \"x\"\n"}},
		Output: adapters.OutputContract{Mode: adapters.OutputJSON},
	}, {
		Name:   "one content",
		Body:   `{"model":"gemini-3-flash","input":{"type":"text","text":"u1"},"response_mime_type":"application/json","response_format":{"type":"object"}}`,
		Prompt: []adapters.PromptPart{{Role: user, Text: "u1"}},
		Output: adapters.OutputContract{Mode: adapters.OutputJSONSchema, Schema: []byte(`{"type":"object"}`)},
	}, {
		Name:   "contents",
		Body:   `{"model":"gemini-3-flash","input":[{"type":"image","uri":"https://x/y.png"},{"type":"text","text":"u1"},{"type":"text","text":"u2"}],"response_format":{"type":"text","mime_type":"text/plain"}}`,
		Prompt: []adapters.PromptPart{{Role: user, Text: "u1"}, {Role: user, Text: "u2"}},
	}, {
		Name: "steps",
		Body: `{"model":"gemini-3-flash","input":[{"type":"user_input","content":"u1"},
			{"type":"model_output","content":[{"type":"text","text":"a1"}]},{"type":"function_call","id":"c1","name":"f","arguments":{}},
			{"type":"function_result","call_id":"c1","result":"r1"},{"type":"user_input","content":[{"type":"document","uri":"gs://d"},{"type":"text","text":"u2"}]}],
			"tools":[{"type":"google_search"},{"type":"function","name":"f","description":"F","parameters":{"type":"object"}},{"type":"function","name":"g"}]}`,
		Prompt: []adapters.PromptPart{{Role: user, Text: "u1"}, {Role: user, Text: "u2"}},
		Tools:  []adapters.Tool{{Name: "f", Description: "F", Parameters: []byte(`{"type":"object"}`)}, {Name: "g"}},
	}})
}

// BenchmarkCheckRequest: the refund case's last request (its full
// history), checked as the simulator checks every request.
//
//	go test ./adapters/geminiinteractions -run '^$' -bench CheckRequest -benchmem
func BenchmarkCheckRequest(b *testing.B) {
	hr, err := New().Encode(adapterstest.RefundRequest(3, refundIDs, true), adapters.ProviderSim)
	if err != nil {
		b.Fatal(err)
	}
	adapterstest.BenchCheckRequest(b, sim, hr)
}
