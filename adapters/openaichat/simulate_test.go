package openaichat

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

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/adapterstest"
)

// The simulator's side of Chat Completions is checked, for both dialects,
// four ways: this package's decoder reads every rendered turn of every
// refund variant back to the script (stream and body); the official Go
// SDK accepts the same bytes, and drives the refund loop through
// CheckRequest; each request check answers with the provider's status and
// error shape; and the bytes follow the seed alone.

var simDialects = []protocol{{}, {deepseek: true}}

func simName(p protocol) string {
	if p.deepseek {
		return "deepseek"
	}
	return "openai"
}

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

// simSSE writes events as the sim server does.
func simSSE(p protocol, events []adapters.WireEvent) []byte {
	return adapterstest.SSE(events, p.LineEnd())
}

type simCall struct{ id, name, args string }

// simExpect is what a reader of a rendered turn must conclude, derived from
// the script and the dialect's rules, not from the renderer.
type simExpect struct {
	id, model                string
	text, reasoning, refusal string
	calls                    []simCall
	stop                     adapters.StopReason
	finish                   string
	usage                    adapters.Usage
}

func simExpected(p protocol, mt adapters.ModelTurn, o adapters.ResponseOptions) simExpect {
	e := simExpect{id: p.ResponseID(o), model: o.Model, stop: mt.Stop, usage: mt.Usage}
	refusalText := false
	for _, it := range mt.Items {
		switch it.Kind {
		case adapters.KindReasoning:
			if p.deepseek {
				e.reasoning += it.Text
			}
		case adapters.KindMessage:
			e.text += it.Text
		case adapters.KindRefusal:
			if p.deepseek {
				e.text += it.Text // DeepSeek has no refusal field
			} else {
				e.refusal += it.Text
				refusalText = refusalText || it.Text != ""
			}
		case adapters.KindToolCall:
			id := it.CallID
			if id == "" {
				id = p.callID(o.Seed, len(e.calls))
			}
			e.calls = append(e.calls, simCall{id, it.Name, adapters.ArgumentText(it.Arguments)})
		}
	}
	switch mt.Stop {
	case adapters.StopToolCall:
		e.finish = "tool_calls"
	case adapters.StopTruncated:
		e.finish = "length"
	case adapters.StopRefusal:
		e.finish = "content_filter"
		if refusalText {
			e.finish = "stop"
		}
	default:
		e.finish = "stop"
	}
	return e
}

var (
	simChatcmplID = regexp.MustCompile(`^chatcmpl-[0-9A-Za-z]{29}$`)
	simUUID       = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	simOpenAICall = regexp.MustCompile(`^call_[0-9A-Za-z]{24}$`)
	simDSCall     = regexp.MustCompile(`^call_[0-9]{2}_[0-9A-Za-z]{24}$`)
)

// simCheckSummary compares a decoded summary with the expectation.
func simCheckSummary(t *testing.T, p protocol, s adapters.Summary, e simExpect, withUsage bool) {
	t.Helper()
	if s.ResponseID != e.id || s.Model != e.model {
		t.Errorf("id/model: %s %s, want %s %s", s.ResponseID, s.Model, e.id, e.model)
	}
	if s.StopReason != e.stop || s.ProviderStopReason != e.finish {
		t.Errorf("stop: %s (%s), want %s (%s)", s.StopReason, s.ProviderStopReason, e.stop, e.finish)
	}
	if s.Text != e.text {
		t.Errorf("text: %q\nwant %q", s.Text, e.text)
	}
	if s.Reasoning != e.reasoning {
		t.Errorf("reasoning: %q, want %q", s.Reasoning, e.reasoning)
	}
	refusal := ""
	if s.Refusal != nil {
		refusal = *s.Refusal
	}
	if refusal != e.refusal {
		t.Errorf("refusal: %q, want %q", refusal, e.refusal)
	}
	if len(s.ToolCalls) != len(e.calls) || len(s.IncompleteToolCalls) != 0 {
		t.Fatalf("calls: %+v (incomplete %+v), want %+v", s.ToolCalls, s.IncompleteToolCalls, e.calls)
	}
	for i, c := range s.ToolCalls {
		w := e.calls[i]
		if c.CallID != w.id || c.Name != w.name || !jsonEqual(string(c.Arguments), w.args) {
			t.Errorf("call %d: %s %s %s, want %s %s %s", i, c.CallID, c.Name, c.Arguments, w.id, w.name, w.args)
		}
	}
	if len(s.Diagnostics) != 0 {
		t.Errorf("diagnostics: %+v", s.Diagnostics)
	}
	if !withUsage {
		if s.Usage != nil {
			t.Errorf("usage without include_usage: %s", usageString(s.Usage))
		}
		return
	}
	if s.Usage == nil {
		t.Fatal("no usage")
	}
	for _, f := range []struct {
		name      string
		got, want *int64
	}{
		{"input", s.Usage.InputTokens, e.usage.InputTokens},
		{"output", s.Usage.OutputTokens, e.usage.OutputTokens},
		{"cache read", s.Usage.CacheReadTokens, e.usage.CacheReadTokens},
		{"reasoning", s.Usage.ReasoningTokens, e.usage.ReasoningTokens},
	} {
		if f.want != nil && val(f.got) != *f.want {
			t.Errorf("usage %s: %d, want %d", f.name, val(f.got), *f.want)
		}
	}
}

// TestSimDecodesToScript: every turn of every refund variant, streamed
// (with and without include_usage) and as a body, decodes to the script.
func TestSimDecodesToScript(t *testing.T) {
	for _, p := range simDialects {
		for _, sc := range simRefund(t) {
			for n, mt := range sc.turns {
				for _, includeUsage := range []bool{true, false} {
					name := fmt.Sprintf("%s/%s/turn%d/usage=%v", simName(p), sc.name, n+1, includeUsage)
					t.Run(name, func(t *testing.T) {
						o := adapters.ResponseOptions{Model: "refund-model", Seed: uint64(1000 + n), IncludeUsage: includeUsage}
						e := simExpected(p, mt, o)
						events := p.StreamEvents(mt, o)
						simCheckEvents(t, p, events, e)
						evs, s := adapterstest.Decode(t, p, simSSE(p, events))
						simCheckSummary(t, p, s, e, includeUsage || p.deepseek)
						for _, ev := range evs {
							if ev.Delta != "" && !utf8.ValidString(ev.Delta) {
								t.Errorf("delta %q is not whole UTF-8", ev.Delta)
							}
						}
						_, s = adapterstest.Decode(t, p, p.Body(mt, o))
						simCheckSummary(t, p, s, e, true)
					})
				}
			}
		}
	}
}

