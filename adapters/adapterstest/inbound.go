package adapterstest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"reflect"
	"testing"

	"github.com/modelwire/modelwire/adapters"
)

// What each protocol's CheckRequest reads of a request's prompt, tools and
// output format (adapters.Inbound's Prompt, ToolDefs and Output), checked
// on the refund case as each encoder sends it.

// PromptTask is a task text that must be escaped on the wire: a newline,
// quotes, a backslash and a tab among Chinese text, so a test sees it
// decoded, not as sent.
const PromptTask = "帮我核查订单 O-2048 中商品 L1 的 150 元退款申请。\n用户原话：\"还能退150元吗？\"\t路径 C:\\orders\\O-2048。"

// PromptRefund is the refund case's last request (both earlier turns,
// their tool calls and results) with PromptTask as its task, and, when
// chatter is set, assistant text in each earlier turn before its calls
// (which is not prompt) and a follow-up user message after the last
// results (which is).
func PromptRefund(ids IDs, stream, chatter bool) *adapters.Request {
	req := RefundRequest(3, ids, stream)
	req.Sources = append([]adapters.Source(nil), req.Sources...)
	for i, s := range req.Sources {
		if s.ID == "task" {
			req.Sources[i].Text = PromptTask
		}
	}
	if chatter {
		for i := range req.Turns {
			req.Turns[i].Items = append([]adapters.OutputItem{{Kind: adapters.KindMessage, Text: AssistantChatter}}, req.Turns[i].Items...)
		}
		req.Turns[len(req.Turns)-1].FollowUp = FollowUp
	}
	return req
}

// AssistantChatter and FollowUp are PromptRefund's extra texts.
const (
	AssistantChatter = "我先查询相关记录。"
	FollowUp         = "请只用 \"中文\" 回复。"
)

// WantPrompt is the prompt a request carrying req's sources should read
// as: system holds the system-side parts as the protocol sends them
// (rules, skills, in its roles and joins), followed by the user side,
// each user and context source one RoleUser part of its wire text.
func WantPrompt(req *adapters.Request, system ...adapters.PromptPart) []adapters.PromptPart {
	want := append([]adapters.PromptPart(nil), system...)
	for _, s := range req.Sources {
		if s.Role == adapters.RoleUser || s.Role == adapters.RoleContext {
			want = append(want, adapters.PromptPart{Role: adapters.RoleUser, Text: adapters.SourceText(s)})
		}
	}
	return want
}

// SourceText is the text of req's source id.
func SourceText(req *adapters.Request, id string) string {
	for _, s := range req.Sources {
		if s.ID == id {
			return s.Text
		}
	}
	return ""
}

// CheckPrompt: in's prompt is want, part for part; and no part is a tool
// result or the model's own text.
func CheckPrompt(t testing.TB, in *adapters.Inbound, want []adapters.PromptPart) {
	t.Helper()
	// Once (a chain does not carry the part over) has tests of its own.
	got := make([]adapters.PromptPart, len(in.Prompt))
	for i, p := range in.Prompt {
		got[i] = adapters.PromptPart{Role: p.Role, Text: p.Text}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("prompt: %d parts, want %d", len(in.Prompt), len(want))
		for i := range max(len(in.Prompt), len(want)) {
			var g, w adapters.PromptPart
			if i < len(got) {
				g = got[i]
			}
			if i < len(want) {
				w = want[i]
			}
			if g != w {
				t.Errorf("part %d:\n got %s %q\nwant %s %q", i, g.Role, g.Text, w.Role, w.Text)
			}
		}
	}
	for _, p := range in.Prompt {
		if p.Text == AssistantChatter {
			t.Errorf("the model's own text is in the prompt: %q", p.Text)
		}
		for _, r := range in.Results {
			if p.Text == r.Content {
				t.Errorf("a tool result is in the prompt: %q", p.Text)
			}
		}
	}
}

// CheckToolDefs: in declares want's tools in order, with their names,
// descriptions and parameter schemas (compared as JSON values), and
// strict as the protocol can send it (false where it has no such flag).
func CheckToolDefs(t testing.TB, in *adapters.Inbound, want []adapters.Tool, strict bool) {
	t.Helper()
	if len(in.ToolDefs) != len(want) {
		t.Fatalf("%d tool definitions, want %d: %+v", len(in.ToolDefs), len(want), in.ToolDefs)
	}
	for i, w := range want {
		got := in.ToolDefs[i]
		if got.Name != w.Name || got.Description != w.Description || got.Strict != (w.Strict && strict) {
			t.Errorf("tool %d: %q %q strict %v, want %q %q strict %v", i, got.Name, got.Description, got.Strict, w.Name, w.Description, w.Strict && strict)
		}
		if !SameJSON(got.Parameters, w.Parameters) {
			t.Errorf("tool %s parameters:\n got %s\nwant %s", w.Name, got.Parameters, w.Parameters)
		}
	}
	if len(in.Tools) != len(want) {
		t.Errorf("Tools %q beside %d definitions", in.Tools, len(want))
	}
}

// CheckOutput: in asks for want (its schema compared as a JSON value).
func CheckOutput(t testing.TB, in *adapters.Inbound, want adapters.OutputContract) {
	t.Helper()
	got := in.Output
	if got.Mode != want.Mode || got.Name != want.Name || got.Strict != want.Strict || !SameJSON(got.Schema, want.Schema) {
		t.Errorf("output:\n got %s %q strict %v %s\nwant %s %q strict %v %s", got.Mode, got.Name, got.Strict, got.Schema, want.Mode, want.Name, want.Strict, want.Schema)
	}
}

