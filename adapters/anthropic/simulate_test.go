package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/adapterstest"
)

// The simulator's side of the Messages API is checked three ways: this
// package's own decoder reads every rendered turn of every refund variant
// back to the script; the official Go SDK accepts the same bytes (and
// drives the whole refund loop through CheckRequest); and each request
// check answers with the API's status and error shape.

var sim = protocol{}

// wantCall is a tool_use block a client must read back: its name and its
// input as compact JSON.
type wantCall struct{ name, input string }

// simWant is what a client must read back from a scripted turn, written
// out literally so that a simulator that drops or changes a call or a
// stop_reason fails the tests (text and reasoning are the script's own,
// see simScriptText). Anthropic has no refusal block: a refusal is text
// with stop_reason refusal.
type simWant struct {
	calls      []wantCall
	stopReason string // the wire's stop_reason
	stop       adapters.StopReason
	status     adapters.Status
}

// The refund case's expected turns, named once for the table below.
var (
	simOrderLine = simWant{stopReason: "tool_use", stop: adapters.StopToolCall, status: adapters.StatusCompleted,
		calls: []wantCall{{"get_order_line", `{"order_id":"O-2048","line_id":"L1"}`}}}
	simLedgerAndPolicy = simWant{stopReason: "tool_use", stop: adapters.StopToolCall, status: adapters.StatusCompleted,
		calls: []wantCall{{"get_refund_ledger", `{"order_id":"O-2048","line_id":"L1"}`}, {"get_refund_policy", `{"category":"headphones","received_at":"2026-10-15T12:00:00+08:00","reason":"quality_issue"}`}}}
	simFinal = simWant{stopReason: "end_turn", stop: adapters.StopFinal, status: adapters.StatusCompleted}
)

// wantRefundTurns is, per script of samples/refund.json, what each turn
// must decode to. When the refund case changes, change these literals.
var wantRefundTurns = map[string][]simWant{
	"refund": {simOrderLine, simLedgerAndPolicy, simFinal},
	"refund/bad-args": {
		{stopReason: "tool_use", stop: adapters.StopToolCall, status: adapters.StatusCompleted,
			calls: []wantCall{{"get_order_line", `{"order_id":"O-2048"}`}}},
		simOrderLine, simLedgerAndPolicy, simFinal,
	},
	"refund/claims-refunded": {simOrderLine, simLedgerAndPolicy, simFinal},
	"refund/fenced":          {simOrderLine, simLedgerAndPolicy, simFinal},
	"refund/missing-field":   {simOrderLine, simLedgerAndPolicy, simFinal},
	"refund/refusal":         {{stopReason: "refusal", stop: adapters.StopRefusal, status: adapters.StatusRefused}},
	"refund/sequential": {
		simOrderLine,
		{stopReason: "tool_use", stop: adapters.StopToolCall, status: adapters.StatusCompleted,
			calls: []wantCall{{"get_refund_ledger", `{"order_id":"O-2048","line_id":"L1"}`}}},
		{stopReason: "tool_use", stop: adapters.StopToolCall, status: adapters.StatusCompleted,
			calls: []wantCall{{"get_refund_policy", `{"category":"headphones","received_at":"2026-10-15T12:00:00+08:00","reason":"quality_issue"}`}}},
		simFinal,
	},
	"refund/wrong-cap": {simOrderLine, simLedgerAndPolicy, simFinal},
}

type simScenario struct {
	name  string
	turns []adapters.ModelTurn
	wants []simWant // wantRefundTurns[name], one per turn
}

// simRefund loads the refund case and its variants from samples/ (read as
// JSON: importing session from here would be an import cycle), each with
// its literal expectations.
func simRefund(t testing.TB) []simScenario {
	t.Helper()
	var out []simScenario
	for _, sc := range adapterstest.RefundScripts(t) {
		w, ok := wantRefundTurns[sc.Name]
		if !ok || len(w) != len(sc.Turns) {
			t.Fatalf("wantRefundTurns[%q] has %d turns, the script %d: write the expectations down", sc.Name, len(w), len(sc.Turns))
		}
		out = append(out, simScenario{sc.Name, sc.Turns, w})
	}
	if len(out) != len(wantRefundTurns) {
		t.Fatalf("%d scripts, %d in wantRefundTurns", len(out), len(wantRefundTurns))
	}
	return out
}

// simScript is the turns of the named refund scenario.
func simScript(t testing.TB, name string) []adapters.ModelTurn {
	t.Helper()
	for _, sc := range simRefund(t) {
		if sc.name == name {
			return sc.turns
		}
	}
	t.Fatalf("no scenario %q", name)
	return nil
}

// simThinkingCalls is wrong-cap's second turn (thinking, then the two
// parallel calls), with thinking tokens in its usage.
func simThinkingCalls(t testing.TB) adapters.ModelTurn {
	turn := simScript(t, "refund/wrong-cap")[1]
	turn.Usage.ReasoningTokens = adapters.Int(21)
	return turn
}

// simSSE writes events as the sim server does.
func simSSE(events []adapters.WireEvent) []byte {
	return adapterstest.SSE(events, sim.LineEnd())
}

// simScriptText is the text (a refusal is text here) and the reasoning of
// a scripted turn, the script's input that a client must read back
// unchanged.
func simScriptText(turn adapters.ModelTurn) (text, reasoning string) {
	for _, it := range turn.Items {
		switch it.Kind {
		case adapters.KindMessage, adapters.KindRefusal:
			text += it.Text
		case adapters.KindReasoning:
			reasoning += it.Text
		}
	}
	return text, reasoning
}

func simJSONEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	ja, _ := json.Marshal(x)
	jb, _ := json.Marshal(y)
	return string(ja) == string(jb)
}

var (
	simMsgID  = regexp.MustCompile(`^msg_01[1-9A-HJ-NP-Za-km-z]{22}$`)
	simToolID = regexp.MustCompile(`^toolu_01[1-9A-HJ-NP-Za-km-z]{22}$`)
	simReqID  = regexp.MustCompile(`^req_011C[1-9A-HJ-NP-Za-km-z]{20}$`)
)

func simDeref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// simCheckSummary: the decoded summary equals the script.
func simCheckSummary(t *testing.T, w simWant, turn adapters.ModelTurn, o adapters.ResponseOptions, s adapters.Summary) {
	t.Helper()
	text, reasoning := simScriptText(turn)
	if s.Text != text {
		t.Errorf("text: got %q, want %q", s.Text, text)
	}
	if s.Reasoning != reasoning {
		t.Errorf("reasoning: got %q, want %q", s.Reasoning, reasoning)
	}
	if s.Refusal != nil {
		t.Errorf("refusal %q: Anthropic has no refusal text", *s.Refusal)
	}
	if len(s.ToolCalls) != len(w.calls) || len(s.IncompleteToolCalls) != 0 {
		t.Fatalf("tool calls: got %+v (incomplete %+v), want %d", s.ToolCalls, s.IncompleteToolCalls, len(w.calls))
	}
	for i, c := range s.ToolCalls {
		if c.Name != w.calls[i].name || !simJSONEqual(c.Arguments, []byte(w.calls[i].input)) {
			t.Errorf("call %d: got %s %s, want %s %s", i, c.Name, c.Arguments, w.calls[i].name, w.calls[i].input)
		}
		if !simToolID.MatchString(c.CallID) {
			t.Errorf("call %d: id %q is not toolu_01 + 22 base58", i, c.CallID)
		}
	}
	if s.StopReason != w.stop || s.ProviderStopReason != w.stopReason || s.Terminal != w.status {
		t.Errorf("terminal: got %s/%s (%s), want %s/%s (%s)", s.Terminal, s.StopReason, s.ProviderStopReason, w.status, w.stop, w.stopReason)
	}
	if s.ResponseID != sim.ResponseID(o) || !simMsgID.MatchString(s.ResponseID) || s.Model != o.Model {
		t.Errorf("response %s %s, want %s %s", s.ResponseID, s.Model, sim.ResponseID(o), o.Model)
	}
	u := s.Usage
	if u == nil {
		t.Fatal("no usage")
	}
	su := turn.Usage
	if simDeref(u.InputTokens) != simDeref(su.InputTokens) || simDeref(u.OutputTokens) != simDeref(su.OutputTokens) ||
		simDeref(u.CacheReadTokens) != simDeref(su.CacheReadTokens) || simDeref(u.CacheWriteTokens) != simDeref(su.CacheWriteTokens) {
		t.Errorf("usage: got in %d out %d cr %d cw %d, want %+v", simDeref(u.InputTokens), simDeref(u.OutputTokens), simDeref(u.CacheReadTokens), simDeref(u.CacheWriteTokens), su)
	}
	if (u.ReasoningTokens == nil) != (su.ReasoningTokens == nil) || simDeref(u.ReasoningTokens) != simDeref(su.ReasoningTokens) {
		t.Errorf("reasoning tokens: got %v, want %v", u.ReasoningTokens, su.ReasoningTokens)
	}
	if len(s.Diagnostics) != 0 {
		t.Errorf("diagnostics: %+v", s.Diagnostics)
	}
}

func simOpts(seed uint64) adapters.ResponseOptions {
	return adapters.ResponseOptions{Model: "claude-sonnet-4-5-20250929", Seed: seed}
}

func TestSimStreamDecodesToScript(t *testing.T) {
	for _, sc := range simRefund(t) {
		for i, turn := range sc.turns {
			t.Run(fmt.Sprintf("%s/turn%d", sc.name, i+1), func(t *testing.T) {
				o := simOpts(uint64(100 + i))
				_, s := adapterstest.Decode(t, New(), simSSE(sim.StreamEvents(turn, o)))
				simCheckSummary(t, sc.wants[i], turn, o, s)
			})
		}
	}
}

func TestSimBodyDecodesToScript(t *testing.T) {
	for _, sc := range simRefund(t) {
		for i, turn := range sc.turns {
			t.Run(fmt.Sprintf("%s/turn%d", sc.name, i+1), func(t *testing.T) {
				o := simOpts(uint64(100 + i))
				body := sim.Body(turn, o)
				if !json.Valid(body) {
					t.Fatalf("not JSON: %s", body)
				}
				_, s := adapterstest.Decode(t, New(), body)
				simCheckSummary(t, sc.wants[i], turn, o, s)
				// Same ids as the stream for the seed.
				_, ss := adapterstest.Decode(t, New(), simSSE(sim.StreamEvents(turn, o)))
				for k := range s.ToolCalls {
					if s.ToolCalls[k].CallID != ss.ToolCalls[k].CallID {
						t.Errorf("call %d: body id %s, stream id %s", k, s.ToolCalls[k].CallID, ss.ToolCalls[k].CallID)
					}
				}
				if s.ResponseID != ss.ResponseID {
					t.Errorf("body id %s, stream id %s", s.ResponseID, ss.ResponseID)
				}
			})
		}
	}
}

