package openairesponses

// The SDK oracle: each capture is served to the official openai-go client
// (v3.98.0), accumulated the way its users do (text from
// response.output_text.delta, the final Response object from the terminal
// event), and compared with our summary.

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/responses"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/adapterstest"
)

// serve answers POST /v1/responses with body.
func serve(t *testing.T, body []byte, contentType string) openai.Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/responses" {
			t.Errorf("SDK called %s %s", r.Method, r.URL.Path)
		}
		w.Header().Set("Content-Type", contentType)
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return openai.NewClient(option.WithBaseURL(srv.URL+"/v1/"), option.WithAPIKey("sk-test"), option.WithMaxRetries(0))
}

var sdkParams = responses.ResponseNewParams{
	Model: "gpt-5-mini",
	Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("请核查订单 O-2048。")},
}

// sdkResult is what an SDK user ends up with.
type sdkResult struct {
	text, refusal string
	final         *responses.Response
	err           error
}

// sdkStream accumulates a stream as SDK users do: deltas for live text, the
// terminal event's Response for the rest.
func sdkStream(stream *ssestream.Stream[responses.ResponseStreamEventUnion]) sdkResult {
	var r sdkResult
	var text, refusal strings.Builder
	for stream.Next() {
		switch ev := stream.Current().AsAny().(type) {
		case responses.ResponseTextDeltaEvent:
			text.WriteString(ev.Delta)
		case responses.ResponseRefusalDeltaEvent:
			refusal.WriteString(ev.Delta)
		case responses.ResponseCompletedEvent:
			r.final = &ev.Response
		case responses.ResponseIncompleteEvent:
			r.final = &ev.Response
		case responses.ResponseFailedEvent:
			r.final = &ev.Response
		case responses.ResponseErrorEvent:
			r.err = errors.New(ev.Code + ": " + ev.Message)
		}
	}
	if err := stream.Err(); err != nil {
		r.err = err
	}
	r.text, r.refusal = text.String(), refusal.String()
	return r
}

// sdkStop derives the canonical terminal from the SDK's final Response by
// the contract's table.
func sdkStop(resp *responses.Response) (adapters.Status, adapters.StopReason) {
	hasCall, hasText, hasRefusal := false, false, false
	for _, item := range resp.Output {
		switch item.Type {
		case "function_call":
			hasCall = true
		case "message":
			for _, c := range item.AsMessage().Content {
				hasText = hasText || (c.Type == "output_text" && c.Text != "")
				hasRefusal = hasRefusal || c.Type == "refusal"
			}
		}
	}
	switch resp.Status {
	case responses.ResponseStatusCompleted:
		switch {
		case hasCall:
			return adapters.StatusCompleted, adapters.StopToolCall
		case hasRefusal && !hasText:
			return adapters.StatusRefused, adapters.StopRefusal
		}
		return adapters.StatusCompleted, adapters.StopFinal
	case responses.ResponseStatusIncomplete:
		if resp.IncompleteDetails.Reason == "content_filter" {
			return adapters.StatusRefused, adapters.StopRefusal
		}
		return adapters.StatusIncomplete, adapters.StopTruncated
	case responses.ResponseStatusFailed:
		return adapters.StatusFailed, adapters.StopError
	}
	return adapters.StatusUnknown, adapters.StopUnknown
}

