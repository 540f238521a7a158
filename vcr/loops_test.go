package vcr_test

// The refund case's tool loop as an application writes it with each
// official Go SDK, handed an *http.Client: the recorder's.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"
	"google.golang.org/genai"

	"github.com/modelwire/modelwire/adapters/adapterstest"
	"github.com/modelwire/modelwire/samples"
	"github.com/modelwire/modelwire/session"
	"github.com/modelwire/modelwire/sim"
)

// sdkKey is the key the applications send: it must never reach a cassette.
const sdkKey = "sk-vcr-test-key-0123456789abcdef"

// app is one application run: the prompt it sends and how it answers
// tool calls (n counts the calls, from 1).
type app struct {
	sc     *session.Scenario
	system string
	task   string
	result func(n int, name string, args []byte) string
}

func refundApp(t testing.TB) *app {
	t.Helper()
	sc, err := samples.Lookup("refund")
	if err != nil {
		t.Fatal(err)
	}
	a := &app{sc: sc}
	a.system, a.task = adapterstest.SDKPrompt(sc.Sources)
	a.result = func(_ int, name string, args []byte) string {
		out, _ := sc.RunTool(context.Background(), name, args)
		return out
	}
	return a
}

// loop runs the application against base with client hc and returns
// what the SDK handed it at each turn, as JSON.
type loop func(ctx context.Context, a *app, base string, hc *http.Client, stream bool) ([]string, error)

const maxTurns = 8

func schemaMap(raw json.RawMessage) map[string]any {
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	return m
}

func chatLoop(ctx context.Context, a *app, base string, hc *http.Client, stream bool) ([]string, error) {
	c := openai.NewClient(option.WithBaseURL(base+"/v1/"), option.WithAPIKey(sdkKey), option.WithMaxRetries(0), option.WithHTTPClient(hc))
	params := openai.ChatCompletionNewParams{
		Model:    "refund-model",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage(a.system), openai.UserMessage(a.task)},
		ResponseFormat: openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
			JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: a.sc.Output.Name, Schema: schemaMap(a.sc.Output.Schema), Strict: openai.Bool(true)},
		}},
	}
	for _, tl := range a.sc.Tools {
		params.Tools = append(params.Tools, openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name: tl.Name, Description: openai.String(tl.Description), Parameters: schemaMap(tl.Parameters), Strict: openai.Bool(true),
		}))
	}
	if stream {
		params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	}
	var out []string
	calls := 0
	for range maxTurns {
		var cc openai.ChatCompletion
		if stream {
			s := c.Chat.Completions.NewStreaming(ctx, params)
			var acc openai.ChatCompletionAccumulator
			for s.Next() {
				acc.AddChunk(s.Current())
			}
			if err := s.Err(); err != nil {
				return out, err
			}
			cc = acc.ChatCompletion
		} else {
			p, err := c.Chat.Completions.New(ctx, params)
			if err != nil {
				return out, err
			}
			cc = *p
		}
		j, _ := json.Marshal(cc.Choices)
		out = append(out, string(j))
		msg := cc.Choices[0].Message
		if cc.Choices[0].FinishReason != "tool_calls" {
			return out, nil
		}
		params.Messages = append(params.Messages, msg.ToParam())
		for _, tc := range msg.ToolCalls {
			calls++
			params.Messages = append(params.Messages, openai.ToolMessage(a.result(calls, tc.Function.Name, []byte(tc.Function.Arguments)), tc.ID))
		}
	}
	return out, errors.New("the loop did not end")
}

func anthropicLoop(ctx context.Context, a *app, base string, hc *http.Client, stream bool) ([]string, error) {
	c := anthropic.NewClient(aoption.WithBaseURL(base), aoption.WithAPIKey(sdkKey), aoption.WithMaxRetries(0), aoption.WithHTTPClient(hc))
	params := anthropic.MessageNewParams{
		Model:     "refund-model",
		MaxTokens: 2048,
		System:    []anthropic.TextBlockParam{{Text: a.system}},
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(a.task))},
	}
	for _, tl := range a.sc.Tools {
		s := schemaMap(tl.Parameters)
		var req []string
		for _, r := range s["required"].([]any) {
			req = append(req, fmt.Sprint(r))
		}
		tp := anthropic.ToolParam{Name: tl.Name, Description: anthropic.String(tl.Description),
			InputSchema: anthropic.ToolInputSchemaParam{Properties: s["properties"], Required: req}}
		params.Tools = append(params.Tools, anthropic.ToolUnionParam{OfTool: &tp})
	}
	var out []string
	calls := 0
	for range maxTurns {
		var msg anthropic.Message
		if stream {
			s := c.Messages.NewStreaming(ctx, params)
			for s.Next() {
				if err := msg.Accumulate(s.Current()); err != nil {
					return out, err
				}
			}
			if err := s.Err(); err != nil {
				return out, err
			}
		} else {
			m, err := c.Messages.New(ctx, params)
			if err != nil {
				return out, err
			}
			msg = *m
		}
		j, _ := json.Marshal(msg.Content)
		out = append(out, string(j))
		params.Messages = append(params.Messages, msg.ToParam())
		var results []anthropic.ContentBlockParamUnion
		for _, b := range msg.Content {
			if b.Type == "tool_use" {
				calls++
				results = append(results, anthropic.NewToolResultBlock(b.ID, a.result(calls, b.Name, b.Input), false))
			}
		}
		if len(results) == 0 {
			return out, nil
		}
		params.Messages = append(params.Messages, anthropic.NewUserMessage(results...))
	}
	return out, errors.New("the loop did not end")
}