// simCheckEvents checks the event list's own shape: JSON chunks, phases,
// [DONE] last, ids in the provider's format.
func simCheckEvents(t *testing.T, p protocol, events []adapters.WireEvent, e simExpect) {
	t.Helper()
	if len(events) < 3 || events[len(events)-1].Data != "[DONE]" || events[len(events)-1].Phase != adapters.PhaseTerminal {
		t.Fatalf("the stream does not end with [DONE]: %+v", events[len(events)-1])
	}
	if events[0].Phase != adapters.PhaseStart {
		t.Errorf("first event phase %s", events[0].Phase)
	}
	phases := map[adapters.Phase]int{}
	for _, ev := range events[:len(events)-1] {
		phases[ev.Phase]++
		if ev.Event != "" {
			t.Errorf("Chat streams are data-only, got event %q", ev.Event)
		}
		if !json.Valid([]byte(ev.Data)) {
			t.Fatalf("not JSON: %s", ev.Data)
		}
		if !strings.HasPrefix(ev.Data, `{"id":"`+e.id+`","object":"chat.completion.chunk","created":`) {
			t.Errorf("chunk envelope: %.120s", ev.Data)
		}
		if has := strings.Contains(ev.Data, `"obfuscation":"`); has == p.deepseek {
			t.Errorf("obfuscation present=%v in %s", has, simName(p))
		}
	}
	if (phases[adapters.PhaseArgs] > 0) != (len(e.calls) > 0) {
		t.Errorf("%d args events for %d calls", phases[adapters.PhaseArgs], len(e.calls))
	}
	if (phases[adapters.PhaseReasoning] > 0) != (e.reasoning != "") {
		t.Errorf("%d reasoning events for reasoning %q", phases[adapters.PhaseReasoning], e.reasoning)
	}
	if phases[adapters.PhaseTerminal] != 1 {
		t.Errorf("%d finish chunks", phases[adapters.PhaseTerminal])
	}
	if p.deepseek {
		if !simUUID.MatchString(e.id) {
			t.Errorf("DeepSeek id %s is not a UUID", e.id)
		}
	} else if !simChatcmplID.MatchString(e.id) {
		t.Errorf("OpenAI id %s", e.id)
	}
	for _, c := range e.calls {
		if re := map[bool]*regexp.Regexp{false: simOpenAICall, true: simDSCall}[p.deepseek]; !re.MatchString(c.id) {
			t.Errorf("call id %s", c.id)
		}
	}
}

// TestSimStopForms: the provider's truncation and refusal forms, and their
// first chunks, for both dialects.
func TestSimStopForms(t *testing.T) {
	usage := adapters.Usage{InputTokens: adapters.Int(100), OutputTokens: adapters.Int(12)}
	truncText := adapters.ModelTurn{Stop: adapters.StopTruncated, Usage: usage, Items: []adapters.OutputItem{
		{Kind: adapters.KindReasoning, Text: "想一想"}, {Kind: adapters.KindMessage, Text: "根据订单记录，该商"}}}
	truncCall := adapters.ModelTurn{Stop: adapters.StopTruncated, Usage: usage, Items: []adapters.OutputItem{
		{Kind: adapters.KindToolCall, Name: "get_order_line", Arguments: json.RawMessage(`"{\"order_id\":\"O-20"`)}}}
	refusal := adapters.ModelTurn{Stop: adapters.StopRefusal, Usage: usage, Items: []adapters.OutputItem{
		{Kind: adapters.KindRefusal, Text: "抱歉，我无法协助处理这个请求。"}}}
	for _, p := range simDialects {
		t.Run(simName(p), func(t *testing.T) {
			o := adapters.ResponseOptions{Model: "m", Seed: 7, IncludeUsage: true}

			_, s := adapterstest.Decode(t, p, simSSE(p, p.StreamEvents(truncText, o)))
			if s.Terminal != adapters.StatusIncomplete || s.StopReason != adapters.StopTruncated || s.ProviderStopReason != "length" || s.Text != "根据订单记录，该商" {
				t.Errorf("truncated text: %s %s %s %q", s.Terminal, s.StopReason, s.ProviderStopReason, s.Text)
			}

			events := p.StreamEvents(truncCall, o)
			_, s = adapterstest.Decode(t, p, simSSE(p, events))
			if s.StopReason != adapters.StopTruncated || len(s.ToolCalls) != 0 || len(s.IncompleteToolCalls) != 1 ||
				s.IncompleteToolCalls[0].PartialArguments != `{"order_id":"O-20` {
				t.Errorf("truncated call: %s %+v %+v", s.StopReason, s.ToolCalls, s.IncompleteToolCalls)
			}
			if !p.deepseek && !strings.Contains(events[0].Data, `"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_`) {
				t.Errorf("OpenAI's first chunk of a tool-call turn carries the call: %s", events[0].Data)
			}

			events = p.StreamEvents(refusal, o)
			_, s = adapterstest.Decode(t, p, simSSE(p, events))
			if s.Terminal != adapters.StatusRefused || s.StopReason != adapters.StopRefusal {
				t.Errorf("refusal: %s %s", s.Terminal, s.StopReason)
			}
			if p.deepseek {
				if s.Text != "抱歉，我无法协助处理这个请求。" || s.Refusal != nil || s.ProviderStopReason != "content_filter" {
					t.Errorf("DeepSeek refusal: %q %v %s", s.Text, s.Refusal, s.ProviderStopReason)
				}
			} else {
				if s.Refusal == nil || *s.Refusal != "抱歉，我无法协助处理这个请求。" || s.Text != "" || s.ProviderStopReason != "stop" {
					t.Errorf("OpenAI refusal: %q %v %s", s.Text, s.Refusal, s.ProviderStopReason)
				}
				if !strings.Contains(events[0].Data, `"delta":{"role":"assistant","content":null,"refusal":""}`) {
					t.Errorf("refusal first chunk: %s", events[0].Data)
				}
			}
			// The SDK sees the same.
			acc, refused, err := sdkStream(t, simSSE(p, events))
			if err != nil || refused {
				t.Fatalf("sdk err %v refused %v", err, refused)
			}
			m := acc.Choices[0].Message
			if m.Refusal+m.Content != "抱歉，我无法协助处理这个请求。" || acc.Choices[0].FinishReason != s.ProviderStopReason {
				t.Errorf("sdk refusal %q content %q finish %s", m.Refusal, m.Content, acc.Choices[0].FinishReason)
			}
		})
	}
}

