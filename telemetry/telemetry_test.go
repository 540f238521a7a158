package telemetry_test

import (
	"bytes"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	collectorpb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/modelwire/modelwire/cli"
	"github.com/modelwire/modelwire/samples"
	"github.com/modelwire/modelwire/sim"
	"github.com/modelwire/modelwire/store"
	"github.com/modelwire/modelwire/telemetry"
)

// refundSession runs the refund walkthrough headless into a fresh
// database and returns the database path and the session id.
func refundSession(t *testing.T, extra ...string) (string, string) {
	t.Helper()
	dbPath := filepath.Join(t.TempDir(), "mw.db")
	var out, errb bytes.Buffer
	args := append([]string{"--db", dbPath, "run", "--approve", "auto"}, extra...)
	if code := cli.Main(args, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("run: exit %d: %s", code, errb.String())
	}
	db, err := store.Open(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	list, err := db.ListSessions(store.Filter{})
	if err != nil || len(list) != 1 {
		t.Fatalf("sessions: %v %v", list, err)
	}
	return dbPath, list[0].ID
}

// receiver is an OTLP/HTTP traces endpoint that keeps what it is sent.
type receiver struct {
	mu    sync.Mutex
	spans []*tracepb.Span
	raw   [][]byte
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.URL.Path != "/v1/traces" || req.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "want POST /v1/traces with protobuf", http.StatusNotFound)
		return
	}
	body, _ := io.ReadAll(req.Body)
	var msg collectorpb.ExportTraceServiceRequest
	if err := proto.Unmarshal(body, &msg); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	r.raw = append(r.raw, body)
	for _, rs := range msg.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			r.spans = append(r.spans, ss.Spans...)
		}
	}
	r.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-protobuf")
	b, _ := proto.Marshal(&collectorpb.ExportTraceServiceResponse{})
	_, _ = w.Write(b)
}

func attrs(kvs []*commonpb.KeyValue) map[string]*commonpb.AnyValue {
	m := map[string]*commonpb.AnyValue{}
	for _, kv := range kvs {
		m[kv.Key] = kv.Value
	}
	return m
}

// TestExportRefundOverOTLP sends the refund session through the CLI to an
// OTLP receiver and checks the trace a backend would show: the root, one
// span per model call and per tool execution under it, the GenAI
// attributes, the validation layers as events, and no content by default.
func TestExportRefundOverOTLP(t *testing.T) {
	dbPath, id := refundSession(t)
	rcv := &receiver{}
	srv := httptest.NewServer(rcv)
	defer srv.Close()
	var out, errb bytes.Buffer
	code := cli.Main([]string{"--db", dbPath, "export", id, "--format", "otlp", "--endpoint", srv.URL}, strings.NewReader(""), &out, &errb)
	if code != 0 {
		t.Fatalf("export: exit %d: %s", code, errb.String())
	}
	tid := telemetry.TraceID(id)
	if !strings.Contains(out.String(), tid.String()) {
		t.Errorf("export says %q, want the trace id %s", out.String(), tid)
	}
	var root *tracepb.Span
	var calls, tools []*tracepb.Span
	for _, s := range rcv.spans {
		if hex.EncodeToString(s.TraceId) != tid.String() {
			t.Errorf("span %q in trace %x, want %s", s.Name, s.TraceId, tid)
		}
		switch attrs(s.Attributes)["gen_ai.operation.name"].GetStringValue() {
		case "invoke_agent":
			root = s
		case "chat":
			calls = append(calls, s)
		case "execute_tool":
			tools = append(tools, s)
		default:
			t.Errorf("span %q has no known gen_ai.operation.name", s.Name)
		}
	}
	if root == nil || len(root.ParentSpanId) != 0 {
		t.Fatalf("no root span (or it has a parent): %v", root)
	}
	if len(calls) != 3 || len(tools) != 3 {
		t.Fatalf("%d model call spans and %d tool spans, want 3 and 3 (the refund walkthrough)", len(calls), len(tools))
	}
	for _, s := range append(calls, tools...) {
		if !bytes.Equal(s.ParentSpanId, root.SpanId) {
			t.Errorf("span %q: parent %x, want the session's root %x", s.Name, s.ParentSpanId, root.SpanId)
		}
	}
	for _, s := range calls {
		a := attrs(s.Attributes)
		for _, k := range []string{"gen_ai.request.model", "gen_ai.response.model", "gen_ai.response.id"} {
			if a[k].GetStringValue() == "" {
				t.Errorf("call span %q: %s missing", s.Name, k)
			}
		}
		if a["gen_ai.provider.name"].GetStringValue() != "openai" || a["gen_ai.system"].GetStringValue() != "openai" {
			t.Errorf("call span %q: provider %v / system %v, want openai", s.Name, a["gen_ai.provider.name"], a["gen_ai.system"])
		}
		if v := a["gen_ai.response.finish_reasons"].GetArrayValue().GetValues(); len(v) != 1 || v[0].GetStringValue() == "" {
			t.Errorf("call span %q: finish_reasons %v", s.Name, v)
		}
		if a["gen_ai.usage.input_tokens"].GetIntValue() <= 0 || a["gen_ai.usage.output_tokens"].GetIntValue() <= 0 {
			t.Errorf("call span %q: usage %v / %v", s.Name, a["gen_ai.usage.input_tokens"], a["gen_ai.usage.output_tokens"])
		}
		if s.Kind != tracepb.Span_SPAN_KIND_CLIENT {
			t.Errorf("call span %q: kind %v, want client", s.Name, s.Kind)
		}
		// The time points as span events, in order; the provider's own
		// figure as attributes beside them, never one of them.
		var points []string
		last := uint64(0)
		for _, ev := range s.Events {
			if strings.HasPrefix(ev.Name, "modelwire.") && ev.Name != "modelwire.validation" {
				points = append(points, strings.TrimPrefix(ev.Name, "modelwire."))
				if ev.TimeUnixNano < last {
					t.Errorf("call span %q: %s before the point ahead of it", s.Name, ev.Name)
				}
				last = ev.TimeUnixNano
			}
		}
		if got := strings.Join(points, " "); !strings.HasPrefix(got, "sent first_response first_event first_token") || !strings.HasSuffix(got, "terminal") {
			t.Errorf("call span %q: time points %q", s.Name, got)
		}
		if a["modelwire.server_reported.duration_ms"].GetDoubleValue() <= 0 || a["modelwire.server_reported.source"].GetStringValue() != "openai-processing-ms" {
			t.Errorf("call span %q: server figure %v from %v", s.Name, a["modelwire.server_reported.duration_ms"], a["modelwire.server_reported.source"])
		}
	}
	names := map[string]bool{}
	for _, s := range tools {
		a := attrs(s.Attributes)
		names[a["gen_ai.tool.name"].GetStringValue()] = true
		if !strings.HasPrefix(a["gen_ai.tool.call.id"].GetStringValue(), "call_") {
			t.Errorf("tool span %q: call id %v", s.Name, a["gen_ai.tool.call.id"])
		}
	}
	for _, n := range []string{"get_order_line", "get_refund_ledger", "get_refund_policy"} {
		if !names[n] {
			t.Errorf("no execute_tool span for %s (have %v)", n, names)
		}
	}
	var layers []string
	for _, ev := range root.Events {
		if ev.Name == "modelwire.validation" {
			a := attrs(ev.Attributes)
			layers = append(layers, a["modelwire.validation.layer"].GetStringValue()+"="+a["modelwire.validation.status"].GetStringValue())
		}
	}
	if got := strings.Join(layers, " "); got != "transport=pass protocol=pass parse=pass schema=pass domain=pass" {
		t.Errorf("validation events on the root: %q", got)
	}
	for _, raw := range rcv.raw {
		for _, secret := range []string{"gen_ai.tool.call.arguments", "gen_ai.output.messages", "modelwire.request.body", "O-2048"} {
			if bytes.Contains(raw, []byte(secret)) {
				t.Errorf("without --otel-content the export carries %q", secret)
			}
		}
	}
}

