//go:build sdkbench

package bench

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"
	anthropicopt "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	openaiopt "github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/responses"
	"google.golang.org/genai"
	gaiinteractions "google.golang.org/genai/interactions/models/interactions"
	"google.golang.org/genai/interactions/models/operations"

	"github.com/modelwire/modelwire/adapters/registry"
)

// The official SDKs are the second reference: each reads the same bytes
// the way its users read a stream, through its own client and SSE decoder
// over an in-memory transport, accumulating the response as its docs
// show. They are linked in only with -tags sdkbench: in every build they
// would double the binary (44 → 93 MB) and add their package
// initialisation to every command's start-up, for one command's sake.

// sdkRef is one SDK reference; run is nil where none is measured.
type sdkRef struct {
	name string
	run  func(data []byte) error
	why  string // when run is nil
}

// sdkRefs are the SDK references by the official Go SDK call a
// descriptor's SDK.Go names: a protocol whose descriptor names one of
// these is measured against it.
var sdkRefs = map[string]sdkRef{
	"openai-go Responses.NewStreaming":        {name: "openai-go", run: openaiResponses},
	"openai-go Chat.Completions.NewStreaming": {name: "openai-go", run: openaiChat},
	"anthropic-sdk-go Messages.NewStreaming":  {name: "anthropic-sdk-go", run: anthropicMessages},
	"genai Models.GenerateContentStream":      {name: "genai", run: geminiStream},
	"genai Interactions":                      {name: "genai interactions", run: geminiInteractions},
}

func sdkFor(protocol string) sdkRef {
	if d, ok := registry.Describe(protocol); ok {
		if ref, ok := sdkRefs[d.SDK.Go]; ok {
			return ref
		}
	}
	return sdkRef{why: "no official SDK for " + protocol}
}

// memTransport answers every request with the same body.
type memTransport struct{ body []byte }

func (m memTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}},
		Body: io.NopCloser(bytes.NewReader(m.body)), Request: r}, nil
}

var errShort = errors.New("the SDK did not read the stream to its end")

func openaiResponses(data []byte) error {
	c := openai.NewClient(openaiopt.WithAPIKey("sk-bench"), openaiopt.WithMaxRetries(0),
		openaiopt.WithHTTPClient(&http.Client{Transport: memTransport{data}}))
	stream := c.Responses.NewStreaming(context.Background(), responses.ResponseNewParams{
		Model: "gpt-5-mini", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("hi")}})
	var text strings.Builder
	args := map[string]*strings.Builder{}
	var final *responses.Response
	for stream.Next() {
		switch ev := stream.Current().AsAny().(type) {
		case responses.ResponseTextDeltaEvent:
			text.WriteString(ev.Delta)
		case responses.ResponseFunctionCallArgumentsDeltaEvent:
			a := args[ev.ItemID]
			if a == nil {
				a = &strings.Builder{}
				args[ev.ItemID] = a
			}
			a.WriteString(ev.Delta)
		case responses.ResponseCompletedEvent:
			final = &ev.Response
		}
	}
	if err := stream.Err(); err != nil {
		return err
	}
	if final == nil || len(args) == 0 {
		return errShort
	}
	return nil
}

func openaiChat(data []byte) error {
	res := &http.Response{Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: io.NopCloser(bytes.NewReader(data))}
	stream := ssestream.NewStream[openai.ChatCompletionChunk](ssestream.NewDecoder(res), nil)
	var acc openai.ChatCompletionAccumulator
	for stream.Next() {
		if !acc.AddChunk(stream.Current()) {
			return errors.New("the accumulator refused a chunk")
		}
	}
	if err := stream.Err(); err != nil {
		return err
	}
	if len(acc.Choices) != 1 || len(acc.Choices[0].Message.ToolCalls) == 0 {
		return errShort
	}
	return nil
}

