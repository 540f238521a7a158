package geminiinteractions

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/adapterstest"
)

func decode(t *testing.T, name string) ([]adapters.Event, adapters.Summary) {
	t.Helper()
	return adapterstest.Decode(t, New(), adapterstest.ReadCapture(t, name))
}

// TestGoldens decodes every capture into its summary golden file
// (go test ./adapters/geminiinteractions -update rewrites them).
func TestGoldens(t *testing.T) {
	var names []string
	for _, pat := range []string{"*.sse", "*.body.json"} {
		m, _ := filepath.Glob(filepath.Join("testdata", pat))
		for _, p := range m {
			names = append(names, filepath.Base(p))
		}
	}
	if len(names) < 10 {
		t.Fatalf("only %d captures", len(names))
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			_, s := decode(t, name)
			adapterstest.Golden(t, strings.NewReplacer(".sse", "", ".body.json", "_body").Replace(name), s)
		})
	}
}

func n(p *int64) int64 {
	if p == nil {
		return -1
	}
	return *p
}

// The docs' plain text stream: the thought step is a reasoning item with
// its signature and no text; the text is the two deltas; usage adds the
// thought tokens to the output (346 = 11 + 90 + 245).
func TestTextStream(t *testing.T) {
	events, s := decode(t, "text.sse")
	if s.Terminal != adapters.StatusCompleted || s.StopReason != adapters.StopFinal || s.Text != "可退上限是 13000 分。" {
		t.Fatalf("summary %+v", s)
	}
	if s.ResponseID != "v1_text0001" || s.Model != "gemini-3.8-flash" {
		t.Fatalf("id %q model %q", s.ResponseID, s.Model)
	}
	u := s.Usage
	if n(u.InputTokens) != 11 || n(u.OutputTokens) != 335 || n(u.ReasoningTokens) != 245 || n(u.CacheReadTokens) != 0 {
		t.Fatalf("usage %+v", u)
	}
	sig := ""
	for _, ev := range events {
		if ev.Type == adapters.EvItemDone && ev.ItemID == "step-0" {
			sig = ev.Signature
		}
	}
	if sig != "EuYBCuMBARFNMg" {
		t.Fatalf("thought signature %q", sig)
	}
	if len(s.Diagnostics) != 0 {
		t.Fatalf("diagnostics %+v", s.Diagnostics)
	}
}

// Server-side tool steps are data (provider.unknown), not lanes; the
// function_call's streamed arguments become one proposed call; the status
// requires_action is a completed turn that stopped for tools.
func TestServerToolsAndCall(t *testing.T) {
	events, s := decode(t, "server_tools.sse")
	if s.Terminal != adapters.StatusCompleted || s.StopReason != adapters.StopToolCall || s.ProviderStopReason != "requires_action" {
		t.Fatalf("terminal %s/%s/%s", s.Terminal, s.StopReason, s.ProviderStopReason)
	}
	if len(s.ToolCalls) != 1 || s.ToolCalls[0].CallID != "ktr5aysg" || s.ToolCalls[0].Name != "get_order_line" ||
		string(s.ToolCalls[0].Arguments) != `{"order_id":"O-2048","line_id":"L1"}` {
		t.Fatalf("calls %+v", s.ToolCalls)
	}
	var unknown []string
	for _, ev := range events {
		if ev.Type == adapters.EvUnknown {
			unknown = append(unknown, ev.RawType)
		}
	}
	if strings.Join(unknown, ",") != "step.google_search_call,step.google_search_result" {
		t.Fatalf("unknown %v", unknown)
	}
}

// go-genai's own test streams send step.delta without step.start: the
// text still lands in a message item.
func TestBareDeltas(t *testing.T) {
	_, s := decode(t, "bare_deltas.sse")
	if s.Text != "A" || s.Terminal != adapters.StatusCompleted || s.ResponseID != "i1" {
		t.Fatalf("summary %+v", s)
	}
}