// TestExportContentOnlyWhenAsked: --otel-content adds the prompts, the
// answer and the tool data; keys still never travel.
func TestExportContentOnlyWhenAsked(t *testing.T) {
	const canary = "sk-canary-7f3a9e21telemetry"
	t.Setenv("OPENAI_API_KEY", canary)
	sc, err := samples.Lookup("refund")
	if err != nil {
		t.Fatal(err)
	}
	base, err := sim.New(sim.Options{Scenario: sc, Lookup: samples.Lookup}).Start(t.Context(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dbPath, id := refundSession(t, "--provider", "openai", "--base-url", base+"/v1")
	db, err := store.Open(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	spans, _, err := telemetry.Spans(db, id, telemetry.Options{Content: true})
	if err != nil {
		t.Fatal(err)
	}
	var all strings.Builder
	found := map[string]bool{}
	for _, s := range spans {
		for _, kv := range s.Attributes() {
			found[string(kv.Key)] = true
			all.WriteString(kv.Value.String())
		}
	}
	for _, k := range []string{"gen_ai.tool.call.arguments", "gen_ai.tool.call.result", "gen_ai.output.messages", "modelwire.request.body"} {
		if !found[k] {
			t.Errorf("with content, %s is missing", k)
		}
	}
	if !strings.Contains(all.String(), "O-2048") {
		t.Error("with content, the order id from the prompt is nowhere")
	}
	if strings.Contains(all.String(), canary) {
		t.Error("the API key reached the trace")
	}
}

func TestExportBadEndpoints(t *testing.T) {
	dbPath, id := refundSession(t)
	srv := httptest.NewServer(http.NotFoundHandler())
	dead := srv.URL
	srv.Close() // nothing listens there any more
	for _, c := range []struct {
		endpoint string
		code     int
		says     string
	}{
		{"ftp://example.com", 2, "http"},
		{"http://user:pw@127.0.0.1:4318", 2, "credentials"},
		{"127.0.0.1:4318", 2, "http"},
		{dead, 1, "exporting session"},
	} {
		var out, errb bytes.Buffer
		code := cli.Main([]string{"--db", dbPath, "export", id, "--format", "otlp", "--endpoint", c.endpoint}, strings.NewReader(""), &out, &errb)
		if code != c.code || !strings.Contains(errb.String(), c.says) || strings.Count(errb.String(), "\n") != 1 {
			t.Errorf("--endpoint %s: exit %d, %q; want exit %d naming %q in one line", c.endpoint, code, errb.String(), c.code, c.says)
		}
		if strings.Contains(errb.String(), "pw@") {
			t.Errorf("--endpoint %s: the error repeats the password", c.endpoint)
		}
	}
}

// TestLiveExportFromRun: with OTEL_EXPORTER_OTLP_ENDPOINT set, run sends
// its session when it ends, without being asked.
func TestLiveExportFromRun(t *testing.T) {
	rcv := &receiver{}
	srv := httptest.NewServer(rcv)
	defer srv.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL)
	_, id := refundSession(t)
	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	if len(rcv.spans) != 7 {
		t.Fatalf("live export sent %d spans, want 7 (root, 3 calls, 3 tools)", len(rcv.spans))
	}
	if got := hex.EncodeToString(rcv.spans[0].TraceId); got != telemetry.TraceID(id).String() {
		t.Errorf("trace %s, want %s", got, telemetry.TraceID(id))
	}
}
