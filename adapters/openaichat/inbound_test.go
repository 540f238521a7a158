package openaichat

import (
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
	adapterstest.CheckRefundReads(t, adapterstest.Reading{Protocol: New(), Provider: adapters.ProviderOpenAI, Sim: protocol{}, IDs: chatIDs, Strict: true},
		adapterstest.RulesAndSkill(adapters.RoleDeveloper),
		adapters.OutputContract{Mode: adapters.OutputJSONSchema, Name: "refund_assessment", Schema: adapterstest.RefundSchema(), Strict: true}, nil)

	adapterstest.CheckRefundReads(t, adapterstest.Reading{Protocol: NewDeepSeek(), Provider: adapters.ProviderDeepSeek, Sim: protocol{deepseek: true}, IDs: dsIDs},
		func(req *adapters.Request) []adapters.PromptPart {
			return append(adapterstest.RulesAndSkill(adapters.RoleSystem)(req),
				adapters.PromptPart{Role: adapters.RoleSystem, Text: adapters.SchemaInstruction(req.Output)})
		},
		adapters.OutputContract{Mode: adapters.OutputJSON}, nil)
}

// The API's other forms: string contents, a system message of text
// parts, parts that are not text, an assistant message with content, a
// tool message, tools without description or strict, json_object, and a
// json_schema without strict.
func TestCheckRequestReadsOtherForms(t *testing.T) {
	sys, user := adapters.RoleSystem, adapters.RoleUser
	chat, deepseek := protocol{}, protocol{deepseek: true}
	adapterstest.CheckForms(t, chat, chat.path(), nil, true, []adapterstest.Form{{
		Name: "openai",
		Body: `{"model":"gpt-5","messages":[
			{"role":"system","content":[{"type":"text","text":"规则\n\"一\""},{"type":"text","text":"二 \u4e2d"}]},
			{"role":"developer","content":"技能"},
			{"role":"user","content":[{"type":"image_url","image_url":{"url":"https://x/y.png"}},{"type":"text","text":"看图"},{"type":"text"},{"type":"input_audio","input_audio":{"data":"AAAA","format":"wav"}}]},
			{"role":"assistant","content":"好的","tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}}]},
			{"role":"tool","tool_call_id":"call_1","content":"结果"},
			{"role":"user","content":"继续"}],
			"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{}}}},{"type":"function","function":{"name":"g","description":"G","strict":true,"parameters":{}}}],
			"response_format":{"type":"json_schema","json_schema":{"name":"out","schema":{"type":"object"}}}}`,
		Prompt: []adapters.PromptPart{{Role: sys, Text: "规则\n\"一\""}, {Role: sys, Text: "二 中"}, {Role: adapters.RoleDeveloper, Text: "技能"},
			{Role: user, Text: "看图"}, {Role: user, Text: "继续"}},
		Tools:  []adapters.Tool{{Name: "f", Parameters: []byte(`{"type":"object","properties":{}}`)}, {Name: "g", Description: "G", Strict: true, Parameters: []byte(`{}`)}},
		Output: adapters.OutputContract{Mode: adapters.OutputJSONSchema, Name: "out", Schema: []byte(`{"type":"object"}`)},
	}, {
		Name:   "text format",
		Body:   `{"model":"gpt-5","messages":[{"role":"user","content":"x"}],"response_format":{"type":"text"}}`,
		Prompt: []adapters.PromptPart{{Role: user, Text: "x"}},
	}})
	adapterstest.CheckForms(t, deepseek, deepseek.path(), nil, true, []adapterstest.Form{{
		Name: "deepseek",
		Body: `{"model":"deepseek-chat","messages":[{"role":"system","content":"Reply in JSON."},{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}],
			"response_format":{"type":"json_object"}}`,
		Prompt: []adapters.PromptPart{{Role: sys, Text: "Reply in JSON."}, {Role: user, Text: "a"}, {Role: user, Text: "b"}},
		Output: adapters.OutputContract{Mode: adapters.OutputJSON},
	}})
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