// SameJSON: a and b hold the same JSON value (both empty counts as the
// same; one empty and not the other does not).
func SameJSON(a, b []byte) bool {
	if len(bytes.TrimSpace(a)) == 0 || len(bytes.TrimSpace(b)) == 0 {
		return len(bytes.TrimSpace(a)) == len(bytes.TrimSpace(b))
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// Check runs hr through sim's CheckRequest, failing the test when it is
// refused.
func Check(t testing.TB, sim adapters.Simulated, hr *adapters.HTTPRequest) *adapters.Inbound {
	t.Helper()
	h := make(http.Header, len(hr.Headers))
	for k, v := range hr.Headers {
		h.Set(k, v)
	}
	in, e := sim.CheckRequest(hr.Method, hr.Path, h, hr.Body)
	if e != nil {
		t.Fatalf("CheckRequest refused the request: %d %s\n%s", e.Status, e.Body, hr.Body)
	}
	return in
}

// BenchCheckRequest measures sim's CheckRequest on hr, a request its
// protocol's encoder built: what the simulator does first for every
// request it serves.
func BenchCheckRequest(b *testing.B, sim adapters.Simulated, hr *adapters.HTTPRequest) {
	b.Helper()
	h := make(http.Header, len(hr.Headers))
	for k, v := range hr.Headers {
		h.Set(k, v)
	}
	b.SetBytes(int64(len(hr.Body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, e := sim.CheckRequest(hr.Method, hr.Path, h, hr.Body); e != nil {
			b.Fatalf("%s", e.Body)
		}
	}
}

// Reading is one protocol as the prompt tests drive it: the encoder and
// provider the refund request goes through, the simulator that reads it
// back, and whether the protocol carries a tool's strict flag.
type Reading struct {
	Protocol adapters.Protocol
	Provider string
	Sim      adapters.Simulated
	IDs      IDs
	Strict   bool
}

// CheckRefundReads encodes PromptRefund, without chatter and with, and
// checks what r.Sim reads of it: the prompt is system(req) (the rules and
// skill as the protocol sends them) then the user side, then FollowUp
// with chatter; the task reads decoded; the tools as declared; the format
// as output. also (nil for none) runs the protocol's own checks on each
// reading. Last, the refund request without a format reads as Mode "".
func CheckRefundReads(t *testing.T, r Reading, system func(req *adapters.Request) []adapters.PromptPart, output adapters.OutputContract,
	also func(chatter bool, req *adapters.Request, in *adapters.Inbound)) {
	t.Helper()
	for _, chatter := range []bool{false, true} {
		req := PromptRefund(r.IDs, true, chatter)
		in := Check(t, r.Sim, encode(t, r, req))
		sys := system(req)
		want := WantPrompt(req, sys...)
		if chatter {
			want = append(want, adapters.PromptPart{Role: adapters.RoleUser, Text: FollowUp})
		}
		CheckPrompt(t, in, want)
		if len(in.Prompt) <= len(sys) || in.Prompt[len(sys)].Text != PromptTask {
			t.Errorf("task: not part %d of %+v", len(sys), in.Prompt)
		}
		CheckToolDefs(t, in, RefundTools(), r.Strict)
		CheckOutput(t, in, output)
		if also != nil {
			also(chatter, req, in)
		}
	}

	req := RefundRequest(3, r.IDs, false)
	req.Output = adapters.OutputContract{}
	CheckOutput(t, Check(t, r.Sim, encode(t, r, req)), adapters.OutputContract{})
}

func encode(t testing.TB, r Reading, req *adapters.Request) *adapters.HTTPRequest {
	t.Helper()
	hr, err := r.Protocol.Encode(req, r.Provider)
	if err != nil {
		t.Fatal(err)
	}
	return hr
}

// RulesAndSkill is the refund request's system side as most protocols
// send it: the rules as a system part, then the skill in skill's role
// (developer where the protocol has one).
func RulesAndSkill(skill adapters.SourceRole) func(req *adapters.Request) []adapters.PromptPart {
	return func(req *adapters.Request) []adapters.PromptPart {
		return []adapters.PromptPart{
			{Role: adapters.RoleSystem, Text: SourceText(req, "system-rules")},
			{Role: skill, Text: SourceText(req, "skill:refund_assessment@1.2")}}
	}
}

// Form is a hand-written request body in one of a protocol's other forms
// and what CheckRequest reads of it. ServerTools counts the names at the
// head of Tools that have no definition (Anthropic's server tools).
type Form struct {
	Name, Body  string
	Prompt      []adapters.PromptPart
	Tools       []adapters.Tool
	ServerTools int
	Output      adapters.OutputContract
}

// CheckForms posts each form's body to sim at path (with headers) and
// checks the prompt, the tool definitions (strict as the protocol carries
// it; none when the form has no tools) and the output format it reads.
func CheckForms(t *testing.T, sim adapters.Simulated, path string, headers map[string]string, strict bool, forms []Form) {
	t.Helper()
	for _, f := range forms {
		t.Run(f.Name, func(t *testing.T) {
			in := Check(t, sim, &adapters.HTTPRequest{Method: http.MethodPost, Path: path, Headers: headers, Body: []byte(f.Body)})
			CheckPrompt(t, in, f.Prompt)
			if len(f.Tools) > 0 {
				if len(in.Tools) != len(f.Tools)+f.ServerTools {
					t.Fatalf("tools %q, definitions %+v", in.Tools, in.ToolDefs)
				}
				in.Tools = in.Tools[f.ServerTools:] // a server tool has a name, not a definition
				CheckToolDefs(t, in, f.Tools, strict)
			} else if in.ToolDefs != nil {
				t.Errorf("tool definitions %+v", in.ToolDefs)
			}
			CheckOutput(t, in, f.Output)
		})
	}
}
