package openaichat

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/adapterstest"
)

// protocolFor picks the dialect a capture was recorded in by its name.
func protocolFor(name string) adapters.Protocol {
	if strings.HasPrefix(name, "deepseek_") {
		return NewDeepSeek()
	}
	return New()
}

// captures lists the capture files: every *.sse and every *.json that is
// not a golden file.
func captures(t testing.TB) []string {
	t.Helper()
	entries, err := os.ReadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		n := e.Name()
		if strings.HasSuffix(n, ".sse") || (strings.HasSuffix(n, ".json") && !strings.HasSuffix(n, ".golden.json")) {
			out = append(out, n)
		}
	}
	if len(out) == 0 {
		t.Fatal("no captures in testdata")
	}
	return out
}

func decodeCapture(t *testing.T, name string) ([]adapters.Event, adapters.Summary) {
	t.Helper()
	return adapterstest.Decode(t, protocolFor(name), adapterstest.ReadCapture(t, name))
}

// TestSummaryGoldens decodes every capture and compares its summary with
// testdata/<capture>.golden.json (go test -update rewrites them).
func TestSummaryGoldens(t *testing.T) {
	for _, name := range captures(t) {
		t.Run(name, func(t *testing.T) {
			_, s := decodeCapture(t, name)
			adapterstest.Golden(t, name, s)
		})
	}
}

// TestDeltasSplitAtCharacterBoundaries: every text the decoder hands on is
// whole UTF-8, so a Chinese character is never cut between two deltas.
func TestDeltasSplitAtCharacterBoundaries(t *testing.T) {
	for _, name := range captures(t) {
		events, _ := decodeCapture(t, name)
		for _, ev := range events {
			if ev.Delta != "" && !utf8.ValidString(ev.Delta) {
				t.Errorf("%s: seq %d %s delta %q is not whole UTF-8", name, ev.Seq, ev.Type, ev.Delta)
			}
		}
	}
}

type wantCall struct{ id, name, args string }

type want struct {
	status   adapters.Status
	stop     adapters.StopReason
	provider string
	text     *string
	// reasoning and refusal: nil means not checked.
	reasoning *string
	refusal   *string
	calls     []wantCall
	// input, output, cacheRead, reasoningTokens: -1 means null.
	usage []int64
	diags []string
}

func str(s string) *string { return &s }

// refundCalls are the scripted calls with the ids each dialect's captures use.
var (
	chatTurn1 = []wantCall{{"call_7Hq2LmN4pXr9TzW1vKc3YbFd", "get_order_line", adapterstest.CaptureTurn1[0].Arguments}}
	chatTurn2 = []wantCall{
		{"call_Qw8eRt5YuI3oPa6SdF1gHj4K", "get_refund_ledger", adapterstest.CaptureTurn2[0].Arguments},
		{"call_Zx9cVb2NmL7kJh5GfD3sAq8W", "get_refund_policy", adapterstest.CaptureTurn2[1].Arguments},
	}
	dsTurn1 = []wantCall{{"call_00_kR4mT8vX2qN6wB9zL3pH5sJ1", "get_order_line", adapterstest.CaptureTurn1[0].Arguments}}
	dsTurn2 = []wantCall{
		{"call_00_aF7dG2hK9mP4rT6vY1xB3nC8", "get_refund_ledger", adapterstest.CaptureTurn2[0].Arguments},
		{"call_01_eW5qZ8uI2oL6jM4kS9dV7gH1", "get_refund_policy", adapterstest.CaptureTurn2[1].Arguments},
	}
	dsReasoning1 = "用户申请退款 150 元。先查订单行 O-2048 / L1 的实付金额和适用的售后政策。"
	dsReasoning3 = "可退上限 = 18000 − 3000 − 2000 = 13000 分；申请 15000 分超过上限，且没有质量凭证，所以 decision 为 needs_review。"
)