// compareWithSDK checks our summary against the SDK's final Response.
func compareWithSDK(t *testing.T, name string, s adapters.Summary, resp *responses.Response, text string) {
	t.Helper()
	if s.Text != text {
		t.Errorf("%s: text %q, SDK %q", name, s.Text, text)
	}
	if resp == nil {
		t.Fatalf("%s: the SDK saw no final response", name)
	}
	if s.ResponseID != resp.ID || s.Model != resp.Model {
		t.Errorf("%s: response %s %s, SDK %s %s", name, s.ResponseID, s.Model, resp.ID, resp.Model)
	}
	status, stop := sdkStop(resp)
	if s.Terminal != status || s.StopReason != stop {
		t.Errorf("%s: terminal %s/%s, SDK's response says %s/%s", name, s.Terminal, s.StopReason, status, stop)
	}
	var calls []responses.ResponseFunctionToolCall
	for _, item := range resp.Output {
		if fc, ok := item.AsAny().(responses.ResponseFunctionToolCall); ok {
			calls = append(calls, fc)
		}
	}
	if len(calls) != len(s.ToolCalls) {
		t.Fatalf("%s: %d tool calls, SDK %d", name, len(s.ToolCalls), len(calls))
	}
	for i, fc := range calls {
		got := s.ToolCalls[i]
		if got.CallID != fc.CallID || got.Name != fc.Name || !jsonEqual(got.Arguments, []byte(fc.Arguments)) {
			t.Errorf("%s: call %d %s %s %s, SDK %s %s %s", name, i, got.CallID, got.Name, got.Arguments, fc.CallID, fc.Name, fc.Arguments)
		}
	}
	u := resp.Usage
	if !resp.JSON.Usage.Valid() {
		if s.Usage != nil {
			t.Errorf("%s: usage %+v, SDK none", name, s.Usage)
		}
		return
	}
	if s.Usage == nil {
		t.Fatalf("%s: no usage, SDK %+v", name, u)
	}
	for _, c := range []struct {
		label string
		got   *int64
		want  int64
	}{
		{"input", s.Usage.InputTokens, u.InputTokens},
		{"output", s.Usage.OutputTokens, u.OutputTokens},
		{"cache_read", s.Usage.CacheReadTokens, u.InputTokensDetails.CachedTokens},
		{"cache_write", s.Usage.CacheWriteTokens, u.InputTokensDetails.CacheWriteTokens},
		{"reasoning", s.Usage.ReasoningTokens, u.OutputTokensDetails.ReasoningTokens},
	} {
		if c.got == nil || *c.got != c.want {
			t.Errorf("%s: %s tokens %v, SDK %d", name, c.label, deref(c.got), c.want)
		}
	}
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	ja, _ := json.Marshal(x)
	jb, _ := json.Marshal(y)
	return string(ja) == string(jb)
}

func TestSDKOracleStreaming(t *testing.T) {
	for _, name := range []string{
		"refund_turn1.sse", "refund_turn2.sse", "refund_turn3.sse", "text_only.sse", "reasoning.sse",
		"refusal.sse", "truncated.sse", "content_filter.sse", "failed.sse", "unknown_events.sse", "completed_only.sse",
	} {
		t.Run(name, func(t *testing.T) {
			body := adapterstest.ReadCapture(t, name)
			client := serve(t, body, "text/event-stream")
			r := sdkStream(client.Responses.NewStreaming(context.Background(), sdkParams))
			if r.err != nil {
				t.Fatalf("SDK error: %v", r.err)
			}
			_, s := decodeCapture(t, name)
			compareWithSDK(t, name, s, r.final, r.text)
			if s.Refusal != nil && *s.Refusal != r.refusal || s.Refusal == nil && r.refusal != "" {
				t.Errorf("refusal %v, SDK %q", s.Refusal, r.refusal)
			}
			if s.Terminal == adapters.StatusFailed && (s.Error == nil || s.Error.Code != string(r.final.Error.Code) || s.Error.Message != r.final.Error.Message) {
				t.Errorf("error %+v, SDK %+v", s.Error, r.final.Error)
			}
		})
	}
}

