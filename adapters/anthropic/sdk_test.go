package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/adapterstest"
)

// The official Go SDK is the oracle: each capture is served from an
// httptest server, read with Messages.NewStreaming + Message.Accumulate (or
// Messages.New for bodies), and what the SDK accumulates must agree with
// our summary.

func serve(t *testing.T, status int, contentType string, body []byte, header http.Header) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// anthropic-sdk-go v2 sends anthropic-version 2026-10-21 (we send
		// 2023-06-01); the stream and body shapes read here are the same.
		if r.URL.Path != "/v1/messages" || r.Header.Get("anthropic-version") == "" {
			http.Error(w, "unexpected request "+r.URL.Path, http.StatusBadRequest)
			return
		}
		for k, v := range header {
			w.Header()[k] = v
		}
		w.Header().Set("content-type", contentType)
		w.WriteHeader(status)
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func client(srv *httptest.Server) sdk.Client {
	return sdk.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("test-key"), option.WithMaxRetries(0))
}

var sdkParams = sdk.MessageNewParams{
	Model:     sdk.Model("claude-sonnet-4-5"),
	MaxTokens: 1024,
	Messages:  []sdk.MessageParam{sdk.NewUserMessage(sdk.NewTextBlock("hi"))},
}

// compare checks the SDK's accumulated message against our summary and
// reduced turn.
func compare(t *testing.T, msg sdk.Message, s adapters.Summary, turn adapters.Turn) {
	t.Helper()
	var text, thinking strings.Builder
	var calls []sdk.ContentBlockUnion
	var sigs []string
	for _, b := range msg.Content {
		switch b.Type {
		case "text":
			text.WriteString(b.Text)
		case "thinking":
			thinking.WriteString(b.Thinking)
			sigs = append(sigs, b.Signature)
		case "redacted_thinking":
			sigs = append(sigs, RedactedPrefix+b.Data)
		case "tool_use":
			calls = append(calls, b)
		}
	}
	if text.String() != s.Text {
		t.Errorf("text: sdk %q, ours %q", text.String(), s.Text)
	}
	if thinking.String() != s.Reasoning {
		t.Errorf("reasoning: sdk %q, ours %q", thinking.String(), s.Reasoning)
	}
	if len(calls) != len(s.ToolCalls) {
		t.Fatalf("tool calls: sdk %d, ours %d", len(calls), len(s.ToolCalls))
	}
	for i, c := range calls {
		ours := s.ToolCalls[i]
		if c.ID != ours.CallID || c.Name != ours.Name {
			t.Errorf("call %d: sdk %s %s, ours %s %s", i, c.ID, c.Name, ours.CallID, ours.Name)
		}
		var a, b any
		if err := json.Unmarshal(c.Input, &a); err != nil {
			t.Errorf("call %d: sdk input %s: %v", i, c.Input, err)
		}
		_ = json.Unmarshal(ours.Arguments, &b)
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if string(ja) != string(jb) {
			t.Errorf("call %d arguments: sdk %s, ours %s", i, ja, jb)
		}
	}
	var ourSigs []string
	for _, it := range turn.Items {
		if it.Kind == adapters.KindReasoning {
			ourSigs = append(ourSigs, it.Signature)
		}
	}
	if strings.Join(sigs, "|") != strings.Join(ourSigs, "|") {
		t.Errorf("signatures: sdk %q, ours %q", sigs, ourSigs)
	}
	if string(msg.StopReason) != s.ProviderStopReason {
		t.Errorf("stop reason: sdk %q, ours %q", msg.StopReason, s.ProviderStopReason)
	}
	if msg.ID != s.ResponseID || string(msg.Model) != s.Model {
		t.Errorf("id/model: sdk %s %s, ours %s %s", msg.ID, msg.Model, s.ResponseID, s.Model)
	}
	u := msg.Usage
	if s.Usage == nil {
		t.Fatal("no usage")
	}
	if in := u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens; in != *s.Usage.InputTokens {
		t.Errorf("input tokens: sdk %d (+cache), ours %d", in, *s.Usage.InputTokens)
	}
	if u.OutputTokens != *s.Usage.OutputTokens {
		t.Errorf("output tokens: sdk %d, ours %d", u.OutputTokens, *s.Usage.OutputTokens)
	}
	if s.Usage.CacheReadTokens != nil && u.CacheReadInputTokens != *s.Usage.CacheReadTokens {
		t.Errorf("cache read: sdk %d, ours %d", u.CacheReadInputTokens, *s.Usage.CacheReadTokens)
	}
}

