package openairesponses

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sort"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/responses"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/adapterstest"
)

// The simulator's side of the Responses API is checked three ways: this
// package's own decoder reads every rendered turn of every refund variant
// back to the script; the official Go SDK accepts the same bytes; and each
// request check answers with the API's status and error shape. (The SDK's
// whole refund loop against the real sim server, in both history modes, is
// sim/responses_sdk_test.go.)

var simP = Protocol{}

type simScenario struct {
	name  string
	turns []adapters.ModelTurn
}

// simRefund loads the refund case and its variants from samples/ (read as
// JSON: importing session from here would be an import cycle).
func simRefund(t testing.TB) []simScenario {
	t.Helper()
	var out []simScenario
	for _, sc := range adapterstest.RefundScripts(t) {
		out = append(out, simScenario{sc.Name, sc.Turns})
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

// simThinking is wrong-cap's script: the base turns, each after a
// reasoning item. Its second turn (reasoning, then the two parallel
// calls) reports reasoning tokens here, so their place in usage is seen.
func simThinking(t testing.TB) []adapters.ModelTurn {
	turns := append([]adapters.ModelTurn(nil), simScript(t, "refund/wrong-cap")...)
	turns[1].Usage.ReasoningTokens = adapters.Int(21)
	return turns
}

// simTruncate cuts a turn as the sim server's truncate fault does: the last
// item's text (or argument text) stops halfway, and the turn is truncated.
func simTruncate(mt adapters.ModelTurn) adapters.ModelTurn {
	out := adapters.ModelTurn{Stop: adapters.StopTruncated, Usage: mt.Usage}
	out.Items = append(out.Items, mt.Items...)
	last := out.Items[len(out.Items)-1]
	if last.Kind == adapters.KindToolCall {
		r := []rune(adapters.ArgumentText(last.Arguments))
		last.Arguments, _ = json.Marshal(string(r[:len(r)/2]))
	} else {
		r := []rune(last.Text)
		last.Text = string(r[:len(r)/2])
	}
	out.Items[len(out.Items)-1] = last
	return out
}

// simSSE writes events as the sim server does.
func simSSE(events []adapters.WireEvent) []byte {
	return adapterstest.SSE(events, simP.LineEnd())
}

// simWant is what a client must read back from a scripted turn.
type simWant struct {
	text, reasoning, refusal string
	hasRefusal               bool
	calls                    []adapters.OutputItem
}

func simExpect(turn adapters.ModelTurn) simWant {
	var w simWant
	for _, it := range turn.Items {
		switch it.Kind {
		case adapters.KindMessage:
			w.text += it.Text
		case adapters.KindReasoning:
			w.reasoning += it.Text
		case adapters.KindRefusal:
			w.refusal += it.Text
			w.hasRefusal = true
		case adapters.KindToolCall:
			w.calls = append(w.calls, it)
		}
	}
	return w
}

var (
	simRespID  = regexp.MustCompile(`^resp_` + simAccount + `00[0-9a-f]{8}[0-9a-f]{4}8190[0-9a-f]{16}$`)
	simItemIDs = regexp.MustCompile(`^(rs|msg|fc)_` + simAccount + `00[0-9a-f]{8}[0-9a-f]{4}8190[0-9a-f]{16}$`)
	simCallRe  = regexp.MustCompile(`^call_[0-9A-Za-z]{24}$`)
	simReqRe   = regexp.MustCompile(`^req_[0-9a-f]{32}$`)
)

func simOpts(seed uint64) adapters.ResponseOptions {
	return adapters.ResponseOptions{Model: "refund-model", Seed: seed}
}

func simDeref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// simCheckSummary: the decoded summary equals the script.
func simCheckSummary(t *testing.T, turn adapters.ModelTurn, o adapters.ResponseOptions, s adapters.Summary) {
	t.Helper()
	w := simExpect(turn)
	if s.Text != w.text {
		t.Errorf("text: got %q, want %q", s.Text, w.text)
	}
	if s.Reasoning != w.reasoning {
		t.Errorf("reasoning: got %q, want %q", s.Reasoning, w.reasoning)
	}
	if w.hasRefusal != (s.Refusal != nil) || s.Refusal != nil && *s.Refusal != w.refusal {
		t.Errorf("refusal: got %v, want %q", s.Refusal, w.refusal)
	}
	truncated := turn.Stop == adapters.StopTruncated
	calls := s.ToolCalls
	if truncated {
		// A cut call's arguments do not parse: it is listed as incomplete.
		calls = append([]adapters.ToolCall{}, s.ToolCalls...)
		for _, c := range s.IncompleteToolCalls {
			calls = append(calls, adapters.ToolCall{CallID: c.CallID, Name: c.Name, Arguments: json.RawMessage(c.PartialArguments)})
		}
	} else if len(s.IncompleteToolCalls) != 0 {
		t.Errorf("incomplete calls: %+v", s.IncompleteToolCalls)
	}
	if len(calls) != len(w.calls) {
		t.Fatalf("tool calls: got %+v, want %d", calls, len(w.calls))
	}
	for i, c := range calls {
		want := adapters.ArgumentText(w.calls[i].Arguments)
		if c.Name != w.calls[i].Name || !(jsonEqual(c.Arguments, []byte(want)) || string(c.Arguments) == want) {
			t.Errorf("call %d: got %s %s, want %s %s", i, c.Name, c.Arguments, w.calls[i].Name, want)
		}
		if !simCallRe.MatchString(c.CallID) {
			t.Errorf("call %d: call_id %q", i, c.CallID)
		}
	}
	wantStatus, wantStop, wantProvider := adapters.StatusCompleted, turn.Stop, "completed"
	switch turn.Stop {
	case adapters.StopRefusal:
		wantStatus = adapters.StatusRefused
	case adapters.StopTruncated:
		wantStatus, wantProvider = adapters.StatusIncomplete, "max_output_tokens"
	}
	if s.Terminal != wantStatus || s.StopReason != wantStop || s.ProviderStopReason != wantProvider {
		t.Errorf("terminal %s/%s (%s), want %s/%s (%s)", s.Terminal, s.StopReason, s.ProviderStopReason, wantStatus, wantStop, wantProvider)
	}
	if s.ResponseID != simP.ResponseID(o) || !simRespID.MatchString(s.ResponseID) || s.Model != o.Model {
		t.Errorf("response %s %s, want %s %s", s.ResponseID, s.Model, simP.ResponseID(o), o.Model)
	}
	u, su := s.Usage, turn.Usage
	if u == nil {
		t.Fatal("no usage")
	}
	for _, c := range []struct {
		label     string
		got, want *int64
	}{
		{"input", u.InputTokens, su.InputTokens}, {"output", u.OutputTokens, su.OutputTokens},
		{"cache_read", u.CacheReadTokens, su.CacheReadTokens}, {"cache_write", u.CacheWriteTokens, su.CacheWriteTokens},
		{"reasoning", u.ReasoningTokens, su.ReasoningTokens},
	} {
		// The API always reports every count; a count the script leaves
		// out is 0.
		if c.got == nil || *c.got != simDeref(c.want) {
			t.Errorf("%s tokens: got %v, want %d", c.label, deref(c.got), simDeref(c.want))
		}
	}
	for _, d := range s.Diagnostics {
		if !truncated || d.Kind != "tool_args_invalid" {
			t.Errorf("diagnostic: %+v", d)
		}
	}
}

// simEveryTurn runs f on every turn of every variant, plus each turn cut by
// the truncate fault and each turn replaced by the refusal fault.
func simEveryTurn(t *testing.T, f func(t *testing.T, turn adapters.ModelTurn, o adapters.ResponseOptions)) {
	for _, sc := range simRefund(t) {
		for i, turn := range sc.turns {
			t.Run(fmt.Sprintf("%s/turn%d", sc.name, i+1), func(t *testing.T) { f(t, turn, simOpts(uint64(100+i))) })
			if sc.name == "refund" {
				t.Run(fmt.Sprintf("%s/turn%d/truncated", sc.name, i+1), func(t *testing.T) { f(t, simTruncate(turn), simOpts(uint64(200+i))) })
			}
		}
	}
	refusal := adapters.ModelTurn{Items: []adapters.OutputItem{{Kind: adapters.KindRefusal, Text: "I can't help with that request."}},
		Stop: adapters.StopRefusal, Usage: adapters.Usage{InputTokens: adapters.Int(40), OutputTokens: adapters.Int(9)}}
	t.Run("refusal-fault", func(t *testing.T) { f(t, refusal, simOpts(300)) })
}

func TestSimStreamDecodesToScript(t *testing.T) {
	simEveryTurn(t, func(t *testing.T, turn adapters.ModelTurn, o adapters.ResponseOptions) {
		_, s := adapterstest.Decode(t, New(), simSSE(simP.StreamEvents(turn, o)))
		simCheckSummary(t, turn, o, s)
	})
}

func TestSimBodyDecodesToScript(t *testing.T) {
	simEveryTurn(t, func(t *testing.T, turn adapters.ModelTurn, o adapters.ResponseOptions) {
		body := simP.Body(turn, o)
		if !json.Valid(body) {
			t.Fatalf("not JSON: %s", body)
		}
		_, s := adapterstest.Decode(t, New(), body)
		simCheckSummary(t, turn, o, s)
		// Same ids and content as the stream for the seed: the body is the
		// terminal event's response, pretty-printed.
		events := simP.StreamEvents(turn, o)
		var last struct {
			Response json.RawMessage `json:"response"`
		}
		_ = json.Unmarshal([]byte(events[len(events)-1].Data), &last)
		var ind bytes.Buffer
		_ = json.Indent(&ind, last.Response, "", "  ")
		if ind.String()+"\n" != string(body) {
			t.Errorf("the body is not the terminal event's response:\n%s\n%s", body, ind.String())
		}
	})
}

// The exact shapes: event order, envelope member order, contiguous
// sequence numbers, obfuscation, usage placement, ids.
func TestSimStreamShape(t *testing.T) {
	turn := simThinking(t)[1] // reasoning + two parallel calls
	o := simOpts(7)
	events := simP.StreamEvents(turn, o)
	var names []string
	for i, e := range events {
		if !json.Valid([]byte(e.Data)) {
			t.Fatalf("%s: not JSON: %s", e.Event, e.Data)
		}
		if !strings.HasPrefix(e.Data, `{"type":"`+e.Event+`",`) {
			t.Errorf("event %s does not start with its type: %s", e.Event, e.Data)
		}
		// Members after type in alphabetical order, sequence_number = i.
		dec := json.NewDecoder(strings.NewReader(e.Data))
		_, _ = dec.Token()
		var keys []string
		var seq int
		for dec.More() {
			k, _ := dec.Token()
			var v json.RawMessage
			_ = dec.Decode(&v)
			keys = append(keys, k.(string))
			if k == "sequence_number" {
				_ = json.Unmarshal(v, &seq)
			}
		}
		if !sort.StringsAreSorted(keys[1:]) || keys[0] != "type" {
			t.Errorf("%s: member order %v", e.Event, keys)
		}
		if seq != i {
			t.Errorf("%s: sequence_number %d at %d", e.Event, seq, i)
		}
		var d struct {
			Delta       *string         `json:"delta"`
			Obfuscation string          `json:"obfuscation"`
			Logprobs    json.RawMessage `json:"logprobs"`
		}
		_ = json.Unmarshal([]byte(e.Data), &d)
		if d.Delta != nil && utf8.RuneCountInString(*d.Delta)+utf8.RuneCountInString(d.Obfuscation) != 16 {
			t.Errorf("%s: delta %q obfuscation %q", e.Event, *d.Delta, d.Obfuscation)
		}
		names = append(names, e.Event)
	}
	seq := strings.Join(names, " ")
	seq = regexp.MustCompile(`( response\.[a-z_.]+\.delta)+`).ReplaceAllString(seq, " delta*")
	want := "response.created response.in_progress " +
		"response.output_item.added response.reasoning_summary_part.added delta* response.reasoning_summary_text.done response.reasoning_summary_part.done response.output_item.done " +
		"response.output_item.added delta* response.function_call_arguments.done response.output_item.done " +
		"response.output_item.added delta* response.function_call_arguments.done response.output_item.done " +
		"response.completed"
	if seq != want {
		t.Errorf("event order:\n got %s\nwant %s", seq, want)
	}
	id := simP.ResponseID(o)
	created := events[0].Data
	if !strings.HasPrefix(created, `{"type":"response.created","response":{"id":"`+id+`","object":"response","created_at":1796083207,"status":"in_progress","background":false,"completed_at":null,"error":null,`) ||
		!strings.HasSuffix(created, `"usage":null,"user":null,"metadata":{}},"sequence_number":0}`) || !strings.Contains(created, `"output":[]`) {
		t.Errorf("response.created: %s", created)
	}
	if events[1].Data != strings.Replace(strings.Replace(created, "response.created", "response.in_progress", 1), `"sequence_number":0}`, `"sequence_number":1}`, 1) {
		t.Errorf("response.in_progress differs from response.created: %s", events[1].Data)
	}
	var added struct {
		Item struct {
			ID, Type, EncryptedContent string
		}
	}
	_ = json.Unmarshal([]byte(events[2].Data), &added)
	var rsDone struct {
		Item struct {
			ID               string `json:"id"`
			EncryptedContent string `json:"encrypted_content"`
			Summary          []struct{ Type, Text string }
		}
	}
	for _, e := range events {
		if e.Event == "response.output_item.done" {
			_ = json.Unmarshal([]byte(e.Data), &rsDone)
			break
		}
	}
	if !simItemIDs.MatchString(rsDone.Item.ID) || !strings.HasPrefix(rsDone.Item.ID, "rs_") ||
		!strings.HasPrefix(rsDone.Item.EncryptedContent, "gAAAAABrDg4") || len(rsDone.Item.Summary) != 1 || rsDone.Item.Summary[0].Text != turn.Items[0].Text {
		t.Errorf("reasoning item: %+v", rsDone.Item)
	}
	for _, e := range events {
		if e.Event == "response.output_item.added" && strings.Contains(e.Data, `"function_call"`) &&
			!regexp.MustCompile(`^\{"type":"response\.output_item\.added","item":\{"id":"fc_[0-9a-f]+","type":"function_call","status":"in_progress","arguments":"","call_id":"call_[0-9A-Za-z]{24}","name":"get_refund_(ledger|policy)"\},"output_index":[12],"sequence_number":\d+\}$`).MatchString(e.Data) {
			t.Errorf("function_call added: %s", e.Data)
		}
		if e.Event == "response.function_call_arguments.done" &&
			!regexp.MustCompile(`^\{"type":"response\.function_call_arguments\.done","arguments":"\{\\"[a-z_]+\\":.*\}","item_id":"fc_[0-9a-f]+","output_index":[12],"sequence_number":\d+\}$`).MatchString(e.Data) {
			t.Errorf("arguments done: %s", e.Data)
		}
	}
	last := events[len(events)-1].Data
	wantUsage := `"usage":{"input_tokens":1690,"input_tokens_details":{"cache_write_tokens":0,"cached_tokens":1280},"output_tokens":61,"output_tokens_details":{"reasoning_tokens":21},"total_tokens":1751}`
	if !strings.Contains(last, `"status":"completed","background":false,"completed_at":1796083209,`) || !strings.Contains(last, wantUsage) ||
		!strings.Contains(last, `"service_tier":"default"`) || !strings.HasSuffix(last, `"sequence_number":`+fmt.Sprint(len(events)-1)+`}`) {
		t.Errorf("response.completed: %s", last)
	}
	// Text deltas carry logprobs and obfuscation; raw UTF-8, never \u.
	text := simP.StreamEvents(simThinking(t)[2], o) // reasoning + text
	for _, e := range text {
		if e.Event == "response.output_text.delta" &&
			!regexp.MustCompile(`^\{"type":"response\.output_text\.delta","content_index":0,"delta":".+","item_id":"msg_[0-9a-f]+","logprobs":\[\],"obfuscation":"[0-9A-Za-z]+","output_index":1,"sequence_number":\d+\}$`).MatchString(e.Data) {
			t.Fatalf("text delta: %s", e.Data)
		}
		if e.Event == "response.content_part.added" && !strings.Contains(e.Data, `"part":{"type":"output_text","annotations":[],"logprobs":[],"text":""}`) {
			t.Errorf("content_part.added: %s", e.Data)
		}
	}
	if b := simSSE(text); bytes.Contains(b, []byte(`\u`)) || !utf8.Valid(b) || bytes.Contains(b, []byte("[DONE]")) {
		t.Error("the stream escapes or breaks UTF-8, or ends with [DONE]")
	}
	// The body: pretty-printed, two spaces, a final newline.
	body := string(simP.Body(turn, o))
	if !strings.HasPrefix(body, "{\n  \"id\": \""+id+"\",\n  \"object\": \"response\",\n") || !strings.HasSuffix(body, "  \"metadata\": {}\n}\n") {
		t.Errorf("body: %s", body)
	}
}

// A truncated turn: response.incomplete with max_output_tokens, the cut
// item incomplete; a refusal: a message with a refusal part.
func TestSimTerminalShapes(t *testing.T) {
	turn := simTruncate(simRefund(t)[0].turns[2])
	events := simP.StreamEvents(turn, simOpts(1))
	last := events[len(events)-1]
	if last.Event != "response.incomplete" || !strings.Contains(last.Data, `"status":"incomplete","background":false,"completed_at":null,"error":null,"frequency_penalty":0,"incomplete_details":{"reason":"max_output_tokens"}`) {
		t.Errorf("terminal: %s", last.Data)
	}
	if done := events[len(events)-2]; done.Event != "response.output_item.done" || !strings.Contains(done.Data, `"type":"message","status":"incomplete"`) {
		t.Errorf("cut item: %s", done.Data)
	}
	if b := string(simP.Body(turn, simOpts(1))); !strings.Contains(b, `"status": "incomplete",`) || !strings.Contains(b, `"reason": "max_output_tokens"`) {
		t.Errorf("truncated body: %s", b)
	}
	ref := adapters.ModelTurn{Items: []adapters.OutputItem{{Kind: adapters.KindRefusal, Text: "抱歉，我无法协助处理这个请求。"}}, Stop: adapters.StopRefusal}
	var got []string
	for _, e := range simP.StreamEvents(ref, simOpts(2)) {
		got = append(got, e.Event)
	}
	seq := regexp.MustCompile(`( response\.refusal\.delta)+`).ReplaceAllString(strings.Join(got, " "), " delta*")
	want := "response.created response.in_progress response.output_item.added response.content_part.added delta* response.refusal.done response.content_part.done response.output_item.done response.completed"
	if seq != want || strings.Count(strings.Join(got, " "), "refusal.delta") < 3 {
		t.Errorf("refusal events:\n got %s\nwant %s", strings.Join(got, " "), want)
	}
	if b := string(simP.Body(ref, simOpts(2))); !strings.Contains(b, "\"content\": [\n        {\n          \"type\": \"refusal\",\n          \"refusal\": \"抱歉，我无法协助处理这个请求。\"\n        }\n      ],") {
		t.Errorf("refusal body: %s", b)
	}
}

// Phases: what each event carries, for the faults.
func TestSimPhases(t *testing.T) {
	turn := simThinking(t)[2] // reasoning + text
	turn.Items = append(turn.Items, simThinking(t)[1].Items[1:]...)
	events := simP.StreamEvents(turn, simOpts(3))
	count := map[adapters.Phase]int{}
	for _, e := range events {
		count[e.Phase]++
		var want adapters.Phase
		switch {
		case e.Event == "response.completed", e.Event == "response.incomplete":
			want = adapters.PhaseTerminal
		case strings.HasSuffix(e.Event, ".added"), e.Event == "response.created", e.Event == "response.in_progress":
			want = adapters.PhaseStart
		case strings.HasSuffix(e.Event, ".done"):
			want = adapters.PhaseItemDone
		case e.Event == "response.reasoning_summary_text.delta":
			want = adapters.PhaseReasoning
		case e.Event == "response.function_call_arguments.delta":
			want = adapters.PhaseArgs
		case e.Event == "response.output_text.delta", e.Event == "response.refusal.delta":
			want = adapters.PhaseText
		}
		if e.Phase != want {
			t.Errorf("%s: phase %s, want %s", e.Event, e.Phase, want)
		}
	}
	if count[adapters.PhaseArgs] < 4 || count[adapters.PhaseReasoning] < 4 || count[adapters.PhaseText] < 20 || count[adapters.PhaseTerminal] != 1 {
		t.Errorf("phases: %v", count)
	}
	// Dropping the terminal leaves a cut stream.
	var kept []adapters.WireEvent
	for _, e := range events {
		if e.Phase != adapters.PhaseTerminal {
			kept = append(kept, e)
		}
	}
	_, s := adapterstest.Decode(t, New(), simSSE(kept))
	if s.Terminal != adapters.StatusUnknown || !hasDiag(s, adapters.DiagStreamCut) || len(s.Diagnostics) != 1 {
		t.Errorf("without the terminal: %s %+v", s.Terminal, s.Diagnostics)
	}
}

// Text, reasoning and argument text arrive in several fragments, split
// only at character boundaries; a custom fragmenter is used for all.
func TestSimFragments(t *testing.T) {
	// wrong-cap's first turn thinks at length (38 characters), its last
	// answers in JSON (381).
	n := map[adapters.Phase]int{}
	for _, turn := range []adapters.ModelTurn{simThinking(t)[0], simThinking(t)[2]} {
		for _, e := range simP.StreamEvents(turn, simOpts(5)) {
			var d struct{ Delta *string }
			_ = json.Unmarshal([]byte(e.Data), &d)
			if d.Delta == nil {
				continue
			}
			if *d.Delta == "" || !utf8.ValidString(*d.Delta) {
				t.Fatalf("fragment %q", *d.Delta)
			}
			n[e.Phase]++
		}
	}
	if n[adapters.PhaseText] < 50 || n[adapters.PhaseReasoning] < 15 {
		t.Errorf("fragments: %v", n)
	}
	o := simOpts(5)
	o.Fragment = func(s string) []string { return []string{s} }
	n = map[adapters.Phase]int{}
	for _, e := range simP.StreamEvents(simThinking(t)[1], o) {
		n[e.Phase]++
	}
	if n[adapters.PhaseArgs] != 2 || n[adapters.PhaseReasoning] != 1 {
		t.Errorf("one-piece fragmenter: %v", n)
	}
}

func TestSimDeterministic(t *testing.T) {
	turn := simThinking(t)[1] // reasoning + two calls: seven ids
	a := simSSE(simP.StreamEvents(turn, simOpts(42)))
	if !bytes.Equal(a, simSSE(simP.StreamEvents(turn, simOpts(42)))) || !bytes.Equal(simP.Body(turn, simOpts(42)), simP.Body(turn, simOpts(42))) {
		t.Fatal("the same seed gave different bytes")
	}
	if bytes.Equal(a, simSSE(simP.StreamEvents(turn, simOpts(43)))) {
		t.Fatal("different seeds gave the same bytes")
	}
	seen := map[string]uint64{}
	for seed := uint64(0); seed < 2000; seed++ {
		o := simOpts(seed)
		_, s := adapterstest.DecodeBytes(New(), simSSE(simP.StreamEvents(turn, o)))
		if s.ResponseID != simP.ResponseID(o) {
			t.Fatalf("seed %d: ResponseID %s, stream %s", seed, simP.ResponseID(o), s.ResponseID)
		}
		ids := []string{s.ResponseID}
		for _, c := range s.ToolCalls {
			ids = append(ids, c.CallID)
		}
		var items struct {
			Response struct {
				Output []struct {
					ID               string `json:"id"`
					EncryptedContent string `json:"encrypted_content"`
				}
			}
		}
		events := simP.StreamEvents(turn, o)
		_ = json.Unmarshal([]byte(events[len(events)-1].Data), &items)
		for _, it := range items.Response.Output {
			ids = append(ids, it.ID)
			if it.EncryptedContent != "" {
				ids = append(ids, it.EncryptedContent)
			}
		}
		if len(ids) != 7 {
			t.Fatalf("seed %d: ids %v", seed, ids)
		}
		for _, id := range ids {
			if prev, dup := seen[id]; dup {
				t.Fatalf("id %s for seeds %d and %d", id, prev, seed)
			}
			seen[id] = seed
		}
	}
}

// ---- the official SDK -------------------------------------------------------

// simServe serves a fixed answer the way the sim server writes it, after
// checking the SDK's request with CheckRequest.
func simServe(t *testing.T, stream bool, events []adapters.WireEvent, body []byte) openai.Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw := new(bytes.Buffer)
		_, _ = raw.ReadFrom(r.Body)
		if _, e := simP.CheckRequest(r.Method, r.URL.RequestURI(), r.Header, raw.Bytes()); e != nil {
			t.Errorf("the SDK's request was refused: %s", e.Body)
		}
		for k, v := range simP.ResponseHeaders(stream) {
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
	return openai.NewClient(option.WithBaseURL(srv.URL+"/v1/"), option.WithAPIKey("sk-test"), option.WithMaxRetries(0))
}

// simCheckSDK: what the SDK ended up with equals the script.
func simCheckSDK(t *testing.T, turn adapters.ModelTurn, o adapters.ResponseOptions, resp *responses.Response, streamedText, streamedReasoning, streamedRefusal *string) {
	t.Helper()
	w := simExpect(turn)
	if resp == nil {
		t.Fatal("the SDK has no response")
	}
	var reasoning, refusal strings.Builder
	var calls []responses.ResponseFunctionToolCall
	for _, item := range resp.Output {
		switch item.Type {
		case "reasoning":
			r := item.AsReasoning()
			for _, s := range r.Summary {
				reasoning.WriteString(s.Text)
			}
			if r.EncryptedContent == "" {
				t.Error("reasoning item without encrypted_content")
			}
		case "function_call":
			calls = append(calls, item.AsFunctionCall())
		case "message":
			for _, c := range item.AsMessage().Content {
				if c.Type == "refusal" {
					refusal.WriteString(c.Refusal)
				}
			}
		}
	}
	if resp.OutputText() != w.text || reasoning.String() != w.reasoning || refusal.String() != w.refusal {
		t.Errorf("sdk text %q reasoning %q refusal %q; want %q %q %q", resp.OutputText(), reasoning.String(), refusal.String(), w.text, w.reasoning, w.refusal)
	}
	for _, c := range []struct {
		got  *string
		want string
	}{{streamedText, w.text}, {streamedReasoning, w.reasoning}, {streamedRefusal, w.refusal}} {
		if c.got != nil && *c.got != c.want {
			t.Errorf("sdk deltas %q, want %q", *c.got, c.want)
		}
	}
	if len(calls) != len(w.calls) {
		t.Fatalf("sdk: %d calls, want %d", len(calls), len(w.calls))
	}
	for i, c := range calls {
		want := adapters.ArgumentText(w.calls[i].Arguments)
		if c.Name != w.calls[i].Name || c.Arguments != want || !simCallRe.MatchString(c.CallID) || !strings.HasPrefix(c.ID, "fc_") {
			t.Errorf("sdk call %d: %s %s %s %s", i, c.ID, c.CallID, c.Name, c.Arguments)
		}
	}
	status, stop := sdkStop(resp)
	wantStatus := adapters.StatusCompleted
	switch turn.Stop {
	case adapters.StopRefusal:
		wantStatus = adapters.StatusRefused
	case adapters.StopTruncated:
		wantStatus = adapters.StatusIncomplete
		if resp.IncompleteDetails.Reason != "max_output_tokens" {
			t.Errorf("sdk incomplete_details %+v", resp.IncompleteDetails)
		}
	}
	if status != wantStatus || stop != turn.Stop || resp.ID != simP.ResponseID(o) || resp.Model != o.Model {
		t.Errorf("sdk %s/%s id %s model %s", status, stop, resp.ID, resp.Model)
	}
	u, su := resp.Usage, turn.Usage
	if u.InputTokens != simDeref(su.InputTokens) || u.OutputTokens != simDeref(su.OutputTokens) || u.TotalTokens != u.InputTokens+u.OutputTokens ||
		u.InputTokensDetails.CachedTokens != simDeref(su.CacheReadTokens) || u.OutputTokensDetails.ReasoningTokens != simDeref(su.ReasoningTokens) {
		t.Errorf("sdk usage %+v, want %+v", u, su)
	}
}

// simSDKStream reads a stream as SDK users do.
func simSDKStream(s *ssestream.Stream[responses.ResponseStreamEventUnion]) (resp *responses.Response, text, reasoning, refusal string, err error) {
	var tb, rb, fb strings.Builder
	for s.Next() {
		switch ev := s.Current().AsAny().(type) {
		case responses.ResponseTextDeltaEvent:
			tb.WriteString(ev.Delta)
		case responses.ResponseReasoningSummaryTextDeltaEvent:
			rb.WriteString(ev.Delta)
		case responses.ResponseRefusalDeltaEvent:
			fb.WriteString(ev.Delta)
		case responses.ResponseCompletedEvent:
			resp = &ev.Response
		case responses.ResponseIncompleteEvent:
			resp = &ev.Response
		}
	}
	return resp, tb.String(), rb.String(), fb.String(), s.Err()
}

func TestSimSDKAcceptsEveryTurn(t *testing.T) {
	simEveryTurn(t, func(t *testing.T, turn adapters.ModelTurn, o adapters.ResponseOptions) {
		c := simServe(t, true, simP.StreamEvents(turn, o), nil)
		resp, text, reasoning, refusal, err := simSDKStream(c.Responses.NewStreaming(context.Background(), sdkParams))
		if err != nil {
			t.Fatal(err)
		}
		simCheckSDK(t, turn, o, resp, &text, &reasoning, &refusal)

		c = simServe(t, false, nil, simP.Body(turn, o))
		var hr *http.Response
		resp, err = c.Responses.New(context.Background(), sdkParams, option.WithResponseInto(&hr))
		if err != nil {
			t.Fatal(err)
		}
		simCheckSDK(t, turn, o, resp, nil, nil, nil)
		if !simReqRe.MatchString(hr.Header.Get("x-request-id")) || hr.Header.Get("openai-processing-ms") == "" {
			t.Errorf("headers %v", hr.Header)
		}
	})
}

// The faults' events, as the sim server arranges them and then renumbers
// them: the nested in-stream error ends the SDK's stream with an error and
// ours as failed; an unknown event is skipped by both; repeats are dropped.
func TestSimStreamFaultEvents(t *testing.T) {
	turn := simRefund(t)[0].turns[1]
	o := simOpts(11)
	events := simP.StreamEvents(turn, o)

	at := len(events) / 2
	withErr := simP.Renumber(append(append([]adapters.WireEvent{}, events[:at]...), simP.ErrorEvent("overloaded_error", "Overloaded")...))
	wantErr := `{"type":"error","error":{"type":"service_unavailable_error","code":null,"message":"Overloaded","param":null},"sequence_number":` + fmt.Sprint(at) + `}`
	if e := withErr[len(withErr)-1]; e.Data != wantErr || e.Event != "error" || e.Phase != adapters.PhaseTerminal {
		t.Errorf("error event: %+v\nwant %s", e, wantErr)
	}
	c := simServe(t, true, withErr, nil)
	_, _, _, _, err := simSDKStream(c.Responses.NewStreaming(context.Background(), sdkParams))
	var se *ssestream.StreamError
	if !errors.As(err, &se) || !strings.Contains(se.Message, "Overloaded") || !strings.Contains(se.Message, "service_unavailable_error") {
		t.Errorf("sdk: %v", err)
	}
	_, s := adapterstest.Decode(t, New(), simSSE(withErr))
	if s.Terminal != adapters.StatusFailed || s.Error == nil || s.Error.Type != "service_unavailable_error" || s.Error.Message != "Overloaded" ||
		len(s.Diagnostics) != 1 || s.Diagnostics[0].Kind != adapters.DiagErrorEvent {
		t.Errorf("ours: %s %+v %+v", s.Terminal, s.Error, s.Diagnostics)
	}

	// An unknown event, inserted and renumbered: no sequence diagnostic.
	unknown := append([]adapters.WireEvent{}, events[:3]...)
	unknown = simP.Renumber(append(append(unknown, simP.UnknownEvent()), events[3:]...))
	c = simServe(t, true, unknown, nil)
	resp, _, _, _, err := simSDKStream(c.Responses.NewStreaming(context.Background(), sdkParams))
	if err != nil {
		t.Fatal(err)
	}
	simCheckSDK(t, turn, o, resp, nil, nil, nil)
	evs, s := adapterstest.Decode(t, New(), simSSE(unknown))
	var unknowns int
	for _, e := range evs {
		if e.Type == adapters.EvUnknown {
			unknowns++
		}
	}
	if unknowns != 1 || s.Terminal != adapters.StatusCompleted || len(s.Diagnostics) != 0 {
		t.Errorf("ours: %s, %d unknown, %+v", s.Terminal, unknowns, s.Diagnostics)
	}

	// Repeats keep their number (dropped as duplicates); a late copy after
	// the terminal gets a new one (an event after the terminal); a
	// malformed copy is left alone.
	var shaken []adapters.WireEvent
	for i, e := range events {
		if i == 3 {
			bad := e
			bad.Data = bad.Data[:len(bad.Data)/2]
			shaken = append(shaken, bad)
		}
		shaken = append(shaken, e)
		if e.Phase == adapters.PhaseArgs {
			shaken = append(shaken, e)
		}
	}
	late := events[0]
	for _, e := range events {
		if e.Phase == adapters.PhaseArgs {
			late = e
		}
	}
	shaken = simP.Renumber(append(shaken, late))
	_, s = adapterstest.Decode(t, New(), simSSE(shaken))
	kinds := map[string]int{}
	for _, d := range s.Diagnostics {
		kinds[d.Kind]++
	}
	if kinds[adapters.DiagMalformedEvent] != 1 || kinds[adapters.DiagDuplicateEvent] < 5 || kinds[adapters.DiagLateEvent] != 1 ||
		kinds[adapters.DiagSequenceGap]+kinds[adapters.DiagOutOfOrder] != 0 || s.Terminal != adapters.StatusCompleted || len(s.ToolCalls) != 2 {
		t.Errorf("renumbered faults: %s %v", s.Terminal, kinds)
	}
	if !bytes.Equal(simSSE(simP.Renumber(events)), simSSE(events)) {
		t.Error("Renumber changed a clean stream")
	}
}

// ---- errors -----------------------------------------------------------------

func TestSimErrorResponses(t *testing.T) {
	for _, c := range []struct {
		status            int
		kind, message     string
		wantStatus        int
		typ, code, param  string
		retryAfterSeconds bool
	}{
		{429, "rate_limit", "Rate limit reached for requests. Please try again in 1s.", 429, "requests", "rate_limit_exceeded", "", true},
		{500, "server_error", "The server had an error while processing your request. Sorry about that!", 500, "server_error", "", "", false},
		{529, "overloaded_error", "Overloaded", 503, "service_unavailable_error", "", "", false},
		{400, "invalid_request_error", "Previous response with id 'resp_x' not found.", 400, "invalid_request_error", "previous_response_not_found", "previous_response_id", false},
		{400, "invalid_request_error", "simulator: no turn left", 400, "invalid_request_error", "", "", false},
		{413, "request_too_large", "Request exceeds the maximum allowed number of bytes.", 413, "invalid_request_error", "request_too_large", "", false},
		{500, "api_error", "simulator: no scenario loaded", 500, "server_error", "", "", false},
	} {
		e := simP.ErrorResponse(c.status, c.kind, c.message)
		if c.retryAfterSeconds {
			e.Header.Set("Retry-After", "1") // as the sim server does
		}
		want := "{\n  \"error\": {\n    \"message\": " + simJSON(c.message) + ",\n    \"type\": \"" + c.typ + "\",\n    \"param\": " + simNullable(c.param) + ",\n    \"code\": " + simNullable(c.code) + "\n  }\n}\n"
		if e.Status != c.wantStatus || string(e.Body) != want || !simReqRe.MatchString(e.Header.Get("x-request-id")) {
			t.Errorf("%s: %d %s %v", c.kind, e.Status, e.Body, e.Header)
		}
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			for k, v := range e.Header {
				w.Header()[k] = v
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(e.Status)
			_, _ = w.Write(e.Body)
		}))
		cl := openai.NewClient(option.WithBaseURL(srv.URL+"/v1/"), option.WithAPIKey("sk-test"), option.WithMaxRetries(0))
		_, err := cl.Responses.New(context.Background(), sdkParams)
		srv.Close()
		var apiErr *openai.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != c.wantStatus || apiErr.Type != c.typ || apiErr.Code != c.code || apiErr.Param != c.param || apiErr.Message != c.message {
			t.Errorf("%s: sdk %v", c.kind, err)
		}
		ours := New().DecodeError(e.Status, e.Header, e.Body)
		if ours.Message != c.message || (c.retryAfterSeconds != (ours.RetryAfterMS == 1000)) {
			t.Errorf("%s: ours %+v", c.kind, ours)
		}
	}
	if h := simP.ErrorResponse(429, "rate_limit", "x").Header; h.Get("x-ratelimit-remaining-requests") != "0" {
		t.Errorf("429 headers %v", h)
	}
}