func anthropicMessages(data []byte) error {
	c := anthropic.NewClient(anthropicopt.WithAPIKey("k"), anthropicopt.WithBaseURL("http://bench.invalid"),
		anthropicopt.WithMaxRetries(0), anthropicopt.WithHTTPClient(&http.Client{Transport: memTransport{data}}))
	stream := c.Messages.NewStreaming(context.Background(), anthropic.MessageNewParams{
		Model: "claude-sonnet-4-5", MaxTokens: 1024,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))}})
	msg := anthropic.Message{}
	for stream.Next() {
		if err := msg.Accumulate(stream.Current()); err != nil {
			return err
		}
	}
	if err := stream.Err(); err != nil {
		return err
	}
	if msg.StopReason != "tool_use" {
		return errShort
	}
	return nil
}

func geminiStream(data []byte) error {
	ctx := context.Background()
	c, err := genai.NewClient(ctx, &genai.ClientConfig{APIKey: "x", Backend: genai.BackendGeminiAPI,
		HTTPClient: &http.Client{Transport: memTransport{data}}, HTTPOptions: genai.HTTPOptions{BaseURL: "http://mem"}})
	if err != nil {
		return err
	}
	var text strings.Builder
	var calls []*genai.FunctionCall
	var finish genai.FinishReason
	cfg := &genai.GenerateContentConfig{AutomaticContinuation: genai.Ptr(false)}
	for r, err := range c.Models.GenerateContentStream(ctx, "gemini-2.5-flash", genai.Text("hi"), cfg) {
		if err != nil {
			return err
		}
		for _, cand := range r.Candidates[:min(1, len(r.Candidates))] {
			if cand.FinishReason != "" {
				finish = cand.FinishReason
			}
			if cand.Content == nil {
				continue
			}
			for _, p := range cand.Content.Parts {
				if p.FunctionCall != nil {
					calls = append(calls, p.FunctionCall)
				} else {
					text.WriteString(p.Text)
				}
			}
		}
	}
	if finish == "" || len(calls) == 0 {
		return errShort
	}
	return nil
}

// geminiInteractions is go-genai's Interactions client, as its streaming
// example reads a stream: text, thought summaries and argument deltas
// accumulated, to interaction.completed.
func geminiInteractions(data []byte) error {
	ctx := context.Background()
	c, err := genai.NewClient(ctx, &genai.ClientConfig{APIKey: "x", Backend: genai.BackendGeminiAPI,
		HTTPClient: &http.Client{Transport: memTransport{data}}, HTTPOptions: genai.HTTPOptions{BaseURL: "http://mem"}})
	if err != nil {
		return err
	}
	stream := true
	model := gaiinteractions.Model("gemini-flash-latest")
	input := gaiinteractions.NewInteractionsInput("hi")
	res, err := c.Interactions.Create(ctx, operations.CreateInteractionRequest{
		Body: operations.NewCreateInteractionRequestBody(gaiinteractions.CreateModelInteraction{Model: model, Input: &input, Stream: &stream})})
	if err != nil {
		return err
	}
	s := res.InteractionSSEStreamEvent
	if s == nil {
		return errors.New("the response was not a stream")
	}
	defer s.Close()
	var text, thoughts strings.Builder
	args := map[int]*strings.Builder{}
	completed := false
	for s.Next() {
		ev := s.Value()
		if ev == nil {
			continue
		}
		if ev.GetDataInteractionCompleted() != nil {
			completed = true
		}
		d := ev.GetDataStepDelta()
		if d == nil {
			continue
		}
		if t := d.GetDeltaText(); t != nil {
			text.WriteString(t.GetText())
		}
		if t := d.GetDeltaThoughtSummary(); t != nil {
			if c := t.GetContentText(); c != nil {
				thoughts.WriteString(c.GetText())
			}
		}
		if a := d.GetDeltaArgumentsDelta(); a != nil && a.GetArguments() != nil {
			b := args[d.GetIndex()]
			if b == nil {
				b = &strings.Builder{}
				args[d.GetIndex()] = b
			}
			b.WriteString(*a.GetArguments())
		}
	}
	if err := s.Err(); err != nil {
		return err
	}
	if !completed || len(args) == 0 || text.Len() == 0 {
		return errShort
	}
	return nil
}
