package pricing

import (
	"math"
	"strings"
	"testing"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/openairesponses"
	"github.com/modelwire/modelwire/adapters/registry"
)

// Each provider's usage object, in the shape its documentation gives,
// decoded by the protocol's own decoder and priced: the total is the sum
// of the buckets worked out by hand from the provider's field meanings,
// so a breakdown counted on top of its total (cached reads on top of the
// input, reasoning on top of the output) shows as a wrong sum.
func TestEachProvidersUsagePricesToTheDocumentedSum(t *testing.T) {
	for _, c := range []struct {
		name, protocol, model, body string
		want                        float64 // USD, by hand
		buckets                     Buckets
	}{
		{
			// platform.openai.com/docs/api-reference/responses/object:
			// input_tokens includes cached_tokens; output_tokens includes
			// reasoning_tokens.
			name: "OpenAI Responses", protocol: adapters.OpenAIResponses, model: "gpt-5-mini",
			body: `{"id":"resp_1","object":"response","status":"completed","model":"gpt-5-mini","output":[],
				"usage":{"input_tokens":328,"input_tokens_details":{"cached_tokens":128},"output_tokens":52,
				"output_tokens_details":{"reasoning_tokens":20},"total_tokens":380}}`,
			// 200 uncached × 0.25 + 128 cached × 0.025 + 32 output × 2.00 + 20 reasoning × 2.00, per million
			want:    (200*0.25 + 128*0.025 + 32*2.00 + 20*2.00) / 1e6,
			buckets: Buckets{Input: 200 * 0.25 / 1e6, CachedInput: 128 * 0.025 / 1e6, Output: 32 * 2.00 / 1e6, Reasoning: 20 * 2.00 / 1e6},
		},
		{
			// platform.openai.com/docs/guides/prompt-caching: prompt_tokens
			// includes prompt_tokens_details.cached_tokens.
			name: "OpenAI Chat Completions", protocol: adapters.OpenAIChat, model: "gpt-4.1-mini",
			body: `{"id":"chatcmpl-1","object":"chat.completion","model":"gpt-4.1-mini","choices":[{"index":0,
				"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],
				"usage":{"prompt_tokens":2006,"completion_tokens":300,"total_tokens":2306,
				"prompt_tokens_details":{"cached_tokens":1920,"audio_tokens":0},
				"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0}}}`,
			want:    (86*0.40 + 1920*0.10 + 300*1.60) / 1e6,
			buckets: Buckets{Input: 86 * 0.40 / 1e6, CachedInput: 1920 * 0.10 / 1e6, Output: 300 * 1.60 / 1e6},
		},
		{
			// docs.claude.com prompt caching: input_tokens excludes the
			// cache reads and writes; cache_creation splits the writes by
			// TTL (5 minutes at 1.25× input, 1 hour at 2×); web searches
			// are USD 10 per 1,000.
			name: "Anthropic Messages", protocol: adapters.AnthropicMessages, model: "claude-sonnet-4-5",
			body: `{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"ok"}],
				"stop_reason":"end_turn","stop_sequence":null,
				"usage":{"input_tokens":50,"cache_creation_input_tokens":3000,"cache_read_input_tokens":10000,
				"cache_creation":{"ephemeral_5m_input_tokens":1000,"ephemeral_1h_input_tokens":2000},
				"output_tokens":400,"server_tool_use":{"web_search_requests":2}}}`,
			want: (50*3.00+10000*0.30+1000*3.75+2000*6.00+400*15.00)/1e6 + 2*0.01,
			buckets: Buckets{Input: 50 * 3.00 / 1e6, CachedInput: 10000 * 0.30 / 1e6, CacheWrite: 1000 * 3.75 / 1e6,
				CacheWrite1h: 2000 * 6.00 / 1e6, Output: 400 * 15.00 / 1e6, Tools: 0.02},
		},
		{
			// ai.google.dev/api/generate-content#UsageMetadata:
			// promptTokenCount includes cachedContentTokenCount;
			// candidatesTokenCount does not include thoughtsTokenCount,
			// which is billed as output.
			name: "Gemini", protocol: adapters.Gemini, model: "gemini-2.5-flash",
			body: `{"candidates":[{"content":{"role":"model","parts":[{"text":"ok"}]},"finishReason":"STOP","index":0}],
				"usageMetadata":{"promptTokenCount":1200,"cachedContentTokenCount":1000,"candidatesTokenCount":80,
				"thoughtsTokenCount":300,"totalTokenCount":1580},"modelVersion":"gemini-2.5-flash","responseId":"r1"}`,
			want:    (200*0.30 + 1000*0.03 + 80*2.50 + 300*2.50) / 1e6,
			buckets: Buckets{Input: 200 * 0.30 / 1e6, CachedInput: 1000 * 0.03 / 1e6, Output: 80 * 2.50 / 1e6, Reasoning: 300 * 2.50 / 1e6},
		},
		{
			// api-docs.deepseek.com/api/create-chat-completion:
			// prompt_tokens = prompt_cache_hit_tokens +
			// prompt_cache_miss_tokens; completion_tokens includes
			// reasoning_tokens.
			name: "DeepSeek", protocol: adapters.DeepSeekChat, model: "deepseek-reasoner",
			body: `{"id":"ds-1","object":"chat.completion","model":"deepseek-reasoner","choices":[{"index":0,
				"message":{"role":"assistant","content":"ok","reasoning_content":"think"},"finish_reason":"stop"}],
				"usage":{"prompt_tokens":1500,"completion_tokens":700,"total_tokens":2200,"prompt_cache_hit_tokens":1000,
				"prompt_cache_miss_tokens":500,"completion_tokens_details":{"reasoning_tokens":600}}}`,
			want:    (500*0.55 + 1000*0.14 + 100*2.19 + 600*2.19) / 1e6,
			buckets: Buckets{Input: 500 * 0.55 / 1e6, CachedInput: 1000 * 0.14 / 1e6, Output: 100 * 2.19 / 1e6, Reasoning: 600 * 2.19 / 1e6},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := registry.Lookup(c.protocol)
			if err != nil {
				t.Fatal(err)
			}
			st := adapters.NewStream(p)
			st.FeedBody([]byte(c.body))
			u := st.Summary().Usage
			if u == nil {
				t.Fatalf("the decoder read no usage from %s", c.body)
			}
			got := PriceUsage(c.model, u)
			if !got.Priced || !near(got.Total, c.want) {
				t.Fatalf("total %.8f (%s), want %.8f by hand", got.Total, strings.Join(got.Lines(), " · "), c.want)
			}
			for _, b := range []struct {
				name      string
				got, want float64
			}{{"input", got.Input, c.buckets.Input}, {"cached read", got.CachedInput, c.buckets.CachedInput},
				{"cache write 5m", got.CacheWrite, c.buckets.CacheWrite}, {"cache write 1h", got.CacheWrite1h, c.buckets.CacheWrite1h},
				{"output", got.Output, c.buckets.Output}, {"reasoning", got.Reasoning, c.buckets.Reasoning}, {"tools", got.Tools, c.buckets.Tools}} {
				if !near(b.got, b.want) {
					t.Errorf("%s %.8f, want %.8f", b.name, b.got, b.want)
				}
			}
		})
	}
}