// TestSimFirstChunks pins the role chunk and a text chunk of each dialect.
func TestSimFirstChunks(t *testing.T) {
	turn := adapters.ModelTurn{Stop: adapters.StopFinal, Items: []adapters.OutputItem{
		{Kind: adapters.KindReasoning, Text: "先想"}, {Kind: adapters.KindMessage, Text: "好的"}}}
	o := adapters.ResponseOptions{Model: "m", Seed: 3}
	ds := protocol{deepseek: true}.StreamEvents(turn, o)
	for i, want := range []string{
		`"choices":[{"index":0,"delta":{"role":"assistant","content":null,"reasoning_content":""},"logprobs":null,"finish_reason":null}]}`,
		`"delta":{"content":null,"reasoning_content":"先想"}`,
		`"delta":{"content":"好的","reasoning_content":null}`,
		`"delta":{"content":""},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":0,`,
	} {
		if !strings.Contains(ds[i].Data, want) {
			t.Errorf("DeepSeek chunk %d: %s\nwant …%s…", i, ds[i].Data, want)
		}
	}
	oa := protocol{}.StreamEvents(turn, adapters.ResponseOptions{Model: "m", Seed: 3, IncludeUsage: true})
	for i, want := range []string{
		`"service_tier":"default","system_fingerprint":"fp_b3f1157249","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"`,
		`"delta":{"content":"好的"},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"`,
		`"delta":{},"logprobs":null,"finish_reason":"stop"}],"usage":null,"obfuscation":"`,
		`"choices":[],"usage":{"prompt_tokens":0,`,
		`[DONE]`,
	} {
		if !strings.Contains(oa[i].Data, want) {
			t.Errorf("OpenAI chunk %d: %s\nwant …%s…", i, oa[i].Data, want)
		}
	}
	if len(oa) != 5 || oa[3].Phase != adapters.PhaseUsage {
		t.Errorf("OpenAI: %d events (reasoning is not sent), usage phase %s", len(oa), oa[3].Phase)
	}
}

// TestSimSDKAccepts: openai-go reads every rendered turn, streaming (with
// its ChatCompletionAccumulator) and not, to the script.
func TestSimSDKAccepts(t *testing.T) {
	for _, p := range simDialects {
		for _, sc := range simRefund(t) {
			for n, mt := range sc.turns {
				t.Run(fmt.Sprintf("%s/%s/turn%d", simName(p), sc.name, n+1), func(t *testing.T) {
					o := adapters.ResponseOptions{Model: "refund-model", Seed: uint64(50 + n), IncludeUsage: true}
					e := simExpected(p, mt, o)

					acc, refused, err := sdkStream(t, simSSE(p, p.StreamEvents(mt, o)))
					if err != nil || refused {
						t.Fatalf("stream: err %v, a chunk refused %v", err, refused)
					}
					simCheckSDK(t, &acc.ChatCompletion, e)

					client := serve(t, p.Body(mt, o), "application/json")
					c, err := client.Chat.Completions.New(context.Background(), sdkParams)
					if err != nil {
						t.Fatal(err)
					}
					simCheckSDK(t, c, e)
				})
			}
		}
	}
}

func simCheckSDK(t *testing.T, c *openai.ChatCompletion, e simExpect) {
	t.Helper()
	if c.ID != e.id || c.Model != e.model || len(c.Choices) != 1 {
		t.Fatalf("sdk id %s model %s choices %d", c.ID, c.Model, len(c.Choices))
	}
	m := c.Choices[0].Message
	if m.Content != e.text || m.Refusal != e.refusal || c.Choices[0].FinishReason != e.finish {
		t.Errorf("sdk content %q refusal %q finish %s; want %q %q %s", m.Content, m.Refusal, c.Choices[0].FinishReason, e.text, e.refusal, e.finish)
	}
	if len(m.ToolCalls) != len(e.calls) {
		t.Fatalf("sdk calls %+v, want %+v", m.ToolCalls, e.calls)
	}
	for i, tc := range m.ToolCalls {
		w := e.calls[i]
		if tc.ID != w.id || tc.Type != "function" || tc.Function.Name != w.name || tc.Function.Arguments != w.args {
			t.Errorf("sdk call %d: %s %s %s, want %s %s %s", i, tc.ID, tc.Function.Name, tc.Function.Arguments, w.id, w.name, w.args)
		}
	}
	u := c.Usage
	if u.PromptTokens != val(e.usage.InputTokens) || u.CompletionTokens != val(e.usage.OutputTokens) ||
		u.TotalTokens != u.PromptTokens+u.CompletionTokens ||
		u.PromptTokensDetails.CachedTokens != val(e.usage.CacheReadTokens) ||
		u.CompletionTokensDetails.ReasoningTokens != val(e.usage.ReasoningTokens) {
		t.Errorf("sdk usage %+v, want %s", u, usageString(&e.usage))
	}
}

// simServer answers as the sim server does: CheckRequest, then the script
// turn the request's history asks for. It records each request's facts.
type simServer struct {
	p      protocol
	script []adapters.ModelTurn
	mu     sync.Mutex
	seen   []adapters.Inbound
	seed   uint64
}

func (s *simServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	in, serr := s.p.CheckRequest(r.Method, r.URL.RequestURI(), r.Header, body)
	if serr != nil {
		for k, v := range serr.Header {
			w.Header()[k] = v
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(serr.Status)
		_, _ = w.Write(serr.Body)
		return
	}
	s.mu.Lock()
	s.seen = append(s.seen, *in)
	s.seed++
	o := adapters.ResponseOptions{Model: in.Model, Seed: s.seed, IncludeUsage: in.IncludeUsage}
	s.mu.Unlock()
	mt := s.script[in.ModelTurns]
	for k, v := range s.p.ResponseHeaders(in.Stream) {
		w.Header()[k] = v
	}
	if !in.Stream {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(s.p.Body(mt, o))
		return
	}
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	_, _ = w.Write(simSSE(s.p, s.p.StreamEvents(mt, o)))
}

func simSDKTools() []openai.ChatCompletionToolUnionParam {
	var out []openai.ChatCompletionToolUnionParam
	for _, tl := range adapterstest.RefundTools() {
		var params shared.FunctionParameters
		_ = json.Unmarshal(tl.Parameters, &params)
		out = append(out, openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name: tl.Name, Description: openai.String(tl.Description), Parameters: params, Strict: openai.Bool(true),
		}))
	}
	return out
}

