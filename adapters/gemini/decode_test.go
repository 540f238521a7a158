package gemini

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/adapterstest"
)

// captures lists every response capture in testdata (streams and bodies).
func captures(t *testing.T) []string {
	t.Helper()
	var names []string
	for _, pat := range []string{"*.sse", "*.body.json"} {
		m, err := filepath.Glob(filepath.Join("testdata", pat))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range m {
			names = append(names, filepath.Base(p))
		}
	}
	if len(names) < 20 {
		t.Fatalf("only %d captures found", len(names))
	}
	return names
}

func goldenName(capture string) string {
	return strings.NewReplacer(".sse", "", ".body.json", "_body").Replace(capture)
}

func decode(t *testing.T, name string) ([]adapters.Event, adapters.Summary) {
	t.Helper()
	return adapterstest.Decode(t, New(), adapterstest.ReadCapture(t, name))
}

// TestGoldens decodes every capture into its summary golden file
// (go test ./adapters/gemini -update rewrites them).
func TestGoldens(t *testing.T) {
	for _, name := range captures(t) {
		t.Run(name, func(t *testing.T) {
			_, s := decode(t, name)
			adapterstest.Golden(t, goldenName(name), s)
		})
	}
}

func intp(p *int64) int64 {
	if p == nil {
		return -1
	}
	return *p
}

func wantTerminal(t *testing.T, s adapters.Summary, status adapters.Status, stop adapters.StopReason, provider string) {
	t.Helper()
	if s.Terminal != status || s.StopReason != stop || s.ProviderStopReason != provider {
		t.Fatalf("terminal = %s/%s/%q, want %s/%s/%q", s.Terminal, s.StopReason, s.ProviderStopReason, status, stop, provider)
	}
}

func wantUsage(t *testing.T, s adapters.Summary, in, out, cacheRead, reasoning int64) {
	t.Helper()
	u := s.Usage
	if u == nil {
		t.Fatal("no usage")
	}
	if intp(u.InputTokens) != in || intp(u.OutputTokens) != out || intp(u.CacheReadTokens) != cacheRead || intp(u.ReasoningTokens) != reasoning {
		t.Fatalf("usage in=%d out=%d cache_read=%d reasoning=%d, want %d %d %d %d",
			intp(u.InputTokens), intp(u.OutputTokens), intp(u.CacheReadTokens), intp(u.ReasoningTokens), in, out, cacheRead, reasoning)
	}
	if u.CacheWriteTokens != nil {
		t.Fatalf("cache_write = %d, want null (Gemini has no such counter)", *u.CacheWriteTokens)
	}
	if !json.Valid(u.ProviderUsage) || !bytes.Contains(u.ProviderUsage, []byte("promptTokenCount")) {
		t.Fatalf("provider_usage is not the raw usageMetadata: %s", u.ProviderUsage)
	}
}

func diagKinds(s adapters.Summary) []string {
	var k []string
	for _, d := range s.Diagnostics {
		k = append(k, d.Kind)
	}
	return k
}

func wantDiags(t *testing.T, s adapters.Summary, kinds ...string) {
	t.Helper()
	got := strings.Join(diagKinds(s), ",")
	if got != strings.Join(kinds, ",") {
		t.Fatalf("diagnostics = [%s], want [%s]", got, strings.Join(kinds, ","))
	}
}

func TestTextStream(t *testing.T) {
	events, s := decode(t, "text.sse")
	wantTerminal(t, s, adapters.StatusCompleted, adapters.StopFinal, "STOP")
	if s.Text != "您好！退款申请已收到，我们会在 24 小时内回复您。Thanks for waiting." {
		t.Fatalf("text = %q", s.Text)
	}
	if s.ResponseID != "Xr3maPSrH9e-1MkPq5ubgAQ" || s.Model != "gemini-2.5-flash" {
		t.Fatalf("response %q model %q", s.ResponseID, s.Model)
	}
	wantUsage(t, s, 14, 21, 0, 0)
	wantDiags(t, s)
	// The order the contract fixes: started first; the lane closes, then
	// usage, then the terminal, all on the last chunk.
	var types []string
	for _, ev := range events {
		types = append(types, string(ev.Type))
	}
	want := "response.started,item.started,text.delta,text.delta,text.delta,text.delta,item.done,usage,response.terminal"
	if strings.Join(types, ",") != want {
		t.Fatalf("events = %s\nwant     %s", strings.Join(types, ","), want)
	}
	for _, ev := range events {
		if ev.Type == adapters.EvTextDelta && !utf8.ValidString(ev.Delta) {
			t.Fatalf("delta %q splits a character", ev.Delta)
		}
	}
}