// The exact byte shapes: event order, the ping, the empty first
// partial_json, the signature, cumulative usage, the key order of message.
func TestSimStreamShape(t *testing.T) {
	turn := simThinkingCalls(t)
	o := simOpts(7)
	events := sim.StreamEvents(turn, o)
	var names []string
	for _, e := range events {
		if e.Data == "" || !json.Valid([]byte(e.Data)) {
			t.Fatalf("%s: data is not JSON: %q", e.Event, e.Data)
		}
		var typ struct{ Type string }
		_ = json.Unmarshal([]byte(e.Data), &typ)
		if typ.Type != e.Event {
			t.Errorf("event %s carries type %s", e.Event, typ.Type)
		}
		names = append(names, e.Event)
	}
	seq := strings.Join(names, " ")
	seq = regexp.MustCompile(`( content_block_delta)+`).ReplaceAllString(seq, " delta*")
	want := "message_start content_block_start ping delta* content_block_stop content_block_start delta* content_block_stop content_block_start delta* content_block_stop message_delta message_stop"
	if seq != want {
		t.Errorf("event order:\n got %s\nwant %s", seq, want)
	}
	id := sim.ResponseID(o)
	wantStart := `{"type":"message_start","message":{"model":"claude-sonnet-4-5-20250929","id":"` + id + `","type":"message","role":"assistant","content":[],"stop_reason":null,"stop_sequence":null,"stop_details":null,"usage":{"input_tokens":410,"cache_creation_input_tokens":0,"cache_read_input_tokens":1280,"cache_creation":{"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":0},"output_tokens":1,"service_tier":"standard","inference_geo":"not_available"}}}`
	if events[0].Data != wantStart {
		t.Errorf("message_start:\n got %s\nwant %s", events[0].Data, wantStart)
	}
	if events[1].Data != `{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}` {
		t.Errorf("first block start: %s", events[1].Data)
	}
	if events[2].Data != `{"type": "ping"}` {
		t.Errorf("ping: %s", events[2].Data)
	}
	var sigs, emptyFirst int
	for i, e := range events {
		if strings.Contains(e.Data, `"signature_delta"`) {
			sigs++
			if events[i+1].Event != "content_block_stop" {
				t.Error("the signature_delta is not the thinking block's last delta")
			}
		}
		if e.Event == "content_block_start" && strings.Contains(e.Data, `"tool_use"`) {
			if !strings.HasSuffix(e.Data, `"input":{}}}`) {
				t.Errorf("tool_use start: %s", e.Data)
			}
			if events[i+1].Data != strings.Replace(`{"type":"content_block_delta","index":N,"delta":{"type":"input_json_delta","partial_json":""}}`, "N", e.Data[len(`{"type":"content_block_start","index":`):len(`{"type":"content_block_start","index":`)+1], 1) {
				t.Errorf("first input_json_delta: %s", events[i+1].Data)
			} else {
				emptyFirst++
			}
		}
	}
	if sigs != 1 || emptyFirst != 2 {
		t.Errorf("%d signature deltas, %d empty first partial_json", sigs, emptyFirst)
	}
	wantDelta := `{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null,"stop_details":null},"usage":{"input_tokens":410,"cache_creation_input_tokens":0,"cache_read_input_tokens":1280,"output_tokens":61,"output_tokens_details":{"thinking_tokens":21}}}`
	if events[len(events)-2].Data != wantDelta {
		t.Errorf("message_delta:\n got %s\nwant %s", events[len(events)-2].Data, wantDelta)
	}
	if events[len(events)-1].Data != `{"type":"message_stop"}` {
		t.Errorf("message_stop: %s", events[len(events)-1].Data)
	}
	// Raw UTF-8, never \u escapes; no HTML escaping either.
	if b := simSSE(events); bytes.Contains(b, []byte(`\u`)) || !utf8.Valid(b) {
		t.Error("the stream escapes or breaks UTF-8")
	}
	body := string(sim.Body(turn, o))
	if !strings.HasPrefix(body, `{"model":"claude-sonnet-4-5-20250929","id":"`+id+`","type":"message","role":"assistant","content":[{"type":"thinking","thinking":"商品行已给出类别`) ||
		!strings.HasSuffix(body, `"stop_reason":"tool_use","stop_sequence":null,"stop_details":null,"usage":{"input_tokens":410,"cache_creation_input_tokens":0,"cache_read_input_tokens":1280,"cache_creation":{"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":0},"output_tokens":61,"output_tokens_details":{"thinking_tokens":21},"service_tier":"standard","inference_geo":"not_available"}}`) ||
		!strings.Contains(body, `"input":{"order_id":"O-2048","line_id":"L1"}}`) {
		t.Errorf("body: %s", body)
	}
}

