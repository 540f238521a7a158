package anthropic

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/adapterstest"
)

// captures lists every capture in testdata; each has a summary golden.
var captures = []string{
	"text.sse", "refund_turn1.sse", "refund_turn2.sse", "refund_turn3.sse",
	"parallel_interleaved.sse", "refusal.sse", "max_tokens.sse", "thinking.sse",
	"cache_usage.sse", "error_event.sse", "cut_mid_args.sse", "missing_message_stop.sse",
	"oddities.sse", "pause_turn.sse", "stop_sequence.sse", "context_window.sse",
	"refund_turn1.json", "refund_turn2.json", "refund_turn3.json", "thinking.json",
	"max_tokens.json", "error_body.json",
}

func decode(t *testing.T, name string) ([]adapters.Event, adapters.Summary) {
	t.Helper()
	return adapterstest.Decode(t, New(), adapterstest.ReadCapture(t, name))
}

// decodeString decodes an SSE stream given as text.
func decodeString(t *testing.T, stream string) ([]adapters.Event, adapters.Summary) {
	t.Helper()
	return adapterstest.Decode(t, New(), []byte(stream))
}

func ev(name, data string) string { return "event: " + name + "\ndata: " + data + "\n\n" }

const msgStart = `{"type":"message_start","message":{"id":"msg_X","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"usage":{"input_tokens":5,"output_tokens":1}}}`

func TestGoldens(t *testing.T) {
	for _, name := range captures {
		t.Run(name, func(t *testing.T) {
			_, s := decode(t, name)
			adapterstest.Golden(t, strings.ReplaceAll(name, ".", "_"), s)
		})
	}
}

func diagKinds(s adapters.Summary) []string {
	var k []string
	for _, d := range s.Diagnostics {
		k = append(k, d.Kind)
	}
	return k
}

func hasDiag(s adapters.Summary, kind string) bool {
	for _, d := range s.Diagnostics {
		if d.Kind == kind {
			return true
		}
	}
	return false
}

