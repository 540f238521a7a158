package gemini

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"google.golang.org/genai"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/adapterstest"
)

// The SDK oracle: the official Go SDK (google.golang.org/genai v1.77.0)
// reads each capture from a loopback server, and what an SDK user collects
// (text, thoughts, function calls, the last finishReason or blockReason,
// the last usageMetadata, or the error) must agree with our summary.

// sdkFinish is a finishReason the SDK reported and whether the turn had
// function calls.
type sdkFinish struct {
	reason string
	calls  bool
}

// wantFinish is what each finishReason in the captures must decode to,
// written out rather than asked of the decoder's own mapping.
var wantFinish = map[sdkFinish]struct {
	status adapters.Status
	stop   adapters.StopReason
}{
	{"STOP", false}:       {adapters.StatusCompleted, adapters.StopFinal},
	{"STOP", true}:        {adapters.StatusCompleted, adapters.StopToolCall},
	{"MAX_TOKENS", false}: {adapters.StatusIncomplete, adapters.StopTruncated},
	{"MAX_TOKENS", true}:  {adapters.StatusIncomplete, adapters.StopTruncated},
	{"SAFETY", false}:     {adapters.StatusRefused, adapters.StopRefusal},
}

// sdkView is what an SDK user gathers from a response.
type sdkView struct {
	text, thoughts string
	calls          []*genai.FunctionCall
	finish         string
	block          string
	usage          *genai.GenerateContentResponseUsageMetadata
	err            error
	requestPath    string
}

func (v *sdkView) add(r *genai.GenerateContentResponse) {
	if r == nil {
		return
	}
	if r.PromptFeedback != nil && r.PromptFeedback.BlockReason != "" {
		v.block = string(r.PromptFeedback.BlockReason)
	}
	if r.UsageMetadata != nil {
		v.usage = r.UsageMetadata
	}
	if len(r.Candidates) == 0 {
		return
	}
	c := r.Candidates[0]
	if c.FinishReason != "" {
		v.finish = string(c.FinishReason)
	}
	if c.Content == nil {
		return
	}
	for _, p := range c.Content.Parts {
		switch {
		case p.FunctionCall != nil:
			v.calls = append(v.calls, p.FunctionCall)
		case p.Thought:
			v.thoughts += p.Text
		default:
			v.text += p.Text
		}
	}
}

// stripComments removes the `: source:` comment block, which go-genai
// rejects ("invalid stream chunk") although SSE readers must ignore it.
func stripComments(b []byte) []byte {
	var out [][]byte
	for _, block := range bytes.SplitAfter(b, []byte("\r\n\r\n")) {
		lines := bytes.Split(bytes.TrimRight(block, "\r\n"), []byte("\r\n"))
		comment := len(block) > 0
		for _, l := range lines {
			comment = comment && bytes.HasPrefix(l, []byte(":"))
		}
		if !comment {
			out = append(out, block)
		}
	}
	return bytes.Join(out, nil)
}

