package openairesponses

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/adapterstest"
)

// decodeCapture decodes testdata/<name> (SSE or JSON body).
func decodeCapture(t *testing.T, name string) ([]adapters.Event, adapters.Summary) {
	t.Helper()
	return adapterstest.Decode(t, New(), adapterstest.ReadCapture(t, name))
}

// captures lists the response captures (not the error bodies).
func captures(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		n := e.Name()
		if strings.HasSuffix(n, ".sse") || (strings.HasSuffix(n, ".json") && !strings.HasSuffix(n, ".golden.json") && !strings.HasPrefix(n, "error_")) {
			out = append(out, n)
		}
	}
	if len(out) < 20 {
		t.Fatalf("only %d captures found", len(out))
	}
	return out
}

func TestSummaryGoldens(t *testing.T) {
	for _, name := range captures(t) {
		t.Run(name, func(t *testing.T) {
			_, s := decodeCapture(t, name)
			adapterstest.Golden(t, name+".summary", s)
		})
	}
}

// clean are the captures that must decode without any diagnostic.
var clean = []string{
	"refund_turn1.sse", "refund_turn2.sse", "refund_turn3.sse", "refund_turn1.json", "refund_turn2.json", "refund_turn3.json",
	"text_only.sse", "reasoning.sse", "refusal.sse", "refusal.json", "truncated.sse", "content_filter.sse",
	"failed.sse", "completed_only.sse", "incomplete.json",
}

func TestCleanCapturesHaveNoDiagnostics(t *testing.T) {
	for _, name := range clean {
		_, s := decodeCapture(t, name)
		if len(s.Diagnostics) != 0 {
			t.Errorf("%s: unexpected diagnostics %+v", name, s.Diagnostics)
		}
	}
	// Unknown events are reported, one diagnostic each, and nothing else.
	events, s := decodeCapture(t, "unknown_events.sse")
	unknown := 0
	for _, ev := range events {
		if ev.Type == adapters.EvUnknown {
			unknown++
		}
	}
	for _, d := range s.Diagnostics {
		if d.Kind != adapters.DiagUnknownEvent {
			t.Errorf("unknown_events.sse: unexpected diagnostic %+v", d)
		}
	}
	if unknown == 0 || len(s.Diagnostics) != unknown {
		t.Errorf("unknown_events.sse: %d unknown events, %d diagnostics", unknown, len(s.Diagnostics))
	}
}

func TestDeltasSplitAtCharacterBoundaries(t *testing.T) {
	for _, name := range captures(t) {
		if !strings.HasSuffix(name, ".sse") || name == "malformed.sse" {
			continue
		}
		events, _ := decodeCapture(t, name)
		for _, ev := range events {
			if ev.Delta != "" && !utf8.ValidString(ev.Delta) {
				t.Errorf("%s: delta %q is not whole characters", name, ev.Delta)
			}
		}
	}
}

func wantUsage(t *testing.T, name string, u *adapters.Usage, in, out, cacheRead, cacheWrite, reasoning int64) {
	t.Helper()
	if u == nil {
		t.Fatalf("%s: no usage", name)
	}
	got := []*int64{u.InputTokens, u.OutputTokens, u.CacheReadTokens, u.CacheWriteTokens, u.ReasoningTokens}
	want := []int64{in, out, cacheRead, cacheWrite, reasoning}
	labels := []string{"input", "output", "cache_read", "cache_write", "reasoning"}
	for i := range got {
		if got[i] == nil || *got[i] != want[i] {
			t.Errorf("%s: %s tokens = %v, want %d", name, labels[i], deref(got[i]), want[i])
		}
	}
	if !json.Valid(u.ProviderUsage) || !strings.Contains(string(u.ProviderUsage), `"input_tokens_details"`) {
		t.Errorf("%s: provider_usage is not the raw usage object: %s", name, u.ProviderUsage)
	}
}