// A session's cost counts every attempt: a 429 that was retried costs
// nothing (it reported no tokens), a stream cut before its usage is "to
// reconcile" (not zero, and the total a lower bound), and the attempt
// that answered is priced; the session's buckets add up to its total.
func TestPriceAttemptsCountsFailedAndCutAttempts(t *testing.T) {
	u := &adapters.Usage{InputTokens: adapters.Int(1000), CacheReadTokens: adapters.Int(400), OutputTokens: adapters.Int(200), ReasoningTokens: adapters.Int(50)}
	sc := PriceAttempts("refund-model", []Attempt{
		{Status: 429},
		{Status: 200, Model: "refund-model"}, // cut: no usage
		{Status: 200, Model: "refund-model", Usage: u},
		{Status: 500, Usage: u}, // an error that reported usage is billed all the same
	})
	if len(sc.Attempts) != 4 {
		t.Fatalf("%d attempts priced", len(sc.Attempts))
	}
	if a := sc.Attempts[0]; !a.Priced || a.Total != 0 || a.ToReconcile {
		t.Errorf("the 429: %+v", a)
	}
	if a := sc.Attempts[1]; a.Priced || !a.ToReconcile || !strings.Contains(a.Why, "to reconcile") {
		t.Errorf("the cut stream: %+v", a)
	}
	one := (600*1.00 + 400*0.10 + 150*4.00 + 50*4.00) / 1e6
	if !near(sc.Attempts[2].Total, one) || !near(sc.Total, 2*one) {
		t.Errorf("attempt %.8f, session %.8f; want %.8f and %.8f", sc.Attempts[2].Total, sc.Total, one, 2*one)
	}
	if sc.ToReconcile != 1 || sc.Complete {
		t.Errorf("to reconcile %d, complete %v; want 1, false", sc.ToReconcile, sc.Complete)
	}
	b := sc.Buckets
	if sum := b.Input + b.CachedInput + b.CacheWrite + b.CacheWrite1h + b.Output + b.Reasoning + b.Tools; !near(sum, sc.Total) || !near(b.Total, sc.Total) {
		t.Errorf("buckets sum to %.8f, total %.8f", sum, sc.Total)
	}
	if s := sc.String(); !strings.Contains(s, "to reconcile") || !strings.Contains(s, "cached read") {
		t.Errorf("the one-line form hides the reconcile or the buckets: %s", s)
	}
}