// simSDKLoop runs the refund loop with openai-go against CheckRequest and
// the script: it sends each turn's calls back with a result, until the
// model answers. It returns the final text, or the first error.
func simSDKLoop(t *testing.T, srv *simServer, stream bool, opts ...option.RequestOption) (string, error) {
	t.Helper()
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	base := hs.URL + "/v1/"
	if srv.p.deepseek {
		base = hs.URL + "/"
	}
	client := openai.NewClient(append([]option.RequestOption{option.WithBaseURL(base), option.WithAPIKey("sk-test"), option.WithMaxRetries(0)}, opts...)...)
	params := openai.ChatCompletionNewParams{
		Model: "refund-model",
		Messages: []openai.ChatCompletionMessageParamUnion{
			openai.SystemMessage("你是售后退款核查助手。最终只输出一个 JSON 对象。"),
			openai.UserMessage("请核查订单 O-2048 第 L1 行的退款申请。"),
		},
		Tools: simSDKTools(),
	}
	if stream {
		params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	}
	for range 6 {
		var msg openai.ChatCompletionMessage
		var finish string
		if stream {
			s := client.Chat.Completions.NewStreaming(context.Background(), params)
			var acc openai.ChatCompletionAccumulator
			for s.Next() {
				if !acc.AddChunk(s.Current()) {
					t.Errorf("the accumulator refused a chunk")
				}
			}
			if err := s.Err(); err != nil {
				return "", err
			}
			msg, finish = acc.Choices[0].Message, acc.Choices[0].FinishReason
		} else {
			c, err := client.Chat.Completions.New(context.Background(), params)
			if err != nil {
				return "", err
			}
			msg, finish = c.Choices[0].Message, c.Choices[0].FinishReason
		}
		if finish != "tool_calls" {
			return msg.Content, nil
		}
		params.Messages = append(params.Messages, msg.ToParam())
		for _, tc := range msg.ToolCalls {
			params.Messages = append(params.Messages, openai.ToolMessage(`{"ok":true,"call":"`+tc.Function.Name+`"}`, tc.ID))
		}
	}
	return "", errors.New("the loop did not end")
}

// TestSimSDKRefundLoop: openai-go drives the whole refund loop, streaming
// and not; every request it sends passes CheckRequest with the history's
// turn count and results. At DeepSeek, thinking is on unless the request
// turns it off, and the SDK does not send reasoning_content back: the
// second request is refused exactly as DeepSeek refuses it.
func TestSimSDKRefundLoop(t *testing.T) {
	scenarios := simRefund(t)
	final := adapterstest.RefundModelText
	for _, p := range simDialects {
		for _, stream := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/stream=%v", simName(p), stream), func(t *testing.T) {
				srv := &simServer{p: p, script: scenarios[0].turns}
				var opts []option.RequestOption
				if p.deepseek {
					opts = append(opts, option.WithJSONSet("thinking", map[string]string{"type": "disabled"}))
				}
				text, err := simSDKLoop(t, srv, stream, opts...)
				if err != nil {
					t.Fatal(err)
				}
				if text != final {
					t.Errorf("final text %q", text)
				}
				var turns, results []int
				for _, in := range srv.seen {
					turns, results = append(turns, in.ModelTurns), append(results, len(in.Results))
					if in.Stream != stream || in.IncludeUsage != stream || len(in.Tools) != 3 || in.Model != "refund-model" {
						t.Errorf("inbound %+v", in)
					}
				}
				if !reflect.DeepEqual(turns, []int{0, 1, 2}) || !reflect.DeepEqual(results, []int{0, 1, 3}) {
					t.Errorf("model turns %v, results %v", turns, results)
				}
				last := srv.seen[2].Results
				if last[1].Name != "get_refund_ledger" || last[2].Name != "get_refund_policy" || last[2].Content != `{"ok":true,"call":"get_refund_policy"}` {
					t.Errorf("results %+v", last)
				}
			})
		}
	}
	t.Run("deepseek/thinking-without-passback", func(t *testing.T) {
		srv := &simServer{p: protocol{deepseek: true}, script: scenarios[0].turns}
		_, err := simSDKLoop(t, srv, true)
		var apiErr *openai.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || !strings.Contains(apiErr.Message, "The `reasoning_content` in the thinking mode must be passed back to the API.") {
			t.Fatalf("err %v", err)
		}
		if len(srv.seen) != 1 {
			t.Errorf("%d requests passed", len(srv.seen))
		}
	})
}

type simReject struct {
	name   string
	path   string // "" is the dialect's own
	body   string
	status int
	typ    string
	msg    string // a substring of the message
	param  string // OpenAI only; "-" is null
	code   string // OpenAI only; "-" is null
}

const simUser = `{"role":"user","content":"hi"}`

func simCall1(ids ...string) string {
	var calls []string
	for _, id := range ids {
		calls = append(calls, `{"id":"`+id+`","type":"function","function":{"name":"get_order_line","arguments":"{}"}}`)
	}
	return `{"role":"assistant","content":null,"tool_calls":[` + strings.Join(calls, ",") + `]}`
}

func simTool(id string) string { return `{"role":"tool","tool_call_id":"` + id + `","content":"ok"}` }

func simBody(msgs ...string) string {
	return `{"model":"m","messages":[` + strings.Join(msgs, ",") + `]}`
}