func deref(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

func wantTerminal(t *testing.T, name string, s adapters.Summary, status adapters.Status, stop adapters.StopReason, provider string) {
	t.Helper()
	if s.Terminal != status || s.StopReason != stop || s.ProviderStopReason != provider {
		t.Errorf("%s: terminal %s/%s (%s), want %s/%s (%s)", name, s.Terminal, s.StopReason, s.ProviderStopReason, status, stop, provider)
	}
}

func wantCalls(t *testing.T, name string, got []adapters.ToolCall, want ...[3]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d tool calls, want %d: %+v", name, len(got), len(want), got)
	}
	for i, w := range want {
		if got[i].CallID != w[0] || got[i].Name != w[1] || string(got[i].Arguments) != w[2] {
			t.Errorf("%s: call %d = %s %s %s, want %v", name, i, got[i].CallID, got[i].Name, got[i].Arguments, w)
		}
	}
}

func TestRefundTurns(t *testing.T) {
	for _, ext := range []string{".sse", ".json"} {
		name := "refund_turn1" + ext
		events, s := decodeCapture(t, name)
		wantTerminal(t, name, s, adapters.StatusCompleted, adapters.StopToolCall, "completed")
		wantCalls(t, name, s.ToolCalls, [3]string{refundIDs.call[0], "get_order_line", adapterstest.CaptureTurn1[0].Arguments})
		wantUsage(t, name, s.Usage, 1822, 87, 0, 0, 64)
		if s.ResponseID != refundIDs.resp[1] || s.Model != genModel {
			t.Errorf("%s: response %s model %s", name, s.ResponseID, s.Model)
		}
		if s.Reasoning != refundIDs.reasoningText || s.Text != "" || s.Refusal != nil {
			t.Errorf("%s: reasoning %q text %q refusal %v", name, s.Reasoning, s.Text, s.Refusal)
		}
		var sig string
		var proposed int
		for _, ev := range events {
			if ev.Type == adapters.EvItemDone && ev.ItemID == refundIDs.rs {
				sig = ev.Signature
			}
			if ev.Type == adapters.EvToolProposed {
				proposed++
			}
		}
		if sig != refundIDs.encrypted {
			t.Errorf("%s: reasoning signature %q, want the encrypted_content", name, sig)
		}
		if proposed != 1 {
			t.Errorf("%s: %d tool.proposed, want 1", name, proposed)
		}

		name = "refund_turn2" + ext
		_, s = decodeCapture(t, name)
		wantTerminal(t, name, s, adapters.StatusCompleted, adapters.StopToolCall, "completed")
		wantCalls(t, name, s.ToolCalls,
			[3]string{refundIDs.call[1], "get_refund_ledger", adapterstest.CaptureTurn2[0].Arguments},
			[3]string{refundIDs.call[2], "get_refund_policy", adapterstest.CaptureTurn2[1].Arguments})
		wantUsage(t, name, s.Usage, 2106, 61, 1792, 0, 0)

		name = "refund_turn3" + ext
		_, s = decodeCapture(t, name)
		wantTerminal(t, name, s, adapters.StatusCompleted, adapters.StopFinal, "completed")
		if s.Text != adapterstest.CaptureModelText {
			t.Errorf("%s: text %q", name, s.Text)
		}
		if len(s.ToolCalls) != 0 || len(s.IncompleteToolCalls) != 0 {
			t.Errorf("%s: unexpected calls", name)
		}
		wantUsage(t, name, s.Usage, 2531, 212, 2048, 384, 0)
	}
}

func TestStreamedTurn1Events(t *testing.T) {
	events, _ := decodeCapture(t, "refund_turn1.sse")
	var types []string
	for _, ev := range events {
		if ev.Type == adapters.EvReasoningDelta || ev.Type == adapters.EvToolArgsDelta {
			if ev.Type == adapters.EvToolArgsDelta && ev.CallID != refundIDs.call[0] {
				t.Errorf("tool.args.delta without its call_id: %+v", ev)
			}
			continue
		}
		types = append(types, string(ev.Type)+" "+ev.ItemID+ev.Kind)
	}
	want := []string{
		"response.started ",
		"item.started " + refundIDs.rs + "reasoning",
		"item.done " + refundIDs.rs,
		"item.started " + refundIDs.fc[0] + "tool_call",
		"item.done " + refundIDs.fc[0],
		"tool.proposed ",
		"usage ",
		"response.terminal ",
	}
	if strings.Join(types, "\n") != strings.Join(want, "\n") {
		t.Errorf("events:\n%s\nwant:\n%s", strings.Join(types, "\n"), strings.Join(want, "\n"))
	}
}