// TestKeyFacts states, capture by capture, what a reader of the stream
// must conclude: the terminal, the text, the calls, the usage after
// normalisation, and the diagnostics.
func TestKeyFacts(t *testing.T) {
	completed, final := adapters.StatusCompleted, adapters.StopFinal
	toolStop := adapters.StopToolCall
	cases := map[string]want{
		"chat_refund_turn1.sse":  {status: completed, stop: toolStop, provider: "tool_calls", text: str(""), calls: chatTurn1, usage: []int64{1187, 24, 0, 0}},
		"chat_refund_turn1.json": {status: completed, stop: toolStop, provider: "tool_calls", text: str(""), calls: chatTurn1, usage: []int64{1187, 24, 0, 0}},
		"chat_refund_turn2.sse":  {status: completed, stop: toolStop, provider: "tool_calls", text: str(""), calls: chatTurn2, usage: []int64{1302, 58, 1152, 0}},
		"chat_refund_turn2.json": {status: completed, stop: toolStop, provider: "tool_calls", text: str(""), calls: chatTurn2, usage: []int64{1302, 58, 1152, 0}},
		"chat_refund_turn3.sse":  {status: completed, stop: final, provider: "stop", text: str(adapterstest.CaptureModelText), usage: []int64{1561, 187, 1280, 0}},
		"chat_refund_turn3.json": {status: completed, stop: final, provider: "stop", text: str(adapterstest.CaptureModelText), usage: []int64{1561, 187, 1280, 0}},
		"chat_text.sse": {status: completed, stop: final, provider: "stop",
			text: str("您好！订单 O-2048 的退款申请已收到。\n我们会在 24 小时内给出 \"复核\" 结果。"), usage: []int64{35, 29, 0, 0}},
		"chat_refusal.sse": {status: adapters.StatusRefused, stop: adapters.StopRefusal, provider: "stop", text: str(""),
			refusal: str("I'm sorry, but I can't help with that request."), usage: []int64{412, 12, 0, 0}},
		"chat_refusal.json": {status: adapters.StatusRefused, stop: adapters.StopRefusal, provider: "stop", text: str(""),
			refusal: str("I'm sorry, but I can't help with that request."), usage: []int64{412, 12, 0, 0}},
		"chat_truncated.sse": {status: adapters.StatusIncomplete, stop: adapters.StopTruncated, provider: "length",
			text: str("根据订单记录，该商品实付 180 元，已退 30 元，另有"), usage: []int64{1561, 16, 0, 0}},
		"chat_content_filter.sse": {status: adapters.StatusRefused, stop: adapters.StopRefusal, provider: "content_filter",
			text: str("Here is the first part of the answer"), refusal: nil},
		"chat_usage_cached.sse": {status: completed, stop: final, provider: "stop", text: str("The cap is 13000 cents."), usage: []int64{2048, 230, 1920, 192}},
		"chat_error_event.sse": {status: adapters.StatusFailed, stop: adapters.StopError, provider: "server_error",
			text: str("您好，正在核查"), diags: []string{adapters.DiagErrorEvent}},
		"chat_missing_done.sse": {status: completed, stop: final, provider: "stop", text: str("好的。"), usage: []int64{20, 3, 0, 0},
			diags: []string{adapters.DiagMissingDone}},
		"chat_cut_args.sse": {status: adapters.StatusUnknown, stop: adapters.StopUnknown, provider: "",
			diags: []string{adapters.DiagStreamCut}},
		"chat_malformed.sse": {status: completed, stop: final, provider: "stop", text: str("第一段，第二段"),
			diags: []string{adapters.DiagMalformedEvent}},
		"chat_unknown.sse":        {status: completed, stop: final, provider: "stop", text: str("Hi"), usage: []int64{5, 1, 0, 0}, diags: []string{adapters.DiagUnknownEvent}},
		"chat_conflicting_id.sse": {status: completed, stop: toolStop, provider: "tool_calls", calls: chatTurn1, diags: []string{adapters.DiagConflictingCallID}},
		"chat_function_call.sse": {status: completed, stop: toolStop, provider: "function_call",
			calls: []wantCall{{"", "get_refund_policy", adapterstest.CaptureTurn2[1].Arguments}}},
		"chat_sdk_mock.sse": {status: completed, stop: toolStop, provider: "tool_calls",
			calls: []wantCall{{"call_FXoAjBUMcVv1k40fficJ9cSs", "get_weather", `{"location":"Santorini, Greece"}`}},
			// the last usage chunk, not the sum the SDK accumulator makes
			usage: []int64{0, 50, 10, 3}},

		"deepseek_refund_turn1.sse":  {status: completed, stop: toolStop, provider: "tool_calls", text: str(""), reasoning: str(dsReasoning1), calls: dsTurn1, usage: []int64{1203, 71, 1152, 42}},
		"deepseek_refund_turn1.json": {status: completed, stop: toolStop, provider: "tool_calls", text: str(""), reasoning: str(dsReasoning1), calls: dsTurn1, usage: []int64{1203, 71, 1152, 42}},
		"deepseek_refund_turn2.sse":  {status: completed, stop: toolStop, provider: "tool_calls", text: str(""), calls: dsTurn2, usage: []int64{1336, 118, 1280, 63}},
		"deepseek_refund_turn2.json": {status: completed, stop: toolStop, provider: "tool_calls", text: str(""), calls: dsTurn2, usage: []int64{1336, 118, 1280, 63}},
		"deepseek_refund_turn3.sse":  {status: completed, stop: final, provider: "stop", text: str(adapterstest.CaptureModelText), reasoning: str(dsReasoning3), usage: []int64{1652, 296, 1280, 88}},
		"deepseek_refund_turn3.json": {status: completed, stop: final, provider: "stop", text: str(adapterstest.CaptureModelText), reasoning: str(dsReasoning3), usage: []int64{1652, 296, 1280, 88}},
		"deepseek_text.sse": {status: completed, stop: final, provider: "stop", text: str("您的退款申请正在人工复核中，复核前不会执行任何退款。"),
			reasoning: str("顾客问退款进度，直接回答即可。"), usage: []int64{283, 69, 256, 24}},
		"deepseek_insufficient.sse": {status: adapters.StatusFailed, stop: adapters.StopError, provider: "insufficient_system_resource",
			text: str("正在核查订单"), usage: []int64{1203, 19, 1152, 8}},
		// usage on the finish chunk and again in a trailing chunk: the last wins
		"deepseek_usage_twice.sse": {status: completed, stop: final, provider: "stop", text: str("好的，马上处理。"), reasoning: str(""), usage: []int64{40, 7, 0, 0}},
	}
	for _, name := range captures(t) {
		if _, ok := cases[name]; !ok {
			t.Errorf("capture %s has no key facts in this test", name)
		}
	}
	for name, w := range cases {
		t.Run(name, func(t *testing.T) {
			_, s := decodeCapture(t, name)
			if s.Terminal != w.status || s.StopReason != w.stop || s.ProviderStopReason != w.provider {
				t.Errorf("terminal = %s/%s (%q), want %s/%s (%q)", s.Terminal, s.StopReason, s.ProviderStopReason, w.status, w.stop, w.provider)
			}
			if w.text != nil && s.Text != *w.text {
				t.Errorf("text = %q, want %q", s.Text, *w.text)
			}
			if w.reasoning != nil && s.Reasoning != *w.reasoning {
				t.Errorf("reasoning = %q, want %q", s.Reasoning, *w.reasoning)
			}
			if w.refusal != nil && (s.Refusal == nil || *s.Refusal != *w.refusal) {
				t.Errorf("refusal = %v, want %q", s.Refusal, *w.refusal)
			}
			if w.refusal == nil && s.Refusal != nil {
				t.Errorf("refusal = %q, want none", *s.Refusal)
			}
			if len(s.ToolCalls) != len(w.calls) {
				t.Fatalf("%d tool calls, want %d: %+v", len(s.ToolCalls), len(w.calls), s.ToolCalls)
			}
			for i, c := range w.calls {
				got := s.ToolCalls[i]
				if got.CallID != c.id || got.Name != c.name || string(got.Arguments) != c.args {
					t.Errorf("call %d = %s %s %s, want %s %s %s", i, got.CallID, got.Name, got.Arguments, c.id, c.name, c.args)
				}
			}
			if w.usage != nil {
				checkUsage(t, s.Usage, w.usage)
			}
			var kinds []string
			for _, d := range s.Diagnostics {
				kinds = append(kinds, d.Kind)
			}
			if !slices.Equal(kinds, w.diags) {
				t.Errorf("diagnostics = %v, want %v (%+v)", kinds, w.diags, s.Diagnostics)
			}
			if w.status == adapters.StatusFailed && s.Error == nil {
				t.Error("a failed terminal without its error")
			}
		})
	}
}