// TestSimCheckRequestRejects: each check answers with the provider's status
// and error shape.
func TestSimCheckRequestRejects(t *testing.T) {
	cases := map[bool][]simReject{
		false: {
			{name: "not JSON", body: `{"model":"m",`, status: 400, typ: "invalid_request_error", msg: "We could not parse the JSON body of your request.", param: "-", code: "-"},
			{name: "no model", body: `{"messages":[` + simUser + `]}`, status: 400, typ: "invalid_request_error", msg: "you must provide a model parameter", param: "-", code: "-"},
			{name: "model not a string", body: `{"model":7,"messages":[` + simUser + `]}`, status: 400, typ: "invalid_request_error", msg: "Invalid type for 'model': expected a string, but got an integer instead.", param: "model", code: "invalid_type"},
			{name: "no messages", body: `{"model":"m"}`, status: 400, typ: "invalid_request_error", msg: "Missing required parameter: 'messages'.", param: "messages", code: "missing_required_parameter"},
			{name: "messages a string", body: `{"model":"m","messages":"hi"}`, status: 400, typ: "invalid_request_error", msg: "Invalid type for 'messages': expected an array of objects, but got a string instead.", param: "messages", code: "invalid_type"},
			{name: "empty messages", body: `{"model":"m","messages":[]}`, status: 400, typ: "invalid_request_error", msg: "Invalid 'messages': empty array.", param: "messages", code: "empty_array"},
			{name: "no role", body: simBody(`{"content":"hi"}`), status: 400, typ: "invalid_request_error", msg: "Missing required parameter: 'messages[0].role'.", param: "messages[0].role", code: "missing_required_parameter"},
			{name: "bad role", body: simBody(`{"role":"bogus","content":"hi"}`), status: 400, typ: "invalid_request_error", msg: "Invalid value: 'bogus'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'.", param: "messages[0].role", code: "invalid_value"},
			{name: "null content", body: simBody(`{"role":"user","content":null}`), status: 400, typ: "invalid_request_error", msg: "Invalid value for 'content': expected a string, got null.", param: "messages.[0].content", code: "-"},
			{name: "tool without tool_calls", body: simBody(simUser, simTool("call_x")), status: 400, typ: "invalid_request_error", msg: "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.", param: "messages.[1].role", code: "-"},
			{name: "tool answering another call", body: simBody(simUser, simCall1("call_a"), simTool("call_b")), status: 400, typ: "invalid_request_error", msg: "Invalid parameter: 'tool_call_id' of 'call_b' not found in 'tool_calls' of previous message.", param: "messages.[2].tool_call_id", code: "-"},
			{name: "unanswered call", body: simBody(simUser, simCall1("call_a", "call_b"), simTool("call_a"), simUser), status: 400, typ: "invalid_request_error", msg: "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: call_b", param: "messages.[1].role", code: "-"},
			{name: "unanswered call at the end", body: simBody(simUser, simCall1("call_a")), status: 400, typ: "invalid_request_error", msg: "did not have response messages: call_a", param: "messages.[1].role", code: "-"},
			{name: "tool without tool_call_id", body: simBody(simUser, simCall1("call_a"), `{"role":"tool","content":"ok"}`), status: 400, typ: "invalid_request_error", msg: "Missing required parameter: 'messages[2].tool_call_id'.", param: "messages[2].tool_call_id", code: "missing_required_parameter"},
			{name: "temperature above 2", body: `{"model":"m","messages":[` + simUser + `],"temperature":2.5}`, status: 400, typ: "invalid_request_error", msg: "Invalid 'temperature': decimal above maximum value. Expected a value <= 2, but got 2.5 instead.", param: "temperature", code: "decimal_above_max_value"},
			{name: "temperature below 0", body: `{"model":"m","messages":[` + simUser + `],"temperature":-1}`, status: 400, typ: "invalid_request_error", msg: "Invalid 'temperature': decimal below minimum value. Expected a value >= 0, but got -1 instead.", param: "temperature", code: "decimal_below_min_value"},
			{name: "temperature a string", body: `{"model":"m","messages":[` + simUser + `],"temperature":"hot"}`, status: 400, typ: "invalid_request_error", msg: "Invalid type for 'temperature': expected a decimal, but got a string instead.", param: "temperature", code: "invalid_type"},
			{name: "stream a string", body: `{"model":"m","messages":[` + simUser + `],"stream":"yes"}`, status: 400, typ: "invalid_request_error", msg: "Invalid type for 'stream': expected a boolean, but got a string instead.", param: "stream", code: "invalid_type"},
			{name: "stream_options without stream", body: `{"model":"m","messages":[` + simUser + `],"stream_options":{"include_usage":true}}`, status: 400, typ: "invalid_request_error", msg: "The 'stream_options' parameter is only allowed when 'stream' is enabled.", param: "stream_options", code: "-"},
			{name: "max_completion_tokens 0", body: `{"model":"m","messages":[` + simUser + `],"max_completion_tokens":0}`, status: 400, typ: "invalid_request_error", msg: "Invalid 'max_completion_tokens': integer below minimum value. Expected a value >= 1, but got 0 instead.", param: "max_completion_tokens", code: "integer_below_min_value"},
			{name: "tool without a name", body: `{"model":"m","messages":[` + simUser + `],"tools":[{"type":"function","function":{"parameters":{}}}]}`, status: 400, typ: "invalid_request_error", msg: "Missing required parameter: 'tools[0].function.name'.", param: "tools[0].function.name", code: "missing_required_parameter"},
			{name: "wrong path", path: "/v1/chat/completion", body: simBody(simUser), status: 404, typ: "invalid_request_error", msg: "Invalid URL (POST /v1/chat/completion)", param: "-", code: "-"},
		},
		true: {
			{name: "not JSON", body: `{"model":"m",`, status: 400, typ: "invalid_request_error", msg: "Failed to parse the request body as JSON: EOF while parsing a value at line 1 column 13"},
			{name: "no model", body: `{"messages":[` + simUser + `]}`, status: 400, typ: "invalid_request_error", msg: "Failed to deserialize the JSON body into the target type: missing field `model` at line 1 column 45"},
			{name: "no messages", body: `{"model":"m"}`, status: 400, typ: "invalid_request_error", msg: "Failed to deserialize the JSON body into the target type: missing field `messages` at line 1 column 13"},
			{name: "a type before a missing field", body: `{"messages":"hi"}`, status: 400, typ: "invalid_request_error", msg: `messages: invalid type: string "hi", expected a sequence`},
			{name: "no content", body: simBody(`{"role":"user"}`), status: 400, typ: "invalid_request_error", msg: "Failed to deserialize the JSON body into the target type: messages[0]: missing field `content` at line 1 column 40"},
			{name: "tool content as parts", body: simBody(simUser, simCall1("call_a"), `{"role":"tool","tool_call_id":"call_a","content":[{"type":"text","text":"ok"}]}`), status: 400, typ: "invalid_request_error", msg: "messages[2].content: invalid type: sequence, expected a string"},
			{name: "bad role", body: simBody(`{"role":"bogus","content":"hi"}`), status: 400, typ: "invalid_request_error", msg: "messages[0].role: unknown variant `bogus`, expected one of `system`, `user`, `assistant`, `tool`, `developer`"},
			{name: "tool without tool_call_id", body: simBody(simUser, simCall1("call_a"), `{"role":"tool","content":"ok"}`), status: 400, typ: "invalid_request_error", msg: "messages[2]: missing field `tool_call_id`"},
			{name: "tool without tool_calls", body: simBody(simUser, simTool("call_x")), status: 400, typ: "invalid_request_error", msg: "Messages with role 'tool' must be a response to a preceding message with 'tool_calls'"},
			{name: "tool answering another call", body: simBody(simUser, simCall1("call_a"), simTool("call_b")), status: 400, typ: "invalid_request_error", msg: "responding to each 'tool_call_id', The following tool_call_ids did not have response messages: call_b"},
			{name: "a second answer", body: simBody(simUser, simCall1("call_a"), simTool("call_a"), simTool("call_a")), status: 400, typ: "invalid_request_error", msg: "Messages with role 'tool' must be a response to a preceding message with 'tool_calls'"},
			{name: "unanswered call", body: simBody(simUser, simCall1("call_a", "call_b"), simTool("call_a"), simUser), status: 400, typ: "invalid_request_error", msg: "(insufficient tool messages following tool_calls message)"},
			{name: "unanswered call at the end", body: simBody(simUser, simCall1("call_a")), status: 400, typ: "invalid_request_error", msg: "(insufficient tool messages following tool_calls message)"},
			{name: "temperature above 2", body: `{"model":"m","messages":[` + simUser + `],"temperature":2.5}`, status: 400, typ: "invalid_request_error", msg: "Invalid temperature value, the valid range of temperature is [0, 2]"},
			{name: "temperature a string", body: `{"model":"m","messages":[` + simUser + `],"temperature":"hot"}`, status: 400, typ: "invalid_request_error", msg: `temperature: invalid type: string "hot", expected f32`},
			{name: "max_tokens above the cap", body: `{"model":"m","messages":[` + simUser + `],"max_tokens":400000}`, status: 400, typ: "invalid_request_error", msg: "Invalid max_tokens value, the valid range of max_tokens is [1, 393216]"},
			{name: "unknown effort", body: `{"model":"m","messages":[` + simUser + `],"reasoning_effort":"extreme"}`, status: 400, typ: "invalid_request_error", msg: "reasoning_effort: unknown variant `extreme`, expected one of `none`, `minimal`, `low`, `medium`, `high`, `xhigh`, `max`"},
			{name: "thinking type", body: `{"model":"m","messages":[` + simUser + `],"thinking":{"type":"on"}}`, status: 400, typ: "invalid_request_error", msg: "thinking.type: unknown variant `on`, expected `enabled` or `disabled`"},
			{name: "json_object without json", body: `{"model":"m","messages":[` + simUser + `],"response_format":{"type":"json_object"}}`, status: 400, typ: "invalid_request_error", msg: "Prompt must contain the word 'json' in some form to use 'response_format' of type 'json_object'."},
			{name: "no reasoning passed back", body: simBody(simUser, simCall1("call_a"), simTool("call_a")), status: 400, typ: "invalid_request_error", msg: "The `reasoning_content` in the thinking mode must be passed back to the API."},
			{name: "null reasoning passed back", body: simBody(simUser, `{"role":"assistant","content":null,"reasoning_content":null,"tool_calls":[{"id":"call_a","type":"function","function":{"name":"f","arguments":"{}"}}]}`, simTool("call_a")), status: 400, typ: "invalid_request_error", msg: "must be passed back to the API."},
		},
	}
	for _, p := range simDialects {
		for _, c := range cases[p.deepseek] {
			t.Run(simName(p)+"/"+c.name, func(t *testing.T) {
				path := c.path
				if path == "" {
					path = p.path()
				}
				in, e := p.CheckRequest("POST", path, http.Header{}, []byte(c.body))
				if e == nil {
					t.Fatalf("accepted: %+v", in)
				}
				if e.Status != c.status {
					t.Errorf("status %d, want %d", e.Status, c.status)
				}
				if e.Header.Get(p.requestIDHeader()) == "" {
					t.Errorf("no %s header", p.requestIDHeader())
				}
				ae := p.DecodeError(e.Status, e.Header, e.Body)
				if ae.Type != c.typ || !strings.Contains(ae.Message, c.msg) {
					t.Errorf("type %q message %q\nwant %q, message with %q", ae.Type, ae.Message, c.typ, c.msg)
				}
				var env struct {
					Error map[string]json.RawMessage `json:"error"`
				}
				if err := json.Unmarshal(e.Body, &env); err != nil || len(env.Error) != 4 {
					t.Fatalf("body %s is not {error:{message,type,param,code}}", e.Body)
				}
				param, code := string(env.Error["param"]), string(env.Error["code"])
				if p.deepseek {
					if param != "null" || code != `"invalid_request_error"` || bytes.Contains(e.Body, []byte("\n")) {
						t.Errorf("DeepSeek body %s", e.Body)
					}
					return
				}
				quoted := func(s string) string {
					if s == "-" {
						return "null"
					}
					return `"` + s + `"`
				}
				if param != quoted(c.param) || code != quoted(c.code) {
					t.Errorf("param %s code %s, want %s %s", param, code, quoted(c.param), quoted(c.code))
				}
				if !bytes.HasPrefix(e.Body, []byte("{\n    \"error\": {\n        \"message\": ")) {
					t.Errorf("OpenAI's error body is indented by four spaces: %s", e.Body)
				}
			})
		}
	}
}