func sdkClient(t testing.TB, body []byte, contentType string, path *string) *genai.Client {
	t.Helper()
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if requests.Add(1) > 1 {
			t.Errorf("the SDK sent a second request")
		}
		if path != nil {
			*path = r.URL.Path + "?" + r.URL.RawQuery
		}
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", contentType)
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	c, err := genai.NewClient(context.Background(), &genai.ClientConfig{
		APIKey: "x", Backend: genai.BackendGeminiAPI,
		HTTPOptions: genai.HTTPOptions{BaseURL: srv.URL},
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var noContinuation = &genai.GenerateContentConfig{AutomaticContinuation: genai.Ptr(false)}

func sdkStream(t testing.TB, capture []byte) sdkView {
	var v sdkView
	c := sdkClient(t, stripComments(capture), "text/event-stream", &v.requestPath)
	for r, err := range c.Models.GenerateContentStream(context.Background(), "gemini-2.5-flash", genai.Text("hi"), noContinuation) {
		if err != nil {
			v.err = err
			break // what SDK users do
		}
		v.add(r)
	}
	return v
}

func sdkBody(t testing.TB, body []byte) sdkView {
	var v sdkView
	c := sdkClient(t, body, "application/json", &v.requestPath)
	r, err := c.Models.GenerateContent(context.Background(), "gemini-2.5-flash", genai.Text("hi"), noContinuation)
	v.err = err
	v.add(r)
	return v
}

// compare checks our summary against the SDK's view.
func compare(t *testing.T, s adapters.Summary, v sdkView) {
	t.Helper()
	var apiErr genai.APIError
	switch {
	case errors.As(v.err, &apiErr):
		if s.Terminal != adapters.StatusFailed || s.Error == nil || s.Error.Type != apiErr.Status || s.Error.Message != apiErr.Message {
			t.Fatalf("SDK error %v; ours %s %+v", apiErr, s.Terminal, s.Error)
		}
	case v.err != nil:
		// A chunk the SDK cannot unmarshal (malformed, or the cut tail
		// go-genai returns at EOF): ours reports it as a diagnostic.
		found := false
		for _, d := range s.Diagnostics {
			found = found || d.Kind == adapters.DiagMalformedEvent || d.Kind == adapters.DiagDiscardedTail
		}
		if !found {
			t.Fatalf("SDK error %v; ours has no diagnostic: %v", v.err, diagKinds(s))
		}
		return // the SDK user stopped here
	case v.block != "":
		if s.Terminal != adapters.StatusRefused || s.ProviderStopReason != "blockReason:"+v.block {
			t.Fatalf("SDK blockReason %s; ours %s %q", v.block, s.Terminal, s.ProviderStopReason)
		}
	case v.finish != "":
		if s.ProviderStopReason != v.finish {
			t.Fatalf("SDK finishReason %s; ours %q", v.finish, s.ProviderStopReason)
		}
		want, ok := wantFinish[sdkFinish{v.finish, len(v.calls) > 0}]
		if !ok {
			t.Fatalf("finishReason %s (calls: %v) is not in wantFinish: add what it must decode to", v.finish, len(v.calls) > 0)
		}
		if s.Terminal != want.status || s.StopReason != want.stop {
			t.Fatalf("finishReason %s: ours %s/%s, want %s/%s", v.finish, s.Terminal, s.StopReason, want.status, want.stop)
		}
	default:
		if s.Terminal != adapters.StatusUnknown {
			t.Fatalf("SDK saw no finishReason; ours %s", s.Terminal)
		}
	}
	if s.Text != v.text || s.Reasoning != v.thoughts {
		t.Fatalf("text %q reasoning %q; SDK %q %q", s.Text, s.Reasoning, v.text, v.thoughts)
	}
	if len(s.ToolCalls) != len(v.calls) {
		t.Fatalf("%d calls; SDK %d", len(s.ToolCalls), len(v.calls))
	}
	for i, fc := range v.calls {
		c := s.ToolCalls[i]
		if fc.ID != "" && c.CallID != fc.ID || fc.ID == "" && !strings.HasPrefix(c.CallID, SyntheticCallIDPrefix) {
			t.Fatalf("call %d id %q; SDK %q", i, c.CallID, fc.ID)
		}
		var args map[string]any
		if err := json.Unmarshal(c.Arguments, &args); err != nil {
			t.Fatal(err)
		}
		want := fc.Args
		if want == nil {
			want = map[string]any{}
		}
		if c.Name != fc.Name || !reflect.DeepEqual(args, want) {
			t.Fatalf("call %d %s %v; SDK %s %v", i, c.Name, args, fc.Name, fc.Args)
		}
	}
	if v.usage == nil {
		if s.Usage != nil {
			t.Fatalf("usage %+v; SDK none", s.Usage)
		}
		return
	}
	u := v.usage
	if s.Usage == nil || intp(s.Usage.InputTokens) != int64(u.PromptTokenCount) ||
		intp(s.Usage.OutputTokens) != int64(u.CandidatesTokenCount+u.ThoughtsTokenCount) ||
		intp(s.Usage.CacheReadTokens) != int64(u.CachedContentTokenCount) ||
		intp(s.Usage.ReasoningTokens) != int64(u.ThoughtsTokenCount) {
		t.Fatalf("usage %+v; SDK %+v", s.Usage, u)
	}
}

func TestSDKStreams(t *testing.T) {
	n := 0
	for _, name := range captures(t) {
		if !strings.HasSuffix(name, ".sse") {
			continue
		}
		n++
		t.Run(name, func(t *testing.T) {
			capture := adapterstest.ReadCapture(t, name)
			_, s := adapterstest.Decode(t, New(), capture)
			v := sdkStream(t, capture)
			if v.requestPath != "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse" {
				t.Fatalf("the SDK asked for %s", v.requestPath)
			}
			compare(t, s, v)
		})
	}
	if n < 15 {
		t.Fatalf("only %d stream captures", n)
	}
}

func TestSDKBodies(t *testing.T) {
	for _, name := range captures(t) {
		// The array form belongs to streamGenerateContent without SSE,
		// which the SDK never requests.
		if !strings.HasSuffix(name, ".body.json") || name == "stream_array.body.json" {
			continue
		}
		t.Run(name, func(t *testing.T) {
			body := adapterstest.ReadCapture(t, name)
			_, s := adapterstest.Decode(t, New(), body)
			v := sdkBody(t, body)
			if v.err != nil {
				t.Fatal(v.err)
			}
			if v.requestPath != "/v1beta/models/gemini-2.5-flash:generateContent?" {
				t.Fatalf("the SDK asked for %s", v.requestPath)
			}
			compare(t, s, v)
		})
	}
}

// TestSDKErrors: the SDK's APIError and ours agree on each error body.
func TestSDKErrors(t *testing.T) {
	for _, name := range []string{"invalid_argument", "api_key_invalid", "permission_denied", "not_found", "rate_limit", "internal", "unavailable"} {
		t.Run(name, func(t *testing.T) {
			body := adapterstest.ReadCapture(t, name+".error.json")
			var code int
			var probe struct {
				Error struct {
					Code int `json:"code"`
				} `json:"error"`
			}
			if err := json.Unmarshal(body, &probe); err != nil {
				t.Fatal(err)
			}
			code = probe.Error.Code
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(code)
				_, _ = w.Write(body)
			}))
			defer srv.Close()
			c, err := genai.NewClient(context.Background(), &genai.ClientConfig{APIKey: "x", Backend: genai.BackendGeminiAPI,
				HTTPOptions: genai.HTTPOptions{BaseURL: srv.URL}})
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Models.GenerateContent(context.Background(), "gemini-2.5-flash", genai.Text("hi"), noContinuation)
			var apiErr genai.APIError
			if !errors.As(err, &apiErr) {
				t.Fatalf("SDK error %v", err)
			}
			ours := New().DecodeError(code, nil, body)
			if ours.HTTPStatus != apiErr.Code || ours.Type != apiErr.Status || ours.Message != apiErr.Message {
				t.Fatalf("ours %+v; SDK %+v", ours, apiErr)
			}
		})
	}
}