// ---- CheckRequest ---------------------------------------------------------------

func TestSimCheckRequestErrors(t *testing.T) {
	user := `{"role":"user","content":"请核查订单 O-2048。"}`
	fc := func(id string) string {
		return `{"type":"function_call","id":"fc_1","call_id":"` + id + `","name":"get_order_line","arguments":"{\"order_id\":\"O-2048\"}","status":"completed"}`
	}
	fco := func(id string) string { return `{"type":"function_call_output","call_id":"` + id + `","output":"{}"}` }
	req := func(extra string, items ...string) string {
		if extra != "" {
			extra = "," + extra
		}
		return `{"model":"gpt-5-mini","input":[` + strings.Join(items, ",") + `]` + extra + `}`
	}
	tool := `{"type":"function","name":"get_order_line","parameters":{"type":"object","properties":{}},"strict":true}`
	for _, c := range []struct {
		name, path, body string
		param, code      string
		message          string
	}{
		{"malformed JSON", "", `{"model":"m",`, "", "", "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly."},
		{"empty body", "", ``, "", "", "We could not parse the JSON body of your request."},
		{"not an object", "", `[1]`, "", "invalid_type", "Invalid type for body: expected an object, but got an array instead."},
		{"wrong path", "/v1/response", req("", user), "", "", "Invalid URL (POST /v1/response)"},
		{"no model", "", `{"input":"hi"}`, "model", "missing_required_parameter", "Missing required parameter: 'model'."},
		{"model null", "", `{"model":null,"input":"hi"}`, "model", "invalid_type", "Invalid type for 'model': expected a string, but got an object instead."},
		{"model a number", "", `{"model":5,"input":"hi"}`, "model", "invalid_type", "Invalid type for 'model': expected a string, but got an integer instead."},
		{"model empty", "", `{"model":"","input":"hi"}`, "model", "model_not_found", "The requested model '' does not exist."},
		{"another provider's model", "", `{"model":"claude-sonnet-4-5","input":"hi"}`, "model", "model_not_found", "The requested model 'claude-sonnet-4-5' does not exist."},
		{"no input", "", `{"model":"gpt-5-mini"}`, "input", "missing_required_parameter", "Missing required parameter: 'input'."},
		{"no input, chained", "", `{"model":"gpt-5-mini","previous_response_id":"resp_1"}`, "input", "missing_required_parameter", "Missing required parameter: 'input'."},
		{"input null", "", `{"model":"gpt-5-mini","input":null}`, "input", "invalid_type", "Invalid type for 'input': expected a string, but got an object instead."},
		{"input empty", "", `{"model":"gpt-5-mini","input":[]}`, "", "missing_required_parameter", `One of "input" or "previous_response_id" or 'prompt' or 'conversation' must be provided.`},
		{"Chat's messages", "", `{"model":"gpt-5-mini","input":"hi","messages":[]}`, "", "unsupported_parameter", "Unsupported parameter: 'messages'. In the Responses API, this parameter has moved to 'input'."},
		{"unknown parameter", "", `{"model":"gpt-5-mini","input":"hi","max_tokens":100}`, "max_tokens", "unknown_parameter", "Unknown parameter: 'max_tokens'."},
		{"misspelt parameter", "", `{"model":"gpt-5-mini","input":"hi","stor":false}`, "stor", "unknown_parameter", "Unknown parameter: 'stor'. Did you mean 'store'?"},
		{"stream_options.include_usage", "", req(`"stream":true,"stream_options":{"include_usage":true}`, user), "stream_options.include_usage", "unknown_parameter", "Unknown parameter: 'stream_options.include_usage'."},
		{"item not an object", "", req("", user, `7`), "input[1]", "invalid_type", "Invalid type for 'input[1]': expected an input item, but got an integer instead."},
		{"unknown item type", "", req("", `{"type":"tool_result","call_id":"x"}`), "input[0]", "invalid_value", "Invalid value: 'tool_result'. Supported values are: 'message', "},
		{"Chat's tool role", "", req("", user, `{"role":"tool","content":"{}"}`), "input[1]", "invalid_value", "Invalid value: 'tool'. Supported values are: 'assistant', 'system', 'developer', and 'user'."},
		{"message without content", "", req("", `{"role":"user"}`), "input[0].content", "missing_required_parameter", "Missing required parameter: 'input[0].content'."},
		{"call without call_id", "", req("", user, `{"type":"function_call","name":"f","arguments":"{}"}`), "input[1].call_id", "missing_required_parameter", "Missing required parameter: 'input[1].call_id'."},
		{"output for an unknown call", "", req("", user, fc("call_A"), fco("call_A"), fco("call_Ghost")), "input", "", "No tool call found for function call output with call_id call_Ghost."},
		{"output before its call", "", req("", user, fco("call_A"), fc("call_A")), "input", "", "No tool call found for function call output with call_id call_A."},
		{"call without output", "", req("", user, fc("call_A"), fc("call_B"), fco("call_A")), "input", "", "No tool output found for function call call_B."},
		{"chained call without output", "", req(`"previous_response_id":"resp_1"`, fc("call_A")), "input", "", "No tool output found for function call call_A."},
		{"bad previous_response_id", "", req(`"previous_response_id":"msg_1"`, fco("call_A")), "previous_response_id", "invalid_value", "Invalid 'previous_response_id': 'msg_1'. Expected an ID that begins with 'resp'."},
		{"previous_response_id and conversation", "", req(`"previous_response_id":"resp_1","conversation":"conv_1"`, user), "", "mutually_exclusive_parameters", "Mutually exclusive parameters"},
		{"temperature 2.5", "", req(`"temperature":2.5`, user), "temperature", "decimal_above_max_value", "Invalid 'temperature': decimal above maximum value. Expected a value <= 2, but got 2.5 instead."},
		{"temperature -1", "", req(`"temperature":-1`, user), "temperature", "decimal_below_min_value", "Invalid 'temperature': decimal below minimum value. Expected a value >= 0, but got -1 instead."},
		{"temperature a string", "", req(`"temperature":"hot"`, user), "temperature", "invalid_type", "Invalid type for 'temperature': expected a decimal, but got a string instead."},
		{"top_p 1.5", "", req(`"top_p":1.5`, user), "top_p", "decimal_above_max_value", "Expected a value <= 1, but got 1.5 instead."},
		{"max_output_tokens 10", "", req(`"max_output_tokens":10`, user), "max_output_tokens", "integer_below_min_value", "Invalid 'max_output_tokens': integer below minimum value. Expected a value >= 16, but got 10 instead."},
		{"max_output_tokens a decimal", "", req(`"max_output_tokens":100.5`, user), "max_output_tokens", "invalid_type", "Invalid type for 'max_output_tokens': expected an integer, but got a decimal number instead."},
		{"stream a string", "", req(`"stream":"yes"`, user), "stream", "invalid_type", "Invalid type for 'stream': expected a boolean, but got a string instead."},
		{"store a string", "", req(`"store":"false"`, user), "store", "invalid_type", "Invalid type for 'store': expected a boolean, but got a string instead."},
		{"tool without name", "", req(`"tools":[{"type":"function","parameters":{}}]`, user), "tools[0].name", "missing_required_parameter", "Missing required parameter: 'tools[0].name'."},
		{"Chat-shaped tool", "", req(`"tools":[`+tool+`,{"type":"function","function":{"name":"f"}}]`, user), "tools[1].name", "missing_required_parameter", "Missing required parameter: 'tools[1].name'."},
		{"tool without type", "", req(`"tools":[{"name":"f"}]`, user), "tools[0].type", "missing_required_parameter", "Missing required parameter: 'tools[0].type'."},
		{"tool name with a space", "", req(`"tools":[{"type":"function","name":"get order"}]`, user), "tools[0].name", "invalid_value", "Invalid 'tools[0].name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'."},
		{"json_schema without name", "", req(`"text":{"format":{"type":"json_schema","schema":{"type":"object"}}}`, user), "text.format.name", "missing_required_parameter", "Missing required parameter: 'text.format.name'."},
		{"json_schema without schema", "", req(`"text":{"format":{"type":"json_schema","name":"refund_assessment"}}`, user), "text.format.schema", "missing_required_parameter", "Missing required parameter: 'text.format.schema'."},
		{"unknown format", "", req(`"text":{"format":{"type":"yaml"}}`, user), "text.format.type", "invalid_value", "Invalid value: 'yaml'. Supported values are: 'json_object', 'text', and 'json_schema'."},
		{"reasoning effort", "", req(`"reasoning":{"effort":"ultra"}`, user), "reasoning.effort", "invalid_value", "Invalid value: 'ultra'. Supported values are: 'none', 'minimal', 'low', 'medium', 'high', 'xhigh', and 'max'."},
		{"truncation", "", req(`"truncation":"on"`, user), "truncation", "invalid_value", "Invalid value: 'on'. Supported values are: 'auto' and 'disabled'."},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := c.path
			if path == "" {
				path = "/v1/responses"
			}
			in, e := simP.CheckRequest(http.MethodPost, path, http.Header{"Authorization": {"Bearer sk-anything"}}, []byte(c.body))
			if e == nil {
				t.Fatalf("accepted: %+v", in)
			}
			var body struct {
				Error struct {
					Message string  `json:"message"`
					Type    string  `json:"type"`
					Param   *string `json:"param"`
					Code    *string `json:"code"`
				} `json:"error"`
			}
			if err := json.Unmarshal(e.Body, &body); err != nil {
				t.Fatalf("error body %s: %v", e.Body, err)
			}
			param, code := "", ""
			if body.Error.Param != nil {
				param = *body.Error.Param
			}
			if body.Error.Code != nil {
				code = *body.Error.Code
			}
			status := http.StatusBadRequest
			if c.path != "" {
				status = http.StatusNotFound
			}
			if e.Status != status || body.Error.Type != "invalid_request_error" || param != c.param || code != c.code ||
				!strings.Contains(body.Error.Message, c.message) || !simReqRe.MatchString(e.Header.Get("x-request-id")) {
				t.Errorf("got %d %s", e.Status, e.Body)
			}
		})
	}
}