// Phases: what each event carries, for the faults.
func TestSimPhases(t *testing.T) {
	turn := simThinkingCalls(t)
	events := sim.StreamEvents(turn, simOpts(3))
	count := map[adapters.Phase]int{}
	for _, e := range events {
		count[e.Phase]++
		var want adapters.Phase
		switch {
		case e.Event == "message_start", e.Event == "content_block_start":
			want = adapters.PhaseStart
		case e.Event == "content_block_stop":
			want = adapters.PhaseItemDone
		case e.Event == "message_delta", e.Event == "message_stop":
			want = adapters.PhaseTerminal
		case strings.Contains(e.Data, "thinking_delta"):
			want = adapters.PhaseReasoning
		case strings.Contains(e.Data, "input_json_delta"):
			want = adapters.PhaseArgs
		case strings.Contains(e.Data, "text_delta"):
			want = adapters.PhaseText
		default: // ping, signature_delta
			want = adapters.PhaseOther
		}
		if e.Phase != want {
			t.Errorf("%s %s: phase %s, want %s", e.Event, e.Data, e.Phase, want)
		}
	}
	if count[adapters.PhaseArgs] < 4 || count[adapters.PhaseReasoning] < 4 || count[adapters.PhaseTerminal] != 2 {
		t.Errorf("phases: %v", count)
	}
	// Dropping the terminal events leaves a cut stream: no stop reason.
	var kept []adapters.WireEvent
	for _, e := range events {
		if e.Phase != adapters.PhaseTerminal {
			kept = append(kept, e)
		}
	}
	_, s := adapterstest.Decode(t, New(), simSSE(kept))
	if s.Terminal != adapters.StatusUnknown && s.Terminal != "" {
		t.Errorf("without terminal events: %s", s.Terminal)
	}
	if !hasDiag(s, adapters.DiagStreamCut) {
		t.Errorf("no stream_cut: %v", diagKinds(s))
	}
	// The ping comes after message_start when there is no block at all.
	empty := sim.StreamEvents(adapters.ModelTurn{Stop: adapters.StopRefusal}, simOpts(3))
	if len(empty) != 4 || empty[1].Event != "ping" {
		t.Errorf("no blocks: %+v", empty)
	}
}

// Text and argument text arrive in several fragments, split only at
// character boundaries.
func TestSimFragments(t *testing.T) {
	turn := simRefund(t)[0].turns[2]
	frags := 0
	for _, e := range sim.StreamEvents(turn, simOpts(5)) {
		if e.Phase != adapters.PhaseText {
			continue
		}
		var d struct {
			Delta struct{ Text string }
		}
		if err := json.Unmarshal([]byte(e.Data), &d); err != nil || d.Delta.Text == "" || !utf8.ValidString(d.Delta.Text) {
			t.Fatalf("fragment %q: %v", e.Data, err)
		}
		frags++
	}
	if frags < 50 {
		t.Errorf("only %d text fragments", frags)
	}
	// A custom fragmenter is used for text and arguments alike.
	one := func(s string) []string { return []string{s} }
	o := simOpts(5)
	o.Fragment = one
	events := sim.StreamEvents(simRefund(t)[0].turns[0], o)
	args := 0
	for _, e := range events {
		if e.Phase == adapters.PhaseArgs {
			args++
		}
	}
	if args != 2 { // "" then the whole text
		t.Errorf("%d argument events with a one-piece fragmenter", args)
	}
}

func TestSimDeterministic(t *testing.T) {
	turn := simRefund(t)[0].turns[1]
	a := simSSE(sim.StreamEvents(turn, simOpts(42)))
	b := simSSE(sim.StreamEvents(turn, simOpts(42)))
	if !bytes.Equal(a, b) || !bytes.Equal(sim.Body(turn, simOpts(42)), sim.Body(turn, simOpts(42))) {
		t.Fatal("the same seed gave different bytes")
	}
	seen := map[string]uint64{}
	for seed := uint64(0); seed < 2000; seed++ {
		o := simOpts(seed)
		_, s := adapterstest.DecodeBytes(New(), simSSE(sim.StreamEvents(turn, o)))
		ids := []string{s.ResponseID}
		for _, c := range s.ToolCalls {
			ids = append(ids, c.CallID)
		}
		for _, id := range ids {
			if prev, dup := seen[id]; dup {
				t.Fatalf("id %s for seeds %d and %d", id, prev, seed)
			}
			seen[id] = seed
		}
		if s.ResponseID != sim.ResponseID(o) {
			t.Fatalf("seed %d: ResponseID %s, stream %s", seed, sim.ResponseID(o), s.ResponseID)
		}
	}
	if bytes.Equal(a, simSSE(sim.StreamEvents(turn, simOpts(43)))) {
		t.Error("different seeds gave the same bytes")
	}
}

// ---- the official SDK ---------------------------------------------------

