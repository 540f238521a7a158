package gemini

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"google.golang.org/genai"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/adapterstest"
)

// The simulator's side of the Gemini API is checked three ways: this
// package's decoder reads every rendered turn of every refund variant back
// to the script; the official Go SDK (google.golang.org/genai) accepts the
// same bytes and drives the whole refund loop through CheckRequest; and
// each request check answers with the API's status and error shape.

var simP = Protocol{}

// wantCall is a function call a client must read back: its name and its
// arguments as compact JSON.
type wantCall struct{ name, args string }

// simWant is what a client must read back from a scripted turn, written
// out literally so that a simulator that drops or changes a call, a
// finishReason or a terminal fails the tests (text and reasoning are the
// script's own, see simScriptText). Gemini has no refusal part: a refusal
// is finishReason SAFETY without content.
type simWant struct {
	calls  []wantCall
	finish string
	status adapters.Status
	stop   adapters.StopReason
}

// The refund case's expected turns, named once for the table below.
var (
	simOrderLine = simWant{finish: "STOP", status: adapters.StatusCompleted, stop: adapters.StopToolCall,
		calls: []wantCall{{"get_order_line", `{"order_id":"O-2048","line_id":"L1"}`}}}
	simLedgerAndPolicy = simWant{finish: "STOP", status: adapters.StatusCompleted, stop: adapters.StopToolCall,
		calls: []wantCall{{"get_refund_ledger", `{"order_id":"O-2048","line_id":"L1"}`}, {"get_refund_policy", `{"category":"headphones","received_at":"2026-10-15T12:00:00+08:00","reason":"quality_issue"}`}}}
	simFinal = simWant{finish: "STOP", status: adapters.StatusCompleted, stop: adapters.StopFinal}
)