func checkUsage(t *testing.T, u *adapters.Usage, w []int64) {
	t.Helper()
	if u == nil {
		t.Fatal("no usage")
	}
	for i, got := range []*int64{u.InputTokens, u.OutputTokens, u.CacheReadTokens, u.ReasoningTokens} {
		name := []string{"input", "output", "cache_read", "reasoning"}[i]
		switch {
		case w[i] < 0 && got != nil:
			t.Errorf("%s = %d, want null", name, *got)
		case w[i] >= 0 && (got == nil || *got != w[i]):
			t.Errorf("%s = %v, want %d", name, got, w[i])
		}
	}
	if u.CacheWriteTokens != nil {
		t.Errorf("cache_write = %d, want null (no capture reports one)", *u.CacheWriteTokens)
	}
	if !json.Valid(u.ProviderUsage) {
		t.Errorf("provider_usage is not the provider's JSON: %s", u.ProviderUsage)
	}
}

// decodeString runs an inline stream (LF line ends) through p.
func decodeString(t *testing.T, p adapters.Protocol, stream string) ([]adapters.Event, adapters.Summary) {
	t.Helper()
	return adapterstest.Decode(t, p, []byte(stream))
}

func types(events []adapters.Event) []string {
	var out []string
	for _, ev := range events {
		s := string(ev.Type)
		if ev.Type == adapters.EvDiagnostic {
			s += ":" + ev.Kind
		}
		out = append(out, s)
	}
	return out
}