// simServe serves a fixed answer the way the sim server writes it.
func simServe(t *testing.T, stream bool, events []adapters.WireEvent, body []byte) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw := new(bytes.Buffer)
		_, _ = raw.ReadFrom(r.Body)
		if _, e := sim.CheckRequest(r.Method, r.URL.RequestURI(), r.Header, raw.Bytes()); e != nil {
			t.Errorf("the SDK's request was refused: %s", e.Body)
		}
		for k, v := range sim.ResponseHeaders(stream) {
			w.Header()[k] = v
		}
		if stream {
			w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
			_, _ = w.Write(simSSE(events))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// simCheckSDK: what the SDK accumulated equals the script.
func simCheckSDK(t *testing.T, w simWant, turn adapters.ModelTurn, o adapters.ResponseOptions, msg sdk.Message) {
	t.Helper()
	wantText, wantReasoning := simScriptText(turn)
	var text, thinking strings.Builder
	var calls []sdk.ContentBlockUnion
	for _, b := range msg.Content {
		switch b.Type {
		case "text":
			text.WriteString(b.Text)
		case "thinking":
			thinking.WriteString(b.Thinking)
			if b.Signature == "" {
				t.Error("thinking block without a signature")
			}
		case "tool_use":
			calls = append(calls, b)
		default:
			t.Errorf("block %s", b.Type)
		}
	}
	if text.String() != wantText || thinking.String() != wantReasoning {
		t.Errorf("sdk text %q thinking %q; want %q %q", text.String(), thinking.String(), wantText, wantReasoning)
	}
	if len(calls) != len(w.calls) {
		t.Fatalf("sdk: %d calls, want %d", len(calls), len(w.calls))
	}
	for i, c := range calls {
		if c.Name != w.calls[i].name || !simToolID.MatchString(c.ID) || !simJSONEqual(c.Input, []byte(w.calls[i].input)) {
			t.Errorf("sdk call %d: %s %s %s", i, c.ID, c.Name, c.Input)
		}
	}
	if string(msg.StopReason) != w.stopReason || msg.ID != sim.ResponseID(o) || string(msg.Model) != o.Model {
		t.Errorf("sdk stop %q id %s model %s", msg.StopReason, msg.ID, msg.Model)
	}
	u, su := msg.Usage, turn.Usage
	if u.InputTokens+u.CacheReadInputTokens+u.CacheCreationInputTokens != simDeref(su.InputTokens) || u.OutputTokens != simDeref(su.OutputTokens) ||
		u.CacheReadInputTokens != simDeref(su.CacheReadTokens) || u.OutputTokensDetails.ThinkingTokens != simDeref(su.ReasoningTokens) {
		t.Errorf("sdk usage %+v, want %+v", u, su)
	}
	if w.stop == adapters.StopRefusal && msg.StopDetails.Type != "refusal" {
		t.Errorf("sdk stop_details %+v", msg.StopDetails)
	}
}

func TestSimSDKAcceptsEveryTurn(t *testing.T) {
	for _, sc := range simRefund(t) {
		for i, turn := range sc.turns {
			t.Run(fmt.Sprintf("%s/turn%d", sc.name, i+1), func(t *testing.T) {
				o := simOpts(uint64(9 + i))
				c := client(simServe(t, true, sim.StreamEvents(turn, o), nil))
				stream := c.Messages.NewStreaming(context.Background(), sdkParams)
				msg := sdk.Message{}
				for stream.Next() {
					if err := msg.Accumulate(stream.Current()); err != nil {
						t.Fatal(err)
					}
				}
				if err := stream.Err(); err != nil {
					t.Fatal(err)
				}
				simCheckSDK(t, sc.wants[i], turn, o, msg)

				c = client(simServe(t, false, nil, sim.Body(turn, o)))
				var hr *http.Response
				body, err := c.Messages.New(context.Background(), sdkParams, option.WithResponseInto(&hr))
				if err != nil {
					t.Fatal(err)
				}
				simCheckSDK(t, sc.wants[i], turn, o, *body)
				if !simReqID.MatchString(hr.Header.Get("request-id")) {
					t.Errorf("request-id %q", hr.Header.Get("request-id"))
				}
			})
		}
	}
}

// The faults' events: the SDK stops with the in-stream error's type, and
// skips an event type it does not know.
func TestSimSDKStreamFaults(t *testing.T) {
	sc := simRefund(t)[0]
	turn := sc.turns[1]
	o := simOpts(11)
	events := sim.StreamEvents(turn, o)

	at := len(events) / 2
	withErr := append(append([]adapters.WireEvent{}, events[:at]...), sim.ErrorEvent("overloaded_error", "Overloaded")...)
	if withErr[len(withErr)-1].Data != `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}` {
		t.Errorf("error event: %s", withErr[len(withErr)-1].Data)
	}
	cl := client(simServe(t, true, withErr, nil))
	stream := cl.Messages.NewStreaming(context.Background(), sdkParams)
	for stream.Next() {
	}
	var apierr *sdk.Error
	if !errors.As(stream.Err(), &apierr) || apierr.Type() != "overloaded_error" {
		t.Errorf("sdk: %v", stream.Err())
	}
	_, s := adapterstest.Decode(t, New(), simSSE(withErr))
	if s.Terminal != adapters.StatusFailed || s.Error == nil || s.Error.Type != "overloaded_error" {
		t.Errorf("ours: %s %+v", s.Terminal, s.Error)
	}

	unknown := append([]adapters.WireEvent{}, events[:3]...)
	unknown = append(append(unknown, sim.UnknownEvent()), events[3:]...)
	cl = client(simServe(t, true, unknown, nil))
	stream = cl.Messages.NewStreaming(context.Background(), sdkParams)
	msg := sdk.Message{}
	for stream.Next() {
		if err := msg.Accumulate(stream.Current()); err != nil {
			t.Fatal(err)
		}
	}
	if stream.Err() != nil {
		t.Fatal(stream.Err())
	}
	simCheckSDK(t, sc.wants[1], turn, o, msg)
	evs, s := adapterstest.Decode(t, New(), simSSE(unknown))
	if len(eventsOf(evs, adapters.EvUnknown)) != 1 || s.Terminal != adapters.StatusCompleted {
		t.Errorf("ours: %s, %d unknown", s.Terminal, len(eventsOf(evs, adapters.EvUnknown)))
	}
}

// A truncated turn (the truncate fault cuts the last item's text in half):
// max_tokens, the call incomplete in the stream; the SDK accepts it.
func TestSimTruncated(t *testing.T) {
	turn := simRefund(t)[0].turns[0]
	last := turn.Items[len(turn.Items)-1]
	text := []rune(adapters.ArgumentText(last.Arguments))
	cut, _ := json.Marshal(string(text[:len(text)/2]))
	turn.Items = append(append([]adapters.OutputItem{}, turn.Items[:len(turn.Items)-1]...), adapters.OutputItem{Kind: adapters.KindToolCall, Name: last.Name, Arguments: cut})
	turn.Stop = adapters.StopTruncated
	o := simOpts(12)
	_, s := adapterstest.Decode(t, New(), simSSE(sim.StreamEvents(turn, o)))
	if s.StopReason != adapters.StopTruncated || s.ProviderStopReason != "max_tokens" || s.Terminal != adapters.StatusIncomplete ||
		len(s.ToolCalls) != 0 || len(s.IncompleteToolCalls) != 1 || s.IncompleteToolCalls[0].PartialArguments != string(text[:len(text)/2]) {
		t.Errorf("stream: %+v", s)
	}
	c := client(simServe(t, true, sim.StreamEvents(turn, o), nil))
	stream := c.Messages.NewStreaming(context.Background(), sdkParams)
	msg := sdk.Message{}
	for stream.Next() {
		if err := msg.Accumulate(stream.Current()); err != nil {
			t.Fatal(err)
		}
	}
	if stream.Err() != nil || msg.StopReason != "max_tokens" {
		t.Errorf("sdk: %v %s", stream.Err(), msg.StopReason)
	}
	body := sim.Body(turn, o)
	if !json.Valid(body) || !strings.Contains(string(body), `"input":{}`) || !strings.Contains(string(body), `"stop_reason":"max_tokens"`) {
		t.Errorf("body: %s", body)
	}
}

// ---- errors -------------------------------------------------------------

func TestSimErrorResponses(t *testing.T) {
	for _, c := range []struct {
		status int
		kind   string
		typ    string
	}{
		{429, "rate_limit", "rate_limit_error"},
		{500, "server_error", "api_error"},
		{529, "overloaded_error", "overloaded_error"},
		{400, "invalid_request_error", "invalid_request_error"},
		{413, "request_too_large", "request_too_large"},
		{500, "api_error", "api_error"},
		{404, "", "not_found_error"},
	} {
		e := sim.ErrorResponse(c.status, c.kind, "the message")
		if c.status == 429 {
			e.Header.Set("Retry-After", "1") // as the sim server does
		}
		rid := e.Header.Get("request-id")
		want := `{"type":"error","error":{"type":"` + c.typ + `","message":"the message"},"request_id":"` + rid + `"}`
		if e.Status != c.status || string(e.Body) != want || !simReqID.MatchString(rid) {
			t.Errorf("%d %s: %d %s %s", c.status, c.kind, e.Status, e.Body, rid)
		}
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			for k, v := range e.Header {
				w.Header()[k] = v
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(e.Status)
			_, _ = w.Write(e.Body)
		}))
		cl := client(srv)
		_, err := cl.Messages.New(context.Background(), sdkParams)
		srv.Close()
		var apierr *sdk.Error
		if !errors.As(err, &apierr) || apierr.StatusCode != c.status || string(apierr.Type()) != c.typ || apierr.RequestID != rid || apierr.Message != "the message" {
			t.Errorf("%d %s: sdk %v", c.status, c.kind, err)
		}
		ours := New().DecodeError(e.Status, e.Header, e.Body)
		if ours.Type != c.typ || (c.status == 429) != (ours.RetryAfterMS == 1000) {
			t.Errorf("%d: ours %+v", c.status, ours)
		}
	}
}

