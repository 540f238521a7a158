package collect_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"sync"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/modelwire/modelwire/collect"
	"github.com/modelwire/modelwire/store"
)

func str(k, v string) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v}}}
}

func num(k string, v int64) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: v}}}
}

// agentTrace is one agent run as an instrumented application exports it:
// the invoke_agent root, four chat spans with usage and captured
// messages, three execute_tool spans and other spans that are not GenAI
// (HTTP, database).
func agentTrace(n, other int) []*tracepb.Span {
	tid := make([]byte, 16)
	binary.BigEndian.PutUint64(tid[8:], uint64(n)+1)
	tid[0] = 0xab
	id := func(i int) []byte {
		s := make([]byte, 8)
		binary.BigEndian.PutUint32(s, uint32(n)+1)
		binary.BigEndian.PutUint16(s[6:], uint16(i+1))
		return s
	}
	t0 := time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC).Add(time.Duration(n) * time.Second)
	at := func(ms int) uint64 { return uint64(t0.Add(time.Duration(ms) * time.Millisecond).UnixNano()) }
	root := &tracepb.Span{TraceId: tid, SpanId: id(0), Name: "invoke_agent bench", StartTimeUnixNano: at(0), EndTimeUnixNano: at(900),
		Attributes: []*commonpb.KeyValue{str("gen_ai.operation.name", "invoke_agent"), str("gen_ai.agent.name", "bench")}}
	spans := []*tracepb.Span{root}
	for turn := 0; turn < 4; turn++ {
		spans = append(spans, &tracepb.Span{TraceId: tid, SpanId: id(1 + turn), ParentSpanId: root.SpanId, Name: "chat m",
			StartTimeUnixNano: at(turn * 200), EndTimeUnixNano: at(turn*200 + 150), Attributes: []*commonpb.KeyValue{
				str("gen_ai.operation.name", "chat"), str("gen_ai.provider.name", "openai"), str("gen_ai.request.model", "m"),
				num("gen_ai.usage.input_tokens", 120), num("gen_ai.usage.output_tokens", 30),
				str("gen_ai.input.messages", `[{"role":"user","parts":[{"type":"text","content":"what is the refund cap?"}]}]`),
				str("gen_ai.output.messages", fmt.Sprintf(`[{"role":"assistant","parts":[{"type":"tool_call","id":"call_%d","name":"lookup","arguments":{"q":"cap"}}],"finish_reason":"tool_call"}]`, turn)),
			}})
		if turn < 3 {
			spans = append(spans, &tracepb.Span{TraceId: tid, SpanId: id(5 + turn), ParentSpanId: root.SpanId, Name: "execute_tool lookup",
				StartTimeUnixNano: at(turn*200 + 160), EndTimeUnixNano: at(turn*200 + 190), Attributes: []*commonpb.KeyValue{
					str("gen_ai.operation.name", "execute_tool"), str("gen_ai.tool.name", "lookup"), str("gen_ai.tool.call.id", fmt.Sprintf("call_%d", turn)),
					str("gen_ai.tool.call.result", `{"cap":13000}`)}})
		}
	}
	for i := 0; i < other; i++ {
		spans = append(spans, &tracepb.Span{TraceId: tid, SpanId: id(8 + i), ParentSpanId: root.SpanId, Name: "GET /db",
			StartTimeUnixNano: at(10), EndTimeUnixNano: at(20), Attributes: []*commonpb.KeyValue{str("db.system", "sqlite")}})
	}
	return spans
}

// BenchmarkReceive sends agent traces over OTLP/HTTP (protobuf, about 100
// spans a request, four senders at once) and checks that every span was
// received and every session, turn and tool execution stored. b.N counts
// spans; it reports spans/s, from the first request to the last session
// committed, and received-spans/s, to the last request answered (the
// rest waits, bounded by MaxOpen traces, to be written). "genai" traces are all GenAI but two spans; "typical" ones
// carry 42 spans of other instrumentation (HTTP, database) besides.
func BenchmarkReceive(b *testing.B) {
	b.Run("genai", func(b *testing.B) { benchReceive(b, 2) })
	b.Run("typical", func(b *testing.B) { benchReceive(b, 42) })
}

func benchReceive(b *testing.B, other int) {
	db, err := store.Open(filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	c := collect.New(collect.Options{DB: db}) // the default bounds: --max-open 1000
	srv := http.Server{Handler: c.Handler()}
	ln := listen(b)
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	url := "http://" + ln.Addr().String() + collect.TracesPath

	size := 8 + other // spans a trace
	perRequest := max(1, 100/size)
	requests := max(1, b.N/(size*perRequest))
	bodies := make([][]byte, requests)
	for i := range bodies {
		req := &coltracepb.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{{ScopeSpans: []*tracepb.ScopeSpans{{}}}}}
		for j := 0; j < perRequest; j++ {
			ss := req.ResourceSpans[0].ScopeSpans[0]
			ss.Spans = append(ss.Spans, agentTrace(i*perRequest+j, other)...)
		}
		bodies[i], _ = proto.Marshal(req)
	}
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	next := make(chan []byte)
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for body := range next {
				resp, err := http.Post(url, "application/x-protobuf", bytes.NewReader(body))
				if err != nil || resp.StatusCode != 200 {
					b.Errorf("post: %v %v", err, resp)
					return
				}
				resp.Body.Close()
			}
		}()
	}
	for _, body := range bodies {
		next <- body
	}
	close(next)
	wg.Wait()
	received := time.Since(start) // every request answered; some spans still waiting to be written
	if err := c.Close(context.Background()); err != nil {
		b.Fatal(err)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	traces := int64(requests * perRequest)
	st := c.Stats()
	if st.Spans != traces*int64(size) || st.Turns != traces*4 || st.Tools != traces*3 || st.Passed != traces*int64(other) || st.Failed != 0 || st.Sessions != traces {
		b.Fatalf("lost spans: %+v for %d traces", st, traces)
	}
	list, err := db.ListSessions(store.Filter{})
	if err != nil {
		b.Fatal(err)
	}
	turns := 0
	for _, s := range list {
		turns += s.Turns
	}
	if int64(len(list)) != traces || int64(turns) != traces*4 {
		b.Fatalf("stored %d sessions, %d turns; want %d, %d", len(list), turns, traces, traces*4)
	}
	b.ReportMetric(float64(st.Spans)/elapsed.Seconds(), "spans/s")
	b.ReportMetric(float64(st.Spans)/received.Seconds(), "received-spans/s")
}

func listen(tb testing.TB) net.Listener {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	return ln
}