// wantRefundTurns is, per script of samples/refund.json, what each turn
// must decode to. When the refund case changes, change these literals.
var wantRefundTurns = map[string][]simWant{
	"refund": {simOrderLine, simLedgerAndPolicy, simFinal},
	"refund/bad-args": {
		{finish: "STOP", status: adapters.StatusCompleted, stop: adapters.StopToolCall,
			calls: []wantCall{{"get_order_line", `{"order_id":"O-2048"}`}}},
		simOrderLine, simLedgerAndPolicy, simFinal,
	},
	"refund/claims-refunded": {simOrderLine, simLedgerAndPolicy, simFinal},
	"refund/fenced":          {simOrderLine, simLedgerAndPolicy, simFinal},
	"refund/missing-field":   {simOrderLine, simLedgerAndPolicy, simFinal},
	"refund/refusal":         {{finish: "SAFETY", status: adapters.StatusRefused, stop: adapters.StopRefusal}},
	"refund/sequential": {
		simOrderLine,
		{finish: "STOP", status: adapters.StatusCompleted, stop: adapters.StopToolCall,
			calls: []wantCall{{"get_refund_ledger", `{"order_id":"O-2048","line_id":"L1"}`}}},
		{finish: "STOP", status: adapters.StatusCompleted, stop: adapters.StopToolCall,
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

// simScenarios loads the refund case and its variants from samples/ (read
// as JSON: importing session from here would be an import cycle), each
// with its literal expectations.
func simScenarios(t testing.TB) []simScenario {
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
	for _, sc := range simScenarios(t) {
		if sc.name == name {
			return sc.turns
		}
	}
	t.Fatalf("no scenario %q", name)
	return nil
}

// simSSE writes events as the sim server does.
func simSSE(events []adapters.WireEvent) []byte {
	return adapterstest.SSE(events, simP.LineEnd())
}

func simOpts(seed uint64) adapters.ResponseOptions {
	return adapters.ResponseOptions{Model: "gemini-2.5-flash", Seed: seed}
}

// simScriptText is the answer text and the reasoning of a scripted turn,
// the script's input that a client must read back unchanged.
func simScriptText(turn adapters.ModelTurn) (text, reasoning string) {
	for _, it := range turn.Items {
		switch it.Kind {
		case adapters.KindMessage:
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
	return reflect.DeepEqual(x, y)
}

func simDeref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

var simRespID = regexp.MustCompile(`^[A-Za-z0-9_-]{23}$`)

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
		t.Errorf("refusal %q: Gemini has no refusal text", *s.Refusal)
	}
	if len(s.ToolCalls) != len(w.calls) || len(s.IncompleteToolCalls) != 0 {
		t.Fatalf("tool calls: got %+v (incomplete %+v), want %d", s.ToolCalls, s.IncompleteToolCalls, len(w.calls))
	}
	for i, c := range s.ToolCalls {
		if c.Name != w.calls[i].name || !simJSONEqual(c.Arguments, []byte(w.calls[i].args)) {
			t.Errorf("call %d: got %s %s, want %s %s", i, c.Name, c.Arguments, w.calls[i].name, w.calls[i].args)
		}
		if c.CallID != fmt.Sprintf("%s%d", SyntheticCallIDPrefix, i) {
			t.Errorf("call %d: id %q; the simulator sends none, so the decoder numbers it", i, c.CallID)
		}
	}
	if s.StopReason != w.stop || s.Terminal != w.status || s.ProviderStopReason != w.finish {
		t.Errorf("terminal: got %s/%s (%s), want %s/%s (%s)", s.Terminal, s.StopReason, s.ProviderStopReason, w.status, w.stop, w.finish)
	}
	if s.ResponseID != simP.ResponseID(o) || !simRespID.MatchString(s.ResponseID) || s.Model != o.Model {
		t.Errorf("response %s %s, want %s %s", s.ResponseID, s.Model, simP.ResponseID(o), o.Model)
	}
	u, su := s.Usage, turn.Usage
	if u == nil {
		t.Fatal("no usage")
	}
	if simDeref(u.InputTokens) != simDeref(su.InputTokens) || simDeref(u.OutputTokens) != simDeref(su.OutputTokens) ||
		simDeref(u.CacheReadTokens) != simDeref(su.CacheReadTokens) || simDeref(u.ReasoningTokens) != simDeref(su.ReasoningTokens) {
		t.Errorf("usage: got in %d out %d cache %d reasoning %d, want %+v", simDeref(u.InputTokens), simDeref(u.OutputTokens),
			simDeref(u.CacheReadTokens), simDeref(u.ReasoningTokens), su)
	}
	if u.CacheWriteTokens != nil {
		t.Errorf("cache write %d: Gemini has no such counter", *u.CacheWriteTokens)
	}
	if len(s.Diagnostics) != 0 {
		t.Errorf("diagnostics: %+v", s.Diagnostics)
	}
}

func TestSimStreamDecodesToScript(t *testing.T) {
	for _, sc := range simScenarios(t) {
		for i, turn := range sc.turns {
			t.Run(fmt.Sprintf("%s/turn%d", sc.name, i+1), func(t *testing.T) {
				o := simOpts(uint64(100 + i))
				wire := simSSE(simP.StreamEvents(turn, o))
				if !adapters.LooksLikeStream(wire) {
					t.Fatal("the stream does not look like SSE")
				}
				_, s := adapterstest.Decode(t, New(), wire)
				simCheckSummary(t, sc.wants[i], turn, o, s)
			})
		}
	}
}

func TestSimBodyDecodesToScript(t *testing.T) {
	for _, sc := range simScenarios(t) {
		for i, turn := range sc.turns {
			t.Run(fmt.Sprintf("%s/turn%d", sc.name, i+1), func(t *testing.T) {
				o := simOpts(uint64(200 + i))
				body := simP.Body(turn, o)
				if !json.Valid(body) {
					t.Fatalf("body is not JSON: %s", body)
				}
				_, s := adapterstest.Decode(t, New(), body)
				simCheckSummary(t, sc.wants[i], turn, o, s)
			})
		}
	}
}

// simFaultTurn is a fault turn and what a client must read back from it.
type simFaultTurn struct {
	turn adapters.ModelTurn
	want simWant
}

// simFaultTurns are the turns the sim server makes for the truncate and
// refusal faults (sim/script.go), rebuilt here: truncation cuts the last
// item's text, or turns the last call's arguments into a cut JSON string.
func simFaultTurns(t *testing.T) map[string]simFaultTurn {
	script := simScenarios(t)[0].turns
	half := func(s string) string { r := []rune(s); return string(r[:len(r)/2]) }
	cut := func(mt adapters.ModelTurn) adapters.ModelTurn {
		out := adapters.ModelTurn{Stop: adapters.StopTruncated, Usage: mt.Usage, Items: append([]adapters.OutputItem(nil), mt.Items...)}
		last := &out.Items[len(out.Items)-1]
		if last.Kind == adapters.KindToolCall {
			b, _ := json.Marshal(half(adapters.ArgumentText(last.Arguments)))
			last.Arguments = b
		} else {
			last.Text = half(last.Text)
		}
		return out
	}
	truncated := simWant{finish: "MAX_TOKENS", status: adapters.StatusIncomplete, stop: adapters.StopTruncated}
	refused := simWant{finish: "SAFETY", status: adapters.StatusRefused, stop: adapters.StopRefusal}
	return map[string]simFaultTurn{
		"truncated-text": {cut(script[2]), truncated},
		// The cut call is not sent: Gemini never streams part of a call.
		"truncated-call": {cut(script[1]), simWant{finish: "MAX_TOKENS", status: adapters.StatusIncomplete, stop: adapters.StopTruncated,
			calls: []wantCall{{"get_refund_ledger", `{"order_id":"O-2048","line_id":"L1"}`}}}},
		"refusal": {adapters.ModelTurn{Items: []adapters.OutputItem{{Kind: adapters.KindRefusal, Text: "I can't help with that request."}},
			Stop: adapters.StopRefusal, Usage: script[0].Usage}, refused},
		"refusal-after-text": {adapters.ModelTurn{Items: []adapters.OutputItem{{Kind: adapters.KindMessage, Text: "Here is how"}, {Kind: adapters.KindRefusal, Text: "no"}},
			Stop: adapters.StopRefusal, Usage: script[0].Usage}, refused},
	}
}

// TestSimFaultTurns: a truncated turn ends MAX_TOKENS (a cut call is not
// sent: Gemini never streams part of a call); a refusal is SAFETY with
// safetyRatings and no content.
func TestSimFaultTurns(t *testing.T) {
	for name, ft := range simFaultTurns(t) {
		t.Run(name, func(t *testing.T) {
			o, turn := simOpts(7), ft.turn
			events := simP.StreamEvents(turn, o)
			_, s := adapterstest.Decode(t, New(), simSSE(events))
			simCheckSummary(t, ft.want, turn, o, s)
			_, s = adapterstest.Decode(t, New(), simP.Body(turn, o))
			simCheckSummary(t, ft.want, turn, o, s)
			last := events[len(events)-1].Data
			switch turn.Stop {
			case adapters.StopRefusal:
				if !strings.HasPrefix(last, `{"candidates": [{"finishReason": "SAFETY","index": 0,"safetyRatings": [{"category": `) {
					t.Errorf("refusal chunk: %s", last)
				}
			case adapters.StopTruncated:
				if !strings.Contains(last, `"finishReason": "MAX_TOKENS"`) {
					t.Errorf("truncated chunk: %s", last)
				}
			}
			if name == "truncated-call" && len(s.ToolCalls) != 1 {
				t.Errorf("the whole first call stays, the cut one is not sent: %+v", s.ToolCalls)
			}
		})
	}
}

// simChunk is the part of a chunk the shape checks read.
type simChunk struct {
	Candidates []struct {
		Content *struct {
			Parts []map[string]json.RawMessage `json:"parts"`
			Role  string                       `json:"role"`
		} `json:"content"`
		FinishReason string `json:"finishReason"`
		Index        *int   `json:"index"`
	} `json:"candidates"`
	UsageMetadata map[string]json.RawMessage `json:"usageMetadata"`
	ModelVersion  string                     `json:"modelVersion"`
	ResponseID    string                     `json:"responseId"`
}

// TestSimStreamShape checks the bytes against the captures' shapes: data
// only, CRLF, Google's one-line style, ids and model on every chunk,
// finishReason and the output counts only on the last, the signature once,
// on the first functionCall part of a call turn, phases as the faults
// expect them.
func TestSimStreamShape(t *testing.T) {
	prefix := regexp.MustCompile(`^\{"candidates": \[\{"(content|finishReason)": `)
	suffix := regexp.MustCompile(`,"modelVersion": "gemini-2\.5-flash","responseId": "[A-Za-z0-9_-]{23}"\}$`)
	for _, sc := range simScenarios(t) {
		for i, turn := range sc.turns {
			t.Run(fmt.Sprintf("%s/turn%d", sc.name, i+1), func(t *testing.T) {
				o := simOpts(uint64(300 + i))
				events := simP.StreamEvents(turn, o)
				wire := simSSE(events)
				if bytes.Contains(bytes.ReplaceAll(wire, []byte("\r\n"), nil), []byte("\n")) || !bytes.HasSuffix(wire, []byte("}\r\n\r\n")) {
					t.Fatal("not CRLF framed")
				}
				if bytes.Contains(wire, []byte("[DONE]")) || bytes.Contains(wire, []byte("\r\n:")) || bytes.Contains(wire, []byte("event:")) {
					t.Fatal("Gemini streams carry data lines only")
				}
				sigs, phases := 0, map[adapters.Phase]int{}
				texts := 0
				for k, e := range events {
					phases[e.Phase]++
					if e.Event != "" || e.ID != "" || strings.ContainsAny(e.Data, "\r\n") {
						t.Fatalf("event %d: %+v", k, e)
					}
					if !prefix.MatchString(e.Data) || !suffix.MatchString(e.Data) || strings.Contains(e.Data, ", ") && !strings.Contains(e.Data, `"text"`) {
						t.Fatalf("event %d is not in the captures' style: %s", k, e.Data)
					}
					var c simChunk
					if err := json.Unmarshal([]byte(e.Data), &c); err != nil {
						t.Fatal(err)
					}
					if len(c.Candidates) != 1 || c.Candidates[0].Index == nil || *c.Candidates[0].Index != 0 || c.ResponseID != simP.ResponseID(o) {
						t.Fatalf("event %d: %s", k, e.Data)
					}
					lastChunk := k == len(events)-1
					if (c.Candidates[0].FinishReason != "") != lastChunk || (e.Phase == adapters.PhaseTerminal) != lastChunk {
						t.Errorf("event %d: finishReason %q, phase %s", k, c.Candidates[0].FinishReason, e.Phase)
					}
					if _, full := c.UsageMetadata["candidatesTokenCount"]; full != lastChunk || string(c.UsageMetadata["promptTokenCount"]) != fmt.Sprint(simDeref(turn.Usage.InputTokens)) {
						t.Errorf("event %d: usage %v", k, c.UsageMetadata)
					}
					if c.Candidates[0].Content == nil {
						continue
					}
					if c.Candidates[0].Content.Role != "model" {
						t.Errorf("event %d: role %q", k, c.Candidates[0].Content.Role)
					}
					for pi, p := range c.Candidates[0].Content.Parts {
						if _, ok := p["thoughtSignature"]; ok {
							sigs++
							if _, call := p["functionCall"]; sc.wants[i].calls != nil && (!call || pi != 0) {
								t.Errorf("event %d: the signature is not on the first functionCall part", k)
							}
						}
						if fc, ok := p["functionCall"]; ok {
							if e.Phase != adapters.PhaseArgs || strings.Contains(string(fc), `"id"`) || !strings.Contains(string(fc), `"args": {`) {
								t.Errorf("event %d: call part %s, phase %s", k, fc, e.Phase)
							}
						}
						if txt, ok := p["text"]; ok && !lastChunk {
							var s string
							_ = json.Unmarshal(txt, &s)
							if !utf8.ValidString(s) || s == "" {
								t.Errorf("event %d: text %q", k, txt)
							}
							_, thought := p["thought"]
							if thought != (e.Phase == adapters.PhaseReasoning) || !thought && e.Phase != adapters.PhaseText {
								t.Errorf("event %d: text part with phase %s", k, e.Phase)
							}
							texts++
						}
					}
				}
				w := sc.wants[i]
				text, reasoning := simScriptText(turn)
				wantSigs := 0
				if w.calls != nil || reasoning != "" {
					wantSigs = 1
				}
				if sigs != wantSigs {
					t.Errorf("%d signatures, want %d", sigs, wantSigs)
				}
				if w.calls != nil && phases[adapters.PhaseArgs] != 1 {
					t.Errorf("the calls of a turn come in one chunk: %v", phases)
				}
				if n := utf8.RuneCountInString(text + reasoning); n > 0 && texts < n/6 {
					t.Errorf("%d text chunks for %d characters: not fragmented", texts, n)
				}
			})
		}
	}
}

// TestSimBodyShape: the body is the captures' pretty-printed JSON, with the
// same id and signature as the stream for the seed. The base script's
// final answer has no thinking and so no signature; wrong-cap thinks on
// every turn.
func TestSimBodyShape(t *testing.T) {
	o := simOpts(42)
	for _, name := range []string{"refund", "refund/wrong-cap"} {
		for i, turn := range simScript(t, name) {
			body := simP.Body(turn, o)
			if !bytes.HasPrefix(body, []byte("{\n  \"candidates\": [\n    {\n      \"content\": {\n        \"parts\": [\n")) ||
				!bytes.HasSuffix(body, []byte("  \"modelVersion\": \"gemini-2.5-flash\",\n  \"responseId\": \""+simP.ResponseID(o)+"\"\n}\n")) {
				t.Fatalf("%s turn %d body:\n%s", name, i+1, body)
			}
			sig := simSignature(o.Seed)
			// A turn with calls or thinking carries the signature once.
			wantSigs := 0
			for _, it := range turn.Items {
				if it.Kind == adapters.KindToolCall || it.Kind == adapters.KindReasoning {
					wantSigs = 1
				}
			}
			if n := bytes.Count(body, []byte(sig)); n != wantSigs {
				t.Errorf("%s turn %d: the signature is in the body %d times, want %d", name, i+1, n, wantSigs)
			}
			for _, e := range simP.StreamEvents(turn, o) {
				if strings.Contains(e.Data, `"thoughtSignature"`) && !strings.Contains(e.Data, sig) {
					t.Errorf("%s turn %d: stream and body signatures differ", name, i+1)
				}
			}
		}
	}
	// The thinking answer's signature is on its text part, as in
	// thinking.body.json.
	var r struct {
		Candidates []struct {
			Content struct {
				Parts []struct {
					Text             string `json:"text"`
					Thought          bool   `json:"thought"`
					ThoughtSignature string `json:"thoughtSignature"`
				} `json:"parts"`
			} `json:"content"`
		} `json:"candidates"`
	}
	final := simScript(t, "refund/wrong-cap")[2]
	if err := json.Unmarshal(simP.Body(final, o), &r); err != nil {
		t.Fatal(err)
	}
	parts := r.Candidates[0].Content.Parts
	if len(parts) != 2 || !parts[0].Thought || parts[0].Text != "历史说还能退150元，就按150元。" || parts[0].ThoughtSignature != "" ||
		parts[1].Thought || parts[1].ThoughtSignature == "" || !strings.Contains(parts[1].Text, `"max_refund_cents":15000`) || parts[1].Text != final.Items[len(final.Items)-1].Text {
		t.Errorf("final body parts: %+v", parts)
	}
	// Without thinking, the answer is one plain text part.
	r.Candidates = nil
	if err := json.Unmarshal(simP.Body(simScript(t, "refund")[2], o), &r); err != nil {
		t.Fatal(err)
	}
	parts = r.Candidates[0].Content.Parts
	if len(parts) != 1 || parts[0].Thought || parts[0].ThoughtSignature != "" || parts[0].Text != adapterstest.RefundModelText {
		t.Errorf("final body parts: %+v", parts)
	}
}

func TestSimDeterminism(t *testing.T) {
	turn := simScenarios(t)[0].turns[1]
	a, b := simSSE(simP.StreamEvents(turn, simOpts(5))), simSSE(simP.StreamEvents(turn, simOpts(5)))
	if !bytes.Equal(a, b) || !bytes.Equal(simP.Body(turn, simOpts(5)), simP.Body(turn, simOpts(5))) {
		t.Fatal("same seed, different bytes")
	}
	c := simSSE(simP.StreamEvents(turn, simOpts(6)))
	if bytes.Equal(a, c) {
		t.Fatal("different seeds, same bytes")
	}
	ids, sigs := map[string]uint64{}, map[string]uint64{}
	for seed := range uint64(5000) {
		id, sig := simP.ResponseID(simOpts(seed)), simSignature(seed)
		if prev, dup := ids[id]; dup {
			t.Fatalf("seeds %d and %d share the response id %s", prev, seed, id)
		}
		if prev, dup := sigs[sig]; dup {
			t.Fatalf("seeds %d and %d share the signature", prev, seed)
		}
		ids[id], sigs[sig] = seed, seed
		if !simRespID.MatchString(id) {
			t.Fatalf("response id %q", id)
		}
	}
	if !bytes.Contains(a, []byte(simP.ResponseID(simOpts(5)))) || !bytes.Contains(simP.Body(turn, simOpts(5)), []byte(simP.ResponseID(simOpts(5)))) {
		t.Fatal("ResponseID is not the id the response carries")
	}
}

// ---- the official SDK --------------------------------------------------------

// simSDKCheck: what an SDK user collected equals the script.
func simSDKCheck(t *testing.T, w simWant, turn adapters.ModelTurn, v sdkView) {
	t.Helper()
	if v.err != nil {
		t.Fatalf("SDK error: %v", v.err)
	}
	text, reasoning := simScriptText(turn)
	if v.text != text || v.thoughts != reasoning {
		t.Errorf("SDK text %q thoughts %q; want %q %q", v.text, v.thoughts, text, reasoning)
	}
	if v.finish != w.finish {
		t.Errorf("SDK finishReason %q, want %q", v.finish, w.finish)
	}
	if len(v.calls) != len(w.calls) {
		t.Fatalf("SDK calls %d, want %d", len(v.calls), len(w.calls))
	}
	for i, fc := range v.calls {
		var want map[string]any
		_ = json.Unmarshal([]byte(w.calls[i].args), &want)
		if fc.Name != w.calls[i].name || fc.ID != "" || !reflect.DeepEqual(fc.Args, want) {
			t.Errorf("SDK call %d: %s %q %v, want %s %v", i, fc.Name, fc.ID, fc.Args, w.calls[i].name, want)
		}
	}
	u := v.usage
	if u == nil || int64(u.PromptTokenCount) != simDeref(turn.Usage.InputTokens) ||
		int64(u.CandidatesTokenCount+u.ThoughtsTokenCount) != simDeref(turn.Usage.OutputTokens) ||
		int64(u.CachedContentTokenCount) != simDeref(turn.Usage.CacheReadTokens) ||
		int64(u.TotalTokenCount) != int64(u.PromptTokenCount+u.CandidatesTokenCount+u.ThoughtsTokenCount) {
		t.Errorf("SDK usage %+v, want %+v", u, turn.Usage)
	}
}

func simSDKStream(t *testing.T, wire []byte, model string) (sdkView, []*genai.GenerateContentResponse) {
	var v sdkView
	var all []*genai.GenerateContentResponse
	c := sdkClient(t, wire, "text/event-stream", &v.requestPath)
	for r, err := range c.Models.GenerateContentStream(context.Background(), model, genai.Text("hi"), noContinuation) {
		if err != nil {
			v.err = err
			break
		}
		v.add(r)
		all = append(all, r)
	}
	return v, all
}

func TestSimSDKStream(t *testing.T) {
	for _, sc := range simScenarios(t) {
		for i, turn := range sc.turns {
			t.Run(fmt.Sprintf("%s/turn%d", sc.name, i+1), func(t *testing.T) {
				o := simOpts(uint64(400 + i))
				v, chunks := simSDKStream(t, simSSE(simP.StreamEvents(turn, o)), o.Model)
				simSDKCheck(t, sc.wants[i], turn, v)
				for _, r := range chunks {
					if r.ResponseID != simP.ResponseID(o) || r.ModelVersion != o.Model {
						t.Fatalf("SDK chunk %s %s", r.ResponseID, r.ModelVersion)
					}
				}
				if sc.wants[i].calls != nil && len(chunks[len(chunks)-2].Candidates[0].Content.Parts[0].ThoughtSignature) != 189+3 {
					t.Error("the SDK did not read the call's thoughtSignature as 192 bytes")
				}
			})
		}
	}
}

func TestSimSDKBody(t *testing.T) {
	for _, sc := range simScenarios(t) {
		for i, turn := range sc.turns {
			t.Run(fmt.Sprintf("%s/turn%d", sc.name, i+1), func(t *testing.T) {
				o := simOpts(uint64(500 + i))
				var v sdkView
				c := sdkClient(t, simP.Body(turn, o), "application/json", &v.requestPath)
				r, err := c.Models.GenerateContent(context.Background(), o.Model, genai.Text("hi"), noContinuation)
				v.err = err
				v.add(r)
				simSDKCheck(t, sc.wants[i], turn, v)
				if r.ResponseID != simP.ResponseID(o) {
					t.Errorf("SDK response id %s", r.ResponseID)
				}
			})
		}
	}
}

// TestSimSDKFaultTurns: the SDK reads the truncated and refused turns too.
func TestSimSDKFaultTurns(t *testing.T) {
	for name, ft := range simFaultTurns(t) {
		t.Run(name, func(t *testing.T) {
			o := simOpts(9)
			v, _ := simSDKStream(t, simSSE(simP.StreamEvents(ft.turn, o)), o.Model)
			simSDKCheck(t, ft.want, ft.turn, v)
		})
	}
}

// simServe answers as the sim server does: CheckRequest, then the
// scenario's turn at the request's ModelTurns, streamed or whole.
type simServe struct {
	t     *testing.T
	turns []adapters.ModelTurn
	mu    sync.Mutex
	seen  []*adapters.Inbound
	seed  uint64
	extra func(events []adapters.WireEvent) []adapters.WireEvent
}

func (s *simServe) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	in, serr := simP.CheckRequest(r.Method, r.URL.RequestURI(), r.Header, body)
	if serr != nil {
		s.t.Errorf("CheckRequest rejected the SDK's request: %s\n%s", serr.Body, body)
		for k, v := range serr.Header {
			w.Header()[k] = v
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(serr.Status)
		_, _ = w.Write(serr.Body)
		return
	}
	s.mu.Lock()
	s.seen = append(s.seen, in)
	s.seed++
	o := adapters.ResponseOptions{Model: in.Model, Seed: s.seed}
	s.mu.Unlock()
	if in.ModelTurns >= len(s.turns) {
		e := simP.ErrorResponse(400, "invalid_request_error", "simulator: no such turn")
		w.WriteHeader(e.Status)
		_, _ = w.Write(e.Body)
		return
	}
	turn := s.turns[in.ModelTurns]
	for k, v := range simP.ResponseHeaders(in.Stream) {
		w.Header()[k] = v
	}
	if !in.Stream {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(simP.Body(turn, o))
		return
	}
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	events := simP.StreamEvents(turn, o)
	if s.extra != nil {
		events = s.extra(events)
	}
	_, _ = w.Write(simSSE(events))
}

func simClient(t *testing.T, h http.Handler) *genai.Client {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c, err := genai.NewClient(context.Background(), &genai.ClientConfig{APIKey: "any-key", Backend: genai.BackendGeminiAPI,
		HTTPOptions: genai.HTTPOptions{BaseURL: srv.URL}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestSimSDKLoop drives every refund scenario through go-genai's Chat, as an
// SDK user writes the tool loop: each answer's function calls are executed
// and sent back as functionResponse parts, the Chat replays the history
// (one model content per streamed chunk, signatures included), and
// CheckRequest must accept every request and count its model turns.
func TestSimSDKLoop(t *testing.T) {
	var decls []*genai.FunctionDeclaration
	for _, tl := range adapterstest.RefundTools() {
		var schema map[string]any
		_ = json.Unmarshal(tl.Parameters, &schema)
		decls = append(decls, &genai.FunctionDeclaration{Name: tl.Name, Description: tl.Description, ParametersJsonSchema: schema})
	}
	for _, sc := range simScenarios(t) {
		for _, streaming := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/stream=%v", sc.name, streaming), func(t *testing.T) {
				srv := &simServe{t: t, turns: sc.turns}
				c := simClient(t, srv)
				ctx := context.Background()
				chat, err := c.Chats.Create(ctx, "gemini-2.5-flash", &genai.GenerateContentConfig{
					AutomaticContinuation: genai.Ptr(false),
					SystemInstruction:     genai.NewContentFromText(adapterstest.RefundSources()[0].Text, genai.RoleUser),
					Tools:                 []*genai.Tool{{FunctionDeclarations: decls}},
					Temperature:           genai.Ptr[float32](0.2),
					MaxOutputTokens:       1800,
				}, nil)
				if err != nil {
					t.Fatal(err)
				}
				parts := []*genai.Part{genai.NewPartFromText(adapterstest.RefundSources()[2].Text)}
				for i, turn := range sc.turns {
					var v sdkView
					if streaming {
						for r, err := range chat.SendStream(ctx, parts...) {
							if err != nil {
								t.Fatalf("turn %d: %v", i+1, err)
							}
							v.add(r)
						}
					} else {
						r, err := chat.Send(ctx, parts...)
						if err != nil {
							t.Fatalf("turn %d: %v", i+1, err)
						}
						v.add(r)
					}
					simSDKCheck(t, sc.wants[i], turn, v)
					in := srv.seen[i]
					if in.ModelTurns != i || in.Stream != streaming || in.Model != "gemini-2.5-flash" || in.MaxOutputTokens != 1800 || len(in.Tools) != 3 {
						t.Fatalf("turn %d: inbound %+v", i+1, in)
					}
					// The results of the whole history, each with the id the
					// decoder gave its call (its index in its turn).
					var want []adapters.ToolResult
					for _, prev := range sc.wants[:i] {
						for k, c := range prev.calls {
							want = append(want, adapters.ToolResult{CallID: fmt.Sprintf("%s%d", SyntheticCallIDPrefix, k), Name: c.name, Content: `{"ok":true}`})
						}
					}
					if !reflect.DeepEqual(in.Results, want) {
						t.Fatalf("turn %d results\n got %+v\nwant %+v", i+1, in.Results, want)
					}
					parts = nil
					for _, fc := range v.calls {
						parts = append(parts, genai.NewPartFromFunctionResponse(fc.Name, map[string]any{"output": map[string]any{"ok": true}}))
					}
					if len(parts) == 0 {
						if i != len(sc.turns)-1 {
							t.Fatalf("turn %d made no calls but the script goes on", i+1)
						}
						break
					}
				}
				if len(srv.seen) != len(sc.turns) {
					t.Fatalf("%d requests for %d turns", len(srv.seen), len(sc.turns))
				}
			})
		}
	}
}

// TestSimSDKErrors: go-genai reads the HTTP errors and the in-stream error
// as APIErrors with Google's code, status and message, and so does this
// package's DecodeError.
func TestSimSDKErrors(t *testing.T) {
	cases := []struct {
		kind   string
		status int
		code   int
		name   string
	}{
		{"rate_limit", 429, 429, "RESOURCE_EXHAUSTED"},
		{"server_error", 500, 500, "INTERNAL"},
		{"api_error", 500, 500, "INTERNAL"},
		{"overloaded_error", 529, 503, "UNAVAILABLE"},
		{"invalid_request_error", 400, 400, "INVALID_ARGUMENT"},
		{"request_too_large", 413, 400, "INVALID_ARGUMENT"},
		{"authentication_error", 401, 400, "INVALID_ARGUMENT"},
		{"", 404, 404, "NOT_FOUND"},
		{"", 504, 504, "DEADLINE_EXCEEDED"},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%s/%d", tc.kind, tc.status), func(t *testing.T) {
			e := simP.ErrorResponse(tc.status, tc.kind, "simulator: scenario refund has 3 model turns")
			e.Header.Set("Retry-After", "1") // as the sim server does on its 429: the header map exists
			if e.Status != tc.code {
				t.Fatalf("status %d, want %d", e.Status, tc.code)
			}
			ours := simP.DecodeError(e.Status, nil, e.Body)
			if ours.Type != tc.name || ours.HTTPStatus != tc.code {
				t.Fatalf("DecodeError %+v", ours)
			}
			if tc.kind == "rate_limit" && ours.RetryAfterMS != 1000 {
				t.Errorf("RetryInfo: %d ms", ours.RetryAfterMS)
			}
			if tc.kind == "invalid_request_error" && !strings.Contains(ours.Message, "simulator: scenario refund") {
				t.Errorf("the caller's message is lost: %q", ours.Message)
			}
			c := simClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				for k, v := range e.Header {
					w.Header()[k] = v
				}
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(e.Status)
				_, _ = w.Write(e.Body)
			}))
			_, err := c.Models.GenerateContent(context.Background(), "gemini-2.5-flash", genai.Text("hi"), noContinuation)
			var apiErr genai.APIError
			if !errors.As(err, &apiErr) || apiErr.Code != tc.code || apiErr.Status != tc.name || apiErr.Message != ours.Message {
				t.Fatalf("SDK error %v; ours %+v", err, ours)
			}
		})
	}

	// After a 200: the error chunk ends the stream.
	turn := simScenarios(t)[0].turns[2]
	srv := &simServe{t: t, turns: []adapters.ModelTurn{turn}, extra: func(ev []adapters.WireEvent) []adapters.WireEvent {
		return append(ev[:len(ev)/2:len(ev)/2], simP.ErrorEvent("overloaded_error", "Overloaded")...)
	}}
	c := simClient(t, srv)
	var apiErr genai.APIError
	n := 0
	for _, err := range c.Models.GenerateContentStream(context.Background(), "gemini-2.5-flash", genai.Text("hi"), noContinuation) {
		if err != nil {
			if !errors.As(err, &apiErr) {
				t.Fatalf("SDK stream error %v", err)
			}
			break
		}
		n++
	}
	if apiErr.Code != 503 || apiErr.Status != "UNAVAILABLE" || apiErr.Message != simOverloadMessage || n == 0 {
		t.Fatalf("SDK in-stream error %+v after %d chunks", apiErr, n)
	}
	events := simP.StreamEvents(turn, simOpts(1))
	events = append(events[:3:3], simP.ErrorEvent("overloaded_error", "Overloaded")...)
	_, s := adapterstest.Decode(t, New(), simSSE(events))
	if s.Terminal != adapters.StatusFailed || s.Error == nil || s.Error.Type != "UNAVAILABLE" || s.Error.Message != simOverloadMessage {
		t.Fatalf("decoded in-stream error: %s %+v", s.Terminal, s.Error)
	}
	if ev := simP.ErrorEvent("rate_limit", "x"); ev[0].Phase != adapters.PhaseTerminal || ev[0].Event != "" ||
		ev[0].Data != `{"error": {"code": 429,"message": "`+simQuotaMessage+`","status": "RESOURCE_EXHAUSTED"}}` {
		t.Fatalf("error event %+v", ev)
	}
}