func TestTextOnly(t *testing.T) {
	_, s := decodeCapture(t, "text_only.sse")
	wantTerminal(t, "text_only", s, adapters.StatusCompleted, adapters.StopFinal, "completed")
	if s.Text != "Hello! 你好，这里是退款核查助手。" {
		t.Errorf("text %q", s.Text)
	}
}

func TestReasoningParts(t *testing.T) {
	events, s := decodeCapture(t, "reasoning.sse")
	want := "**Reading the ledger**\n\nPaid 18000, refunded 3000.\n\n**Cap**\n\n可退上限 = 18000 − 3000 − 2000 = 13000 分。"
	if s.Reasoning != want {
		t.Errorf("reasoning %q, want %q", s.Reasoning, want)
	}
	if s.Text != "最多可退 130 元。" {
		t.Errorf("text %q", s.Text)
	}
	wantUsage(t, "reasoning", s.Usage, 120, 310, 0, 0, 288)
	for _, ev := range events {
		if ev.Type == adapters.EvItemDone && strings.HasPrefix(ev.ItemID, "rs_") && ev.Signature == "" {
			t.Error("reasoning item closed without its encrypted_content")
		}
	}
}

func TestRefusal(t *testing.T) {
	for _, name := range []string{"refusal.sse", "refusal.json"} {
		events, s := decodeCapture(t, name)
		wantTerminal(t, name, s, adapters.StatusRefused, adapters.StopRefusal, "completed")
		if s.Refusal == nil || *s.Refusal != "抱歉，我不能直接执行退款操作。" || s.Text != "" {
			t.Errorf("%s: refusal %v text %q", name, s.Refusal, s.Text)
		}
		lanes := map[string]string{}
		for _, ev := range events {
			if ev.Type == adapters.EvItemStarted {
				lanes[ev.ItemID] = ev.Kind
			}
		}
		id := "msg_2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f71"
		if lanes[id] != "message" || lanes[id+":refusal"] != "refusal" {
			t.Errorf("%s: lanes %v, want the message and its :refusal lane", name, lanes)
		}
	}
}

func TestTruncated(t *testing.T) {
	_, s := decodeCapture(t, "truncated.sse")
	wantTerminal(t, "truncated", s, adapters.StatusIncomplete, adapters.StopTruncated, "max_output_tokens")
	if want := strings.Join(split(adapterstest.CaptureModelText)[:9], ""); s.Text != want {
		t.Errorf("partial text %q, want %q", s.Text, want)
	}
	_, s = decodeCapture(t, "incomplete.json")
	wantTerminal(t, "incomplete.json", s, adapters.StatusIncomplete, adapters.StopTruncated, "max_output_tokens")
	wantUsage(t, "incomplete.json", s.Usage, 2400, 2048, 0, 0, 2048)
	_, s = decodeCapture(t, "content_filter.sse")
	wantTerminal(t, "content_filter", s, adapters.StatusRefused, adapters.StopRefusal, "content_filter")
}