func decodeWithTurn(t *testing.T, body []byte) (adapters.Summary, adapters.Turn) {
	t.Helper()
	st := adapters.NewStream(New())
	var events []adapters.Event
	if adapters.LooksLikeStream(body) {
		_ = adapters.ReadStream(New(), st, strings.NewReader(string(body)), func(s adapters.Step) error {
			events = append(events, s.Events...)
			return nil
		})
	} else {
		events = st.FeedBody(body)
	}
	adapterstest.CheckInvariants(t, events)
	return st.Summary(), st.Reducer().Turn()
}

func TestSDKStreaming(t *testing.T) {
	for _, name := range []string{
		"text.sse", "refund_turn1.sse", "refund_turn2.sse", "refund_turn3.sse",
		"parallel_interleaved.sse", "refusal.sse", "max_tokens.sse", "thinking.sse",
		"cache_usage.sse", "missing_message_stop.sse", "pause_turn.sse", "stop_sequence.sse",
		"context_window.sse",
	} {
		t.Run(name, func(t *testing.T) {
			body := adapterstest.ReadCapture(t, name)
			srv := serve(t, 200, "text/event-stream", body, nil)
			c := client(srv)
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
			s, turn := decodeWithTurn(t, body)
			compare(t, msg, s, turn)
		})
	}
}

// The SDK turns the in-stream error event into an *sdk.Error with the
// same type; we end the response failed with it.
func TestSDKStreamingError(t *testing.T) {
	body := adapterstest.ReadCapture(t, "error_event.sse")
	c := client(serve(t, 200, "text/event-stream", body, nil))
	stream := c.Messages.NewStreaming(context.Background(), sdkParams)
	msg := sdk.Message{}
	for stream.Next() {
		_ = msg.Accumulate(stream.Current())
	}
	var apierr *sdk.Error
	if !errors.As(stream.Err(), &apierr) {
		t.Fatalf("sdk error = %v", stream.Err())
	}
	s, _ := decodeWithTurn(t, body)
	if s.Error == nil || string(apierr.Type()) != s.Error.Type || s.Terminal != adapters.StatusFailed {
		t.Errorf("sdk %s, ours %+v (%s)", apierr.Type(), s.Error, s.Terminal)
	}
	if msg.Content[0].Text != s.Text {
		t.Errorf("text before the error: sdk %q, ours %q", msg.Content[0].Text, s.Text)
	}
}

// A cut stream: the SDK ends without an error and without a stop reason,
// its tool block holding the partial input; we keep the call incomplete.
func TestSDKStreamingCut(t *testing.T) {
	body := adapterstest.ReadCapture(t, "cut_mid_args.sse")
	c := client(serve(t, 200, "text/event-stream", body, nil))
	stream := c.Messages.NewStreaming(context.Background(), sdkParams)
	msg := sdk.Message{}
	for stream.Next() {
		_ = msg.Accumulate(stream.Current())
	}
	if stream.Err() != nil {
		t.Fatal(stream.Err())
	}
	s, _ := decodeWithTurn(t, body)
	if msg.StopReason != "" || len(msg.Content) != 1 || string(msg.Content[0].Input) != s.IncompleteToolCalls[0].PartialArguments {
		t.Errorf("sdk stop %q input %s; ours %+v", msg.StopReason, msg.Content[0].Input, s.IncompleteToolCalls)
	}
}

// The SDK stops at the first malformed payload with a JSON error; we
// report it and go on.
func TestSDKStreamingMalformed(t *testing.T) {
	body := adapterstest.ReadCapture(t, "oddities.sse")
	c := client(serve(t, 200, "text/event-stream", body, nil))
	stream := c.Messages.NewStreaming(context.Background(), sdkParams)
	for stream.Next() {
	}
	if stream.Err() == nil {
		t.Error("the SDK accepted a malformed event")
	}
	s, _ := decodeWithTurn(t, body)
	if s.Terminal != adapters.StatusCompleted || !hasDiag(s, adapters.DiagMalformedEvent) {
		t.Errorf("ours: %s %v", s.Terminal, diagKinds(s))
	}
}