func TestEventOrderOfAToolCallTurn(t *testing.T) {
	events, _ := decodeCapture(t, "chat_refund_turn2.sse")
	var got []string
	for _, ev := range events {
		if ev.Type != adapters.EvToolArgsDelta {
			got = append(got, string(ev.Type)+" "+ev.ItemID)
		}
	}
	want := []string{
		"response.started ",
		"item.started tool_call:0",
		"item.started tool_call:1",
		"item.done tool_call:0", "tool.proposed ",
		"item.done tool_call:1", "tool.proposed ",
		"usage ",
		"response.terminal ",
	}
	if !slices.Equal(got, want) {
		t.Errorf("events:\n got %q\nwant %q", got, want)
	}
	// item.started carries the call id and name from the first fragment
	for _, ev := range events {
		if ev.Type == adapters.EvItemStarted && ev.ItemID == "tool_call:1" && (ev.CallID != chatTurn2[1].id || ev.Name != "get_refund_policy") {
			t.Errorf("item.started = %+v", ev)
		}
	}
}

func TestCutMidArguments(t *testing.T) {
	events, s := decodeCapture(t, "chat_cut_args.sse")
	for _, ev := range events {
		if ev.Type == adapters.EvToolProposed {
			t.Fatalf("a call was proposed from a cut stream: %+v", ev)
		}
	}
	if len(s.ToolCalls) != 0 || len(s.IncompleteToolCalls) != 1 {
		t.Fatalf("calls %+v, incomplete %+v", s.ToolCalls, s.IncompleteToolCalls)
	}
	ic := s.IncompleteToolCalls[0]
	if ic.CallID != chatTurn1[0].id || ic.Name != "get_order_line" || ic.PartialArguments != `{"order_id":"O-` || ic.Reason != "item_not_done" {
		t.Errorf("incomplete call = %+v", ic)
	}
	if s.Terminal != adapters.StatusUnknown || s.Diagnostics[0].Kind != adapters.DiagStreamCut {
		t.Errorf("terminal %s, diagnostics %+v", s.Terminal, s.Diagnostics)
	}
}

func TestErrorAfter200(t *testing.T) {
	_, s := decodeCapture(t, "chat_error_event.sse")
	if s.Error == nil || s.Error.Type != "server_error" || !strings.Contains(s.Error.Message, "The server had an error") || s.Error.HTTPStatus != 0 {
		t.Errorf("error = %+v", s.Error)
	}
	// the text received so far is kept; the terminal says it is no answer
	if s.Text != "您好，正在核查" || s.Terminal != adapters.StatusFailed {
		t.Errorf("text %q, terminal %s", s.Text, s.Terminal)
	}
}