// TestSimUnknownEvent: the unknown chunk is reported by our decoder and
// passed over by the SDK; neither loses the rest.
func TestSimUnknownEvent(t *testing.T) {
	sc := simScenarios(t)[0]
	turn := sc.turns[2]
	o := simOpts(3)
	events := simP.StreamEvents(turn, o)
	events = append(events[:2:2], append([]adapters.WireEvent{simP.UnknownEvent()}, events[2:]...)...)
	evs, s := adapterstest.Decode(t, New(), simSSE(events))
	unknown := 0
	for _, e := range evs {
		if e.Type == adapters.EvUnknown {
			unknown++
		}
	}
	if unknown != 1 || s.Text != adapterstest.RefundModelText || s.StopReason != adapters.StopFinal {
		t.Fatalf("%d unknown events; summary %q %s", unknown, s.Text, s.StopReason)
	}
	v, _ := simSDKStream(t, simSSE(events), o.Model)
	simSDKCheck(t, sc.wants[2], turn, v)
}

// ---- CheckRequest -------------------------------------------------------------

// TestSimCheckRequestValid: this package's own refund requests pass, with
// the model from the path and the history's turns and results.
func TestSimCheckRequestValid(t *testing.T) {
	turns := [][]adapterstest.RefundCall{nil, adapterstest.RefundTurn1, adapterstest.RefundTurn2}
	for turn := 1; turn <= 3; turn++ {
		for _, streaming := range []bool{true, false} {
			for _, ids := range []string{"synthetic", "provider"} {
				t.Run(fmt.Sprintf("turn%d/stream=%v/%s", turn, streaming, ids), func(t *testing.T) {
					req := refundRequest(t, turn, streaming)
					if ids == "provider" {
						req = adapterstest.RefundRequest(turn, providerIDs, streaming)
					}
					hr, err := New().Encode(req, adapters.ProviderGemini)
					if err != nil {
						t.Fatal(err)
					}
					h := http.Header{}
					for k, v := range hr.Headers {
						h.Set(k, v)
					}
					in, serr := simP.CheckRequest(hr.Method, hr.Path, h, hr.Body)
					if serr != nil {
						t.Fatalf("%d %s", serr.Status, serr.Body)
					}
					if in.Model != "refund-model" || in.Stream != streaming || in.ModelTurns != turn-1 || in.MaxOutputTokens != 1800 ||
						!reflect.DeepEqual(in.Tools, []string{"get_order_line", "get_refund_ledger", "get_refund_policy"}) {
						t.Fatalf("inbound %+v", in)
					}
					var want []adapters.ToolResult
					for ti, calls := range turns[:turn] {
						for i, c := range calls {
							id := fmt.Sprintf("%s%d", SyntheticCallIDPrefix, i)
							if ids == "provider" {
								id = fmt.Sprintf("fc-t%d-%d", ti, i)
							}
							want = append(want, adapters.ToolResult{CallID: id, Name: c.Name, Content: c.Result})
						}
					}
					if !reflect.DeepEqual(in.Results, want) {
						t.Fatalf("results\n got %+v\nwant %+v", in.Results, want)
					}
				})
			}
		}
	}
}