func TestFailedAndErrorEvents(t *testing.T) {
	_, s := decodeCapture(t, "failed.sse")
	wantTerminal(t, "failed", s, adapters.StatusFailed, adapters.StopError, "failed")
	if s.Error == nil || s.Error.Type != "server_error" || s.Error.Code != "server_error" || !strings.Contains(s.Error.Message, "server had an error") {
		t.Errorf("failed: error %+v", s.Error)
	}

	_, s = decodeCapture(t, "error_flat.sse")
	wantTerminal(t, "error_flat", s, adapters.StatusFailed, adapters.StopError, "error")
	if s.Error == nil || s.Error.Type != "server_error" || s.Error.Message != "The model produced invalid content." || s.Error.HTTPStatus != 0 {
		t.Errorf("error_flat: error %+v", s.Error)
	}
	if !hasDiag(s, adapters.DiagErrorEvent) {
		t.Error("error_flat: no error_event diagnostic")
	}
	if s.Text != "您好，" {
		t.Errorf("error_flat: partial text %q", s.Text)
	}

	_, s = decodeCapture(t, "error_nested.sse")
	wantTerminal(t, "error_nested", s, adapters.StatusFailed, adapters.StopError, "error")
	if s.Error == nil || s.Error.Type != "too_many_requests" || s.Error.Code != "too_many_requests" || s.Error.Message != "Too Many Requests" {
		t.Errorf("error_nested: error %+v", s.Error)
	}
	if !hasDiag(s, adapters.DiagErrorEvent) {
		t.Error("error_nested: no error_event diagnostic")
	}
}

func hasDiag(s adapters.Summary, kind string) bool { return countDiag(s, kind) > 0 }

func countDiag(s adapters.Summary, kind string) int {
	n := 0
	for _, d := range s.Diagnostics {
		if d.Kind == kind {
			n++
		}
	}
	return n
}

func TestUnknownEvents(t *testing.T) {
	events, s := decodeCapture(t, "unknown_events.sse")
	var unknown []string
	for _, ev := range events {
		if ev.Type == adapters.EvUnknown {
			unknown = append(unknown, ev.RawType)
		}
	}
	want := []string{
		"response.output_item.added:web_search_call",
		"response.web_search_call.in_progress",
		"response.web_search_call.searching",
		"response.web_search_call.completed",
		"response.output_item.done:web_search_call",
		"response.future_feature.delta",
	}
	if strings.Join(unknown, ",") != strings.Join(want, ",") {
		t.Errorf("provider.unknown %v, want %v", unknown, want)
	}
	wantTerminal(t, "unknown_events", s, adapters.StatusCompleted, adapters.StopFinal, "completed")
	if s.Text != "Found it." {
		t.Errorf("text %q", s.Text)
	}
}

func TestCutMidArguments(t *testing.T) {
	events, s := decodeCapture(t, "cut_mid_args.sse")
	for _, ev := range events {
		if ev.Type == adapters.EvToolProposed {
			t.Fatal("a cut call was proposed")
		}
	}
	wantTerminal(t, "cut_mid_args", s, adapters.StatusUnknown, adapters.StopUnknown, "")
	if len(s.ToolCalls) != 0 || len(s.IncompleteToolCalls) != 1 {
		t.Fatalf("calls %+v incomplete %+v", s.ToolCalls, s.IncompleteToolCalls)
	}
	ic := s.IncompleteToolCalls[0]
	if ic.CallID != "call_Zc4Vb7Nm1Qw8Er5Ty2Ui9OpA" || ic.Name != "get_order_line" || ic.PartialArguments != strings.Join(split(adapterstest.CaptureTurn1[0].Arguments)[:3], "") {
		t.Errorf("incomplete call %+v", ic)
	}
	if !hasDiag(s, adapters.DiagStreamCut) {
		t.Error("no stream_cut diagnostic")
	}
}

func TestSequenceNumbers(t *testing.T) {
	_, s := decodeCapture(t, "duplicates.sse")
	for kind, n := range map[string]int{adapters.DiagDuplicateEvent: 1, adapters.DiagOutOfOrder: 1, adapters.DiagSequenceGap: 1, adapters.DiagTextDoneMismatch: 1} {
		if got := countDiag(s, kind); got != n {
			t.Errorf("%d %s diagnostics, want %d: %+v", got, kind, n, s.Diagnostics)
		}
	}
	// The exact repeat was dropped, the conflicting event decoded, and the
	// provider's final text won.
	if s.Text != "Hello" {
		t.Errorf("text %q", s.Text)
	}
	wantTerminal(t, "duplicates", s, adapters.StatusCompleted, adapters.StopFinal, "completed")
}

