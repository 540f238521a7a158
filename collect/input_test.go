package collect_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/modelwire/modelwire/collect"
	"github.com/modelwire/modelwire/store"
)

// jsonSpan is a span in OTLP/JSON (hex ids, attributes as key/value).
func jsonSpan(trace, span, parent, name string, attrs map[string]any, events ...map[string]any) map[string]any {
	start := time.Date(2026, 12, 5, 4, 0, 0, 0, time.UTC)
	s := map[string]any{"traceId": trace, "spanId": span, "name": name, "kind": 3,
		"startTimeUnixNano": fmt.Sprint(start.UnixNano()), "endTimeUnixNano": fmt.Sprint(start.Add(1500 * time.Millisecond).UnixNano()),
		"attributes": kvs(attrs)}
	if parent != "" {
		s["parentSpanId"] = parent
	}
	if len(events) > 0 {
		var evs []any
		for _, e := range events {
			name := e["name"]
			delete(e, "name")
			evs = append(evs, map[string]any{"name": name, "timeUnixNano": fmt.Sprint(start.UnixNano()), "attributes": kvs(e)})
		}
		s["events"] = evs
	}
	return s
}

func kvs(attrs map[string]any) []any {
	var out []any
	for k, v := range attrs {
		var val map[string]any
		switch v := v.(type) {
		case int:
			val = map[string]any{"intValue": fmt.Sprint(v)}
		case map[string]any:
			val = map[string]any{"kvlistValue": map[string]any{"values": kvs(v)}}
		default:
			val = map[string]any{"stringValue": fmt.Sprint(v)}
		}
		out = append(out, map[string]any{"key": k, "value": val})
	}
	return out
}

func jsonRequest(spans ...any) []byte {
	b, _ := json.Marshal(map[string]any{"resourceSpans": []any{map[string]any{
		"resource":   map[string]any{"attributes": kvs(map[string]any{"service.name": "app"})},
		"scopeSpans": []any{map[string]any{"scope": map[string]any{"name": "test"}, "spans": spans}}}}})
	return b
}

func gz(b []byte) []byte {
	var out bytes.Buffer
	w := gzip.NewWriter(&out)
	_, _ = w.Write(b)
	_ = w.Close()
	return out.Bytes()
}