// TestLFFraming: the same stream with LF line ends (a proxy may rewrite
// them) decodes to the same summary, and without a framing diagnostic.
func TestLFFraming(t *testing.T) {
	crlf := adapterstest.ReadCapture(t, "text.sse")
	_, want := adapterstest.Decode(t, New(), crlf)
	_, got := adapterstest.Decode(t, New(), bytes.ReplaceAll(crlf, []byte("\r\n"), []byte("\n")))
	a, _ := json.Marshal(want)
	b, _ := json.Marshal(got)
	if !bytes.Equal(a, b) {
		t.Fatalf("LF framing differs:\n%s\n%s", b, a)
	}
}

func TestToolCallWithID(t *testing.T) {
	events, s := decode(t, "tool_call.sse")
	wantTerminal(t, s, adapters.StatusCompleted, adapters.StopToolCall, "STOP")
	if len(s.ToolCalls) != 1 {
		t.Fatalf("tool calls = %+v", s.ToolCalls)
	}
	c := s.ToolCalls[0]
	if c.CallID != "fc-7d2c1e0a" || c.Name != "get_weather" || string(c.Arguments) != `{"city":"北京","unit":"celsius"}` {
		t.Fatalf("call = %s %s %s", c.CallID, c.Name, c.Arguments)
	}
	// One args delta with the whole object, then item.done with the
	// thoughtSignature, then the Reducer's tool.proposed.
	var deltas int
	for i, ev := range events {
		if ev.Type == adapters.EvToolArgsDelta {
			deltas++
			if ev.CallID != "fc-7d2c1e0a" {
				t.Fatalf("args delta call_id %q", ev.CallID)
			}
		}
		if ev.Type == adapters.EvItemDone && ev.ItemID == "call-0" {
			if !strings.HasPrefix(ev.Signature, "lqBJygrPUVm0") {
				t.Fatalf("signature = %q", ev.Signature)
			}
			if events[i+1].Type != adapters.EvToolProposed {
				t.Fatalf("no tool.proposed after the call closed")
			}
		}
	}
	if deltas != 1 {
		t.Fatalf("%d args deltas, want 1", deltas)
	}
	if s.Text != "" {
		t.Fatalf("an empty text part must not become text: %q", s.Text)
	}
	wantUsage(t, s, 58, 24+96, 0, 96)
}

func TestParallelCallsWithoutIDs(t *testing.T) {
	events, s := decode(t, "parallel_calls.sse")
	wantTerminal(t, s, adapters.StatusCompleted, adapters.StopToolCall, "STOP")
	if len(s.ToolCalls) != 2 {
		t.Fatalf("tool calls = %+v", s.ToolCalls)
	}
	for i, city := range []string{"上海", "广州"} {
		c := s.ToolCalls[i]
		if c.CallID != SyntheticCallIDPrefix+string(rune('0'+i)) || c.Name != "get_weather" || string(c.Arguments) != `{"city":"`+city+`"}` {
			t.Fatalf("call %d = %s %s %s", i, c.CallID, c.Name, c.Arguments)
		}
	}
	var sigs []string
	for _, ev := range events {
		if ev.Type == adapters.EvItemDone {
			sigs = append(sigs, ev.Signature)
		}
	}
	if len(sigs) != 2 || sigs[0] == "" || sigs[1] != "" {
		t.Fatalf("signatures = %q: only the first parallel call carries one", sigs)
	}
}

func TestRefusal(t *testing.T) {
	_, s := decode(t, "refusal.sse")
	wantTerminal(t, s, adapters.StatusRefused, adapters.StopRefusal, "SAFETY")
	if s.Text != "Here is how" {
		t.Fatalf("partial text = %q", s.Text)
	}
	wantUsage(t, s, 19, 3, 0, 0)
}