func TestLateEvents(t *testing.T) {
	_, s := decodeCapture(t, "late_event.sse")
	if n := countDiag(s, adapters.DiagLateEvent); n != 2 {
		t.Errorf("%d late_event diagnostics, want 2: %+v", n, s.Diagnostics)
	}
	if s.Text != "Done." {
		t.Errorf("text %q", s.Text)
	}
	wantTerminal(t, "late_event", s, adapters.StatusCompleted, adapters.StopFinal, "completed")
}

func TestMalformed(t *testing.T) {
	_, s := decodeCapture(t, "malformed.sse")
	if n := countDiag(s, adapters.DiagMalformedEvent); n != 3 {
		t.Errorf("%d malformed_event diagnostics, want 3 (cut JSON, array, no type): %+v", n, s.Diagnostics)
	}
	if !hasDiag(s, adapters.DiagSequenceGap) || !hasDiag(s, diagEventNameMismatch) {
		t.Errorf("diagnostics %+v lack sequence_gap or event_name_mismatch", s.Diagnostics)
	}
	if s.Text != "退款核查" {
		t.Errorf("text %q", s.Text)
	}
	wantTerminal(t, "malformed", s, adapters.StatusCompleted, adapters.StopFinal, "completed")
}

func TestCompletedOnly(t *testing.T) {
	_, s := decodeCapture(t, "completed_only.sse")
	wantTerminal(t, "completed_only", s, adapters.StatusCompleted, adapters.StopToolCall, "completed")
	wantCalls(t, "completed_only", s.ToolCalls, [3]string{"call_Wd3Fg6Hj9Kl2Zx5Cv8Bn1MqA", "get_refund_policy", `{"policy_id":"aftersale-v3"}`})
}

// Small streams built in place, for cases no capture covers.
func decodeEvents(t *testing.T, lines ...string) ([]adapters.Event, adapters.Summary) {
	t.Helper()
	var b strings.Builder
	for _, l := range lines {
		b.WriteString("data: " + l + "\n\n")
	}
	return adapterstest.Decode(t, New(), []byte(b.String()))
}

func TestConflictingCallIDs(t *testing.T) {
	_, s := decodeEvents(t,
		`{"type":"response.output_item.added","sequence_number":0,"output_index":0,"item":{"id":"fc_1","type":"function_call","status":"in_progress","arguments":"","call_id":"call_same","name":"a"}}`,
		`{"type":"response.output_item.added","sequence_number":1,"output_index":1,"item":{"id":"fc_2","type":"function_call","status":"in_progress","arguments":"","call_id":"call_same","name":"b"}}`,
	)
	if !hasDiag(s, adapters.DiagConflictingCallID) {
		t.Errorf("no conflicting_call_id: %+v", s.Diagnostics)
	}
}

func TestBareErrorPayloadAndCancelled(t *testing.T) {
	_, s := decodeEvents(t, `{"error":{"message":"Overloaded","type":"server_error","code":null}}`)
	wantTerminal(t, "bare error", s, adapters.StatusFailed, adapters.StopError, "error")
	if s.Error == nil || s.Error.Type != "server_error" || s.Error.Message != "Overloaded" {
		t.Errorf("error %+v", s.Error)
	}
	_, s = adapterstest.Decode(t, New(), []byte(`{"id":"resp_1","object":"response","status":"cancelled","output":[],"usage":null}`))
	wantTerminal(t, "cancelled", s, adapters.StatusCancelled, adapters.StopUnknown, "cancelled")
	_, s = adapterstest.Decode(t, New(), []byte(`{"error":{"message":"bad","type":"invalid_request_error","param":null,"code":null}}`))
	wantTerminal(t, "error body", s, adapters.StatusFailed, adapters.StopError, "error")
}