func post(t *testing.T, url, ctype, encoding string, body []byte) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url+collect.TracesPath, bytes.NewReader(body))
	req.Header.Set("Content-Type", ctype)
	if encoding != "" {
		req.Header.Set("Content-Encoding", encoding)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

const (
	traceA = "0af7651916cd43dd8448eb211c80319c"
	traceB = "1af7651916cd43dd8448eb211c80319c"
	traceC = "2af7651916cd43dd8448eb211c80319c"
	traceD = "3af7651916cd43dd8448eb211c80319c"
)

// TestConventions sends, as OTLP/JSON, gzipped, the forms SDKs use besides
// the current attributes — OpenLLMetry's deprecated and flattened names,
// the older per-message events, the Vercel AI SDK's ai.* attributes — and a
// trace that is not GenAI, and reads each back as modelwire shows it.
func TestConventions(t *testing.T) {
	r := newRig(t, collect.Options{})
	body := jsonRequest(
		jsonSpan(traceA, "a000000000000001", "", "openai.chat", map[string]any{
			"gen_ai.system": "openai", "llm.request.type": "chat", "gen_ai.request.model": "gpt-x",
			"gen_ai.usage.prompt_tokens": 10, "gen_ai.usage.completion_tokens": 5,
			"gen_ai.prompt.0.role": "user", "gen_ai.prompt.0.content": "hello",
			"gen_ai.completion.0.role": "assistant", "gen_ai.completion.0.content": "hi there",
			"gen_ai.completion.0.finish_reason":   "stop",
			"gen_ai.completion.0.tool_calls.0.id": "call_w", "gen_ai.completion.0.tool_calls.0.name": "weather",
			"gen_ai.completion.0.tool_calls.0.arguments": `{"city":"Paris"}`}),
		jsonSpan(traceB, "b000000000000001", "", "chat m", map[string]any{"gen_ai.operation.name": "chat", "gen_ai.request.model": "m",
			"http.request.header.authorization": "Bearer sk-collect-secret-0001", "url.full": "https://x.example/v1?key=AIzaCollectSecret0002",
			"gen_ai.input.messages": `[{"role":"user","content":"2+2?","api_key":"sk-collect-secret-0003"}]`},
			map[string]any{"name": "gen_ai.user.message", "content": "2+2?"},
			map[string]any{"name": "gen_ai.choice", "finish_reason": "stop", "message": map[string]any{"content": "4"}}),
		jsonSpan(traceC, "c000000000000001", "", "ai.generateText", map[string]any{"ai.operationId": "ai.generateText", "ai.telemetry.functionId": "weather-bot", "ai.settings.maxRetries": 2}),
		jsonSpan(traceC, "c000000000000002", "c000000000000001", "ai.generateText.doGenerate", map[string]any{
			"ai.operationId": "ai.generateText.doGenerate", "ai.model.id": "gpt-4o-mini", "ai.model.provider": "openai.chat",
			"ai.usage.inputTokens": 30, "ai.usage.outputTokens": 7, "ai.usage.cachedInputTokens": 4,
			"ai.prompt.messages":       `[{"role":"user","content":[{"type":"text","text":"weather?"}]}]`,
			"ai.response.text":         "",
			"ai.response.toolCalls":    `[{"toolCallType":"function","toolCallId":"call_v","toolName":"weather","input":"{\"city\":\"Oslo\"}"}]`,
			"ai.response.finishReason": "tool-calls"}),
		jsonSpan(traceC, "c000000000000003", "c000000000000001", "ai.toolCall", map[string]any{
			"ai.operationId": "ai.toolCall", "ai.toolCall.name": "weather", "ai.toolCall.id": "call_v",
			"ai.toolCall.args": `{"city":"Oslo"}`, "ai.toolCall.result": `{"temp":3}`, "app.cache": "miss"}),
		jsonSpan(traceD, "d000000000000001", "", "GET /", map[string]any{"http.request.method": "GET"}),
	)
	resp, out := post(t, r.srv.URL, "application/json", "gzip", gz(body))
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("HTTP %d %s: %s", resp.StatusCode, resp.Header.Get("Content-Type"), out)
	}
	r.close(t)
	got := sessions(t, r.db)
	if len(got) != 3 {
		t.Fatalf("want 3 sessions (the GET trace passes by), got %d", len(got))
	}
	byModel := map[string]*store.Session{}
	for _, s := range got {
		byModel[s.Model] = s
	}
	want := map[string]shape{
		"gpt-x": {Status: "done", Turns: 1,
			Attempts: []string{`1.1 openai-responses in 10 out 5 cache <nil>/<nil> completed/final model="" id="" body=[{"content":"hello","role":"user"}]`},
			Texts:    []string{`1.1 hi there[call call_w weather {"city":"Paris"}]`},
			Calls:    []string{`turn 1 call_w weather args={"city":"Paris"} decision= result=false "" error=false`}},
		"m": {Status: "done", Turns: 1,
			Attempts: []string{`1.1 openai-responses no usage completed/final model="" id="" body=[{"role":"user","content":"2+2?","api_key":"[redacted]"}]`},
			Texts:    []string{`1.1 4`}},
		"gpt-4o-mini": {Status: "done", Turns: 1,
			Attempts: []string{`1.1 openai-responses in 30 out 7 cache 4/<nil> completed/tool_call model="" id="" body=[{"role":"user","content":[{"type":"text","text":"weather?"}]}]`},
			Texts:    []string{`1.1 [call call_v weather {"city":"Oslo"}]`},
			Calls:    []string{`turn 1 call_v weather args={"city":"Oslo"} decision=approved result=true "{\"temp\":3}" error=false`}},
	}
	for model, w := range want {
		s := byModel[model]
		if s == nil {
			t.Errorf("no session of model %s", model)
			continue
		}
		if sh := shapeOf(t, r.db, s); pretty(sh) != pretty(w) {
			t.Errorf("model %s:\n got %s\nwant %s", model, pretty(sh), pretty(w))
		}
		if s.Provider != "openai" && model != "m" {
			t.Errorf("model %s: provider %q, want openai", model, s.Provider)
		}
	}
	// What modelwire does not read is kept and shown: the agent span's in
	// the session's parameters, a tool span's in its decision's reason.
	if v := byModel["gpt-4o-mini"]; v != nil {
		if !strings.Contains(string(v.Manifest.Parameters), "ai.settings.maxRetries=2") || !strings.Contains(v.Title, "invoke_agent weather-bot") {
			t.Errorf("parameters %s", v.Manifest.Parameters)
		}
		if len(v.Calls) != 1 || !strings.Contains(v.Calls[0].Reason, "app.cache=miss") {
			t.Errorf("calls %+v", v.Calls)
		}
	}
	// Secrets in attributes reach neither the parsed turn nor the stored span.
	files, _ := filepath.Glob(filepath.Join(r.dir, "collected.db*"))
	for _, f := range files {
		b, _ := os.ReadFile(f)
		for _, secret := range []string{"sk-collect-secret", "AIzaCollectSecret"} {
			if bytes.Contains(b, []byte(secret)) {
				t.Errorf("%s holds %s", filepath.Base(f), secret)
			}
		}
	}
	if st := r.c.Stats(); st.Passed != 1 || st.Sessions != 3 || st.Spans != 6 || st.Turns != 3 || st.Tools != 1 {
		t.Errorf("stats %+v: want the GET trace passed by", st)
	}
}