func TestMalformedAndUnknownEvents(t *testing.T) {
	events, _ := decodeCapture(t, "chat_unknown.sse")
	found := false
	for _, ev := range events {
		if ev.Type == adapters.EvUnknown {
			found = ev.RawType == "ping"
		}
	}
	if !found {
		t.Errorf("no provider.unknown ping in %v", types(events))
	}

	_, s := decodeString(t, New(), "data: \n\ndata: [1,2]\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	var kinds []string
	for _, d := range s.Diagnostics {
		kinds = append(kinds, d.Kind)
	}
	if !slices.Equal(kinds, []string{adapters.DiagMalformedEvent, adapters.DiagMalformedEvent}) || s.Text != "x" || s.Terminal != adapters.StatusCompleted {
		t.Errorf("diagnostics %v, text %q, terminal %s", kinds, s.Text, s.Terminal)
	}
}

// DeepSeek's first thinking chunk carries reasoning_content "" — it must
// not open a reasoning lane; non-thinking streams never open one.
func TestDeepSeekEmptyFirstReasoningOpensNoLane(t *testing.T) {
	stream := "data: {\"id\":\"x\",\"model\":\"deepseek-v4-flash\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":null,\"reasoning_content\":\"\"},\"finish_reason\":null}]}\n\n" +
		"data: {\"id\":\"x\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"plain\",\"reasoning_content\":null}}]}\n\n" +
		"data: {\"id\":\"x\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\"},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":2,\"prompt_cache_hit_tokens\":8,\"prompt_cache_miss_tokens\":2}}\n\n" +
		"data: [DONE]\n\n"
	events, s := decodeString(t, NewDeepSeek(), stream)
	for _, ev := range events {
		if ev.Type == adapters.EvItemStarted && ev.Kind != string(adapters.KindMessage) {
			t.Errorf("a %s lane was opened", ev.Kind)
		}
	}
	// DeepSeek without prompt_tokens_details: the hit count is the cache read
	checkUsage(t, s.Usage, []int64{10, 2, 8, -1})
	if s.Text != "plain" || s.Reasoning != "" {
		t.Errorf("text %q reasoning %q", s.Text, s.Reasoning)
	}
}

func TestDeepSeekKeepAlivesAndReasoningLane(t *testing.T) {
	events, s := decodeCapture(t, "deepseek_refund_turn1.sse")
	if len(s.Diagnostics) != 0 {
		t.Errorf("keep-alive comments produced diagnostics: %+v", s.Diagnostics)
	}
	var order []string
	for _, ev := range events {
		if ev.Type == adapters.EvItemStarted {
			order = append(order, ev.Kind)
		}
	}
	if !slices.Equal(order, []string{"reasoning", "tool_call"}) {
		t.Errorf("lanes opened %v", order)
	}
}

func TestDoneWithoutFinishReason(t *testing.T) {
	_, s := decodeString(t, New(), "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"half\"}}]}\n\ndata: [DONE]\n\n")
	if s.Terminal != adapters.StatusUnknown || len(s.Diagnostics) != 1 || s.Diagnostics[0].Kind != diagMissingFinish {
		t.Errorf("terminal %s, diagnostics %+v", s.Terminal, s.Diagnostics)
	}
}

func TestEventsAfterDoneAreLate(t *testing.T) {
	body := adapterstest.ReadCapture(t, "chat_text.sse")
	body = append(body, "data: {\"id\":\"chatcmpl-CRf2b7Lx4Qm9Tz2Wv6Kc1YbNd\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"more\"}}]}\n\ndata: [DONE]\n\n"...)
	events, s := adapterstest.Decode(t, New(), body)
	if strings.Contains(s.Text, "more") {
		t.Error("text after [DONE] was taken")
	}
	if got := types(events); got[len(got)-1] != "diagnostic:late_event" {
		t.Errorf("events end with %v", got[len(got)-3:])
	}
}

func TestRepeatedFinishReason(t *testing.T) {
	stream := "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"},\"finish_reason\":\"stop\"}]}\n\n" +
		"data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"length\"}]}\n\n" +
		"data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n" +
		"data: [DONE]\n\ndata: [DONE]\n\n"
	_, s := decodeString(t, New(), stream)
	if s.Terminal != adapters.StatusCompleted || s.ProviderStopReason != "stop" || len(s.Diagnostics) != 1 || s.Diagnostics[0].Kind != adapters.DiagDuplicateEvent {
		t.Errorf("terminal %s (%s), diagnostics %+v", s.Terminal, s.ProviderStopReason, s.Diagnostics)
	}
}