func TestPromptBlocked(t *testing.T) {
	_, s := decode(t, "prompt_blocked.sse")
	wantTerminal(t, s, adapters.StatusRefused, adapters.StopRefusal, "blockReason:PROHIBITED_CONTENT")
	if s.ResponseID != "bk1maMv0Cd2G1MkPmPzT6QM" {
		t.Fatalf("response id %q", s.ResponseID)
	}
	wantUsage(t, s, 33, 0, 0, 0)
}

func TestTruncated(t *testing.T) {
	_, s := decode(t, "truncated.sse")
	wantTerminal(t, s, adapters.StatusIncomplete, adapters.StopTruncated, "MAX_TOKENS")
	if s.Text != "退款规则如下：第一，质量问题须附凭证；第二，" {
		t.Fatalf("text = %q", s.Text)
	}
	wantUsage(t, s, 40, 18+46, 0, 46)
}

func TestThinking(t *testing.T) {
	events, s := decode(t, "thinking.sse")
	wantTerminal(t, s, adapters.StatusCompleted, adapters.StopFinal, "STOP")
	if s.Reasoning != "**Checking the cap**\n\nPaid 180, refunded 30, hold 20: the cap is 130." {
		t.Fatalf("reasoning = %q", s.Reasoning)
	}
	if s.Text != "最多可退 130 元（13000 分）。" {
		t.Fatalf("text = %q", s.Text)
	}
	wantUsage(t, s, 52, 15+210, 0, 210)
	// The signature came on an empty text part of the last chunk: it
	// belongs to the message lane, which closes with it.
	var done []adapters.Event
	for _, ev := range events {
		if ev.Type == adapters.EvItemDone {
			done = append(done, ev)
		}
	}
	if len(done) != 2 || done[0].ItemID != thoughtItemID || done[0].Signature != "" || done[1].ItemID != textItemID || done[1].Signature == "" {
		t.Fatalf("item.done events = %+v", done)
	}
}

func TestThinkingBody(t *testing.T) {
	_, s := decode(t, "thinking.body.json")
	wantTerminal(t, s, adapters.StatusCompleted, adapters.StopFinal, "STOP")
	if s.Reasoning == "" || s.Text != "最多可退 130 元（13000 分）。" {
		t.Fatalf("reasoning %q text %q", s.Reasoning, s.Text)
	}
}

func TestCacheUsage(t *testing.T) {
	_, s := decode(t, "cache_usage.sse")
	wantTerminal(t, s, adapters.StatusCompleted, adapters.StopFinal, "STOP")
	// promptTokenCount already includes the cached tokens: no sum.
	wantUsage(t, s, 2310, 9+64, 2048, 64)
}

func TestErrorEventAfter200(t *testing.T) {
	_, s := decode(t, "error_event.sse")
	wantTerminal(t, s, adapters.StatusFailed, adapters.StopError, "UNAVAILABLE")
	if s.Error == nil || s.Error.Type != "UNAVAILABLE" || s.Error.Code != "503" || s.Error.HTTPStatus != 0 ||
		s.Error.Message != "The model is overloaded. Please try again later." {
		t.Fatalf("error = %+v", s.Error)
	}
	wantDiags(t, s, adapters.DiagErrorEvent)
	if s.Text != "正在核查" {
		t.Fatalf("partial text = %q", s.Text)
	}
	// The usage seen before the error is reported before the terminal.
	wantUsage(t, s, 20, 0, 0, 0)
}

func TestMalformedChunk(t *testing.T) {
	_, s := decode(t, "malformed.sse")
	wantTerminal(t, s, adapters.StatusCompleted, adapters.StopFinal, "STOP")
	wantDiags(t, s, adapters.DiagMalformedEvent)
	if s.Text != "第一段，第三段。" {
		t.Fatalf("text = %q", s.Text)
	}
}

func TestUnknownParts(t *testing.T) {
	events, s := decode(t, "unknown.sse")
	wantTerminal(t, s, adapters.StatusCompleted, adapters.StopFinal, "STOP")
	var unknown []string
	for _, ev := range events {
		if ev.Type == adapters.EvUnknown {
			unknown = append(unknown, ev.RawType)
		}
	}
	if strings.Join(unknown, ",") != "part.executableCode,part.codeExecutionResult,futureEnvelope" {
		t.Fatalf("provider.unknown raw types = %v", unknown)
	}
	if s.Text != "上限是 130 元。" {
		t.Fatalf("text = %q", s.Text)
	}
}

