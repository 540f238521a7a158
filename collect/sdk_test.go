package collect_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/encoding/gzip"
	"google.golang.org/protobuf/proto"

	"github.com/modelwire/modelwire/adapters"
	application "github.com/modelwire/modelwire/app"
	"github.com/modelwire/modelwire/collect"
	"github.com/modelwire/modelwire/samples"
	"github.com/modelwire/modelwire/sim"
	"github.com/modelwire/modelwire/store"
)

// startSim is a `modelwire serve` of the refund scenario, its base URL.
func startSim(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	sc, err := samples.Lookup("refund")
	if err != nil {
		t.Fatal(err)
	}
	base, err := application.StartSimulator(ctx, "127.0.0.1:0", sim.Options{Scenario: sc})
	if err != nil {
		t.Fatal(err)
	}
	return base
}

// turnSeen is what the instrumented client saw of one model call.
type turnSeen struct {
	id, model, text, finish string
	in, out                 int64
	calls                   []callSeen
}

type callSeen struct{ id, name, args, result string }

type chatCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type chatReply struct {
	ID      string `json:"id"`
	Model   string `json:"model"`
	Choices []struct {
		Message struct {
			Content   *string    `json:"content"`
			ToolCalls []chatCall `json:"tool_calls"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage struct {
		Prompt     int64 `json:"prompt_tokens"`
		Completion int64 `json:"completion_tokens"`
	} `json:"usage"`
}

// toolResults are what the client's tools answer.
var toolResults = map[string]string{
	"get_order_line":    `{"status":"ok","evidence_id":"E-order","order_id":"O-2048","line_id":"L1","currency":"CNY","paid_cents":18000,"category":"headphones","received_at":"2026-10-15T12:00:00+08:00","reason":"quality_issue","quality_evidence":"missing"}`,
	"get_refund_ledger": `{"status":"ok","evidence_id":"E-ledger","currency":"CNY","successful_refund_cents":3000,"pending_hold_cents":2000}`,
	"get_refund_policy": `{"status":"ok","evidence_id":"E-policy","version":"aftersale-v3","within_7_days":true,"quality_evidence_required":true}`,
}

const chatTools = `[{"type":"function","function":{"name":"get_order_line","parameters":{"type":"object","properties":{"order_id":{"type":"string"},"line_id":{"type":"string"}}}}},
{"type":"function","function":{"name":"get_refund_ledger","parameters":{"type":"object","properties":{"order_id":{"type":"string"},"line_id":{"type":"string"}}}}},
{"type":"function","function":{"name":"get_refund_policy","parameters":{"type":"object","properties":{"category":{"type":"string"},"received_at":{"type":"string"},"reason":{"type":"string"}}}}}]`

// runAgent is an application instrumented by hand with the Go
// OpenTelemetry SDK, as the GenAI conventions say: an invoke_agent span,
// a chat span per call to the simulator's Chat Completions endpoint
// (its messages as gen_ai.input/output.messages when content is on) and
// an execute_tool span per tool it runs. It returns what it saw.
func runAgent(t *testing.T, tr trace.Tracer, base string, content bool) []turnSeen {
	t.Helper()
	ctx, root := tr.Start(context.Background(), "invoke_agent refund", trace.WithAttributes(
		attribute.String("gen_ai.operation.name", "invoke_agent"), attribute.String("gen_ai.agent.name", "refund")))
	defer root.End()
	_, health := tr.Start(ctx, "GET /healthz", trace.WithAttributes(attribute.String("http.request.method", "GET")))
	health.End()
	u, _ := url.Parse(base)
	host, portText, _ := net.SplitHostPort(u.Host)
	port, _ := strconv.Atoi(portText)
	messages := []any{map[string]any{"role": "user", "content": "帮我核查订单 O-2048 中商品 L1 的 150 元退款申请。"}}
	var seen []turnSeen
	for turn := 0; turn < 4; turn++ {
		_, span := tr.Start(ctx, "chat refund-model", trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(
			attribute.String("gen_ai.operation.name", "chat"), attribute.String("gen_ai.provider.name", "openai"),
			attribute.String("gen_ai.request.model", "refund-model"), attribute.String("server.address", host),
			attribute.Int("server.port", port), attribute.String("app.tenant", "acme")))
		body, _ := json.Marshal(map[string]any{"model": "refund-model", "messages": messages, "tools": json.RawMessage(chatTools)})
		resp, err := http.Post(base+"/v1/chat/completions", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var r chatReply
		if err := json.Unmarshal(raw, &r); err != nil || len(r.Choices) == 0 {
			t.Fatalf("the simulator answered %d %s", resp.StatusCode, raw)
		}
		ch := r.Choices[0]
		ts := turnSeen{id: r.ID, model: r.Model, finish: ch.FinishReason, in: r.Usage.Prompt, out: r.Usage.Completion}
		if ch.Message.Content != nil {
			ts.text = *ch.Message.Content
		}
		span.SetAttributes(attribute.String("gen_ai.response.id", r.ID), attribute.String("gen_ai.response.model", r.Model),
			attribute.StringSlice("gen_ai.response.finish_reasons", []string{ch.FinishReason}),
			attribute.Int64("gen_ai.usage.input_tokens", r.Usage.Prompt), attribute.Int64("gen_ai.usage.output_tokens", r.Usage.Completion),
			attribute.Int("http.response.status_code", resp.StatusCode))
		parts := []map[string]any{}
		if ts.text != "" {
			parts = append(parts, map[string]any{"type": "text", "content": ts.text})
		}
		for _, c := range ch.Message.ToolCalls {
			parts = append(parts, map[string]any{"type": "tool_call", "id": c.ID, "name": c.Function.Name, "arguments": json.RawMessage(c.Function.Arguments)})
		}
		if content {
			in, _ := json.Marshal(messages)
			out, _ := json.Marshal([]any{map[string]any{"role": "assistant", "parts": parts, "finish_reason": ch.FinishReason}})
			span.SetAttributes(attribute.String("gen_ai.input.messages", string(in)), attribute.String("gen_ai.output.messages", string(out)))
		}
		span.End()
		messages = append(messages, map[string]any{"role": "assistant", "content": ch.Message.Content, "tool_calls": ch.Message.ToolCalls})
		for _, c := range ch.Message.ToolCalls {
			_, tool := tr.Start(ctx, "execute_tool "+c.Function.Name, trace.WithAttributes(
				attribute.String("gen_ai.operation.name", "execute_tool"), attribute.String("gen_ai.tool.name", c.Function.Name),
				attribute.String("gen_ai.tool.call.id", c.ID)))
			result := toolResults[c.Function.Name]
			if content {
				tool.SetAttributes(attribute.String("gen_ai.tool.call.arguments", c.Function.Arguments), attribute.String("gen_ai.tool.call.result", result))
			}
			tool.End()
			ts.calls = append(ts.calls, callSeen{id: c.ID, name: c.Function.Name, args: c.Function.Arguments, result: result})
			messages = append(messages, map[string]any{"role": "tool", "tool_call_id": c.ID, "content": result})
		}
		seen = append(seen, ts)
		if len(ch.Message.ToolCalls) == 0 {
			break
		}
	}
	return seen
}

// tracer is a tracer provider exporting over OTLP/HTTP to endpoint.
func tracer(t *testing.T, endpoint string) (*sdktrace.TracerProvider, trace.Tracer) {
	t.Helper()
	exp, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpointURL(endpoint+"/v1/traces"))
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp),
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", "refund-agent"))))
	return tp, tp.Tracer("refund-agent")
}

// diagnostics are the session's diagnostic events by kind.
func diagnostics(t *testing.T, db *store.DB, id string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	err := db.EachEntry(id, 1, 0, func(e store.Entry) error {
		ev, ok, err := e.Canonical()
		if ok && ev.Type == adapters.EvDiagnostic {
			out[ev.Kind] = append(out[ev.Kind], ev.Detail)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// checkCollected compares the one collected session with what the client saw.
func checkCollected(t *testing.T, db *store.DB, seen []turnSeen, content bool) *store.Session {
	t.Helper()
	got := sessions(t, db)
	if len(got) != 1 {
		t.Fatalf("want one session (one trace), got %d", len(got))
	}
	s := got[0]
	if s.Turns != len(seen) || len(s.Attempts) != len(seen) || s.Status != store.StatusDone || s.Source != collect.Source {
		t.Fatalf("session: %d turns, %d attempts, %s, source %s; want %d turns, done, collect", s.Turns, len(s.Attempts), s.Status, s.Source, len(seen))
	}
	if !strings.Contains(s.Title, "invoke_agent refund") || s.Model != "refund-model" {
		t.Errorf("title %q model %q", s.Title, s.Model)
	}
	sh := shapeOf(t, db, s)
	var calls []string
	for i, ts := range seen {
		a := s.Attempts[i]
		if a.Turn != i+1 || a.Usage == nil || *a.Usage.InputTokens != ts.in || *a.Usage.OutputTokens != ts.out ||
			a.ResponseID != ts.id || a.ResponseModel != ts.model || a.StatusCode != 200 {
			t.Errorf("turn %d: attempt %+v usage %+v; the client saw %+v", i+1, a, a.Usage, ts)
		}
		var want strings.Builder
		want.WriteString(ts.text)
		for _, c := range ts.calls {
			if content {
				fmt.Fprintf(&want, "[call %s %s %s]", c.id, c.name, c.args)
			}
			result := ""
			if content {
				result = c.result
			}
			calls = append(calls, fmt.Sprintf("turn %d %s %s args=%s decision=approved result=%v %q error=false", i+1, c.id, c.name, map[bool]string{true: c.args}[content], content, result))
		}
		if content && sh.Texts[i] != fmt.Sprintf("%d.1 %s", i+1, want.String()) {
			t.Errorf("turn %d text %q, the client saw %q", i+1, sh.Texts[i], want.String())
		}
	}
	if strings.Join(sh.Calls, "\n") != strings.Join(calls, "\n") {
		t.Errorf("calls:\n%s\nwant:\n%s", strings.Join(sh.Calls, "\n"), strings.Join(calls, "\n"))
	}
	diags := diagnostics(t, db, s.ID)
	if un := diags["unmapped_attributes"]; len(un) != len(seen) || !strings.Contains(un[0], "app.tenant=acme") {
		t.Errorf("unmapped attributes shown: %q", un)
	}
	if nc := diags["content_not_captured"]; (len(nc) > 0) == content {
		t.Errorf("content captured %v, yet 'content not captured' said %d times", content, len(nc))
	}
	for _, v := range s.Validations {
		if v.Layer == "parse" && (v.Status != store.VerdictSkip || (v.Detail == collect.NotCaptured) == content) {
			t.Errorf("parse layer %s %q (content %v)", v.Status, v.Detail, content)
		}
	}
	return s
}

// TestGoSDKOverHTTP drives an application instrumented with the Go
// OpenTelemetry SDK (OTLP/HTTP protobuf) against the simulator, with
// content captured and without, and finds each trace as one session.
func TestGoSDKOverHTTP(t *testing.T) {
	base := startSim(t)
	for _, content := range []bool{true, false} {
		t.Run(fmt.Sprintf("content=%v", content), func(t *testing.T) {
			r := newRig(t, collect.Options{})
			tp, tr := tracer(t, r.srv.URL)
			seen := runAgent(t, tr, base, content)
			if err := tp.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
			r.close(t)
			if len(seen) < 2 || len(seen[0].calls) == 0 {
				t.Fatalf("the simulator's refund loop proposed no tool call: %+v", seen)
			}
			checkCollected(t, r.db, seen, content)
			st := r.c.Stats()
			if st.Passed != 1 || st.Turns != int64(len(seen)) || st.Sessions != 1 {
				t.Errorf("stats %+v: want the health check passed by, %d turns, one session", st, len(seen))
			}
		})
	}
}

// capture is an OTLP/HTTP endpoint that keeps each request's body.
type capture struct {
	mu     sync.Mutex
	bodies [][]byte
	ctypes []string
}

func (c *capture) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	c.mu.Lock()
	c.bodies = append(c.bodies, b)
	c.ctypes = append(c.ctypes, r.Header.Get("Content-Type"))
	c.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-protobuf")
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	_, _ = w.Write(out)
}

// TestGoSDKOverGRPC sends what the Go SDK exported over OTLP/gRPC
// instead, through the generated TraceService client.
func TestGoSDKOverGRPC(t *testing.T) {
	base := startSim(t)
	cap := &capture{}
	srv := httptest.NewServer(cap)
	defer srv.Close()
	tp, tr := tracer(t, srv.URL)
	seen := runAgent(t, tr, base, true)
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}

	r := newRig(t, collect.Options{})
	client := grpcClient(t, r.c)
	for _, b := range cap.bodies {
		req := &coltracepb.ExportTraceServiceRequest{}
		if err := proto.Unmarshal(b, req); err != nil {
			t.Fatal(err)
		}
		// As OTEL_EXPORTER_OTLP_COMPRESSION=gzip sends it.
		if _, err := client.Export(context.Background(), req, grpc.UseCompressor(gzip.Name)); err != nil {
			t.Fatal(err)
		}
	}
	r.close(t)
	checkCollected(t, r.db, seen, true)
}

// grpcClient serves c's gRPC receiver on a loopback port and dials it.
func grpcClient(t *testing.T, c *collect.Collector) coltracepb.TraceServiceClient {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := c.GRPC()
	go func() { _ = gs.Serve(ln) }()
	t.Cleanup(gs.Stop)
	conn, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return coltracepb.NewTraceServiceClient(conn)
}