// Requests from this package's own encoder pass, in both history modes,
// with the history's facts.
func TestSimCheckRequestAcceptsEncode(t *testing.T) {
	ids := refundRequestIDs()
	for turn := 1; turn <= 3; turn++ {
		for _, chained := range []bool{false, true} {
			for _, stream := range []bool{true, false} {
				req := adapterstest.RefundRequest(turn, ids, stream)
				if chained {
					req.History = adapters.HistoryPreviousResponse
				}
				hr, err := New().Encode(req, adapters.ProviderSim)
				if err != nil {
					t.Fatal(err)
				}
				in, e := simP.CheckRequest(hr.Method, hr.Path, http.Header{}, hr.Body)
				if e != nil {
					t.Fatalf("turn %d chained=%v: %s", turn, chained, e.Body)
				}
				wantTurns, wantPrev := turn-1, ""
				if chained {
					wantTurns = 0
					if turn > 1 {
						wantPrev = ids.Response(turn - 1)
					}
				}
				if in.ModelTurns != wantTurns || in.Stream != stream || in.Model != "refund-model" || in.MaxOutputTokens != 1800 ||
					in.PreviousResponseID != wantPrev || in.Store != nil || in.IncludeUsage ||
					strings.Join(in.Tools, ",") != "get_order_line,get_refund_ledger,get_refund_policy" {
					t.Errorf("turn %d chained=%v: %+v", turn, chained, in)
				}
				var want []adapters.ToolResult
				for t2, calls := range [][]adapterstest.RefundCall{adapterstest.RefundTurn1, adapterstest.RefundTurn2}[:turn-1] {
					if chained && t2+2 != turn {
						continue // only the last turn's results are sent
					}
					for i, c := range calls {
						name := c.Name
						if chained {
							name = "" // the call is in the stored chain
						}
						want = append(want, adapters.ToolResult{CallID: ids.Call(t2+1, i), Name: name, Content: c.Result})
					}
				}
				if fmt.Sprint(in.Results) != fmt.Sprint(want) {
					t.Errorf("turn %d chained=%v results:\n got %+v\nwant %+v", turn, chained, in.Results, want)
				}
			}
		}
	}
}