// TestSimCheckRequestAccepts: requests that pass, and the facts read from
// them.
func TestSimCheckRequestAccepts(t *testing.T) {
	dsReasoned := `{"role":"assistant","content":null,"reasoning_content":"","tool_calls":[{"id":"call_a","type":"function","function":{"name":"get_order_line","arguments":"{}"}}]}`
	cases := []struct {
		p     protocol
		name  string
		body  string
		turns int
	}{
		{protocol{}, "a tool loop", simBody(simUser, simCall1("call_a", "call_b"), simTool("call_a"), simTool("call_b")), 1},
		{protocol{}, "a second answer", simBody(simUser, simCall1("call_a"), simTool("call_a"), simTool("call_a")), 1},
		{protocol{}, "assistant content absent beside tool_calls", simBody(simUser, `{"role":"assistant","tool_calls":[{"id":"call_a","type":"function","function":{"name":"f","arguments":"{}"}}]}`, simTool("call_a")), 1},
		{protocol{deepseek: true}, "empty reasoning passes", simBody(simUser, dsReasoned, simTool("call_a")), 1},
		{protocol{deepseek: true}, "thinking disabled", `{"model":"m","thinking":{"type":"disabled"},"messages":[` + simUser + `,` + simCall1("call_a") + `,` + simTool("call_a") + `]}`, 1},
		{protocol{deepseek: true}, "effort none", `{"model":"m","reasoning_effort":"none","messages":[` + simUser + `,` + simCall1("call_a") + `,` + simTool("call_a") + `]}`, 1},
		{protocol{deepseek: true}, "legacy non-thinking model", `{"model":"deepseek-chat","messages":[` + simUser + `,` + simCall1("call_a") + `,` + simTool("call_a") + `]}`, 1},
		{protocol{deepseek: true}, "ending on a user turn", simBody(simUser, simCall1("call_a"), simTool("call_a"), `{"role":"assistant","content":"ok"}`, simUser), 2},
		{protocol{deepseek: true}, "json mentioned", `{"model":"m","response_format":{"type":"json_object"},"messages":[{"role":"user","content":"answer in JSON"}]}`, 0},
		{protocol{deepseek: true}, "max_completion_tokens is not DeepSeek's", `{"model":"m","max_completion_tokens":"x","messages":[` + simUser + `]}`, 0},
	}
	for _, c := range cases {
		t.Run(simName(c.p)+"/"+c.name, func(t *testing.T) {
			in, e := c.p.CheckRequest("POST", c.p.path()+"?x=1", nil, []byte(c.body))
			if e != nil {
				t.Fatalf("%d %s", e.Status, e.Body)
			}
			if in.ModelTurns != c.turns {
				t.Errorf("model turns %d, want %d", in.ModelTurns, c.turns)
			}
		})
	}
	// Pretty-printed bodies read the same.
	for _, p := range simDialects {
		var v any
		// DeepSeek's thinking (off: the call needs no reasoning passed
		// back) is an argument OpenAI does not recognise.
		setting := `"thinking":{"type":"disabled"}`
		if !p.deepseek {
			setting = `"temperature":1`
		}
		_ = json.Unmarshal([]byte(`{"model":"m",`+setting+`,"messages":[`+simUser+`,`+simCall1("call_a")+`,`+simTool("call_a")+`]}`), &v)
		pretty, _ := json.MarshalIndent(v, "", "\t")
		if in, e := p.CheckRequest("POST", p.path(), nil, pretty); e != nil || in.ModelTurns != 1 || len(in.Results) != 1 || in.Results[0].Name != "get_order_line" {
			t.Errorf("%s: pretty body: %+v %v", simName(p), in, e)
		}
		// and serde's positions count lines.
		if !p.deepseek {
			continue
		}
		_, e := p.CheckRequest("POST", p.path(), nil, []byte("{\n  \"messages\": [\n    {\"role\": \"user\"}\n  ]\n}"))
		if e == nil || !strings.Contains(string(e.Body), "messages[0]: missing field `content` at line 3 column 20") {
			t.Errorf("serde position: %v", e)
		}
	}
	// DeepSeek's other paths.
	for _, path := range []string{"/v1/chat/completions", "/v1/deepseek/chat/completions"} {
		if _, e := (protocol{deepseek: true}).CheckRequest("POST", path, nil, []byte(simBody(simUser))); e != nil {
			t.Errorf("%s: %s", path, e.Body)
		}
	}
}