// ---- CheckRequest ---------------------------------------------------------

func simHeader() http.Header {
	h := http.Header{}
	h.Set("anthropic-version", "2023-06-01")
	h.Set("content-type", "application/json")
	return h
}

func TestSimCheckRequestErrors(t *testing.T) {
	tool := func(id string) string {
		return `{"type":"tool_use","id":"` + id + `","name":"get_order_line","input":{"order_id":"O-2048","line_id":"L1"}}`
	}
	result := func(id string) string {
		return `{"type":"tool_result","tool_use_id":"` + id + `","content":"{}"}`
	}
	user := `{"role":"user","content":"请核查订单"}`
	msgs := func(m ...string) string {
		return `{"model":"claude-sonnet-4-5","max_tokens":1024,"messages":[` + strings.Join(m, ",") + `]}`
	}
	for _, c := range []struct {
		name    string
		header  http.Header
		path    string
		body    string
		status  int
		typ     string
		message string
	}{
		{"no anthropic-version", http.Header{"X-Api-Key": {"k"}}, "", msgs(user), 400, "invalid_request_error", "anthropic-version: header is required"},
		{"wrong path", nil, "/v1/complete", msgs(user), 404, "not_found_error", "Not Found"},
		{"malformed JSON", nil, "", `{"model":"m",`, 400, "invalid_request_error", "The request body is not valid JSON: unexpected end of data: line 1 column 14 (char 13)"},
		{"bad character", nil, "", "{\n  'model': 1}", 400, "invalid_request_error", "The request body is not valid JSON: unexpected character: line 2 column 3 (char 4)"},
		{"empty body", nil, "", ``, 400, "invalid_request_error", "The request body is not valid JSON: Input is a zero-length, empty document: line 1 column 1 (char 0)"},
		{"not an object", nil, "", `[1]`, 400, "invalid_request_error", "Input should be a valid dictionary"},
		{"no max_tokens", nil, "", `{"model":"m","messages":[` + user + `]}`, 400, "invalid_request_error", "max_tokens: Field required"},
		{"max_tokens a string", nil, "", `{"model":"m","max_tokens":"1024","messages":[` + user + `]}`, 400, "invalid_request_error", "max_tokens: Input should be a valid integer"},
		{"max_tokens 0", nil, "", `{"model":"m","max_tokens":0,"messages":[` + user + `]}`, 400, "invalid_request_error", "max_tokens: Input should be greater than or equal to 1"},
		{"no model", nil, "", `{"max_tokens":10,"messages":[` + user + `]}`, 400, "invalid_request_error", "model: Field required"},
		{"model a number", nil, "", `{"model":4,"max_tokens":10,"messages":[` + user + `]}`, 400, "invalid_request_error", "model: Input should be a valid string"},
		{"no messages", nil, "", `{"model":"m","max_tokens":10}`, 400, "invalid_request_error", "messages: Field required"},
		{"messages not a list", nil, "", `{"model":"m","max_tokens":10,"messages":{}}`, 400, "invalid_request_error", "messages: Input should be a valid list"},
		{"no message", nil, "", msgs(), 400, "invalid_request_error", "messages: at least one message is required"},
		{"stream a string", nil, "", `{"model":"m","max_tokens":10,"stream":"true","messages":[` + user + `]}`, 400, "invalid_request_error", "stream: Input should be a valid boolean"},
		{"temperature 1.5", nil, "", `{"model":"m","max_tokens":10,"temperature":1.5,"messages":[` + user + `]}`, 400, "invalid_request_error", "temperature: Input should be less than or equal to 1"},
		{"temperature -1", nil, "", `{"model":"m","max_tokens":10,"temperature":-1,"messages":[` + user + `]}`, 400, "invalid_request_error", "temperature: Input should be greater than or equal to 0"},
		{"temperature a string", nil, "", `{"model":"m","max_tokens":10,"temperature":"hot","messages":[` + user + `]}`, 400, "invalid_request_error", "temperature: Input should be a valid number"},
		{"system role", nil, "", msgs(`{"role":"system","content":"be brief"}`, user), 400, "invalid_request_error", `messages: Unexpected role "system". The Messages API accepts a top-level ` + "`system`" + ` parameter, not "system" as an input message role.`},
		{"unknown role", nil, "", msgs(`{"role":"tool","content":"x"}`), 400, "invalid_request_error", "messages.0.role: Input should be 'user' or 'assistant'"},
		{"no content", nil, "", msgs(`{"role":"user"}`), 400, "invalid_request_error", "messages.0.content: Field required"},
		{"empty text", nil, "", msgs(`{"role":"user","content":""}`), 400, "invalid_request_error", "messages: text content blocks must be non-empty"},
		{"blank text", nil, "", msgs(`{"role":"user","content":[{"type":"text","text":"  "}]}`), 400, "invalid_request_error", "messages: text content blocks must contain non-whitespace text"},
		{"empty content", nil, "", msgs(`{"role":"user","content":[]}`), 400, "invalid_request_error", "messages.0: all messages must have non-empty content except for the optional final assistant message"},
		{"tool_result without tool_use", nil, "", msgs(user, `{"role":"assistant","content":"ok"}`, `{"role":"user","content":[`+result("toolu_01Ghost")+`]}`), 400, "invalid_request_error",
			"messages.2.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_01Ghost. Each `tool_result` block must have a corresponding `tool_use` block in the previous message."},
		{"tool_result for an older turn", nil, "", msgs(user, `{"role":"assistant","content":[`+tool("toolu_01A")+`]}`, `{"role":"user","content":[`+result("toolu_01A")+`]}`, `{"role":"assistant","content":"ok"}`, `{"role":"user","content":[`+result("toolu_01A")+`]}`), 400, "invalid_request_error",
			"messages.4.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_01A."},
		{"tool_use without tool_result", nil, "", msgs(user, `{"role":"assistant","content":[`+tool("toolu_01A")+`,`+tool("toolu_01B")+`]}`, `{"role":"user","content":[`+result("toolu_01A")+`]}`), 400, "invalid_request_error",
			"messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_01B. Each `tool_use` block must have a corresponding `tool_result` block in the next message."},
		{"thinking budget too small", nil, "", `{"model":"m","max_tokens":4096,"thinking":{"type":"enabled","budget_tokens":512},"messages":[` + user + `]}`, 400, "invalid_request_error", "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"},
		{"thinking budget over max_tokens", nil, "", `{"model":"m","max_tokens":2048,"thinking":{"type":"enabled","budget_tokens":2048},"messages":[` + user + `]}`, 400, "invalid_request_error", "`max_tokens` must be greater than `thinking.budget_tokens`."},
		{"thinking with a forced tool", nil, "", `{"model":"m","max_tokens":4096,"thinking":{"type":"enabled","budget_tokens":1024},"tool_choice":{"type":"any"},"messages":[` + user + `]}`, 400, "invalid_request_error", "Thinking may not be enabled when tool_choice forces tool use."},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := c.header
			if h == nil {
				h = simHeader()
			}
			path := c.path
			if path == "" {
				path = Path
			}
			in, e := sim.CheckRequest(http.MethodPost, path, h, []byte(c.body))
			if e == nil {
				t.Fatalf("accepted: %+v", in)
			}
			var body struct {
				Type  string `json:"type"`
				Error struct {
					Type    string `json:"type"`
					Message string `json:"message"`
				} `json:"error"`
				RequestID string `json:"request_id"`
			}
			if err := json.Unmarshal(e.Body, &body); err != nil {
				t.Fatalf("error body %s: %v", e.Body, err)
			}
			if e.Status != c.status || body.Type != "error" || body.Error.Type != c.typ || !strings.Contains(body.Error.Message, c.message) ||
				body.RequestID != e.Header.Get("request-id") || !simReqID.MatchString(body.RequestID) {
				t.Errorf("got %d %s", e.Status, e.Body)
			}
		})
	}
}