func eventsOf(events []adapters.Event, typ adapters.EventType) []adapters.Event {
	var out []adapters.Event
	for _, e := range events {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

func argsEqual(t *testing.T, got json.RawMessage, want string) {
	t.Helper()
	var a, b any
	if err := json.Unmarshal(got, &a); err != nil {
		t.Fatalf("arguments %s: %v", got, err)
	}
	_ = json.Unmarshal([]byte(want), &b)
	ga, _ := json.Marshal(a)
	gb, _ := json.Marshal(b)
	if string(ga) != string(gb) {
		t.Errorf("arguments = %s, want %s", got, want)
	}
}

// The refund case, streamed and as bodies: the facts every protocol's
// captures must carry.
func TestRefundTurns(t *testing.T) {
	for _, suffix := range []string{".sse", ".json"} {
		t.Run("turn1"+suffix, func(t *testing.T) {
			_, s := decode(t, "refund_turn1"+suffix)
			if s.Terminal != adapters.StatusCompleted || s.StopReason != adapters.StopToolCall || s.ProviderStopReason != "tool_use" {
				t.Errorf("terminal = %s/%s/%s", s.Terminal, s.StopReason, s.ProviderStopReason)
			}
			if len(s.ToolCalls) != 1 || s.ToolCalls[0].Name != "get_order_line" || s.ToolCalls[0].CallID != "toolu_01Kq7XvT3nB8dR2sLp5WmYcA" {
				t.Fatalf("tool calls = %+v", s.ToolCalls)
			}
			argsEqual(t, s.ToolCalls[0].Arguments, adapterstest.CaptureTurn1[0].Arguments)
			if len(s.Diagnostics) != 0 {
				t.Errorf("diagnostics: %v", s.Diagnostics)
			}
		})
		t.Run("turn2"+suffix, func(t *testing.T) {
			_, s := decode(t, "refund_turn2"+suffix)
			if s.StopReason != adapters.StopToolCall || len(s.ToolCalls) != 2 {
				t.Fatalf("stop %s, calls %+v", s.StopReason, s.ToolCalls)
			}
			for i, c := range adapterstest.CaptureTurn2 {
				if s.ToolCalls[i].Name != c.Name {
					t.Errorf("call %d = %s, want %s (output order)", i, s.ToolCalls[i].Name, c.Name)
				}
				argsEqual(t, s.ToolCalls[i].Arguments, c.Arguments)
			}
		})
		t.Run("turn3"+suffix, func(t *testing.T) {
			_, s := decode(t, "refund_turn3"+suffix)
			if s.Terminal != adapters.StatusCompleted || s.StopReason != adapters.StopFinal {
				t.Errorf("terminal = %s/%s", s.Terminal, s.StopReason)
			}
			if s.Text != adapterstest.CaptureModelText {
				t.Errorf("text = %q", s.Text)
			}
			// input = input_tokens 412 + cache_read 1920 + cache_creation 0.
			if u := s.Usage; u == nil || *u.InputTokens != 2332 || *u.CacheReadTokens != 1920 || *u.OutputTokens != 236 {
				t.Errorf("usage = %+v", s.Usage)
			}
		})
	}
}

// Chinese text arrives in deltas cut at character boundaries: every delta
// is valid UTF-8 and together they are the text.
func TestChineseDeltasAreWholeCharacters(t *testing.T) {
	events, s := decode(t, "refund_turn3.sse")
	var b strings.Builder
	for _, e := range eventsOf(events, adapters.EvTextDelta) {
		if !utf8.ValidString(e.Delta) {
			t.Fatalf("delta %q is not valid UTF-8", e.Delta)
		}
		b.WriteString(e.Delta)
	}
	if b.String() != s.Text || !strings.Contains(s.Text, "复核前不会执行任何退款") {
		t.Errorf("deltas do not make the text: %q", b.String())
	}
}

func TestUsageIsCumulativeAndNormalised(t *testing.T) {
	_, s := decode(t, "cache_usage.sse")
	u := s.Usage
	// message_delta replaces message_start's counts (10/2/3 → 12/4/5).
	if u == nil || *u.InputTokens != 12+5+4 || *u.CacheReadTokens != 5 || *u.CacheWriteTokens != 4 || *u.OutputTokens != 99 || *u.ReasoningTokens != 7 {
		t.Fatalf("usage = %+v", u)
	}
	var pu map[string]any
	if err := json.Unmarshal(u.ProviderUsage, &pu); err != nil {
		t.Fatal(err)
	}
	if pu["service_tier"] != "standard" || pu["input_tokens"] != 12.0 || pu["cache_creation"] == nil {
		t.Errorf("provider usage keeps message_start's fields merged with the delta's: %s", u.ProviderUsage)
	}
	events, _ := decode(t, "cache_usage.sse")
	if n := len(eventsOf(events, adapters.EvUsage)); n != 1 {
		t.Errorf("%d usage events, want 1", n)
	}
	if last := events[len(events)-2]; last.Type != adapters.EvUsage {
		t.Errorf("usage is not just before the terminal: %s", last.Type)
	}
}

func TestThinkingSignatures(t *testing.T) {
	events, s := decode(t, "thinking.sse")
	if s.Reasoning != "用户问巴黎的天气。Paris is warm in June; 我应简短回答。" || s.Text != "巴黎六月天气温暖，晴。Sunny." {
		t.Errorf("reasoning %q text %q", s.Reasoning, s.Text)
	}
	done := eventsOf(events, adapters.EvItemDone)
	if len(done) != 3 {
		t.Fatalf("%d item.done", len(done))
	}
	if done[0].Signature != "EqQBCkgIARABGAIiQL2n0Zr1s7YdQ==" {
		t.Errorf("thinking signature = %q", done[0].Signature)
	}
	if done[1].Signature != RedactedPrefix+"EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP" {
		t.Errorf("redacted thinking = %q", done[1].Signature)
	}
	if *s.Usage.ReasoningTokens != 51 {
		t.Errorf("reasoning tokens = %v", s.Usage.ReasoningTokens)
	}
	// The items become history that Encode replays verbatim.
	st := adapters.NewStream(New())
	_ = adapters.ReadStream(New(), st, strings.NewReader(string(adapterstest.ReadCapture(t, "thinking.sse"))), func(adapters.Step) error { return nil })
	turn := st.Reducer().Turn()
	if len(turn.Items) != 3 || turn.Items[0].Signature == "" || turn.Items[1].Kind != adapters.KindReasoning {
		t.Errorf("turn items = %+v", turn.Items)
	}
}

func TestItemIDsAreUnique(t *testing.T) {
	events, _ := decode(t, "refund_turn2.sse")
	ids := map[string]bool{}
	for _, e := range eventsOf(events, adapters.EvItemStarted) {
		if ids[e.ItemID] {
			t.Errorf("item id %s twice", e.ItemID)
		}
		ids[e.ItemID] = true
	}
	want := []string{"msg_01RfT2bW4ex7NcH2dQs8KjUv#0", "toolu_01Lm4YwU8cP2eS6tHq9XnZdB", "toolu_01Np6ZxV2dQ4fT8uJr3YoAeC"}
	for _, w := range want {
		if !ids[w] {
			t.Errorf("no item %s in %v", w, ids)
		}
	}
}

func TestInterleavedBlocks(t *testing.T) {
	_, s := decode(t, "parallel_interleaved.sse")
	if len(s.ToolCalls) != 2 || len(s.IncompleteToolCalls) != 0 {
		t.Fatalf("calls %+v incomplete %+v", s.ToolCalls, s.IncompleteToolCalls)
	}
	argsEqual(t, s.ToolCalls[0].Arguments, adapterstest.CaptureTurn2[0].Arguments)
	argsEqual(t, s.ToolCalls[1].Arguments, adapterstest.CaptureTurn2[1].Arguments)
}

func TestRefusalKeepsTextAsText(t *testing.T) {
	_, s := decode(t, "refusal.sse")
	if s.Terminal != adapters.StatusRefused || s.StopReason != adapters.StopRefusal || s.Text != "我可以帮您说明退款流程，但" || s.Refusal != nil {
		t.Errorf("summary = %+v", s)
	}
}

func TestStopReasons(t *testing.T) {
	for _, c := range []struct {
		file   string
		status adapters.Status
		stop   adapters.StopReason
	}{
		{"text.sse", adapters.StatusCompleted, adapters.StopFinal},
		{"max_tokens.sse", adapters.StatusIncomplete, adapters.StopTruncated},
		{"max_tokens.json", adapters.StatusIncomplete, adapters.StopTruncated},
		{"context_window.sse", adapters.StatusIncomplete, adapters.StopTruncated},
		{"pause_turn.sse", adapters.StatusIncomplete, adapters.StopPause},
		{"stop_sequence.sse", adapters.StatusCompleted, adapters.StopStopSequence},
		{"refusal.sse", adapters.StatusRefused, adapters.StopRefusal},
		{"error_event.sse", adapters.StatusFailed, adapters.StopError},
		{"error_body.json", adapters.StatusFailed, adapters.StopError},
		{"cut_mid_args.sse", adapters.StatusUnknown, adapters.StopUnknown},
	} {
		_, s := decode(t, c.file)
		if s.Terminal != c.status || s.StopReason != c.stop {
			t.Errorf("%s: %s/%s, want %s/%s", c.file, s.Terminal, s.StopReason, c.status, c.stop)
		}
	}
}

func TestErrorEventAfter200(t *testing.T) {
	_, s := decode(t, "error_event.sse")
	if s.Error == nil || s.Error.Type != "overloaded_error" || s.Error.Message != "Overloaded" || s.Error.HTTPStatus != 0 {
		t.Errorf("error = %+v", s.Error)
	}
	if !hasDiag(s, adapters.DiagErrorEvent) || s.Text != "我先查" {
		t.Errorf("diagnostics %v text %q", diagKinds(s), s.Text)
	}
}

func TestCutMidArguments(t *testing.T) {
	events, s := decode(t, "cut_mid_args.sse")
	if len(eventsOf(events, adapters.EvToolProposed)) != 0 || len(s.ToolCalls) != 0 {
		t.Error("a cut call was proposed")
	}
	if len(s.IncompleteToolCalls) != 1 || s.IncompleteToolCalls[0].PartialArguments != `{"order_id":"O-20` || s.IncompleteToolCalls[0].Name != "get_order_line" {
		t.Errorf("incomplete = %+v", s.IncompleteToolCalls)
	}
	if s.Terminal != adapters.StatusUnknown || !hasDiag(s, adapters.DiagStreamCut) {
		t.Errorf("terminal %s diagnostics %v", s.Terminal, diagKinds(s))
	}
}

func TestMissingMessageStop(t *testing.T) {
	_, s := decode(t, "missing_message_stop.sse")
	if s.Terminal != adapters.StatusCompleted || s.StopReason != adapters.StopFinal || !hasDiag(s, adapters.DiagMissingStop) || hasDiag(s, adapters.DiagStreamCut) {
		t.Errorf("%s/%s %v", s.Terminal, s.StopReason, diagKinds(s))
	}
	if s.Usage == nil || *s.Usage.OutputTokens != 4 {
		t.Errorf("usage = %+v", s.Usage)
	}
}

func TestOddities(t *testing.T) {
	events, s := decode(t, "oddities.sse")
	for _, k := range []string{adapters.DiagMalformedEvent, DiagEventNameMismatch, adapters.DiagDuplicateEvent} {
		if !hasDiag(s, k) {
			t.Errorf("no %s diagnostic in %v", k, diagKinds(s))
		}
	}
	var unknown []string
	for _, e := range eventsOf(events, adapters.EvUnknown) {
		unknown = append(unknown, e.RawType)
	}
	if strings.Join(unknown, ",") != "future_event,content_block_start/server_tool_use" {
		t.Errorf("provider.unknown = %v", unknown)
	}
	// The server tool's input never becomes a call; the tool_use without
	// any input_json_delta is {} as the SDK keeps it.
	if len(s.ToolCalls) != 1 || s.ToolCalls[0].Name != "list_policies" || string(s.ToolCalls[0].Arguments) != "{}" {
		t.Errorf("calls = %+v", s.ToolCalls)
	}
	if s.Text != "见政策。" {
		t.Errorf("text = %q", s.Text)
	}
}

func TestPingProducesNothing(t *testing.T) {
	d := NewEventDecoder()
	if out := d.DecodeEvent("ping", `{"type": "ping"}`); len(out) != 0 {
		t.Errorf("ping gave %+v", out)
	}
}

func TestRoutesByTypeWithoutEventName(t *testing.T) {
	stream := "data: " + msgStart + "\n\n" +
		"data: " + `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}` + "\n\n" +
		"data: " + `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}` + "\n\n" +
		"data: " + `{"type":"content_block_stop","index":0}` + "\n\n" +
		"data: " + `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":2}}` + "\n\n" +
		"data: " + `{"type":"message_stop"}` + "\n\n"
	_, s := decodeString(t, stream)
	if s.Text != "hi" || s.Terminal != adapters.StatusCompleted || len(s.Diagnostics) != 0 {
		t.Errorf("summary = %+v", s)
	}
}

func TestStreamEdgeCases(t *testing.T) {
	textStart := `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`
	stop := ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":2}}`) + ev("message_stop", `{"type":"message_stop"}`)
	t.Run("second message_start", func(t *testing.T) {
		_, s := decodeString(t, ev("message_start", msgStart)+ev("message_start", msgStart)+stop)
		if !hasDiag(s, adapters.DiagDuplicateEvent) || s.Terminal != adapters.StatusCompleted {
			t.Errorf("%v", diagKinds(s))
		}
	})
	t.Run("duplicate content_block_start", func(t *testing.T) {
		_, s := decodeString(t, ev("message_start", msgStart)+ev("content_block_start", textStart)+ev("content_block_start", textStart)+stop)
		if !hasDiag(s, adapters.DiagDuplicateEvent) {
			t.Errorf("%v", diagKinds(s))
		}
	})
	t.Run("delta for a block that never started", func(t *testing.T) {
		_, s := decodeString(t, ev("message_start", msgStart)+ev("content_block_delta", `{"type":"content_block_delta","index":3,"delta":{"type":"text_delta","text":"orphan"}}`)+stop)
		if !hasDiag(s, adapters.DiagUnknownItem) || s.Text != "orphan" {
			t.Errorf("%v %q", diagKinds(s), s.Text)
		}
	})
	t.Run("conflicting tool_use ids", func(t *testing.T) {
		tool := func(i string) string {
			return ev("content_block_start", `{"type":"content_block_start","index":`+i+`,"content_block":{"type":"tool_use","id":"toolu_same","name":"f","input":{}}}`) +
				ev("content_block_stop", `{"type":"content_block_stop","index":`+i+`}`)
		}
		_, s := decodeString(t, ev("message_start", msgStart)+tool("0")+tool("1")+stop)
		if !hasDiag(s, adapters.DiagConflictingCallID) || len(s.ToolCalls) != 2 {
			t.Errorf("%v %+v", diagKinds(s), s.ToolCalls)
		}
	})
	t.Run("events after message_stop are late", func(t *testing.T) {
		_, s := decodeString(t, ev("message_start", msgStart)+stop+ev("content_block_start", textStart))
		if !hasDiag(s, adapters.DiagLateEvent) || s.Terminal != adapters.StatusCompleted {
			t.Errorf("%v", diagKinds(s))
		}
	})
	t.Run("message_stop without stop_reason", func(t *testing.T) {
		_, s := decodeString(t, ev("message_start", msgStart)+ev("message_stop", `{"type":"message_stop"}`))
		if s.Terminal != adapters.StatusUnknown || !hasDiag(s, DiagMissingStopReason) {
			t.Errorf("%s %v", s.Terminal, diagKinds(s))
		}
	})
	t.Run("unknown stop_reason", func(t *testing.T) {
		_, s := decodeString(t, ev("message_start", msgStart)+ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"future_reason"},"usage":{"output_tokens":1}}`)+ev("message_stop", `{"type":"message_stop"}`))
		if s.Terminal != adapters.StatusUnknown || s.ProviderStopReason != "future_reason" || !hasDiag(s, adapters.DiagUnknownEvent) {
			t.Errorf("%s %s %v", s.Terminal, s.ProviderStopReason, diagKinds(s))
		}
	})
	t.Run("unknown delta type", func(t *testing.T) {
		events, _ := decodeString(t, ev("message_start", msgStart)+ev("content_block_start", textStart)+ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"hologram_delta","x":1}}`)+stop)
		u := eventsOf(events, adapters.EvUnknown)
		if len(u) != 1 || u[0].RawType != "content_block_delta/hologram_delta" {
			t.Errorf("%+v", u)
		}
	})
	t.Run("error event after stop_reason", func(t *testing.T) {
		_, s := decodeString(t, ev("message_start", msgStart)+ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":2}}`)+ev("error", `{"type":"error","error":{"type":"api_error","message":"Internal server error"}}`))
		if s.Terminal != adapters.StatusFailed || hasDiag(s, adapters.DiagMissingStop) {
			t.Errorf("%s %v", s.Terminal, diagKinds(s))
		}
	})
	t.Run("data that is not an object", func(t *testing.T) {
		_, s := decodeString(t, "data: [1,2]\n\n")
		if !hasDiag(s, adapters.DiagMalformedEvent) {
			t.Errorf("%v", diagKinds(s))
		}
	})
	t.Run("tool_use whose input_json_delta fragments are all empty", func(t *testing.T) {
		_, s := decodeString(t, ev("message_start", msgStart)+
			ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_e","name":"f","input":{}}}`)+
			ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":""}}`)+
			ev("content_block_stop", `{"type":"content_block_stop","index":0}`)+stop)
		if len(s.ToolCalls) != 1 || string(s.ToolCalls[0].Arguments) != "{}" {
			t.Errorf("%+v", s.ToolCalls)
		}
	})
	t.Run("CRLF line ends and a BOM", func(t *testing.T) {
		b := adapterstest.ReadCapture(t, "refund_turn1.sse")
		crlf := "\ufeff" + strings.ReplaceAll(string(b), "\n", "\r\n")
		_, s := decodeString(t, crlf)
		if len(s.ToolCalls) != 1 || s.StopReason != adapters.StopToolCall || !hasDiag(s, adapters.DiagBOMStripped) {
			t.Errorf("%+v %v", s.ToolCalls, diagKinds(s))
		}
	})
}