// TestSDKRequestBody: the SDK, given the same refund turn 3 (sources,
// tools, schema, history with signatures), sends the same JSON body and
// path as our encoder.
func TestSDKRequestBody(t *testing.T) {
	req := refundRequest(t, 3, true)
	req.Model = "gemini-2.5-flash"
	hr, err := New().Encode(req, adapters.ProviderGemini)
	if err != nil {
		t.Fatal(err)
	}

	var gotBody []byte
	var gotPath string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotBody, _ = io.ReadAll(r.Body)
		gotPath = r.URL.Path + "?" + r.URL.RawQuery
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(stripComments(adapterstest.ReadCapture(t, "refund_turn3.sse")))
	}))
	defer srv.Close()
	c, err := genai.NewClient(context.Background(), &genai.ClientConfig{APIKey: "x", Backend: genai.BackendGeminiAPI,
		HTTPOptions: genai.HTTPOptions{BaseURL: srv.URL}})
	if err != nil {
		t.Fatal(err)
	}

	obj := func(s string) map[string]any {
		var m map[string]any
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	src := adapterstest.RefundSources()
	user := &genai.Content{Role: genai.RoleUser}
	for _, s := range src[2:] {
		user.Parts = append(user.Parts, genai.NewPartFromText(adapters.SourceText(s)))
	}
	contents := []*genai.Content{user}
	for i, turn := range req.Turns {
		model := &genai.Content{Role: genai.RoleModel}
		answers := &genai.Content{Role: genai.RoleUser}
		for j, it := range turn.Items {
			p := &genai.Part{FunctionCall: &genai.FunctionCall{Name: it.Name, Args: obj(string(it.Arguments))}}
			if it.Signature != "" {
				if p.ThoughtSignature, err = base64.StdEncoding.DecodeString(it.Signature); err != nil {
					t.Fatal(err)
				}
			}
			model.Parts = append(model.Parts, p)
			answers.Parts = append(answers.Parts, &genai.Part{FunctionResponse: &genai.FunctionResponse{
				Name: it.Name, Response: map[string]any{"output": obj(req.Turns[i].Results[j].Content)}}})
		}
		contents = append(contents, model, answers)
	}
	var decls []*genai.FunctionDeclaration
	for _, tl := range adapterstest.RefundTools() {
		decls = append(decls, &genai.FunctionDeclaration{Name: tl.Name, Description: tl.Description, ParametersJsonSchema: obj(string(tl.Parameters))})
	}
	config := &genai.GenerateContentConfig{
		AutomaticContinuation: genai.Ptr(false),
		SystemInstruction:     &genai.Content{Parts: []*genai.Part{genai.NewPartFromText(src[0].Text), genai.NewPartFromText(src[1].Text)}},
		Tools:                 []*genai.Tool{{FunctionDeclarations: decls}},
		ToolConfig:            &genai.ToolConfig{FunctionCallingConfig: &genai.FunctionCallingConfig{Mode: genai.FunctionCallingConfigModeAuto}},
		MaxOutputTokens:       1800,
		ResponseMIMEType:      "application/json",
		ResponseJsonSchema:    obj(string(adapterstest.RefundSchema())),
	}
	for _, err := range c.Models.GenerateContentStream(context.Background(), "gemini-2.5-flash", contents, config) {
		if err != nil {
			t.Fatal(err)
		}
	}

	if gotPath != hr.Path {
		t.Fatalf("SDK path %s, ours %s", gotPath, hr.Path)
	}
	var sdk, ours any
	if err := json.Unmarshal(gotBody, &sdk); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(hr.Body, &ours); err != nil {
		t.Fatal(err)
	}
	// The one difference: go-genai adds "role":"user" to systemInstruction.
	// The REST reference's examples send parts only, as we do; the API
	// accepts both.
	si := sdk.(map[string]any)["systemInstruction"].(map[string]any)
	if si["role"] != "user" {
		t.Fatalf("the SDK's systemInstruction role is %v", si["role"])
	}
	delete(si, "role")
	if !reflect.DeepEqual(sdk, ours) {
		a, _ := json.MarshalIndent(sdk, "", " ")
		b, _ := json.MarshalIndent(ours, "", " ")
		t.Fatalf("bodies differ\nSDK:  %s\nours: %s", a, b)
	}
}
