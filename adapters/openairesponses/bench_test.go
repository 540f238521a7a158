package openairesponses

// Benchmarks over one ~50 MB stream: ours (adapters.ReadStream: SSE reader,
// decoder, reducer), the official SDK as its users drive it (NewStreaming,
// AsAny on every event, text and arguments accumulated), and a bare pass
// that only splits lines and validates each data payload.
//
//	go test -run XXX -bench . -benchtime 3x ./adapters/openairesponses/

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/modelwire/modelwire/adapters"
)

var (
	benchOnce sync.Once
	benchBody []byte
)

// benchStream builds a realistic ~50 MB stream: message items of mixed
// Chinese and English text deltas, function calls with many argument
// fragments, reasoning summaries, in the event order of a real stream.
func benchStream() []byte {
	benchOnce.Do(func() {
		const target = 50 << 20
		w := newSSE("benchmark stream")
		o := respOpts{id: "resp_bench0000000000000000000000000001"}
		w.start(o)
		text := strings.Repeat("您好，您申请退款 150 元。According to the order record, the line was paid 180 CNY; 已退 30 元。", 4)
		args := `{"order_id":"O-2048","line_id":"L1","note":"` + strings.Repeat("核查 refund ledger entries; ", 20) + `"}`
		idx := 0
		for w.b.Len() < target {
			w.reasoning(idx, fmt.Sprintf("rs_bench%08d", idx), []string{"**Plan**\n\n先查订单行，再并行查台账与政策。"}, "gAAAAABo8KHDYmVuY2g=")
			idx++
			w.text(idx, fmt.Sprintf("msg_bench%08d", idx), text, -1)
			idx++
			w.call(idx, fmt.Sprintf("fc_bench%08d", idx), fmt.Sprintf("call_bench%08d", idx), "get_order_line", args)
			idx++
		}
		o.status, o.usage = "completed", usage(90000, 4096, 0, 12000000, 3000)
		w.ev("response.completed", "response", response(o))
		benchBody = []byte(w.b.String())
	})
	return benchBody
}

func BenchmarkDecode(b *testing.B) {
	body := benchStream()
	p := New()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		st := adapters.NewStream(p)
		events := 0
		_ = adapters.ReadStream(p, st, bytes.NewReader(body), func(s adapters.Step) error {
			events += len(s.Events)
			return nil
		})
		if s := st.Summary(); s.Terminal != adapters.StatusCompleted || len(s.ToolCalls) == 0 {
			b.Fatalf("decoded %s with %d calls", s.Terminal, len(s.ToolCalls))
		}
	}
}

// memoryTransport answers every request with the benchmark body, so the
// SDK is measured without a network.
type memoryTransport struct{ body []byte }

func (m memoryTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}},
		Body: io.NopCloser(bytes.NewReader(m.body)), Request: r}, nil
}

func BenchmarkSDK(b *testing.B) {
	body := benchStream()
	client := openai.NewClient(option.WithAPIKey("sk-test"), option.WithMaxRetries(0),
		option.WithHTTPClient(&http.Client{Transport: memoryTransport{body}}))
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		stream := client.Responses.NewStreaming(context.Background(), sdkParams)
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
		if stream.Err() != nil || final == nil || len(args) == 0 {
			b.Fatalf("SDK: %v", stream.Err())
		}
	}
}

func BenchmarkBare(b *testing.B) {
	body := benchStream()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sc := bufio.NewScanner(bytes.NewReader(body))
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		n := 0
		for sc.Scan() {
			if line := sc.Bytes(); bytes.HasPrefix(line, []byte("data: ")) && json.Valid(line[6:]) {
				n++
			}
		}
		if n == 0 {
			b.Fatal("no data lines")
		}
	}
}