// Requests from this package's own encoder pass, with the history's facts.
func TestSimCheckRequestAcceptsEncode(t *testing.T) {
	for turn := 1; turn <= 3; turn++ {
		for _, stream := range []bool{true, false} {
			hr, err := New().Encode(adapterstest.RefundRequest(turn, refundIDs, stream), adapters.ProviderAnthropic)
			if err != nil {
				t.Fatal(err)
			}
			h := http.Header{}
			for k, v := range hr.Headers {
				h.Set(k, v)
			}
			in, e := sim.CheckRequest(hr.Method, hr.Path, h, hr.Body)
			if e != nil {
				t.Fatalf("turn %d: %s", turn, e.Body)
			}
			if in.ModelTurns != turn-1 || in.Stream != stream || in.Model != "refund-model" || in.MaxOutputTokens != 1800 ||
				strings.Join(in.Tools, ",") != "get_order_line,get_refund_ledger,get_refund_policy" {
				t.Errorf("turn %d: %+v", turn, in)
			}
			var want []adapters.ToolResult
			for t2, calls := range [][]adapterstest.RefundCall{adapterstest.RefundTurn1, adapterstest.RefundTurn2}[:turn-1] {
				for i, c := range calls {
					want = append(want, adapters.ToolResult{CallID: refundIDs.Call(t2+1, i), Name: c.Name, Content: c.Result})
				}
			}
			if fmt.Sprint(in.Results) != fmt.Sprint(want) {
				t.Errorf("turn %d results:\n got %+v\nwant %+v", turn, in.Results, want)
			}
		}
	}
	// Any anthropic-version is accepted (the SDK sends its own date), and
	// any key or none.
	hr, _ := New().Encode(adapterstest.RefundRequest(1, refundIDs, true), adapters.ProviderAnthropic)
	for _, v := range []string{"2026-10-21", "2023-06-01", "whatever"} {
		h := http.Header{"Anthropic-Version": {v}}
		if _, e := sim.CheckRequest("POST", "/v1/messages?beta=true", h, hr.Body); e != nil {
			t.Errorf("%s: %s", v, e.Body)
		}
	}
}

