package proxy

// The official Go SDKs drive the refund loop through the proxy (in front
// of an in-process simulator, as `modelwire proxy --upstream sim` runs),
// streaming and not, for every protocol — Chat, DeepSeek, Responses in
// both history modes, Anthropic, Gemini, Gemini Interactions chained by
// previous_interaction_id — and once straight against a
// simulator of their own. What each SDK hands the application must be
// identical both ways, and so must every response byte it read; and the
// store must hold the whole loop as one session with one turn per
// request, every raw event the simulator sent and every canonical event
// they decode to, and each exchange judged.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"testing"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"
	"google.golang.org/genai"
	gi "google.golang.org/genai/interactions/models/interactions"
	"google.golang.org/genai/interactions/models/operations"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/session"
	"github.com/modelwire/modelwire/store"
	"github.com/modelwire/modelwire/validate"
)

// sdkKey is the application's key in these tests.
const sdkKey = "sk-proxy-test-key-0123456789"

// sdkRun runs one whole loop against base with the SDK's HTTP client hc
// and returns what the SDK handed over at each turn, as JSON.
type sdkRun func(ctx context.Context, base string, hc *http.Client) ([]string, error)

const maxTurns = 8

func schemaMap(t testing.TB, raw json.RawMessage) map[string]any {
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func chatRun(t testing.TB, rc refundCase, stream, deepseek bool) sdkRun {
	return func(ctx context.Context, base string, hc *http.Client) ([]string, error) {
		opts := []option.RequestOption{option.WithBaseURL(base + "/v1/"), option.WithAPIKey(sdkKey), option.WithMaxRetries(0), option.WithHTTPClient(hc)}
		if deepseek {
			// DeepSeek's base URL has no /v1; thinking off, since the SDK
			// does not send reasoning_content back.
			opts = append(opts, option.WithBaseURL(base+"/"), option.WithJSONSet("thinking", map[string]string{"type": "disabled"}))
		}
		c := openai.NewClient(opts...)
		params := openai.ChatCompletionNewParams{
			Model:    "refund-model",
			Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage(rc.system), openai.UserMessage(rc.task)},
		}
		for _, tl := range rc.sc.Tools {
			params.Tools = append(params.Tools, openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
				Name: tl.Name, Description: openai.String(tl.Description), Parameters: schemaMap(t, tl.Parameters), Strict: openai.Bool(!deepseek),
			}))
		}
		if !deepseek {
			params.ResponseFormat = openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
				JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: rc.sc.Output.Name, Schema: schemaMap(t, rc.sc.Output.Schema), Strict: openai.Bool(true)},
			}}
		}
		if stream {
			params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
		}
		var out []string
		for range maxTurns {
			var cc openai.ChatCompletion
			if stream {
				s := c.Chat.Completions.NewStreaming(ctx, params)
				var acc openai.ChatCompletionAccumulator
				for s.Next() {
					if !acc.AddChunk(s.Current()) {
						return out, errors.New("the accumulator refused a chunk")
					}
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
			j, _ := json.Marshal(cc)
			out = append(out, string(j))
			msg := cc.Choices[0].Message
			if cc.Choices[0].FinishReason != "tool_calls" {
				return out, nil
			}
			params.Messages = append(params.Messages, msg.ToParam())
			for _, tc := range msg.ToolCalls {
				params.Messages = append(params.Messages, openai.ToolMessage(rc.result(tc.Function.Name, []byte(tc.Function.Arguments)), tc.ID))
			}
		}
		return out, errors.New("the loop did not end")
	}
}