// TestMalformed sends what is not OTLP, or too large, over both
// transports: each gets the protocol's error and nothing is stored.
func TestMalformed(t *testing.T) {
	r := newRig(t, collect.Options{MaxRequest: 4096})
	bomb := gz(bytes.Repeat([]byte(" "), 1<<20)) // 1 KiB that inflates to 1 MiB
	badIDs := jsonRequest(jsonSpan("00000000000000000000000000000000", "0000000000000000", "", "chat m", map[string]any{"gen_ai.operation.name": "chat"}))
	cases := []struct {
		name, ctype, encoding string
		body                  []byte
		code                  int
		says                  string
	}{
		{"protobuf garbage", "application/x-protobuf", "", []byte{0xff, 0xff, 0xff, 0x01}, 400, "not an ExportTraceServiceRequest"},
		{"JSON of another shape", "application/json", "", []byte(`{"resourceSpans":5}`), 400, "not an ExportTraceServiceRequest"},
		{"JSON cut short", "application/json", "", []byte(`{"resourceSpans":[{`), 400, "not an ExportTraceServiceRequest"},
		{"ids not hex", "application/json", "", jsonRequest(jsonSpan("zz", "yy", "", "chat", nil)), 400, "not hex"},
		{"ids all zero", "application/json", "", badIDs, 400, "trace_id must be 16 bytes"},
		{"gzip that is not", "application/x-protobuf", "gzip", []byte("not gzip"), 400, "gzip"},
		{"unknown encoding", "application/x-protobuf", "br", []byte{}, 415, "content encoding"},
		{"text", "text/plain", "", []byte("hello"), 415, "content type"},
		{"too large", "application/json", "", bytes.Repeat([]byte(" "), 5000), 413, "larger than 4096 bytes"},
		{"gzip bomb", "application/json", "gzip", bomb, 413, "larger than 4096 bytes"},
	}
	for _, c := range cases {
		resp, out := post(t, r.srv.URL, c.ctype, c.encoding, c.body)
		st := &spb.Status{}
		var err error
		if resp.Header.Get("Content-Type") == "application/json" {
			err = protojson.Unmarshal(out, st)
		} else {
			err = proto.Unmarshal(out, st)
		}
		if resp.StatusCode != c.code || err != nil || !strings.Contains(st.Message, c.says) {
			t.Errorf("%s: HTTP %d %q (%v); want %d saying %q", c.name, resp.StatusCode, st.Message, err, c.code, c.says)
		}
	}
	resp, _ := http.Get(r.srv.URL + collect.TracesPath)
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET: HTTP %d, want 405", resp.StatusCode)
	}
	resp.Body.Close()

	client := grpcClient(t, r.c)
	zero := &coltracepb.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{{ScopeSpans: []*tracepb.ScopeSpans{{Spans: []*tracepb.Span{
		{TraceId: make([]byte, 16), SpanId: make([]byte, 8), Name: "chat"}}}}}}}
	if _, err := client.Export(context.Background(), zero); status.Code(err) != codes.InvalidArgument {
		t.Errorf("gRPC, ids all zero: %v, want InvalidArgument", err)
	}
	big := proto.Clone(zero).(*coltracepb.ExportTraceServiceRequest)
	big.ResourceSpans[0].ScopeSpans[0].Spans[0].Attributes = []*commonpb.KeyValue{{Key: "x", Value: &commonpb.AnyValue{
		Value: &commonpb.AnyValue_StringValue{StringValue: strings.Repeat("x", 5000)}}}}
	if _, err := client.Export(context.Background(), big); status.Code(err) != codes.ResourceExhausted {
		t.Errorf("gRPC, too large: %v, want ResourceExhausted", err)
	}
	r.close(t)
	if got := sessions(t, r.db); len(got) != 0 {
		t.Errorf("malformed requests stored %d sessions", len(got))
	}
}