func TestOtherChoicesIgnored(t *testing.T) {
	stream := "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}},{\"index\":1,\"delta\":{\"content\":\"b\"}}]}\n\n" +
		"data: {\"id\":\"c\",\"choices\":[{\"index\":1,\"delta\":{\"content\":\"c\"}},{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"
	_, s := decodeString(t, New(), stream)
	if s.Text != "a" || len(s.Diagnostics) != 1 || s.Diagnostics[0].Kind != adapters.DiagUnknownEvent {
		t.Errorf("text %q diagnostics %+v", s.Text, s.Diagnostics)
	}
}

// The same bytes with CRLF line ends decode to the same summary.
func TestCRLF(t *testing.T) {
	lf := adapterstest.ReadCapture(t, "chat_text.sse")
	crlf := bytes.ReplaceAll(lf, []byte("\n"), []byte("\r\n"))
	_, a := adapterstest.Decode(t, New(), lf)
	_, b := adapterstest.Decode(t, New(), crlf)
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if !bytes.Equal(ja, jb) {
		t.Errorf("CRLF summary differs:\n%s\n%s", ja, jb)
	}
}

func TestBodyOddities(t *testing.T) {
	p := New()
	events := p.DecodeBody([]byte(`{"id":"chatcmpl-x","choices":[`))
	if got := types(events); !slices.Equal(got, []string{"diagnostic:malformed_event", "response.terminal"}) {
		t.Errorf("malformed body: %v", got)
	}
	events = p.DecodeBody([]byte(`{"error":{"message":"Rate limit reached","type":"requests","param":null,"code":"rate_limit_exceeded"}}`))
	if got := types(events); !slices.Equal(got, []string{"diagnostic:error_event", "response.terminal"}) || events[1].Status != adapters.StatusFailed || events[1].Error.Code != "rate_limit_exceeded" {
		t.Errorf("error body: %v %+v", got, events)
	}
	_, s := adapterstest.Decode(t, p, []byte(`{"id":"c","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]},"finish_reason":"stop"}]}`))
	if s.Text != "ab" || s.Terminal != adapters.StatusCompleted {
		t.Errorf("text parts body: %q %s", s.Text, s.Terminal)
	}
}

// TestDecodeError reads each documented error body (protocols.md §6.1).
func TestDecodeError(t *testing.T) {
	cases := []struct {
		p       adapters.Protocol
		status  int
		header  map[string]string
		body    string
		typ     string
		code    string
		message string
		retryMS int64
	}{
		{New(), 401, nil, `{"error":{"message":"Incorrect API key provided: sk-abc. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`,
			"invalid_request_error", "invalid_api_key", "Incorrect API key provided", 0},
		{New(), 429, map[string]string{"Retry-After": "3"}, `{"error":{"message":"Rate limit reached for gpt-4.1 in organization org-abc on tokens per min (TPM): Limit 30000, Used 29876, Requested 1200. Please try again in 2.152s.","type":"tokens","param":null,"code":"rate_limit_exceeded"}}`,
			"tokens", "rate_limit_exceeded", "Rate limit reached", 3000},
		{New(), 429, map[string]string{"Retry-After-Ms": "1500", "Retry-After": "9"}, `{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`,
			"insufficient_quota", "insufficient_quota", "You exceeded your current quota", 1500},
		{New(), 500, nil, `upstream connect error or disconnect/reset before headers`, "http_error", "", "upstream connect error", 0},
		{NewDeepSeek(), 401, nil, `{"error":{"message":"Authentication Fails, Your api key: ****abcd is invalid","type":"authentication_error","param":null,"code":"invalid_request_error"}}`,
			"authentication_error", "invalid_request_error", "Authentication Fails", 0},
		{NewDeepSeek(), 402, nil, `{"error":{"message":"Insufficient Balance","type":"unknown_error","param":null,"code":"invalid_request_error"}}`,
			"unknown_error", "invalid_request_error", "Insufficient Balance", 0},
		{NewDeepSeek(), 400, nil, `{"error":{"message":"Missing reasoning_content field in the assistant message at message index 3.","type":"invalid_request_error","param":null,"code":"invalid_request_error"}}`,
			"invalid_request_error", "invalid_request_error", "Missing reasoning_content", 0},
		{NewDeepSeek(), 503, map[string]string{"Retry-After": "1"}, `{"error":{"message":"Server Overloaded","type":"server_error","code":"server_overloaded"}}`,
			"server_error", "server_overloaded", "Server Overloaded", 1000},
	}
	for _, c := range cases {
		h := make(map[string][]string)
		for k, v := range c.header {
			h[k] = []string{v}
		}
		e := c.p.DecodeError(c.status, h, []byte(c.body))
		if e.HTTPStatus != c.status || e.Type != c.typ || e.Code != c.code || !strings.HasPrefix(e.Message, c.message) || e.RetryAfterMS != c.retryMS {
			t.Errorf("%s %d: %+v", c.p.Name(), c.status, e)
		}
	}
}