// A turn that ended in an error answer reported no tokens: priced at
// zero, not "to reconcile"; a cut turn is to reconcile.
func TestPriceSessionErrorAndCutTurns(t *testing.T) {
	sc := PriceSession("refund-model", []adapters.Summary{
		{Error: &adapters.APIError{Type: "rate_limit_error"}},
		{Model: "refund-model"},
	})
	if !sc.Turns[0].Priced || sc.Turns[0].ToReconcile || !sc.Turns[1].ToReconcile || sc.ToReconcile != 1 {
		t.Fatalf("turns %+v", sc.Turns)
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

// A Responses answer's billable web searches come from its tool_usage;
// priced per call where the table has a price, else the cost says it is
// a lower bound and why.
func TestResponsesWebSearchesCounted(t *testing.T) {
	body := `{"id":"resp_1","object":"response","status":"completed","model":"gpt-4.1","output":[],
		"usage":{"input_tokens":1000,"output_tokens":100,"input_tokens_details":{"cached_tokens":0},"output_tokens_details":{"reasoning_tokens":0}},
		"tool_usage":{"image_gen":{"input_tokens":0,"output_tokens":0,"total_tokens":0},"web_search":{"num_requests":3}}}`
	var u *adapters.Usage
	for _, ev := range openairesponses.New().DecodeBody([]byte(body)) {
		if ev.Type == adapters.EvUsage {
			u = ev.Usage
		}
	}
	if u == nil || u.WebSearchCalls == nil || *u.WebSearchCalls != 3 {
		t.Fatalf("usage %+v: want 3 web searches", u)
	}
	c := PriceUsage("gpt-4.1", u)
	if !c.Priced || !c.LowerBound || !strings.Contains(c.Why, "3 web searches not priced") {
		t.Errorf("gpt-4.1 with searches and no per-call price: %+v", c)
	}
	sc := PriceAttempts("gpt-4.1", []Attempt{{Model: "gpt-4.1", Usage: u, Status: 200}})
	if sc.Complete {
		t.Error("a session whose searches are unpriced is complete")
	}
	if c := PriceUsage("claude-sonnet-4-5", u); c.LowerBound || c.Tools != 0.03 {
		t.Errorf("a model with a per-call price: tools %v, lower bound %v", c.Tools, c.LowerBound)
	}
}