// A client that keeps the full history by echoing the Response's output
// items as they came (what openai-node users do: input = [...input,
// ...response.output, ...outputs]) passes, and its model turns count.
func TestSimCheckRequestAcceptsEchoedOutput(t *testing.T) {
	script := simRefund(t)[0].turns
	input := []json.RawMessage{json.RawMessage(`{"role":"user","content":"请核查订单 O-2048 第 L1 行的退款申请。"}`)}
	for n, turn := range script {
		body, _ := json.Marshal(map[string]any{"model": "refund-model", "input": input, "store": false,
			"include": []string{"reasoning.encrypted_content"}, "stream": n%2 == 0})
		in, e := simP.CheckRequest(http.MethodPost, "/v1/responses", http.Header{}, body)
		if e != nil {
			t.Fatalf("turn %d: %s", n+1, e.Body)
		}
		if in.ModelTurns != n || in.Store == nil || *in.Store || len(in.Results) != map[int]int{0: 0, 1: 1, 2: 3}[n] {
			t.Fatalf("turn %d: %+v", n+1, in)
		}
		var resp struct {
			Output []json.RawMessage `json:"output"`
		}
		if err := json.Unmarshal(simP.Body(turn, simOpts(uint64(n+1))), &resp); err != nil {
			t.Fatal(err)
		}
		input = append(input, resp.Output...)
		for _, raw := range resp.Output {
			var it struct {
				Type   string `json:"type"`
				CallID string `json:"call_id"`
			}
			_ = json.Unmarshal(raw, &it)
			if it.Type == "function_call" {
				input = append(input, json.RawMessage(`{"type":"function_call_output","call_id":"`+it.CallID+`","output":"{}"}`))
			}
		}
	}
}