// TestPartialSuccess refuses the one span with bad ids and keeps the rest,
// saying so as OTLP's partial success does.
func TestPartialSuccess(t *testing.T) {
	r := newRig(t, collect.Options{})
	body := jsonRequest(
		jsonSpan(traceA, "a000000000000001", "", "chat m", map[string]any{"gen_ai.operation.name": "chat", "gen_ai.request.model": "m"}),
		jsonSpan("00000000000000000000000000000000", "a000000000000002", "", "chat m", map[string]any{"gen_ai.operation.name": "chat"}))
	resp, out := post(t, r.srv.URL, "application/json", "", body)
	var got coltracepb.ExportTraceServiceResponse
	if err := protojson.Unmarshal(out, &got); err != nil || resp.StatusCode != 200 || got.GetPartialSuccess().GetRejectedSpans() != 1 {
		t.Fatalf("HTTP %d %s (%v): want 200 with one span rejected", resp.StatusCode, out, err)
	}
	r.close(t)
	if s := sessions(t, r.db); len(s) != 1 || s[0].Turns != 1 {
		t.Fatalf("want the valid span's session")
	}
}

// TestForward passes every request on, byte for byte, with its content
// type and encoding, and one received over gRPC as the same protobuf; a
// full queue drops and counts, and never holds up receiving.
func TestForward(t *testing.T) {
	cap := &capture{}
	next := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(req.Body)
			if err != nil {
				http.Error(w, err.Error(), 400)
				return
			}
			req.Body = io.NopCloser(zr)
		}
		cap.ServeHTTP(w, req)
	}))
	defer next.Close()
	r := newRig(t, collect.Options{Forward: next.URL + collect.TracesPath})
	first := jsonRequest(jsonSpan(traceA, "a000000000000001", "", "chat m", map[string]any{"gen_ai.operation.name": "chat"}))
	second := jsonRequest(jsonSpan(traceB, "b000000000000001", "", "GET /", nil))
	if resp, out := post(t, r.srv.URL, "application/json", "gzip", gz(first)); resp.StatusCode != 200 {
		t.Fatalf("HTTP %d %s", resp.StatusCode, out)
	}
	if resp, out := post(t, r.srv.URL, "application/json", "", second); resp.StatusCode != 200 {
		t.Fatalf("HTTP %d %s", resp.StatusCode, out)
	}
	req := &coltracepb.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{{ScopeSpans: []*tracepb.ScopeSpans{{Spans: []*tracepb.Span{
		{TraceId: bytes.Repeat([]byte{7}, 16), SpanId: bytes.Repeat([]byte{8}, 8), Name: "grpc span"}}}}}}}
	if _, err := grpcClient(t, r.c).Export(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	r.close(t) // drains the queue
	if len(cap.bodies) != 3 || !bytes.Equal(cap.bodies[0], first) || !bytes.Equal(cap.bodies[1], second) ||
		cap.ctypes[0] != "application/json" || cap.ctypes[2] != "application/x-protobuf" {
		t.Fatalf("forwarded %d requests %q", len(cap.bodies), cap.ctypes)
	}
	var fwd coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(cap.bodies[2], &fwd); err != nil || !proto.Equal(&fwd, req) {
		t.Errorf("the gRPC request forwarded is not the one received (%v)", err)
	}
	if st := r.c.Stats(); st.Forwarded != 3 || st.Dropped != 0 || st.FwdFailed != 0 {
		t.Errorf("stats %+v", st)
	}

	// A queue too small for the request: dropped and counted, received all the same.
	small := newRig(t, collect.Options{Forward: next.URL + collect.TracesPath, ForwardBuffer: 16})
	if resp, _ := post(t, small.srv.URL, "application/json", "", first); resp.StatusCode != 200 {
		t.Fatalf("HTTP %d", resp.StatusCode)
	}
	small.close(t)
	if st := small.c.Stats(); st.Dropped != 1 || st.Forwarded != 0 || st.Sessions != 1 {
		t.Errorf("stats %+v: want one dropped, the session recorded", st)
	}
}