func geminiLoop(ctx context.Context, a *app, base string, hc *http.Client, stream bool) ([]string, error) {
	c, err := genai.NewClient(ctx, &genai.ClientConfig{APIKey: sdkKey, Backend: genai.BackendGeminiAPI, HTTPClient: hc,
		HTTPOptions: genai.HTTPOptions{BaseURL: base}})
	if err != nil {
		return nil, err
	}
	var decls []*genai.FunctionDeclaration
	for _, tl := range a.sc.Tools {
		decls = append(decls, &genai.FunctionDeclaration{Name: tl.Name, Description: tl.Description, ParametersJsonSchema: schemaMap(tl.Parameters)})
	}
	chat, err := c.Chats.Create(ctx, "refund-model", &genai.GenerateContentConfig{
		AutomaticContinuation: genai.Ptr(false),
		SystemInstruction:     genai.NewContentFromText(a.system, genai.RoleUser),
		Tools:                 []*genai.Tool{{FunctionDeclarations: decls}},
		ResponseMIMEType:      "application/json",
		ResponseJsonSchema:    schemaMap(a.sc.Output.Schema),
	}, nil)
	if err != nil {
		return nil, err
	}
	parts := []*genai.Part{genai.NewPartFromText(a.task)}
	var out []string
	calls := 0
	for range maxTurns {
		var rs []*genai.GenerateContentResponse
		if stream {
			for r, err := range chat.SendStream(ctx, parts...) {
				if err != nil {
					return out, err
				}
				rs = append(rs, r)
			}
		} else {
			r, err := chat.Send(ctx, parts...)
			if err != nil {
				return out, err
			}
			rs = append(rs, r)
		}
		var view []any
		parts = nil
		for _, r := range rs {
			view = append(view, map[string]any{"candidates": r.Candidates, "usage": r.UsageMetadata, "id": r.ResponseID})
			for _, cand := range r.Candidates {
				if cand.Content == nil {
					continue
				}
				for _, part := range cand.Content.Parts {
					if fc := part.FunctionCall; fc != nil {
						calls++
						args, _ := json.Marshal(fc.Args)
						var res map[string]any
						_ = json.Unmarshal([]byte(a.result(calls, fc.Name, args)), &res)
						parts = append(parts, genai.NewPartFromFunctionResponse(fc.Name, map[string]any{"output": res}))
					}
				}
			}
		}
		j, _ := json.Marshal(view)
		out = append(out, string(j))
		if len(parts) == 0 {
			return out, nil
		}
	}
	return out, errors.New("the loop did not end")
}

// startSim serves the refund scenario on a loopback port for the test's
// life: the provider in these tests.
func startSim(t testing.TB) string {
	t.Helper()
	sc, err := samples.Lookup("refund")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	base, err := sim.New(sim.Options{Scenario: sc}).Start(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return base
}

// counting is the upstream transport: it counts what reaches the provider.
type counting struct{ n atomic.Int64 }

func (c *counting) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return http.DefaultTransport.RoundTrip(r)
}

// offline is an upstream that must never be asked.
type offline struct{ t testing.TB }

func (o offline) RoundTrip(r *http.Request) (*http.Response, error) {
	o.t.Errorf("the provider was asked in replay: %s %s", r.Method, r.URL)
	return nil, errors.New("offline")
}

// fakeTB stands in for *testing.T where the test is the recorder's
// failure itself.
type fakeTB struct {
	testing.TB // never called: the methods below are all the recorder uses
	name       string
	mu         sync.Mutex
	errs       []string
	cleanups   []func()
}

func (f *fakeTB) Helper()      {}
func (f *fakeTB) Name() string { return f.name }
func (f *fakeTB) Errorf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errs = append(f.errs, fmt.Sprintf(format, args...))
}
func (f *fakeTB) Fatalf(format string, args ...any) { f.Errorf(format, args...) }
func (f *fakeTB) Cleanup(fn func())                 { f.cleanups = append(f.cleanups, fn) }
func (f *fakeTB) finish() {
	for i := len(f.cleanups) - 1; i >= 0; i-- {
		f.cleanups[i]()
	}
}