func TestBodyEdgeCases(t *testing.T) {
	p := New()
	t.Run("malformed", func(t *testing.T) {
		_, s := adapterstest.Decode(t, p, []byte(`{"id":"msg_1","content":[`))
		if !hasDiag(s, adapters.DiagMalformedEvent) || s.Terminal != adapters.StatusUnknown {
			t.Errorf("%s %v", s.Terminal, diagKinds(s))
		}
	})
	t.Run("server tool blocks are not calls", func(t *testing.T) {
		events, s := adapterstest.Decode(t, p, []byte(`{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"x"}},{"type":"text","text":"ok"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}`))
		if len(s.ToolCalls) != 0 || s.Text != "ok" || len(eventsOf(events, adapters.EvUnknown)) != 1 {
			t.Errorf("%+v", s)
		}
	})
	t.Run("null stop_reason", func(t *testing.T) {
		_, s := adapterstest.Decode(t, p, []byte(`{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"usage":{"input_tokens":1,"output_tokens":1}}`))
		if s.Terminal != adapters.StatusUnknown || !hasDiag(s, DiagMissingStopReason) {
			t.Errorf("%s %v", s.Terminal, diagKinds(s))
		}
	})
}

func FuzzDecode(f *testing.F) {
	var seeds [][]byte
	for _, name := range captures {
		seeds = append(seeds, adapterstest.ReadCapture(f, name))
	}
	adapterstest.Fuzz(f, New(), seeds...)
}