// An error event after a 200 fails the interaction with the API's code;
// the open text item stays incomplete.
func TestErrorEvent(t *testing.T) {
	_, s := decode(t, "error_event.sse")
	if s.Terminal != adapters.StatusFailed || s.StopReason != adapters.StopError || s.Error == nil || s.Error.Code != "gateway_timeout" {
		t.Fatalf("summary %+v error %+v", s, s.Error)
	}
}

// A stream cut inside arguments: no terminal, the call is incomplete and
// never proposed.
func TestCutMidArgs(t *testing.T) {
	_, s := decode(t, "cut_mid_args.sse")
	if s.Terminal != adapters.StatusUnknown || len(s.ToolCalls) != 0 || len(s.IncompleteToolCalls) != 1 ||
		s.IncompleteToolCalls[0].PartialArguments != `{"order_id":"O-20` {
		t.Fatalf("summary %+v", s)
	}
}

// A blocked generation is a refusal, not a failure.
func TestRefusalBody(t *testing.T) {
	_, s := decode(t, "refusal.body.json")
	if s.Terminal != adapters.StatusRefused || s.StopReason != adapters.StopRefusal || s.ProviderStopReason != "failed:safety" {
		t.Fatalf("summary %+v", s)
	}
}

// The same scripted turn decodes to the same summary from the stream and
// from the body: text, reasoning, calls with their ids, usage.
func TestStreamAndBodyAgree(t *testing.T) {
	for _, turn := range []string{"refund_turn1", "refund_turn2", "refund_turn3"} {
		_, a := decode(t, turn+".sse")
		_, b := decode(t, turn+".body.json")
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if string(ja) != string(jb) {
			t.Errorf("%s: stream %s\nbody   %s", turn, ja, jb)
		}
	}
	_, s := decode(t, "refund_turn2.sse")
	if len(s.ToolCalls) != 2 || s.ToolCalls[0].Name != "get_refund_ledger" || s.ToolCalls[1].Name != "get_refund_policy" {
		t.Fatalf("turn 2 calls %+v", s.ToolCalls)
	}
	_, s = decode(t, "refund_turn3.sse")
	if s.Text != adapterstest.CaptureModelText || s.StopReason != adapters.StopFinal {
		t.Fatalf("turn 3: %q %s", s.Text, s.StopReason)
	}
}

// Malformed data is a diagnostic; an unknown event type is data.
func TestMalformedAndUnknown(t *testing.T) {
	d := New().NewDecoder()
	evs := d.Decode(adapters.RawEvent{Event: "step.delta", Data: `{"index":0,"delta":`})
	if len(evs) != 1 || evs[0].Kind != adapters.DiagMalformedEvent {
		t.Fatalf("malformed: %+v", evs)
	}
	evs = d.Decode(adapters.RawEvent{Event: "interaction.heartbeat", Data: `{"event_type":"interaction.heartbeat"}`})
	if len(evs) != 1 || evs[0].Type != adapters.EvUnknown || evs[0].RawType != "interaction.heartbeat" {
		t.Fatalf("unknown: %+v", evs)
	}
}

func TestDecodeError(t *testing.T) {
	e := New().DecodeError(400, nil, adapterstest.ReadCapture(t, "invalid_request.error.json"))
	if e.HTTPStatus != 400 || e.Type != "invalid_request" || !strings.HasPrefix(e.Message, "No function call found") {
		t.Fatalf("%+v", e)
	}
	e = New().DecodeError(429, map[string][]string{"Retry-After": {"2"}}, adapterstest.ReadCapture(t, "rate_limit.error.json"))
	if e.Type != "rate_limit_exceeded" || e.RetryAfterMS != 2000 {
		t.Fatalf("%+v", e)
	}
}

func FuzzDecode(f *testing.F) {
	adapterstest.Fuzz(f, New(), adapterstest.SeedsFromTestdata(f, ".sse", ".body.json")...)
}