// FuzzDecode feeds arbitrary bytes through the decoder as a stream and as
// a body; the invariants must hold and nothing may panic.
func FuzzDecode(f *testing.F) {
	var seeds [][]byte
	paths, _ := filepath.Glob("testdata/*")
	for _, p := range paths {
		if strings.HasSuffix(p, ".sse") || (strings.HasSuffix(p, ".json") && !strings.HasSuffix(p, ".golden.json")) {
			b, err := os.ReadFile(p)
			if err == nil {
				seeds = append(seeds, b)
			}
		}
	}
	adapterstest.Fuzz(f, New(), seeds...)
}

// Shapes some OpenAI-compatible servers send (the "compatible" provider):
// reasoning under "reasoning" or under both names with the same text,
// tool calls without an index, arguments as an object.
func TestCompatibleServerOddities(t *testing.T) {
	stream := "data: {\"id\":\"c\",\"model\":\"qwen3\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"reasoning\":\"think\",\"reasoning_content\":\"think\"}}]}\n\n" +
		"data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"reasoning\":\"ing\"}}]}\n\n" +
		"data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"id\":\"call_a\",\"type\":\"function\",\"function\":{\"name\":\"get_refund_policy\",\"arguments\":{\"policy_id\":\"aftersale-v3\"}}},{\"id\":\"call_b\",\"type\":\"function\",\"function\":{\"name\":\"get_order_line\",\"arguments\":\"{\\\"order_id\\\":\\\"O-2048\\\",\\\"line_id\\\":\\\"L1\\\"}\"}}]}}]}\n\n" +
		"data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n"
	_, s := decodeString(t, New(), stream)
	if s.Reasoning != "thinking" {
		t.Errorf("reasoning %q", s.Reasoning)
	}
	if len(s.ToolCalls) != 2 || s.ToolCalls[0].CallID != "call_a" || string(s.ToolCalls[0].Arguments) != `{"policy_id":"aftersale-v3"}` ||
		s.ToolCalls[1].CallID != "call_b" || string(s.ToolCalls[1].Arguments) != adapterstest.CaptureTurn1[0].Arguments {
		t.Errorf("calls %+v", s.ToolCalls)
	}
}

// A delta longer than a few dozen bytes whose escapes (a line break, a
// tab) come after its first 32 bytes and are not quotes is unescaped: the
// scanner used to see an escape only in a string's first 32 bytes or just
// before a quote, and such a delta kept its backslashes.
func TestLongDeltaWithEscapeInside(t *testing.T) {
	text := strings.Repeat("退款核查", 4) + "\nL1\t" + strings.Repeat("ok ", 12)
	delta, _ := json.Marshal(text)
	_, s := decodeString(t, New(), "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":"+string(delta)+"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	if s.Text != text {
		t.Errorf("text %q, want %q", s.Text, text)
	}
}