// The SDK drives every refund scenario to its end against a server that
// checks each request with CheckRequest and answers the turn its history
// asks for, streaming and not: what the sim server does.
func TestSimSDKRefundLoop(t *testing.T) {
	for _, sc := range simRefund(t) {
		for _, stream := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/stream=%v", sc.name, stream), func(t *testing.T) {
				seed := uint64(0)
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					raw := new(bytes.Buffer)
					_, _ = raw.ReadFrom(r.Body)
					in, e := sim.CheckRequest(r.Method, r.URL.RequestURI(), r.Header, raw.Bytes())
					if e == nil && in.ModelTurns >= len(sc.turns) {
						e = sim.ErrorResponse(400, "invalid_request_error", "no turn left")
					}
					if e != nil {
						for k, v := range e.Header {
							w.Header()[k] = v
						}
						w.WriteHeader(e.Status)
						_, _ = w.Write(e.Body)
						return
					}
					seed++
					o := adapters.ResponseOptions{Model: in.Model, Seed: seed}
					turn := sc.turns[in.ModelTurns]
					if in.Stream {
						w.Header().Set("Content-Type", "text/event-stream")
						_, _ = w.Write(simSSE(sim.StreamEvents(turn, o)))
						return
					}
					w.Header().Set("Content-Type", "application/json")
					_, _ = w.Write(sim.Body(turn, o))
				}))
				defer srv.Close()
				c := client(srv)
				params := sdk.MessageNewParams{
					Model:     "refund-model",
					MaxTokens: 2048,
					System:    []sdk.TextBlockParam{{Text: "你是售后退款核查助手。"}},
					Messages:  []sdk.MessageParam{sdk.NewUserMessage(sdk.NewTextBlock("请核查订单 O-2048 第 L1 行的退款申请。"))},
				}
				for _, name := range []string{"get_order_line", "get_refund_ledger", "get_refund_policy"} {
					params.Tools = append(params.Tools, sdk.ToolUnionParamOfTool(sdk.ToolInputSchemaParam{Properties: map[string]any{}}, name))
				}
				for n, turn := range sc.turns {
					var msg sdk.Message
					if stream {
						s := c.Messages.NewStreaming(context.Background(), params)
						for s.Next() {
							if err := msg.Accumulate(s.Current()); err != nil {
								t.Fatal(err)
							}
						}
						if err := s.Err(); err != nil {
							t.Fatalf("turn %d: %v", n+1, err)
						}
					} else {
						m, err := c.Messages.New(context.Background(), params)
						if err != nil {
							t.Fatalf("turn %d: %v", n+1, err)
						}
						msg = *m
					}
					simCheckSDK(t, sc.wants[n], turn, adapters.ResponseOptions{Model: "refund-model", Seed: seed}, msg)
					params.Messages = append(params.Messages, msg.ToParam())
					var results []sdk.ContentBlockParamUnion
					for _, b := range msg.Content {
						if b.Type == "tool_use" {
							results = append(results, sdk.NewToolResultBlock(b.ID, `{"evidence_id":"EV-`+b.Name+`"}`, false))
						}
					}
					if len(results) == 0 {
						if n != len(sc.turns)-1 {
							t.Fatalf("turn %d ended the loop early", n+1)
						}
						break
					}
					params.Messages = append(params.Messages, sdk.NewUserMessage(results...))
				}
				if int(seed) != len(sc.turns) {
					t.Errorf("%d requests for %d turns", seed, len(sc.turns))
				}
			})
		}
	}
}