func responsesRun(t testing.TB, rc refundCase, stream, chained bool) sdkRun {
	return func(ctx context.Context, base string, hc *http.Client) ([]string, error) {
		c := openai.NewClient(option.WithBaseURL(base+"/v1/"), option.WithAPIKey(sdkKey), option.WithMaxRetries(0), option.WithHTTPClient(hc))
		p := responses.ResponseNewParams{
			Model:        responses.ResponsesModel(rc.sc.Model),
			Instructions: openai.String(rc.system),
			Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{
				responses.ResponseInputItemParamOfMessage(rc.task, responses.EasyInputMessageRoleUser),
			}},
			MaxOutputTokens: openai.Int(2048),
			Text: responses.ResponseTextConfigParam{Format: responses.ResponseFormatTextConfigUnionParam{
				OfJSONSchema: &responses.ResponseFormatTextJSONSchemaConfigParam{Name: rc.sc.Output.Name, Schema: schemaMap(t, rc.sc.Output.Schema), Strict: openai.Bool(true)},
			}},
		}
		for _, tl := range rc.sc.Tools {
			p.Tools = append(p.Tools, responses.ToolUnionParam{OfFunction: &responses.FunctionToolParam{
				Name: tl.Name, Description: openai.String(tl.Description), Parameters: schemaMap(t, tl.Parameters), Strict: openai.Bool(tl.Strict),
			}})
		}
		if !chained {
			p.Store = openai.Bool(false)
			p.Include = []responses.ResponseIncludable{responses.ResponseIncludableReasoningEncryptedContent}
		}
		var out []string
		for range maxTurns {
			var resp *responses.Response
			if stream {
				s := c.Responses.NewStreaming(ctx, p)
				for s.Next() {
					if ev := s.Current(); ev.Type == "response.completed" || ev.Type == "response.incomplete" {
						r := ev.Response
						resp = &r
					}
				}
				if err := s.Err(); err != nil {
					return out, err
				}
				if resp == nil {
					return out, errors.New("no terminal event")
				}
			} else {
				var err error
				if resp, err = c.Responses.New(ctx, p); err != nil {
					return out, err
				}
			}
			j, _ := json.Marshal(resp)
			out = append(out, string(j))
			var outputs responses.ResponseInputParam
			for _, item := range resp.Output {
				if item.Type == "function_call" {
					fc := item.AsFunctionCall()
					o := responses.ResponseInputItemParamOfFunctionCallOutput(rc.result(fc.Name, []byte(fc.Arguments)))
					o.OfFunctionCallOutput.CallID = openai.String(fc.CallID)
					outputs = append(outputs, o)
				}
			}
			if len(outputs) == 0 {
				return out, nil
			}
			if chained {
				p.PreviousResponseID = openai.String(resp.ID)
				p.Input.OfInputItemList = outputs
				continue
			}
			for _, item := range resp.Output {
				switch item.Type {
				case "reasoning":
					r := item.AsReasoning().ToParam()
					p.Input.OfInputItemList = append(p.Input.OfInputItemList, responses.ResponseInputItemUnionParam{OfReasoning: &r})
				case "function_call":
					fc := item.AsFunctionCall().ToParam()
					p.Input.OfInputItemList = append(p.Input.OfInputItemList, responses.ResponseInputItemUnionParam{OfFunctionCall: &fc})
				case "message":
					m := item.AsMessage().ToParam()
					p.Input.OfInputItemList = append(p.Input.OfInputItemList, responses.ResponseInputItemUnionParam{OfOutputMessage: &m})
				}
			}
			p.Input.OfInputItemList = append(p.Input.OfInputItemList, outputs...)
		}
		return out, errors.New("the loop did not end")
	}
}

func anthropicRun(t testing.TB, rc refundCase, stream bool) sdkRun {
	return func(ctx context.Context, base string, hc *http.Client) ([]string, error) {
		c := anthropic.NewClient(aoption.WithBaseURL(base), aoption.WithAPIKey(sdkKey), aoption.WithMaxRetries(0), aoption.WithHTTPClient(hc))
		params := anthropic.MessageNewParams{
			Model:        "refund-model",
			MaxTokens:    2048,
			System:       []anthropic.TextBlockParam{{Text: rc.system}},
			Messages:     []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(rc.task))},
			OutputConfig: anthropic.OutputConfigParam{Format: anthropic.JSONOutputFormatParam{Schema: schemaMap(t, rc.sc.Output.Schema)}},
		}
		for _, tl := range rc.sc.Tools {
			s := schemaMap(t, tl.Parameters)
			tp := anthropic.ToolParam{Name: tl.Name, Description: anthropic.String(tl.Description),
				InputSchema: anthropic.ToolInputSchemaParam{Properties: s["properties"], Required: toStrings(s["required"])}}
			params.Tools = append(params.Tools, anthropic.ToolUnionParam{OfTool: &tp})
		}
		var out []string
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
			j, _ := json.Marshal(msg)
			out = append(out, string(j))
			params.Messages = append(params.Messages, msg.ToParam())
			var results []anthropic.ContentBlockParamUnion
			for _, b := range msg.Content {
				if b.Type == "tool_use" {
					results = append(results, anthropic.NewToolResultBlock(b.ID, rc.result(b.Name, b.Input), false))
				}
			}
			if len(results) == 0 {
				return out, nil
			}
			params.Messages = append(params.Messages, anthropic.NewUserMessage(results...))
		}
		return out, errors.New("the loop did not end")
	}
}

