package geminiinteractions

import (
	"net/http"
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
	for _, chatter := range []bool{false, true} {
		req := adapterstest.PromptRefund(refundIDs, true, chatter)
		hr, err := New().Encode(req, adapters.ProviderSim)
		if err != nil {
			t.Fatal(err)
		}
		in := adapterstest.Check(t, sim, hr)
		system := adapters.PromptPart{Role: adapters.RoleSystem,
			Text: adapterstest.SourceText(req, "system-rules") + "\n\n" + adapterstest.SourceText(req, "skill:refund_assessment@1.2")}
		want := adapterstest.WantPrompt(req, system)
		if chatter {
			// The follow-up is a user_input step after the results.
			want = append(want, adapters.PromptPart{Role: adapters.RoleUser, Text: adapterstest.FollowUp})
		}
		adapterstest.CheckPrompt(t, in, want)
		if in.Prompt[1].Text != adapterstest.PromptTask {
			t.Errorf("task %q", in.Prompt[1].Text)
		}
		// The API has no strict flag, and its schemas no name.
		adapterstest.CheckToolDefs(t, in, adapterstest.RefundTools(), false)
		adapterstest.CheckOutput(t, in, adapters.OutputContract{Mode: adapters.OutputJSONSchema, Schema: adapterstest.RefundSchema()})

		// Chained, the user's words live on the server; the settings
		// are sent again.
		req.History = adapters.HistoryPreviousResponse
		hr, err = New().Encode(req, adapters.ProviderSim)
		if err != nil {
			t.Fatal(err)
		}
		in = adapterstest.Check(t, sim, hr)
		want = []adapters.PromptPart{system}
		if chatter {
			want = append(want, adapters.PromptPart{Role: adapters.RoleUser, Text: adapterstest.FollowUp})
		}
		adapterstest.CheckPrompt(t, in, want)
		adapterstest.CheckToolDefs(t, in, adapterstest.RefundTools(), false)
	}

	// No format asked: Mode "".
	req := adapterstest.RefundRequest(3, refundIDs, false)
	req.Output = adapters.OutputContract{}
	hr, err := New().Encode(req, adapters.ProviderSim)
	if err != nil {
		t.Fatal(err)
	}
	adapterstest.CheckOutput(t, adapterstest.Check(t, sim, hr), adapters.OutputContract{})
}

// The API's other forms: input as a string, as one content, as a list of
// contents; a user_input step with a string content and contents that
// are not text; tools that are not functions; response_format as a list,
// without a schema, and the form it replaced (response_mime_type with the
// schema as response_format).
func TestCheckRequestReadsOtherForms(t *testing.T) {
	sys, user := adapters.RoleSystem, adapters.RoleUser
	cases := []struct {
		name, body string
		prompt     []adapters.PromptPart
		tools      []adapters.Tool
		output     adapters.OutputContract
	}{{
		name:   "string input",
		body:   `{"model":"gemini-3-flash","system_instruction":"规则\n\"只读\" \u4e2d","input":"任务 \"x\"\n","response_format":[{"type":"audio"},{"type":"text","mime_type":"application/json"}]}`,
		prompt: []adapters.PromptPart{{Role: sys, Text: "规则\n\"只读\" 中"}, {Role: user, Text: "任务 \"x\"\n"}},
		output: adapters.OutputContract{Mode: adapters.OutputJSON},
	}, {
		name:   "one content",
		body:   `{"model":"gemini-3-flash","input":{"type":"text","text":"u1"},"response_mime_type":"application/json","response_format":{"type":"object"}}`,
		prompt: []adapters.PromptPart{{Role: user, Text: "u1"}},
		output: adapters.OutputContract{Mode: adapters.OutputJSONSchema, Schema: []byte(`{"type":"object"}`)},
	}, {
		name:   "contents",
		body:   `{"model":"gemini-3-flash","input":[{"type":"image","uri":"https://x/y.png"},{"type":"text","text":"u1"},{"type":"text","text":"u2"}],"response_format":{"type":"text","mime_type":"text/plain"}}`,
		prompt: []adapters.PromptPart{{Role: user, Text: "u1"}, {Role: user, Text: "u2"}},
	}, {
		name: "steps",
		body: `{"model":"gemini-3-flash","input":[{"type":"user_input","content":"u1"},
			{"type":"model_output","content":[{"type":"text","text":"a1"}]},{"type":"function_call","id":"c1","name":"f","arguments":{}},
			{"type":"function_result","call_id":"c1","result":"r1"},{"type":"user_input","content":[{"type":"document","uri":"gs://d"},{"type":"text","text":"u2"}]}],
			"tools":[{"type":"google_search"},{"type":"function","name":"f","description":"F","parameters":{"type":"object"}},{"type":"function","name":"g"}]}`,
		prompt: []adapters.PromptPart{{Role: user, Text: "u1"}, {Role: user, Text: "u2"}},
		tools:  []adapters.Tool{{Name: "f", Description: "F", Parameters: []byte(`{"type":"object"}`)}, {Name: "g"}},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in, e := sim.CheckRequest(http.MethodPost, Path, nil, []byte(c.body))
			if e != nil {
				t.Fatalf("%s", e.Body)
			}
			adapterstest.CheckPrompt(t, in, c.prompt)
			if len(c.tools) > 0 {
				adapterstest.CheckToolDefs(t, in, c.tools, false)
			} else if in.ToolDefs != nil {
				t.Errorf("tool definitions %+v", in.ToolDefs)
			}
			adapterstest.CheckOutput(t, in, c.output)
		})
	}
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