func TestSDKBodies(t *testing.T) {
	for _, name := range []string{"refund_turn1.json", "refund_turn2.json", "refund_turn3.json", "thinking.json", "max_tokens.json"} {
		t.Run(name, func(t *testing.T) {
			body := adapterstest.ReadCapture(t, name)
			c := client(serve(t, 200, "application/json", body, nil))
			msg, err := c.Messages.New(context.Background(), sdkParams)
			if err != nil {
				t.Fatal(err)
			}
			s, turn := decodeWithTurn(t, body)
			compare(t, *msg, s, turn)
		})
	}
}

// Error bodies: the SDK's *sdk.Error and our DecodeError agree on status
// and type.
func TestSDKErrorBodies(t *testing.T) {
	for _, c := range []struct {
		status int
		body   string
	}{
		{529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_011CSHoEeqs5C35K2UUqR7Fy"}`},
		{429, `{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"},"request_id":"req_1"}`},
		{400, `{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: Field required"},"request_id":"req_2"}`},
	} {
		h := http.Header{"Retry-After": {"7"}}
		cl := client(serve(t, c.status, "application/json", []byte(c.body), h))
		_, err := cl.Messages.New(context.Background(), sdkParams)
		var apierr *sdk.Error
		if !errors.As(err, &apierr) {
			t.Fatalf("%d: sdk error %v", c.status, err)
		}
		ours := New().DecodeError(c.status, h, []byte(c.body))
		if apierr.StatusCode != ours.HTTPStatus || string(apierr.Type()) != ours.Type || ours.RetryAfterMS != 7000 {
			t.Errorf("%d: sdk %d %s, ours %+v", c.status, apierr.StatusCode, apierr.Type(), ours)
		}
	}
}

// Our request bodies read back through the SDK's own MessageNewParams: a
// field name the SDK does not know would be lost on the way back.
func TestSDKParamsRoundTrip(t *testing.T) {
	f := false
	reqs := []*adapters.Request{
		adapterstest.RefundRequest(1, refundIDs, true),
		adapterstest.RefundRequest(3, refundIDs, false),
	}
	r := adapterstest.RefundRequest(2, refundIDs, true)
	r.Limits.ParallelToolCalls, r.Limits.Reasoning, r.Limits.MaxOutputTokens = &f, "medium", 8000
	r.Turns[0].Items = append([]adapters.OutputItem{{Kind: adapters.KindReasoning, Text: "想", Signature: "sig"}, {Kind: adapters.KindReasoning, Signature: RedactedPrefix + "xyz"}}, r.Turns[0].Items...)
	reqs = append(reqs, r)
	for i, req := range reqs {
		hr, err := New().Encode(req, adapters.ProviderAnthropic)
		if err != nil {
			t.Fatal(err)
		}
		var p sdk.MessageNewParams
		if err := json.Unmarshal(hr.Body, &p); err != nil {
			t.Fatalf("%d: the SDK cannot read our body: %v", i, err)
		}
		back, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		var a map[string]any
		var b any
		_ = json.Unmarshal(hr.Body, &a)
		_ = json.Unmarshal(back, &b)
		// Two normalisations of the SDK's own: stream is set by
		// NewStreaming, not a param; a string tool_result content comes back
		// as its one-text-block form.
		delete(a, "stream")
		for _, m := range a["messages"].([]any) {
			for _, c := range m.(map[string]any)["content"].([]any) {
				blk := c.(map[string]any)
				if s, ok := blk["content"].(string); ok && blk["type"] == "tool_result" {
					blk["content"] = []any{map[string]any{"type": "text", "text": s}}
				}
			}
		}
		if !reflect.DeepEqual(any(a), b) {
			t.Errorf("%d: through the SDK params:\n ours %s\n sdk  %s", i, hr.Body, back)
		}
		if len(p.Messages) == 0 || p.MaxTokens == 0 || len(p.System) == 0 {
			t.Errorf("%d: the SDK read nothing: %+v", i, p)
		}
	}
}