// TestSimCheckEncodedRefund: this package's own requests for refund turns
// 1..3 pass, with the history's turns, results, tools and limits.
func TestSimCheckEncodedRefund(t *testing.T) {
	type enc struct {
		name     string
		p        protocol
		req      func(turn int, stream bool) *adapters.Request
		provider string
		ids      [][]wantCall
	}
	for _, c := range []enc{
		{"openai", protocol{}, func(turn int, stream bool) *adapters.Request {
			return adapterstest.RefundRequest(turn, chatIDs, stream)
		}, adapters.ProviderOpenAI, [][]wantCall{chatTurn1, chatTurn2}},
		{"deepseek/thinking", protocol{deepseek: true}, dsRefundRequest, adapters.ProviderDeepSeek, [][]wantCall{dsTurn1, dsTurn2}},
		{"deepseek/no-thinking", protocol{deepseek: true}, func(turn int, stream bool) *adapters.Request {
			return adapterstest.RefundRequest(turn, dsIDs, stream)
		}, adapters.ProviderDeepSeek, [][]wantCall{dsTurn1, dsTurn2}},
	} {
		for turn := 1; turn <= 3; turn++ {
			for _, stream := range []bool{true, false} {
				t.Run(fmt.Sprintf("%s/turn%d/stream=%v", c.name, turn, stream), func(t *testing.T) {
					hr, err := c.p.Encode(c.req(turn, stream), c.provider)
					if err != nil {
						t.Fatal(err)
					}
					in, e := c.p.CheckRequest(hr.Method, hr.Path, nil, hr.Body)
					if e != nil {
						t.Fatalf("%d %s", e.Status, e.Body)
					}
					var results []string
					for _, calls := range c.ids[:turn-1] {
						for _, call := range calls {
							results = append(results, call.id+" "+call.name)
						}
					}
					var got []string
					for _, r := range in.Results {
						got = append(got, r.CallID+" "+r.Name)
						if r.Content == "" {
							t.Errorf("result %s has no content", r.CallID)
						}
					}
					if in.ModelTurns != turn-1 || !reflect.DeepEqual(got, results) {
						t.Errorf("model turns %d results %v, want %d %v", in.ModelTurns, got, turn-1, results)
					}
					if in.Model != "refund-model" || in.Stream != stream || in.IncludeUsage != stream || in.MaxOutputTokens != 1800 ||
						!reflect.DeepEqual(in.Tools, []string{"get_order_line", "get_refund_ledger", "get_refund_policy"}) {
						t.Errorf("inbound %+v", in)
					}
				})
			}
		}
	}
	// In thinking mode without the reasoning in history, DeepSeek refuses
	// the continuation of the tool loop.
	req := adapterstest.RefundRequest(2, dsIDs, true)
	req.Limits.Reasoning = "high"
	hr, err := NewDeepSeek().Encode(req, adapters.ProviderDeepSeek)
	if err != nil {
		t.Fatal(err)
	}
	// Our encoder passes back an empty reasoning_content for such turns,
	// which DeepSeek accepts…
	if _, e := (protocol{deepseek: true}).CheckRequest(hr.Method, hr.Path, nil, hr.Body); e != nil {
		t.Errorf("encoded thinking-mode turn refused: %s", e.Body)
	}
	// …and a client that drops it is refused.
	var body map[string]any
	_ = json.Unmarshal(hr.Body, &body)
	for _, m := range body["messages"].([]any) {
		delete(m.(map[string]any), "reasoning_content")
	}
	stripped, _ := json.Marshal(body)
	if _, e := (protocol{deepseek: true}).CheckRequest(hr.Method, hr.Path, nil, stripped); e == nil || !strings.Contains(string(e.Body), "reasoning_content") {
		t.Errorf("thinking without passback accepted: %v", e)
	}
}