// Both error-event shapes end the stream in the SDK too: the flat one as a
// typed error event, the nested one as a StreamError.
func TestSDKOracleErrorEvents(t *testing.T) {
	for _, name := range []string{"error_flat.sse", "error_nested.sse"} {
		client := serve(t, adapterstest.ReadCapture(t, name), "text/event-stream")
		r := sdkStream(client.Responses.NewStreaming(context.Background(), sdkParams))
		_, s := decodeCapture(t, name)
		if r.err == nil || s.Error == nil || !strings.Contains(r.err.Error(), s.Error.Message) {
			t.Errorf("%s: SDK error %v, ours %+v", name, r.err, s.Error)
		}
		if s.Terminal != adapters.StatusFailed || s.Text != r.text {
			t.Errorf("%s: terminal %s text %q, SDK text %q", name, s.Terminal, s.Text, r.text)
		}
	}
}

// A cut stream: the SDK reports no error and no final response (protocols.md
// §1.5); we report unknown with stream_cut.
func TestSDKOracleCutStream(t *testing.T) {
	client := serve(t, adapterstest.ReadCapture(t, "cut_mid_args.sse"), "text/event-stream")
	r := sdkStream(client.Responses.NewStreaming(context.Background(), sdkParams))
	_, s := decodeCapture(t, "cut_mid_args.sse")
	if r.err != nil || r.final != nil {
		t.Errorf("SDK: err %v final %v", r.err, r.final)
	}
	if s.Terminal != adapters.StatusUnknown || !hasDiag(s, adapters.DiagStreamCut) {
		t.Errorf("terminal %s, diagnostics %+v", s.Terminal, s.Diagnostics)
	}
}

// Events after the terminal: an SDK user who keeps reading takes the late
// delta and the second response; we keep the first terminal (contract.md
// "Exactly one terminal per response").
func TestSDKOracleLateEvents(t *testing.T) {
	client := serve(t, adapterstest.ReadCapture(t, "late_event.sse"), "text/event-stream")
	r := sdkStream(client.Responses.NewStreaming(context.Background(), sdkParams))
	_, s := decodeCapture(t, "late_event.sse")
	if r.text != "Done. More." || s.Text != "Done." || countDiag(s, adapters.DiagLateEvent) != 2 {
		t.Errorf("SDK text %q, ours %q, diagnostics %+v", r.text, s.Text, s.Diagnostics)
	}
}

func TestSDKOracleBodies(t *testing.T) {
	for _, name := range []string{"refund_turn1.json", "refund_turn2.json", "refund_turn3.json", "refusal.json", "incomplete.json"} {
		t.Run(name, func(t *testing.T) {
			client := serve(t, adapterstest.ReadCapture(t, name), "application/json")
			resp, err := client.Responses.New(context.Background(), sdkParams)
			if err != nil {
				t.Fatal(err)
			}
			_, s := decodeCapture(t, name)
			compareWithSDK(t, name, s, resp, resp.OutputText())
		})
	}
}

// The SDK's error for each error body matches DecodeError.
func TestSDKOracleErrorBodies(t *testing.T) {
	for _, c := range []struct {
		name   string
		status int
	}{{"error_400.json", 400}, {"error_401.json", 401}, {"error_429_quota.json", 429}, {"error_500.json", 500}} {
		body := adapterstest.ReadCapture(t, c.name)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(c.status)
			_, _ = w.Write(body)
		}))
		client := openai.NewClient(option.WithBaseURL(srv.URL+"/v1/"), option.WithAPIKey("sk-test"), option.WithMaxRetries(0))
		_, err := client.Responses.New(context.Background(), sdkParams)
		srv.Close()
		var apiErr *openai.Error
		if !errors.As(err, &apiErr) {
			t.Fatalf("%s: SDK error %v", c.name, err)
		}
		ours := New().DecodeError(c.status, nil, body)
		if ours.HTTPStatus != apiErr.StatusCode || ours.Type != apiErr.Type || ours.Code != apiErr.Code || ours.Message != apiErr.Message {
			t.Errorf("%s: ours %+v, SDK %d %s %s %s", c.name, ours, apiErr.StatusCode, apiErr.Type, apiErr.Code, apiErr.Message)
		}
	}
}