// Odd events neither panic nor vanish: each is reported by the diagnostic
// that names it, and the stream's terminal says what the stream came to.
func TestNoPanicOnOddEvents(t *testing.T) {
	const cut = adapters.DiagStreamCut
	unknown := adapters.StatusUnknown
	for _, c := range []struct {
		data   string
		diags  []string
		status adapters.Status
		stop   adapters.StopReason
	}{
		{`{}`, []string{adapters.DiagMalformedEvent, cut}, unknown, adapters.StopUnknown},
		{`null`, []string{adapters.DiagMalformedEvent, cut}, unknown, adapters.StopUnknown},
		{`"x"`, []string{adapters.DiagMalformedEvent, cut}, unknown, adapters.StopUnknown},
		{`{"type":5}`, []string{adapters.DiagMalformedEvent, cut}, unknown, adapters.StopUnknown},
		// Without an item the event cannot be applied: it is kept as unknown.
		{`{"type":"response.output_item.done"}`, []string{adapters.DiagUnknownEvent, cut}, unknown, adapters.StopUnknown},
		{`{"type":"response.output_item.done","item":{"type":"message","content":"oops"}}`, []string{cut}, unknown, adapters.StopUnknown},
		{`{"type":"response.completed","response":null}`, nil, adapters.StatusCompleted, adapters.StopFinal},
		{`{"type":"response.refusal.delta","output_index":3,"delta":"no"}`, []string{adapters.DiagUnknownItem, cut}, unknown, adapters.StopUnknown},
		{`{"type":"response.function_call_arguments.delta","item_id":"fc_x","delta":{"a":1}}`, []string{adapters.DiagUnknownItem, cut}, unknown, adapters.StopUnknown},
		{`{"type":"error","error":"plain string"}`, []string{adapters.DiagErrorEvent}, adapters.StatusFailed, adapters.StopError},
	} {
		events, s := decodeEvents(t, c.data)
		var kinds []string
		for _, d := range s.Diagnostics {
			kinds = append(kinds, d.Kind)
		}
		if !reflect.DeepEqual(kinds, c.diags) || s.Terminal != c.status || s.StopReason != c.stop {
			t.Errorf("%s: diagnostics %v, terminal %s/%s; want %v, %s/%s", c.data, kinds, s.Terminal, s.StopReason, c.diags, c.status, c.stop)
		}
		if last := events[len(events)-1]; last.Type != adapters.EvTerminal {
			t.Errorf("%s: the last event is %s, not the terminal", c.data, last.Type)
		}
	}
}

// Newer incomplete reasons (openai-go v3.99 adds max_messages, steered) are
// truncations; only content_filter is a refusal (contract.md table).
func TestNewerIncompleteReasons(t *testing.T) {
	for _, reason := range []string{"max_messages", "steered"} {
		_, s := decodeEvents(t, `{"type":"response.incomplete","sequence_number":0,"response":{"id":"resp_1","object":"response","status":"incomplete","incomplete_details":{"reason":"`+reason+`"},"output":[],"usage":null}}`)
		wantTerminal(t, reason, s, adapters.StatusIncomplete, adapters.StopTruncated, reason)
	}
}

// Line ends are the SSE reader's business: a CRLF copy of a capture decodes
// to the same summary.
func TestCRLFCapture(t *testing.T) {
	body := adapterstest.ReadCapture(t, "refund_turn2.sse")
	_, lf := adapterstest.Decode(t, New(), body)
	_, crlf := adapterstest.Decode(t, New(), []byte(strings.ReplaceAll(string(body), "\n", "\r\n")))
	a, _ := json.Marshal(lf)
	b, _ := json.Marshal(crlf)
	if string(a) != string(b) {
		t.Errorf("CRLF summary differs:\n%s\n%s", a, b)
	}
}

// `data: ` with an empty value is dispatched (WHATWG) and is not JSON.
func TestEmptyDataEvent(t *testing.T) {
	_, s := adapterstest.Decode(t, New(), []byte("event: response.output_text.delta\ndata: \n\n"))
	if !hasDiag(s, adapters.DiagMalformedEvent) {
		t.Errorf("diagnostics %+v", s.Diagnostics)
	}
}