// TestCutMidCall: Gemini sends a call whole inside one chunk, so a stream
// cut inside that chunk loses the whole chunk (the SSE reader discards an
// unterminated event). Nothing is proposed and the response is unknown.
func TestCutMidCall(t *testing.T) {
	events, s := decode(t, "cut_mid_call.sse")
	wantTerminal(t, s, adapters.StatusUnknown, adapters.StopUnknown, "")
	for _, ev := range events {
		if ev.Type == adapters.EvToolProposed || ev.Type == adapters.EvToolArgsDelta {
			t.Fatalf("%s from a cut chunk", ev.Type)
		}
	}
	if len(s.ToolCalls) != 0 || len(s.IncompleteToolCalls) != 0 {
		t.Fatalf("calls %+v incomplete %+v", s.ToolCalls, s.IncompleteToolCalls)
	}
	wantDiags(t, s, adapters.DiagDiscardedTail, adapters.DiagStreamCut)
	if s.Text != "先查订单行。" {
		t.Fatalf("text = %q", s.Text)
	}
	// The open message lane is incomplete; usage seen so far is kept.
	wantUsage(t, s, 120, 0, 0, 0)
}

// TestCutMidCallUnterminatedJSON: when the reader is handed the partial
// chunk (a body decoded as JSON, or a proxy that flushes it), it is a
// malformed event, never a call.
func TestCutMidCallUnterminatedJSON(t *testing.T) {
	b := adapterstest.ReadCapture(t, "cut_mid_call.sse")
	b = append(b, "\r\n\r\n"...)
	events, s := adapterstest.Decode(t, New(), b)
	for _, ev := range events {
		if ev.Type == adapters.EvToolProposed || ev.Type == adapters.EvItemStarted && ev.Kind == string(adapters.KindToolCall) {
			t.Fatalf("%s from a partial chunk", ev.Type)
		}
	}
	wantTerminal(t, s, adapters.StatusUnknown, adapters.StopUnknown, "")
	wantDiags(t, s, adapters.DiagMalformedEvent, adapters.DiagStreamCut)
}

// TestCutAfterCall: a whole call followed by EOF. The call closed (Gemini
// sends calls whole), so the Reducer proposes it, but the response never
// finished: status unknown, stream_cut. Whoever executes calls must look
// at the terminal (protocols.md §8.2: executable only in a STOP response).
func TestCutAfterCall(t *testing.T) {
	_, s := decode(t, "cut_after_call.sse")
	wantTerminal(t, s, adapters.StatusUnknown, adapters.StopUnknown, "")
	wantDiags(t, s, adapters.DiagStreamCut)
	if len(s.ToolCalls) != 1 || s.ToolCalls[0].Name != "get_order_line" {
		t.Fatalf("calls = %+v", s.ToolCalls)
	}
}

func TestStreamArrayBody(t *testing.T) {
	events, s := decode(t, "stream_array.body.json")
	wantTerminal(t, s, adapters.StatusCompleted, adapters.StopFinal, "STOP")
	if s.Text != "您好，请稍候。" {
		t.Fatalf("text = %q", s.Text)
	}
	n := 0
	for _, ev := range events {
		if ev.Type == adapters.EvTextDelta {
			n++
		}
	}
	if n != 2 {
		t.Fatalf("%d text deltas, want one per array element", n)
	}
	wantUsage(t, s, 9, 5, 0, 0)
}