func toStrings(v any) []string {
	var out []string
	if a, ok := v.([]any); ok {
		for _, x := range a {
			out = append(out, fmt.Sprint(x))
		}
	}
	return out
}

func geminiRun(t testing.TB, rc refundCase, stream bool) sdkRun {
	return func(ctx context.Context, base string, hc *http.Client) ([]string, error) {
		c, err := genai.NewClient(ctx, &genai.ClientConfig{APIKey: sdkKey, Backend: genai.BackendGeminiAPI, HTTPClient: hc,
			HTTPOptions: genai.HTTPOptions{BaseURL: base}})
		if err != nil {
			return nil, err
		}
		var decls []*genai.FunctionDeclaration
		for _, tl := range rc.sc.Tools {
			decls = append(decls, &genai.FunctionDeclaration{Name: tl.Name, Description: tl.Description, ParametersJsonSchema: schemaMap(t, tl.Parameters)})
		}
		chat, err := c.Chats.Create(ctx, "refund-model", &genai.GenerateContentConfig{
			AutomaticContinuation: genai.Ptr(false),
			SystemInstruction:     genai.NewContentFromText(rc.system, genai.RoleUser),
			Tools:                 []*genai.Tool{{FunctionDeclarations: decls}},
			ResponseMIMEType:      "application/json",
			ResponseJsonSchema:    schemaMap(t, rc.sc.Output.Schema),
		}, nil)
		if err != nil {
			return nil, err
		}
		parts := []*genai.Part{genai.NewPartFromText(rc.task)}
		var out []string
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
			// What the application reads: candidates, usage, ids (the
			// HTTP headers the SDK also keeps carry a Date).
			var view []any
			parts = nil
			for _, r := range rs {
				view = append(view, map[string]any{"candidates": r.Candidates, "usage": r.UsageMetadata, "id": r.ResponseID, "model": r.ModelVersion})
				for _, cand := range r.Candidates {
					if cand.Content == nil {
						continue
					}
					for _, part := range cand.Content.Parts {
						if fc := part.FunctionCall; fc != nil {
							args, _ := json.Marshal(fc.Args)
							var res map[string]any
							_ = json.Unmarshal([]byte(rc.result(fc.Name, args)), &res)
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
}

// interactionsRun chains each request on the previous interaction (the
// Interactions API's server-side state) with one function_result step per
// call; streamed, the application reads the events, else the Interaction.
func interactionsRun(t testing.TB, rc refundCase, stream bool) sdkRun {
	return func(ctx context.Context, base string, hc *http.Client) ([]string, error) {
		c, err := genai.NewClient(ctx, &genai.ClientConfig{APIKey: sdkKey, Backend: genai.BackendGeminiAPI, HTTPClient: hc,
			HTTPOptions: genai.HTTPOptions{BaseURL: base}})
		if err != nil {
			return nil, err
		}
		mime := gi.TextResponseFormatMimeTypeApplicationJSON
		p := gi.CreateModelInteraction{Model: "refund-model", SystemInstruction: genai.Ptr(rc.system), Stream: genai.Ptr(stream),
			Input: genai.Ptr(gi.NewInteractionsInput(rc.task)),
			ResponseFormat: genai.Ptr(gi.NewCreateModelInteractionResponseFormat(gi.NewResponseFormat(gi.TextResponseFormat{
				MimeType: &mime, Schema: schemaMap(t, rc.sc.Output.Schema)})))}
		for _, tl := range rc.sc.Tools {
			p.Tools = append(p.Tools, gi.NewTool(gi.Function{Name: genai.Ptr(tl.Name), Description: genai.Ptr(tl.Description), Parameters: schemaMap(t, tl.Parameters)}))
		}
		var out []string
		for range maxTurns {
			res, err := c.Interactions.Create(ctx, operations.CreateInteractionRequest{Body: operations.NewCreateInteractionRequestBody(p)})
			if err != nil {
				return out, err
			}
			var view []any
			var id string
			var calls []*gi.FunctionCallStep
			args := map[string]string{}
			if es := res.InteractionSSEStreamEvent; es != nil {
				for es.Next() {
					ev := es.Value()
					view = append(view, ev)
					switch {
					case ev.GetDataInteractionCreated() != nil:
						id = ev.GetDataInteractionCreated().Interaction.ID
					case ev.GetDataStepStart() != nil && ev.GetDataStepStart().GetStepFunctionCall() != nil:
						calls = append(calls, ev.GetDataStepStart().GetStepFunctionCall())
					case ev.GetDataStepDelta() != nil && ev.GetDataStepDelta().GetDeltaArgumentsDelta() != nil:
						args[calls[len(calls)-1].ID] += *ev.GetDataStepDelta().GetDeltaArgumentsDelta().Arguments
					}
				}
				es.Close()
				if err := es.Err(); err != nil {
					return out, err
				}
			} else {
				view = append(view, res.Interaction)
				id = *res.Interaction.ID
				for _, s := range res.Interaction.Steps {
					if s.FunctionCallStep != nil {
						calls = append(calls, s.FunctionCallStep)
						b, _ := json.Marshal(s.FunctionCallStep.Arguments)
						args[s.FunctionCallStep.ID] = string(b)
					}
				}
			}
			j, _ := json.Marshal(view)
			out = append(out, string(j))
			if len(calls) == 0 {
				return out, nil
			}
			var results []gi.Step
			for _, fc := range calls {
				results = append(results, gi.NewStep(gi.FunctionResultStep{CallID: fc.ID, Name: genai.Ptr(fc.Name),
					Result: gi.NewFunctionResultStepResultUnion(rc.result(fc.Name, []byte(args[fc.ID])))}))
			}
			p.PreviousInteractionID, p.Input = genai.Ptr(id), genai.Ptr(gi.NewInteractionsInput(results))
		}
		return out, errors.New("the loop did not end")
	}
}

// sdkCase is one loop to run both ways.
type sdkCase struct {
	name     string
	protocol string
	run      sdkRun
	schema   bool // the request asks for the output schema
}

func sdkCases(t testing.TB) []sdkCase {
	rc := refund(t)
	var cs []sdkCase
	for _, stream := range []bool{true, false} {
		sfx := fmt.Sprintf("/stream=%v", stream)
		cs = append(cs,
			sdkCase{"openai-chat" + sfx, adapters.OpenAIChat, chatRun(t, rc, stream, false), true},
			sdkCase{"deepseek-chat" + sfx, adapters.DeepSeekChat, chatRun(t, rc, stream, true), false},
			sdkCase{"openai-responses/full" + sfx, adapters.OpenAIResponses, responsesRun(t, rc, stream, false), true},
			sdkCase{"openai-responses/previous-response-id" + sfx, adapters.OpenAIResponses, responsesRun(t, rc, stream, true), true},
			sdkCase{"anthropic-messages" + sfx, adapters.AnthropicMessages, anthropicRun(t, rc, stream), true},
			sdkCase{"gemini" + sfx, adapters.Gemini, geminiRun(t, rc, stream), true},
			sdkCase{"gemini-interactions/previous-interaction-id" + sfx, adapters.GeminiInteractions, interactionsRun(t, rc, stream), true},
		)
	}
	return cs
}

func TestSDKsThroughProxy(t *testing.T) {
	for _, c := range sdkCases(t) {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			simURL, direct := startSim(t, "")
			dtap := &bodyTap{}
			want, err := c.run(ctx, simURL, dtap.client())
			if err != nil {
				t.Fatalf("straight to the simulator: %v", err)
			}
			r := newRig(t, "", Options{})
			ptap := &bodyTap{}
			got, err := c.run(ctx, r.url, ptap.client())
			if err != nil {
				t.Fatalf("through the proxy: %v", err)
			}
			if len(got) != len(want) || len(want) != len(refund(t).sc.Script) {
				t.Fatalf("%d turns through the proxy, %d straight, the script has %d", len(got), len(want), len(refund(t).sc.Script))
			}
			for i := range want {
				if got[i] != want[i] {
					t.Errorf("turn %d: the SDK's result differs\nthrough the proxy %s\nstraight          %s", i+1, got[i], want[i])
				}
			}
			wb, gb := dtap.all(), ptap.all()
			if len(wb) != len(gb) {
				t.Fatalf("%d responses through the proxy, %d straight", len(gb), len(wb))
			}
			for i := range wb {
				if !bytes.Equal(wb[i], gb[i]) {
					t.Errorf("response %d: the bytes the SDK read differ (%d through the proxy, %d straight)", i+1, len(gb[i]), len(wb[i]))
				}
			}
			if n := len(direct.responses()); n != len(wb) {
				t.Errorf("the direct simulator answered %d requests", n)
			}
			checkRecorded(t, r, c.protocol, len(want), c.schema)
		})
	}
}

// checkRecorded: one proxy session for the loop, one turn per request,
// every raw event the simulator sent stored with every canonical event it
// decodes to, and each exchange judged.
func checkRecorded(t *testing.T, r *rig, protocol string, turns int, schema bool) {
	t.Helper()
	sent := r.sim.responses()
	sessions := r.stop()
	if len(sessions) != 1 {
		for _, s := range sessions {
			t.Logf("session %s %s turns %d", s.ID, s.Title, s.Turns)
		}
		t.Fatalf("%d sessions recorded, want 1 conversation", len(sessions))
	}
	s := sessions[0]
	if s.Source != "proxy" || s.Protocol != protocol || s.Turns != turns || s.Status != store.StatusDone || s.Model != "refund-model" {
		t.Errorf("session: source %q protocol %q turns %d status %q model %q", s.Source, s.Protocol, s.Turns, s.Status, s.Model)
	}
	if len(s.Attempts) != len(sent) {
		t.Fatalf("%d attempts recorded, the simulator answered %d requests", len(s.Attempts), len(sent))
	}
	entries := r.entries(s.ID)
	byAttempt := map[[2]int]int{}
	for _, e := range entries {
		if e.Attempt > 0 {
			byAttempt[[2]int{e.Turn, e.Attempt}]++
		}
	}
	totalSent, totalStored := 0, 0
	for i, a := range s.Attempts {
		n := rawEvents(t, protocol, sent[i])
		totalSent += n
		totalStored += a.RawEvents
		if a.Turn != i+1 || a.Attempt != 1 {
			t.Errorf("attempt %d is turn %d attempt %d", i+1, a.Turn, a.Attempt)
		}
		if a.RawEvents != n {
			t.Errorf("turn %d: %d raw events stored, the simulator sent %d", a.Turn, a.RawEvents, n)
		}
		if want := decodedEntries(t, protocol, sent[i]); byAttempt[[2]int{a.Turn, a.Attempt}] != want {
			t.Errorf("turn %d: %d timeline entries stored, the simulator's bytes decode to %d", a.Turn, byAttempt[[2]int{a.Turn, a.Attempt}], want)
		}
		if a.StatusCode != 200 || a.TerminalStatus != adapters.StatusCompleted || a.State != store.StatusDone {
			t.Errorf("turn %d: status %d terminal %q state %q", a.Turn, a.StatusCode, a.TerminalStatus, a.State)
		}
		if len(a.RequestBody) == 0 || bytes.Contains(a.RequestBody, []byte(sdkKey)) {
			t.Errorf("turn %d: request body %d bytes (key present: %v)", a.Turn, len(a.RequestBody), bytes.Contains(a.RequestBody, []byte(sdkKey)))
		}
	}
	if totalSent != totalStored {
		t.Errorf("%d raw events stored, the simulator sent %d", totalStored, totalSent)
	}
	layers := map[int]map[validate.Layer]session.Verdict{}
	for _, v := range s.Validations {
		if layers[v.Turn] == nil {
			layers[v.Turn] = map[validate.Layer]session.Verdict{}
		}
		layers[v.Turn][validate.Layer(v.Layer)] = v.Status
	}
	for turn := 1; turn <= turns; turn++ {
		l := layers[turn]
		if l[session.LayerTransport] != session.Pass || l[session.LayerProtocol] != session.Pass || l[session.LayerParse] != session.Skip || l[session.LayerDomain] != session.Skip {
			t.Errorf("turn %d validation %v %+v", turn, l, s.Validations)
		}
		wantSchema := session.Skip
		if schema && turn == turns {
			wantSchema = session.Pass
		}
		if l[session.LayerSchema] != wantSchema {
			t.Errorf("turn %d: schema %s, want %s", turn, l[session.LayerSchema], wantSchema)
		}
	}
}

// decodedEntries is how many timeline entries a response decodes to: one
// per canonical event (at least one per raw event), plus the end's events.
func decodedEntries(t testing.TB, protocol string, s *sent) int {
	t.Helper()
	p, _ := lookup(protocol)
	st := adapters.NewStream(p)
	if s.status < 200 || s.status > 299 {
		return 1
	}
	if !bytes.HasPrefix([]byte(s.header.Get("Content-Type")), []byte("text/event-stream")) {
		return max(1, len(st.FeedBody(s.body)))
	}
	n := 0
	_ = adapters.ReadStream(p, st, bytes.NewReader(s.body), func(step adapters.Step) error {
		if step.Index >= 0 {
			n += max(1, len(step.Events))
		} else {
			n += len(step.Events)
		}
		return nil
	})
	return n
}
