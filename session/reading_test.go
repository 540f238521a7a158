package session

import (
	"strings"
	"testing"

	"github.com/modelwire/modelwire/adapters"
)

func TestMoneyCents(t *testing.T) {
	for in, want := range map[string]int64{
		"150 元":             15000,
		"还能退150元":           15000,
		"120.5元":            12050,
		"¥99":               9900,
		"￥ 12.34":           1234,
		"a 150 yuan refund": 15000,
		"CNY 150":           15000,
		"150 CNY":           15000,
		"RMB 7.005":         701,
		"refund of 30 RMB":  3000,
	} {
		if got, ok := MoneyCents(in); !ok || got != want {
			t.Errorf("MoneyCents(%q) = %d, %v; want %d", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "订单 O-2048 中商品 L1", "150", "18000 分", "L1 的退款"} {
		if got, ok := MoneyCents(in); ok {
			t.Errorf("MoneyCents(%q) = %d; want no amount", in, got)
		}
	}
}

func refundLikePrompt(task, history string) Prompt {
	return Prompt{
		{Role: adapters.RoleSystem, Text: "你是售后核查助手。本任务只读核查，不提交退款。"},
		{Role: adapters.RoleDeveloper, Text: "先查商品行。"},
		{Role: adapters.RoleUser, Text: task},
		{Role: adapters.RoleUser, Text: `<context_package task_time="2026-10-20T10:00:00+08:00">以下是应用筛选的材料。</context_package>`},
		{Role: adapters.RoleUser, Text: history},
	}
}

func TestPromptTaskAndElements(t *testing.T) {
	p := refundLikePrompt("帮我核查订单 O-2048 中商品 L1 的 150 元退款申请。", `<history source="previous_assistant_summary" verified="false">此前助手推测该商品可能还能退150元。</history>`)
	if task := strings.TrimSpace(p.Task()); task != "帮我核查订单 O-2048 中商品 L1 的 150 元退款申请。" {
		t.Errorf("task = %q", task)
	}
	if got := p.Instructions(); !strings.Contains(got, "只读核查") || !strings.Contains(got, "先查商品行") || strings.Contains(got, "O-2048") {
		t.Errorf("instructions = %q", got)
	}
	els := p.Elements("history")
	verified, _ := els[0].Attr("verified")
	source, _ := els[0].Attr("source")
	if len(els) != 1 || verified != "false" || source != "previous_assistant_summary" || els[0].Text != "此前助手推测该商品可能还能退150元。" {
		t.Errorf("history elements = %+v", els)
	}
	// An element never closed is text, not an element.
	if els := (Prompt{{Role: adapters.RoleUser, Text: "<history>还能退150元"}}).Elements("history"); len(els) != 0 {
		t.Errorf("unclosed element read as %+v", els)
	}
}

func TestReadPromptFollowsTheWords(t *testing.T) {
	sc := &Scenario{Reads: []PromptFact{
		{Name: "order_id", In: "task", Pattern: `(?i)(?:订单|order)\s*([A-Z]+-?\d+)`},
		{Name: "requested_cents", In: "task", Unit: "cents"},
		{Name: "history_claim_cents", In: "<history>", Unit: "cents"},
		{Name: "history_verified", In: "<history>", Attr: "verified"},
		{Name: "labelled", In: `<context source="memo">`, Unit: "cents"},
	}}
	for i := range sc.Reads {
		if err := sc.Reads[i].compile(); err != nil {
			t.Fatal(err)
		}
	}
	hist := `<history verified="false">还能退130元</history>`
	r := sc.ReadPrompt(refundLikePrompt("核查订单 O-7 的 120 元退款", hist))
	if r.Str("order_id") != "O-7" || r["requested_cents"] != int64(12000) || r["history_claim_cents"] != int64(13000) || r["history_verified"] != "false" {
		t.Errorf("reading = %v", r)
	}
	// The history's amount is not the task's: a task without one reads nil.
	r = sc.ReadPrompt(refundLikePrompt("核查订单 O-7 的退款", hist))
	if r["requested_cents"] != nil || r["labelled"] != nil {
		t.Errorf("a task without an amount read %v", r)
	}
	// A labelled context source (adapters.SourceText) is an element too.
	p := PromptOf(&adapters.Request{Sources: []adapters.Source{{ID: "memo", Role: adapters.RoleContext, Trust: "unverified", Label: "note", Text: "refund 8 yuan"}}})
	if got := sc.ReadPrompt(p)["labelled"]; got != int64(800) {
		t.Errorf("labelled element read %v", got)
	}
}

func TestPromptFactErrors(t *testing.T) {
	for _, f := range []PromptFact{
		{Name: "a", In: "anywhere", Unit: "cents"},
		{Name: "a", In: "task"},
		{Name: "a", In: "task", Attr: "x"},
		{Name: "a", In: "<history", Unit: "cents"},
		{Name: "a", In: "task", Pattern: "("},
		{Name: "a", In: "task", Unit: "dollars"},
	} {
		if err := f.compile(); err == nil {
			t.Errorf("%+v compiled", f)
		}
	}
}
