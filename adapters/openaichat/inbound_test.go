package openaichat

import (
	"net/http"
	"testing"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/adapterstest"
)

// The refund request as this package encodes it, per dialect:
// CheckRequest reads the system and developer messages and the user text
// parts in order and decoded, the tools as declared and response_format;
// not the assistant turns or the tool messages. DeepSeek's encoding sends
// the skill and the schema as further system messages, and JSON mode.
func TestCheckRequestReadsPromptToolsOutput(t *testing.T) {
	for _, chatter := range []bool{false, true} {
		req := adapterstest.PromptRefund(chatIDs, true, chatter)
		hr, err := New().Encode(req, adapters.ProviderOpenAI)
		if err != nil {
			t.Fatal(err)
		}
		in := adapterstest.Check(t, protocol{}, hr)
		want := adapterstest.WantPrompt(req,
			adapters.PromptPart{Role: adapters.RoleSystem, Text: adapterstest.SourceText(req, "system-rules")},
			adapters.PromptPart{Role: adapters.RoleDeveloper, Text: adapterstest.SourceText(req, "skill:refund_assessment@1.2")})
		if chatter {
			want = append(want, adapters.PromptPart{Role: adapters.RoleUser, Text: adapterstest.FollowUp})
		}
		adapterstest.CheckPrompt(t, in, want)
		if in.Prompt[2].Text != adapterstest.PromptTask {
			t.Errorf("task %q", in.Prompt[2].Text)
		}
		adapterstest.CheckToolDefs(t, in, adapterstest.RefundTools(), true)
		adapterstest.CheckOutput(t, in, adapters.OutputContract{Mode: adapters.OutputJSONSchema, Name: "refund_assessment", Schema: adapterstest.RefundSchema(), Strict: true})

		req = adapterstest.PromptRefund(dsIDs, true, chatter)
		hr, err = NewDeepSeek().Encode(req, adapters.ProviderDeepSeek)
		if err != nil {
			t.Fatal(err)
		}
		in = adapterstest.Check(t, protocol{deepseek: true}, hr)
		want = adapterstest.WantPrompt(req,
			adapters.PromptPart{Role: adapters.RoleSystem, Text: adapterstest.SourceText(req, "system-rules")},
			adapters.PromptPart{Role: adapters.RoleSystem, Text: adapterstest.SourceText(req, "skill:refund_assessment@1.2")},
			adapters.PromptPart{Role: adapters.RoleSystem, Text: adapters.SchemaInstruction(req.Output)})
		if chatter {
			want = append(want, adapters.PromptPart{Role: adapters.RoleUser, Text: adapterstest.FollowUp})
		}
		adapterstest.CheckPrompt(t, in, want)
		adapterstest.CheckToolDefs(t, in, adapterstest.RefundTools(), false)
		adapterstest.CheckOutput(t, in, adapters.OutputContract{Mode: adapters.OutputJSON})
	}

	// No format asked: Mode "".
	req := adapterstest.RefundRequest(3, chatIDs, false)
	req.Output = adapters.OutputContract{}
	hr, err := New().Encode(req, adapters.ProviderOpenAI)
	if err != nil {
		t.Fatal(err)
	}
	adapterstest.CheckOutput(t, adapterstest.Check(t, protocol{}, hr), adapters.OutputContract{})
}

// The API's other forms: string contents, a system message of text
// parts, parts that are not text, an assistant message with content, a
// tool message, tools without description or strict, json_object, and a
// json_schema without strict.
func TestCheckRequestReadsOtherForms(t *testing.T) {
	sys, user := adapters.RoleSystem, adapters.RoleUser
	cases := []struct {
		name     string
		deepseek bool
		body     string
		prompt   []adapters.PromptPart
		tools    []adapters.Tool
		output   adapters.OutputContract
	}{{
		name: "openai",
		body: `{"model":"gpt-5","messages":[
			{"role":"system","content":[{"type":"text","text":"规则\n\"一\""},{"type":"text","text":"二 \u4e2d"}]},
			{"role":"developer","content":"技能"},
			{"role":"user","content":[{"type":"image_url","image_url":{"url":"https://x/y.png"}},{"type":"text","text":"看图"},{"type":"text"},{"type":"input_audio","input_audio":{"data":"AAAA","format":"wav"}}]},
			{"role":"assistant","content":"好的","tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}}]},
			{"role":"tool","tool_call_id":"call_1","content":"结果"},
			{"role":"user","content":"继续"}],
			"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{}}}},{"type":"function","function":{"name":"g","description":"G","strict":true,"parameters":{}}}],
			"response_format":{"type":"json_schema","json_schema":{"name":"out","schema":{"type":"object"}}}}`,
		prompt: []adapters.PromptPart{{Role: sys, Text: "规则\n\"一\""}, {Role: sys, Text: "二 中"}, {Role: adapters.RoleDeveloper, Text: "技能"},
			{Role: user, Text: "看图"}, {Role: user, Text: "继续"}},
		tools:  []adapters.Tool{{Name: "f", Parameters: []byte(`{"type":"object","properties":{}}`)}, {Name: "g", Description: "G", Strict: true, Parameters: []byte(`{}`)}},
		output: adapters.OutputContract{Mode: adapters.OutputJSONSchema, Name: "out", Schema: []byte(`{"type":"object"}`)},
	}, {
		name:     "deepseek",
		deepseek: true,
		body: `{"model":"deepseek-chat","messages":[{"role":"system","content":"Reply in JSON."},{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}],
			"response_format":{"type":"json_object"}}`,
		prompt: []adapters.PromptPart{{Role: sys, Text: "Reply in JSON."}, {Role: user, Text: "a"}, {Role: user, Text: "b"}},
		output: adapters.OutputContract{Mode: adapters.OutputJSON},
	}, {
		name:   "text format",
		body:   `{"model":"gpt-5","messages":[{"role":"user","content":"x"}],"response_format":{"type":"text"}}`,
		prompt: []adapters.PromptPart{{Role: user, Text: "x"}},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := protocol{deepseek: c.deepseek}
			in, e := p.CheckRequest(http.MethodPost, p.path(), nil, []byte(c.body))
			if e != nil {
				t.Fatalf("%s", e.Body)
			}
			adapterstest.CheckPrompt(t, in, c.prompt)
			if len(c.tools) > 0 {
				adapterstest.CheckToolDefs(t, in, c.tools, true)
			} else if in.ToolDefs != nil {
				t.Errorf("tool definitions %+v", in.ToolDefs)
			}
			adapterstest.CheckOutput(t, in, c.output)
		})
	}
}

// BenchmarkCheckRequest: the refund case's last request (its full
// history), checked as the simulator checks every request, per dialect.
//
//	go test ./adapters/openaichat -run '^$' -bench CheckRequest -benchmem
func BenchmarkCheckRequest(b *testing.B) {
	b.Run("chat", func(b *testing.B) {
		hr, err := New().Encode(adapterstest.RefundRequest(3, chatIDs, true), adapters.ProviderOpenAI)
		if err != nil {
			b.Fatal(err)
		}
		adapterstest.BenchCheckRequest(b, protocol{}, hr)
	})
	b.Run("deepseek", func(b *testing.B) {
		hr, err := NewDeepSeek().Encode(dsRefundRequest(3, true), adapters.ProviderDeepSeek)
		if err != nil {
			b.Fatal(err)
		}
		adapterstest.BenchCheckRequest(b, protocol{deepseek: true}, hr)
	})
}
