package anthropic

import (
	"testing"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/adapterstest"
)

// The refund request as this package encodes it: CheckRequest reads the
// system blocks (the rules, then the skill, which has no developer role
// here) and the user text blocks in order and decoded, the tools as
// declared and output_config.format; not the assistant turns or the
// tool_result blocks.
func TestCheckRequestReadsPromptToolsOutput(t *testing.T) {
	adapterstest.CheckRefundReads(t, adapterstest.Reading{Protocol: New(), Provider: adapters.ProviderAnthropic, Sim: sim, IDs: refundIDs, Strict: true},
		adapterstest.RulesAndSkill(adapters.RoleSystem),
		// The format has no name or strict flag.
		adapters.OutputContract{Mode: adapters.OutputJSONSchema, Schema: adapterstest.RefundSchema()}, nil)
}

// The API's other forms: system as a string, string contents, blocks
// that are not text, a tool_result beside text, server tools beside
// custom ones, the beta's output_format, and output_config without a
// format.
func TestCheckRequestReadsOtherForms(t *testing.T) {
	sys, user := adapters.RoleSystem, adapters.RoleUser
	adapterstest.CheckForms(t, sim, Path, map[string]string{"Anthropic-Version": APIVersion}, true, []adapterstest.Form{{
		Name: "strings",
		Body: `{"model":"claude-sonnet-4-5","max_tokens":100,"system":"规则\n\"只读\" \u4e2d","messages":[{"role":"user","content":"任务"}],
			"output_format":{"type":"json_schema","schema":{"type":"object"}}}`,
		Prompt: []adapters.PromptPart{{Role: sys, Text: "规则\n\"只读\" 中"}, {Role: user, Text: "任务"}},
		Output: adapters.OutputContract{Mode: adapters.OutputJSONSchema, Schema: []byte(`{"type":"object"}`)},
	}, {
		Name: "blocks",
		Body: `{"model":"claude-sonnet-4-5","max_tokens":100,
			"system":[{"type":"text","text":"s1","cache_control":{"type":"ephemeral"}},{"type":"text","text":"s2"}],
			"messages":[{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AAAA"}},{"type":"text","text":"u1"}]},
			{"role":"assistant","content":[{"type":"text","text":"a1"},{"type":"tool_use","id":"toolu_1","name":"f","input":{}}]},
			{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"r1"}]},{"type":"text","text":"u2"}]}],
			"tools":[{"type":"web_search_20250305","name":"web_search","max_uses":3},{"name":"f","input_schema":{"type":"object"}},{"type":"custom","name":"g","description":"G","input_schema":{"type":"object","properties":{}},"strict":true}],
			"output_config":{"effort":"low"}}`,
		Prompt:      []adapters.PromptPart{{Role: sys, Text: "s1"}, {Role: sys, Text: "s2"}, {Role: user, Text: "u1"}, {Role: user, Text: "u2"}},
		Tools:       []adapters.Tool{{Name: "f", Parameters: []byte(`{"type":"object"}`)}, {Name: "g", Description: "G", Parameters: []byte(`{"type":"object","properties":{}}`), Strict: true}},
		ServerTools: 1, // web_search
	}})
}

// BenchmarkCheckRequest: the refund case's last request (its full
// history), checked as the simulator checks every request.
//
//	go test ./adapters/anthropic -run '^$' -bench CheckRequest -benchmem
func BenchmarkCheckRequest(b *testing.B) {
	hr, err := New().Encode(adapterstest.RefundRequest(3, refundIDs, true), adapters.ProviderAnthropic)
	if err != nil {
		b.Fatal(err)
	}
	adapterstest.BenchCheckRequest(b, sim, hr)
}