// TestRefund checks the three refund turns, streamed and as bodies.
func TestRefund(t *testing.T) {
	for _, suffix := range []string{".sse", ".body.json"} {
		t.Run("turn1"+suffix, func(t *testing.T) {
			_, s := decode(t, "refund_turn1"+suffix)
			wantTerminal(t, s, adapters.StatusCompleted, adapters.StopToolCall, "STOP")
			wantCalls(t, s, adapterstest.CaptureTurn1)
			wantUsage(t, s, 1187, 24+213, 0, 213)
			wantDiags(t, s)
		})
		t.Run("turn2"+suffix, func(t *testing.T) {
			_, s := decode(t, "refund_turn2"+suffix)
			wantTerminal(t, s, adapters.StatusCompleted, adapters.StopToolCall, "STOP")
			wantCalls(t, s, adapterstest.CaptureTurn2)
			wantUsage(t, s, 1352, 41+167, 0, 167)
			wantDiags(t, s)
		})
		t.Run("turn3"+suffix, func(t *testing.T) {
			_, s := decode(t, "refund_turn3"+suffix)
			wantTerminal(t, s, adapters.StatusCompleted, adapters.StopFinal, "STOP")
			if s.Text != adapterstest.CaptureModelText {
				t.Fatalf("text = %q", s.Text)
			}
			if len(s.ToolCalls) != 0 {
				t.Fatalf("calls in the final turn: %+v", s.ToolCalls)
			}
			wantUsage(t, s, 1690, 236+402, 1024, 402)
			wantDiags(t, s)
		})
	}
}

func wantCalls(t *testing.T, s adapters.Summary, want []adapterstest.RefundCall) {
	t.Helper()
	if len(s.ToolCalls) != len(want) || len(s.IncompleteToolCalls) != 0 {
		t.Fatalf("calls %+v incomplete %+v", s.ToolCalls, s.IncompleteToolCalls)
	}
	for i, w := range want {
		c := s.ToolCalls[i]
		if c.Name != w.Name || string(c.Arguments) != w.Arguments || !strings.HasPrefix(c.CallID, SyntheticCallIDPrefix) {
			t.Fatalf("call %d = %s %s %s, want %s %s", i, c.CallID, c.Name, c.Arguments, w.Name, w.Arguments)
		}
	}
}

// stream builds a CRLF stream from chunks.
func stream(chunks ...string) []byte {
	var b bytes.Buffer
	for _, c := range chunks {
		b.WriteString("data: " + c + "\r\n\r\n")
	}
	return b.Bytes()
}

// TestFinishReasons covers every finishReason go-genai v1.77.0 lists.
func TestFinishReasons(t *testing.T) {
	cases := []struct {
		reason string
		calls  bool
		status adapters.Status
		stop   adapters.StopReason
	}{
		{"STOP", false, adapters.StatusCompleted, adapters.StopFinal},
		{"STOP", true, adapters.StatusCompleted, adapters.StopToolCall},
		{"MAX_TOKENS", false, adapters.StatusIncomplete, adapters.StopTruncated},
		{"LANGUAGE", false, adapters.StatusIncomplete, adapters.StopTruncated},
		{"CONTINUATION", false, adapters.StatusIncomplete, adapters.StopPause},
		{"SAFETY", false, adapters.StatusRefused, adapters.StopRefusal},
		{"RECITATION", false, adapters.StatusRefused, adapters.StopRefusal},
		{"BLOCKLIST", false, adapters.StatusRefused, adapters.StopRefusal},
		{"PROHIBITED_CONTENT", false, adapters.StatusRefused, adapters.StopRefusal},
		{"SPII", false, adapters.StatusRefused, adapters.StopRefusal},
		{"IMAGE_SAFETY", false, adapters.StatusRefused, adapters.StopRefusal},
		{"IMAGE_PROHIBITED_CONTENT", false, adapters.StatusRefused, adapters.StopRefusal},
		{"IMAGE_RECITATION", false, adapters.StatusRefused, adapters.StopRefusal},
		{"MALFORMED_FUNCTION_CALL", false, adapters.StatusFailed, adapters.StopError},
		{"UNEXPECTED_TOOL_CALL", false, adapters.StatusFailed, adapters.StopError},
		{"TOO_MANY_TOOL_CALLS", false, adapters.StatusFailed, adapters.StopError},
		{"OTHER", false, adapters.StatusUnknown, adapters.StopUnknown},
		{"FINISH_REASON_UNSPECIFIED", false, adapters.StatusUnknown, adapters.StopUnknown},
		{"IMAGE_OTHER", false, adapters.StatusUnknown, adapters.StopUnknown},
		{"NO_IMAGE", false, adapters.StatusUnknown, adapters.StopUnknown},
		{"SOMETHING_NEW", false, adapters.StatusUnknown, adapters.StopUnknown},
	}
	for _, c := range cases {
		name := c.reason
		if c.calls {
			name += "+call"
		}
		t.Run(name, func(t *testing.T) {
			first := `{"candidates": [{"content": {"parts": [{"text": "x"}],"role": "model"},"index": 0}],"responseId": "r"}`
			if c.calls {
				first = `{"candidates": [{"content": {"parts": [{"functionCall": {"name": "f","args": {}}}],"role": "model"},"index": 0}],"responseId": "r"}`
			}
			last := `{"candidates": [{"finishReason": "` + c.reason + `","finishMessage": "detail","index": 0}],"responseId": "r"}`
			_, s := adapterstest.Decode(t, New(), stream(first, last))
			wantTerminal(t, s, c.status, c.stop, c.reason)
			if c.status == adapters.StatusFailed && (s.Error == nil || s.Error.Type != c.reason || s.Error.Message != "detail") {
				t.Fatalf("error = %+v", s.Error)
			}
			if c.status != adapters.StatusFailed && s.Error != nil {
				t.Fatalf("error on a %s terminal: %+v", c.status, s.Error)
			}
		})
	}
}