// TestSimOwnLoop drives every scenario through this package alone: the
// rendered turn is decoded, becomes history (signatures, synthetic ids),
// is encoded with results, and CheckRequest counts the turns.
func TestSimOwnLoop(t *testing.T) {
	for _, sc := range simScenarios(t) {
		for _, streaming := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/stream=%v", sc.name, streaming), func(t *testing.T) {
				req := adapterstest.RefundRequest(1, syntheticIDs, streaming)
				req.Model = "gemini-2.5-flash"
				for i, turn := range sc.turns {
					hr, err := New().Encode(req, adapters.ProviderGemini)
					if err != nil {
						t.Fatal(err)
					}
					in, serr := simP.CheckRequest(hr.Method, hr.Path, nil, hr.Body)
					if serr != nil {
						t.Fatalf("turn %d: %s", i+1, serr.Body)
					}
					if in.ModelTurns != i {
						t.Fatalf("turn %d: ModelTurns %d", i+1, in.ModelTurns)
					}
					o := adapters.ResponseOptions{Model: in.Model, Seed: uint64(i + 1)}
					st := adapters.NewStream(New())
					if streaming {
						_ = adapters.ReadStream(New(), st, bytes.NewReader(simSSE(simP.StreamEvents(turn, o))), func(adapters.Step) error { return nil })
					} else {
						st.FeedBody(simP.Body(turn, o))
					}
					simCheckSummary(t, sc.wants[i], turn, o, st.Summary())
					next := st.Reducer().Turn()
					for _, it := range next.Items {
						if it.Kind == adapters.KindToolCall {
							if k := len(next.Results); k == 0 && it.Signature == "" {
								t.Errorf("turn %d: the first call lost its thoughtSignature", i+1)
							}
							next.Results = append(next.Results, adapters.ToolResult{CallID: it.CallID, Name: it.Name, Content: `{"ok":true}`})
						}
					}
					req.Turns = append(req.Turns, next)
				}
			})
		}
	}
}