// TestSimDeterministic: the same seed gives the same bytes; other seeds
// other ids.
func TestSimDeterministic(t *testing.T) {
	mt := simRefund(t)[0].turns[1]
	for _, p := range simDialects {
		t.Run(simName(p), func(t *testing.T) {
			o := adapters.ResponseOptions{Model: "refund-model", Seed: 42, IncludeUsage: true}
			if !reflect.DeepEqual(p.StreamEvents(mt, o), p.StreamEvents(mt, o)) || !bytes.Equal(p.Body(mt, o), p.Body(mt, o)) {
				t.Error("the same seed rendered different bytes")
			}
			o2 := o
			o2.Seed = 43
			if bytes.Equal(simSSE(p, p.StreamEvents(mt, o)), simSSE(p, p.StreamEvents(mt, o2))) {
				t.Error("two seeds rendered the same bytes")
			}
			ids := map[string]uint64{}
			for seed := uint64(0); seed < 2000; seed++ {
				o := adapters.ResponseOptions{Seed: seed}
				for _, id := range []string{p.ResponseID(o), p.callID(seed, 0), p.callID(seed, 1)} {
					if prev, dup := ids[id]; dup {
						t.Fatalf("id %s of seed %d repeats seed %d's", id, seed, prev)
					}
					ids[id] = seed
				}
				if !simUUID.MatchString(p.ResponseID(o)) && !simChatcmplID.MatchString(p.ResponseID(o)) {
					t.Fatalf("id %s", p.ResponseID(o))
				}
			}
			// The body carries the stream's ids.
			_, s1 := adapterstest.Decode(t, p, simSSE(p, p.StreamEvents(mt, o)))
			_, s2 := adapterstest.Decode(t, p, p.Body(mt, o))
			if s1.ResponseID != s2.ResponseID || s1.ToolCalls[1].CallID != s2.ToolCalls[1].CallID {
				t.Errorf("stream %s %s, body %s %s", s1.ResponseID, s1.ToolCalls[1].CallID, s2.ResponseID, s2.ToolCalls[1].CallID)
			}
		})
	}
}

// TestSimErrorsAndFaults: HTTP errors, the in-stream error, an unknown
// event and the cuts the server's faults make, as a decoder and the SDK
// see them.
func TestSimErrorsAndFaults(t *testing.T) {
	mt := simRefund(t)[0].turns[1]
	for _, p := range simDialects {
		t.Run(simName(p), func(t *testing.T) {
			for _, c := range []struct {
				kind   string
				status int
				typ    string
			}{
				{"rate_limit", 429, map[bool]string{false: "requests", true: "rate_limit_error"}[p.deepseek]},
				{"server_error", 500, "server_error"},
				{"api_error", 500, "server_error"},
				{"invalid_request_error", 400, "invalid_request_error"},
				{"request_too_large", 413, "invalid_request_error"},
			} {
				e := p.ErrorResponse(0, c.kind, "boom")
				ae := p.DecodeError(e.Status, e.Header, e.Body)
				if e.Status != c.status || ae.Type != c.typ || ae.Message != "boom" || e.Header.Get(p.requestIDHeader()) == "" {
					t.Errorf("%s: %d %s %q", c.kind, e.Status, ae.Type, ae.Message)
				}
			}
			if e := p.ErrorResponse(529, "overloaded_error", "Overloaded"); e.Status != 529 {
				t.Errorf("the caller's status is kept: %d", e.Status)
			}
			if h := p.ResponseHeaders(true); h.Get(p.requestIDHeader()) == "" || h.Get(p.requestIDHeader()) == p.ResponseHeaders(true).Get(p.requestIDHeader()) {
				t.Errorf("request ids: %v", h)
			}

			o := adapters.ResponseOptions{Model: "refund-model", Seed: 9, IncludeUsage: true}
			events := p.StreamEvents(mt, o)
			e := simExpected(p, mt, o)

			// error-after-200: half the stream, then the error payload.
			half := append(events[:len(events)/2:len(events)/2], p.ErrorEvent("overloaded_error", "Overloaded")...)
			_, s := adapterstest.Decode(t, p, simSSE(p, half))
			if s.Terminal != adapters.StatusFailed || s.Error == nil || s.Error.Message != "Overloaded" {
				t.Errorf("error event: %s %+v", s.Terminal, s.Error)
			}
			if _, _, err := sdkStream(t, simSSE(p, half)); err == nil || !strings.Contains(err.Error(), "Overloaded") {
				t.Errorf("sdk: %v", err)
			}

			// unknown-event: ignored by both.
			withUnknown := append([]adapters.WireEvent{events[0], p.UnknownEvent()}, events[1:]...)
			evs, s := adapterstest.Decode(t, p, simSSE(p, withUnknown))
			unknown := 0
			for _, ev := range evs {
				if ev.Type == adapters.EvUnknown {
					unknown++
				}
			}
			if unknown != 1 || s.StopReason != e.stop || len(s.ToolCalls) != len(e.calls) {
				t.Errorf("unknown event: %d unknown, %s, %d calls", unknown, s.StopReason, len(s.ToolCalls))
			}
			acc, _, err := sdkStream(t, simSSE(p, withUnknown))
			if err != nil || len(acc.Choices) != 1 || len(acc.Choices[0].Message.ToolCalls) != len(e.calls) {
				t.Errorf("sdk with an unknown event: %v", err)
			}

			// disconnect-mid-args: cut before the middle argument fragment.
			var args []int
			for i, ev := range events {
				if ev.Phase == adapters.PhaseArgs {
					args = append(args, i)
				}
			}
			_, s = adapterstest.Decode(t, p, simSSE(p, events[:args[len(args)/2]]))
			if s.Terminal == adapters.StatusCompleted || len(s.IncompleteToolCalls) == 0 {
				t.Errorf("cut mid-args: %s, incomplete %+v", s.Terminal, s.IncompleteToolCalls)
			}

			// no-terminal: without the finish chunk and [DONE] the stream
			// has no stop at all.
			var kept []adapters.WireEvent
			for _, ev := range events {
				if ev.Phase != adapters.PhaseTerminal {
					kept = append(kept, ev)
				}
			}
			_, s = adapterstest.Decode(t, p, simSSE(p, kept))
			if s.Terminal == adapters.StatusCompleted || s.StopReason == e.stop {
				t.Errorf("no terminal: %s %s", s.Terminal, s.StopReason)
			}
		})
	}
}