// TestConflictingCallID: two calls of one response with the same id.
func TestConflictingCallID(t *testing.T) {
	c := `{"candidates": [{"content": {"parts": [{"functionCall": {"name": "f","args": {"a": 1},"id": "dup"}},{"functionCall": {"name": "g","args": {"b": 2},"id": "dup"}}],"role": "model"},"finishReason": "STOP","index": 0}],"responseId": "r"}`
	_, s := adapterstest.Decode(t, New(), stream(c))
	wantDiags(t, s, adapters.DiagConflictingCallID)
	if len(s.ToolCalls) != 2 {
		t.Fatalf("calls = %+v", s.ToolCalls)
	}
}

// TestResponseIDChanged: chunks of two responses spliced together.
func TestResponseIDChanged(t *testing.T) {
	a := `{"candidates": [{"content": {"parts": [{"text": "a"}],"role": "model"},"index": 0}],"responseId": "r1"}`
	b := `{"candidates": [{"content": {"parts": [{"text": "b"}],"role": "model"},"finishReason": "STOP","index": 0}],"responseId": "r2"}`
	_, s := adapterstest.Decode(t, New(), stream(a, b))
	wantDiags(t, s, "response_id_changed")
	if s.ResponseID != "r1" || s.Text != "ab" {
		t.Fatalf("response %q text %q", s.ResponseID, s.Text)
	}
}

// TestLateChunk: a chunk after the one with finishReason changes nothing.
func TestLateChunk(t *testing.T) {
	a := `{"candidates": [{"content": {"parts": [{"text": "done"}],"role": "model"},"finishReason": "STOP","index": 0}],"responseId": "r"}`
	b := `{"candidates": [{"content": {"parts": [{"text": " more"}],"role": "model"},"index": 0}],"responseId": "r"}`
	_, s := adapterstest.Decode(t, New(), stream(a, b))
	wantTerminal(t, s, adapters.StatusCompleted, adapters.StopFinal, "STOP")
	if s.Text != "done" {
		t.Fatalf("text = %q", s.Text)
	}
	for _, k := range diagKinds(s) {
		if k != adapters.DiagLateEvent {
			t.Fatalf("diagnostics = %v", diagKinds(s))
		}
	}
	if len(s.Diagnostics) == 0 {
		t.Fatal("no late_event")
	}
}

// TestOddChunks: shapes that are valid JSON but not a response.
func TestOddChunks(t *testing.T) {
	_, s := adapterstest.Decode(t, New(), stream(`[1,2]`, `"text"`, `{}`, `null`))
	wantTerminal(t, s, adapters.StatusUnknown, adapters.StopUnknown, "")
	wantDiags(t, s, adapters.DiagStreamCut)
	events, _ := adapterstest.Decode(t, New(), stream(`[1,2]`, `"text"`, `{}`, `null`))
	var raw []string
	for _, ev := range events {
		if ev.Type == adapters.EvUnknown {
			raw = append(raw, ev.RawType)
		}
	}
	if strings.Join(raw, ",") != "array,string,null" {
		t.Fatalf("unknown raw types = %v", raw)
	}
}