// simBody is a valid request with the given JSON spliced in.
func simBody(fields string) string {
	b := `{"contents": [{"role": "user", "parts": [{"text": "请核查订单 O-2048"}]}]`
	if fields != "" {
		b += ", " + fields
	}
	return b + "}"
}

const simCallTurn = `{"role": "model", "parts": [{"functionCall": {"name": "get_refund_ledger", "args": {"order_id": "O-2048"}}, "thoughtSignature": "Cr0B"}, {"functionCall": {"name": "get_refund_policy", "args": {}}}]}`

func simFnResponse(name string) string {
	return `{"functionResponse": {"name": "` + name + `", "response": {"output": {"ok": true}}}}`
}

// TestSimCheckRequestErrors: each check answers with the API's status, the
// google.rpc status name and its message (decoded by DecodeError as a
// client would).
func TestSimCheckRequestErrors(t *testing.T) {
	const path = "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
	user := `{"role": "user", "parts": [{"text": "hi"}]}`
	cases := []struct {
		name, path, body string
		status           int
		statusName       string
		message          string
		field            string // the BadRequest field violation, if any
	}{
		{"malformed JSON", path, `{"contents": [`, 400, "INVALID_ARGUMENT", "Invalid JSON payload received. Unexpected end of string. Expected a value.", "-"},
		{"bad token", path, `{"contents": [{"role": "user", "parts": [{"text": NaN}]}]}`, 400, "INVALID_ARGUMENT", "Invalid JSON payload received. Unexpected token.\n", "-"},
		{"bare word", path, `not json`, 400, "INVALID_ARGUMENT", "Invalid JSON payload received. Unexpected token.\nnot json\n^", "-"},
		{"root not an object", path, `[{"contents": []}]`, 400, "INVALID_ARGUMENT", `Unknown name "": Root element must be a message.`, "-"},
		{"unknown top-level field", path, simBody(`"temperature": 0.2`), 400, "INVALID_ARGUMENT", `Invalid JSON payload received. Unknown name "temperature": Cannot find field.`, "-"},
		{"OpenAI-shaped message", path, `{"contents": [{"role": "user", "content": "hi"}]}`, 400, "INVALID_ARGUMENT", `Unknown name "content" at 'contents[0]': Cannot find field.`, "contents[0]"},
		{"unknown part field", path, `{"contents": [{"role": "user", "parts": [{"txt": "hi"}]}]}`, 400, "INVALID_ARGUMENT", `Unknown name "txt" at 'contents[0].parts[0]': Cannot find field.`, "contents[0].parts[0]"},
		{"contents not a list", path, `{"contents": "hi"}`, 400, "INVALID_ARGUMENT", `Invalid value at 'contents' (type.googleapis.com/google.ai.generativelanguage.v1beta.Content), "hi"`, "contents"},
		{"role not a string", path, `{"contents": [{"role": 1, "parts": [{"text": "hi"}]}]}`, 400, "INVALID_ARGUMENT", `Invalid value at 'contents[0].role' (TYPE_STRING), 1`, "contents[0].role"},
		{"temperature not a number", path, simBody(`"generationConfig": {"temperature": "hot"}`), 400, "INVALID_ARGUMENT", `Invalid value at 'generation_config.temperature' (TYPE_FLOAT), "hot"`, "generation_config.temperature"},
		{"generationConfig a list", path, simBody(`"generationConfig": [{"temperature": 1}]`), 400, "INVALID_ARGUMENT", `Unknown name "generationConfig" at 'generation_config': Proto field is not repeating, cannot start list.`, "generation_config"},
		{"two data fields", path, `{"contents": [{"role": "user", "parts": [{"text": "hi", "functionResponse": {"name": "x", "response": {}}}]}]}`, 400, "INVALID_ARGUMENT", "Oneof field 'data' is already set. Cannot set 'functionResponse'", "contents[0].parts[0]"},
		{"no contents", path, `{"generationConfig": {"temperature": 1}}`, 400, "INVALID_ARGUMENT", "* GenerateContentRequest.contents: contents is not specified\n", ""},
		{"empty body", path, ``, 400, "INVALID_ARGUMENT", "contents is not specified", ""},
		{"empty contents", path, `{"contents": []}`, 400, "INVALID_ARGUMENT", "contents is not specified", ""},
		{"system role", path, `{"contents": [{"role": "system", "parts": [{"text": "rules"}]}, ` + user + `]}`, 400, "INVALID_ARGUMENT", "Please use a valid role: user, model.", ""},
		{"assistant role", path, `{"contents": [` + user + `, {"role": "assistant", "parts": [{"text": "ok"}]}]}`, 400, "INVALID_ARGUMENT", "Please use a valid role: user, model.", ""},
		{"empty parts", path, `{"contents": [{"role": "user", "parts": []}]}`, 400, "INVALID_ARGUMENT", "* GenerateContentRequest.contents[0].parts: contents.parts must not be empty.\n", ""},
		{"no parts", path, `{"contents": [` + user + `, {"role": "model"}]}`, 400, "INVALID_ARGUMENT", "* GenerateContentRequest.contents[1].parts: contents.parts must not be empty.\n", ""},
		{"empty part", path, `{"contents": [{"role": "user", "parts": [{"text": "hi"}, {}]}]}`, 400, "INVALID_ARGUMENT", "* GenerateContentRequest.contents[0].parts[1].data: required oneof field 'data' must have one initialized field\n", ""},
		{"temperature too high", path, simBody(`"generationConfig": {"temperature": 3}`), 400, "INVALID_ARGUMENT", "Unable to submit request because it has a temperature value of 3 but the supported range is from 0 (inclusive) to 2.0001 (exclusive). Update the value and try again.", ""},
		{"temperature negative", path, simBody(`"generationConfig": {"temperature": -0.5}`), 400, "INVALID_ARGUMENT", "temperature value of -0.5 but the supported range", ""},
		{"function response without call", path, `{"contents": [` + user + `, {"role": "model", "parts": [{"text": "ok"}]}, {"role": "user", "parts": [` + simFnResponse("get_refund_ledger") + `]}]}`, 400, "INVALID_ARGUMENT", "Please ensure that function response turn comes immediately after a function call turn.", ""},
		{"function response first", path, `{"contents": [{"role": "user", "parts": [` + simFnResponse("get_refund_ledger") + `]}]}`, 400, "INVALID_ARGUMENT", "Please ensure that function response turn comes immediately after a function call turn.", ""},
		{"function call first", path, `{"contents": [` + simCallTurn + `]}`, 400, "INVALID_ARGUMENT", "Please ensure that function call turn comes immediately after a user turn or after a function response turn.", ""},
		{"one response for two calls", path, `{"contents": [` + user + `, ` + simCallTurn + `, {"role": "user", "parts": [` + simFnResponse("get_refund_ledger") + `]}]}`, 400, "INVALID_ARGUMENT", "Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.", ""},
		{"response name mismatch", path, `{"contents": [` + user + `, ` + simCallTurn + `, {"role": "user", "parts": [` + simFnResponse("get_refund_ledger") + `, ` + simFnResponse("get_order_line") + `]}]}`, 400, "INVALID_ARGUMENT", `Please ensure that function response names match the function call names of the function call turn: contents[2].parts[1].function_response.name "get_order_line"`, ""},
		{"response without name", path, `{"contents": [` + user + `, ` + simCallTurn + `, {"role": "user", "parts": [` + simFnResponse("get_refund_ledger") + `, {"functionResponse": {"response": {}}}]}]}`, 400, "INVALID_ARGUMENT", "* GenerateContentRequest.contents[2].parts[1].function_response.name: Name cannot be empty.\n", ""},
		{"unknown method", "/v1beta/models/gemini-2.5-flash:countTokenz", simBody(""), 404, "NOT_FOUND", "Method not found.", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in, serr := simP.CheckRequest("POST", tc.path, http.Header{}, []byte(tc.body))
			if serr == nil {
				t.Fatalf("accepted: %+v", in)
			}
			if serr.Status != tc.status || serr.Header == nil {
				t.Fatalf("status %d, want %d", serr.Status, tc.status)
			}
			var b struct {
				Error struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
					Status  string `json:"status"`
					Details []struct {
						Type            string `json:"@type"`
						FieldViolations []struct {
							Field       string `json:"field"`
							Description string `json:"description"`
						} `json:"fieldViolations"`
					} `json:"details"`
				} `json:"error"`
			}
			if err := json.Unmarshal(serr.Body, &b); err != nil {
				t.Fatalf("%v: %s", err, serr.Body)
			}
			if b.Error.Code != tc.status || b.Error.Status != tc.statusName || !strings.Contains(b.Error.Message, tc.message) {
				t.Fatalf("error %d %s %q, want %d %s containing %q", b.Error.Code, b.Error.Status, b.Error.Message, tc.status, tc.statusName, tc.message)
			}
			switch tc.field {
			case "":
				if len(b.Error.Details) != 0 {
					t.Errorf("details %+v", b.Error.Details)
				}
			default:
				if len(b.Error.Details) != 1 || b.Error.Details[0].Type != "type.googleapis.com/google.rpc.BadRequest" ||
					b.Error.Details[0].FieldViolations[0].Description != strings.Split(b.Error.Message, "\n")[0] && !strings.HasPrefix(b.Error.Message, "Invalid JSON payload received. Un") {
					t.Fatalf("details %+v", b.Error.Details)
				}
				if f := b.Error.Details[0].FieldViolations[0].Field; tc.field != "-" && f != tc.field || tc.field == "-" && f != "" {
					t.Errorf("field violation field %q, want %q", f, tc.field)
				}
			}
			ours := simP.DecodeError(serr.Status, serr.Header, serr.Body)
			if ours.Type != tc.statusName || ours.Message != b.Error.Message {
				t.Errorf("DecodeError %+v", ours)
			}
		})
	}
}

