package anthropic

import (
	"net/http"
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
	h := http.Header{"Anthropic-Version": {APIVersion}}
	for _, chatter := range []bool{false, true} {
		req := adapterstest.PromptRefund(refundIDs, true, chatter)
		hr, err := New().Encode(req, adapters.ProviderAnthropic)
		if err != nil {
			t.Fatal(err)
		}
		in := adapterstest.Check(t, sim, hr)
		want := adapterstest.WantPrompt(req,
			adapters.PromptPart{Role: adapters.RoleSystem, Text: adapterstest.SourceText(req, "system-rules")},
			adapters.PromptPart{Role: adapters.RoleSystem, Text: adapterstest.SourceText(req, "skill:refund_assessment@1.2")})
		if chatter {
			want = append(want, adapters.PromptPart{Role: adapters.RoleUser, Text: adapterstest.FollowUp})
		}
		adapterstest.CheckPrompt(t, in, want)
		if in.Prompt[2].Text != adapterstest.PromptTask {
			t.Errorf("task %q", in.Prompt[2].Text)
		}
		adapterstest.CheckToolDefs(t, in, adapterstest.RefundTools(), true)
		// The format has no name or strict flag.
		adapterstest.CheckOutput(t, in, adapters.OutputContract{Mode: adapters.OutputJSONSchema, Schema: adapterstest.RefundSchema()})
	}

	// No format asked: Mode "".
	req := adapterstest.RefundRequest(3, refundIDs, false)
	req.Output = adapters.OutputContract{}
	hr, err := New().Encode(req, adapters.ProviderAnthropic)
	if err != nil {
		t.Fatal(err)
	}
	in, e := sim.CheckRequest(hr.Method, hr.Path, h, hr.Body)
	if e != nil {
		t.Fatalf("%s", e.Body)
	}
	adapterstest.CheckOutput(t, in, adapters.OutputContract{})
}

// The API's other forms: system as a string, string contents, blocks
// that are not text, a tool_result beside text, server tools beside
// custom ones, the beta's output_format, and output_config without a
// format.
func TestCheckRequestReadsOtherForms(t *testing.T) {
	sys, user := adapters.RoleSystem, adapters.RoleUser
	cases := []struct {
		name, body string
		prompt     []adapters.PromptPart
		tools      []adapters.Tool
		output     adapters.OutputContract
	}{{
		name: "strings",
		body: `{"model":"claude-sonnet-4-5","max_tokens":100,"system":"规则\n\"只读\" \u4e2d","messages":[{"role":"user","content":"任务"}],
			"output_format":{"type":"json_schema","schema":{"type":"object"}}}`,
		prompt: []adapters.PromptPart{{Role: sys, Text: "规则\n\"只读\" 中"}, {Role: user, Text: "任务"}},
		output: adapters.OutputContract{Mode: adapters.OutputJSONSchema, Schema: []byte(`{"type":"object"}`)},
	}, {
		name: "blocks",
		body: `{"model":"claude-sonnet-4-5","max_tokens":100,
			"system":[{"type":"text","text":"s1","cache_control":{"type":"ephemeral"}},{"type":"text","text":"s2"}],
			"messages":[{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AAAA"}},{"type":"text","text":"u1"}]},
			{"role":"assistant","content":[{"type":"text","text":"a1"},{"type":"tool_use","id":"toolu_1","name":"f","input":{}}]},
			{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"r1"}]},{"type":"text","text":"u2"}]}],
			"tools":[{"type":"web_search_20250305","name":"web_search","max_uses":3},{"name":"f","input_schema":{"type":"object"}},{"type":"custom","name":"g","description":"G","input_schema":{"type":"object","properties":{}},"strict":true}],
			"output_config":{"effort":"low"}}`,
		prompt: []adapters.PromptPart{{Role: sys, Text: "s1"}, {Role: sys, Text: "s2"}, {Role: user, Text: "u1"}, {Role: user, Text: "u2"}},
		tools:  []adapters.Tool{{Name: "f", Parameters: []byte(`{"type":"object"}`)}, {Name: "g", Description: "G", Parameters: []byte(`{"type":"object","properties":{}}`), Strict: true}},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in, e := sim.CheckRequest(http.MethodPost, Path, http.Header{"Anthropic-Version": {APIVersion}}, []byte(c.body))
			if e != nil {
				t.Fatalf("%s", e.Body)
			}
			adapterstest.CheckPrompt(t, in, c.prompt)
			if len(c.tools) > 0 {
				if len(in.ToolDefs) != len(c.tools) || len(in.Tools) != len(c.tools)+1 {
					t.Fatalf("tools %q, definitions %+v", in.Tools, in.ToolDefs)
				}
				in.Tools = in.Tools[1:] // the server tool has a name, not a definition
				adapterstest.CheckToolDefs(t, in, c.tools, true)
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
//	go test ./adapters/anthropic -run '^$' -bench CheckRequest -benchmem
func BenchmarkCheckRequest(b *testing.B) {
	hr, err := New().Encode(adapterstest.RefundRequest(3, refundIDs, true), adapters.ProviderAnthropic)
	if err != nil {
		b.Fatal(err)
	}
	adapterstest.BenchCheckRequest(b, sim, hr)
}