// TestExtraCandidates: candidateCount > 1; only the first is decoded.
func TestExtraCandidates(t *testing.T) {
	c := `{"candidates": [{"content": {"parts": [{"text": "one"}],"role": "model"},"finishReason": "STOP","index": 0},{"content": {"parts": [{"text": "two"}],"role": "model"},"finishReason": "STOP","index": 1}],"responseId": "r"}`
	events, s := adapterstest.Decode(t, New(), stream(c))
	if s.Text != "one" {
		t.Fatalf("text = %q", s.Text)
	}
	found := false
	for _, ev := range events {
		found = found || ev.Type == adapters.EvUnknown && ev.RawType == "candidates[1]"
	}
	if !found {
		t.Fatal("second candidate not reported")
	}
}

// TestEmptyBody: an empty stream ends as a cut stream.
func TestEmptyBody(t *testing.T) {
	_, s := adapterstest.Decode(t, New(), nil)
	wantTerminal(t, s, adapters.StatusUnknown, adapters.StopUnknown, "")
	wantDiags(t, s, adapters.DiagStreamCut)
}

func TestMalformedBody(t *testing.T) {
	_, s := adapterstest.Decode(t, New(), []byte(`{"candidates": [`))
	wantDiags(t, s, adapters.DiagMalformedEvent, adapters.DiagStreamCut)
}

func FuzzDecode(f *testing.F) {
	seeds := adapterstest.SeedsFromTestdata(f, ".sse", ".body.json", ".error.json")
	if len(seeds) == 0 {
		f.Fatal("no seeds")
	}
	adapterstest.Fuzz(f, New(), seeds...)
}

// TestCapturesAreCRLF keeps the stream captures in Gemini's framing.
func TestCapturesAreCRLF(t *testing.T) {
	for _, name := range captures(t) {
		if !strings.HasSuffix(name, ".sse") {
			continue
		}
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		if n := bytes.Count(b, []byte("\n")); n != bytes.Count(b, []byte("\r\n")) {
			t.Errorf("%s has bare LF line ends", name)
		}
		if !bytes.HasPrefix(b, []byte(": source: ")) {
			t.Errorf("%s does not cite its source", name)
		}
	}
}

// TestErrorString: an error payload that is a bare string still fails the
// response with its text.
func TestErrorString(t *testing.T) {
	_, s := adapterstest.Decode(t, New(), stream(`{"error": "backend went away"}`))
	wantTerminal(t, s, adapters.StatusFailed, adapters.StopError, "error")
	if s.Error == nil || s.Error.Message != "backend went away" {
		t.Fatalf("error = %+v", s.Error)
	}
}

// TestBOM: a leading byte order mark (stream or body) changes nothing but
// a diagnostic for the stream.
func TestBOM(t *testing.T) {
	for _, name := range []string{"text.sse", "refund_turn3.body.json"} {
		b := adapterstest.ReadCapture(t, name)
		_, want := adapterstest.Decode(t, New(), b)
		_, got := adapterstest.Decode(t, New(), append([]byte("\xef\xbb\xbf"), b...))
		if got.Text != want.Text || got.Terminal != want.Terminal || got.Usage == nil {
			t.Fatalf("%s with BOM: %+v", name, got)
		}
		if strings.HasSuffix(name, ".sse") {
			wantDiags(t, got, adapters.DiagBOMStripped)
		} else {
			wantDiags(t, got)
		}
	}
}

// TestContinuationCheckpoint: with a continuationToken, an UNSPECIFIED
// finishReason marks a checkpoint inside the stream (go-genai
// continuation.go), not its end; CONTINUATION at the end is incomplete/pause.
func TestContinuationCheckpoint(t *testing.T) {
	a := `{"candidates": [{"content": {"parts": [{"text": "part 1, "}],"role": "model"},"finishReason": "FINISH_REASON_UNSPECIFIED","continuationToken": "dDE=","index": 0}],"responseId": "r"}`
	b := `{"candidates": [{"content": {"parts": [{"text": "part 2"}],"role": "model"},"finishReason": "CONTINUATION","continuationToken": "dDI=","index": 0}],"responseId": "r"}`
	_, s := adapterstest.Decode(t, New(), stream(a, b))
	wantTerminal(t, s, adapters.StatusIncomplete, adapters.StopPause, "CONTINUATION")
	if s.Text != "part 1, part 2" {
		t.Fatalf("text = %q", s.Text)
	}
	wantDiags(t, s)
}