// TestSimCheckRequestLenient: what the API accepts passes — no role (user),
// snake_case names, numbers as strings, temperature at the edges, an API
// key in the query, function responses by id, and a streamed model turn
// recorded as several contents.
func TestSimCheckRequestLenient(t *testing.T) {
	split := `{"role": "model", "parts": [{"text": "先查", "thought": true}]}, {"role": "model", "parts": [{"functionCall": {"name": "a", "args": {}, "id": "c1"}}]}, {"role": "model", "parts": [{"functionCall": {"name": "a", "args": {"x": 1}, "id": "c2"}}]}`
	cases := []struct {
		name, path, body string
		turns            int
		results          []adapters.ToolResult
		maxTokens        int
	}{
		{"no role", "/v1beta/models/gemini-2.5-flash:generateContent", `{"contents": [{"parts": [{"text": "hi"}]}]}`, 0, nil, 0},
		{"snake case", "/v1beta/models/gemini-2.5-flash:generateContent?key=abc", `{"contents": [{"parts": [{"text": "hi"}]}], "generation_config": {"max_output_tokens": "256", "temperature": "2"}, "system_instruction": {"parts": [{"text": "x"}]}}`, 0, nil, 256},
		{"temperature 0", "/v1beta/models/gemini-2.5-flash:generateContent", simBody(`"generationConfig": {"temperature": 0, "maxOutputTokens": 64}`), 0, nil, 64},
		{"escaped model", "/v1beta/models/gemini%2D2.5-flash:streamGenerateContent?alt=sse", simBody(""), 0, nil, 0},
		{"results by id", "/v1beta/models/gemini-3-flash-preview:streamGenerateContent?alt=sse",
			`{"contents": [{"role": "user", "parts": [{"text": "hi"}]}, ` + split + `, {"role": "user", "parts": [{"functionResponse": {"name": "a", "id": "c2", "response": {"error": "bad x"}}}, {"functionResponse": {"name": "a", "id": "c1", "response": {"output": "done"}}}]}, {"role": "model", "parts": [{"text": "ok"}]}, {"role": "user", "parts": [{"text": "thanks"}]}]}`,
			2, []adapters.ToolResult{{CallID: "c2", Name: "a", Content: "bad x", IsError: true}, {CallID: "c1", Name: "a", Content: "done"}}, 0},
		{"results by order", "/v1beta/models/gemini-2.5-flash:generateContent",
			`{"contents": [{"role": "user", "parts": [{"text": "hi"}]}, ` + simCallTurn + `, {"role": "user", "parts": [` + simFnResponse("get_refund_policy") + `, {"functionResponse": {"name": "get_refund_ledger", "response": {"refunded_cents": 3000}}}]}]}`,
			1, []adapters.ToolResult{{CallID: SyntheticCallIDPrefix + "1", Name: "get_refund_policy", Content: `{"ok":true}`}, {CallID: SyntheticCallIDPrefix + "0", Name: "get_refund_ledger", Content: `{"refunded_cents":3000}`}}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in, serr := simP.CheckRequest("POST", tc.path, nil, []byte(tc.body))
			if serr != nil {
				t.Fatalf("%d %s", serr.Status, serr.Body)
			}
			if in.ModelTurns != tc.turns || !reflect.DeepEqual(in.Results, tc.results) || in.MaxOutputTokens != tc.maxTokens || !strings.HasPrefix(in.Model, "gemini-") {
				t.Fatalf("inbound %+v", in)
			}
		})
	}
}

func TestSimHeadersAndFraming(t *testing.T) {
	if simP.LineEnd() != "\r\n" {
		t.Fatal("Gemini frames SSE with CRLF")
	}
	h := simP.ResponseHeaders(true)
	if h.Get("Content-Disposition") != "attachment" || h.Get("Server") == "" || len(h.Values("Vary")) != 3 {
		t.Fatalf("stream headers %v", h)
	}
	if simP.ResponseHeaders(false).Get("Content-Disposition") != "" {
		t.Fatal("a body is not an attachment")
	}
	for k := range h {
		if strings.Contains(strings.ToLower(k), "request-id") || strings.Contains(strings.ToLower(k), "ratelimit") {
			t.Fatalf("the Gemini API sends no %s", k)
		}
	}
	u := simP.UnknownEvent()
	if u.Event != "" || u.Phase != adapters.PhaseOther || !json.Valid([]byte(u.Data)) {
		t.Fatalf("unknown event %+v", u)
	}
}
