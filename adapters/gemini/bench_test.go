package gemini

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
	"time"

	"google.golang.org/genai"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/sse"
)

// benchStream is a ~50 MB streamGenerateContent response in Gemini's own
// framing: CRLF, one chunk per event, each chunk a whole response with
// usageMetadata, modelVersion and responseId; thought summaries first,
// then text increments mixing Chinese and English (some with escapes),
// and every so often a chunk of parallel functionCalls with large args.
var benchStream = sync.OnceValue(func() []byte {
	const target = 50 << 20
	texts := []string{
		"根据订单记录，该商品实付 180 元，已退 30 元，",
		"另有 20 元处于待处理冻结，目前最多可退 130 元；",
		"The refundable cap is paid minus refunded minus the pending hold, ",
		"且尚缺质量问题凭证。我们已转人工复核，复核前不会执行任何退款。",
		"so the request of 15000 cents exceeds the 13000-cent cap.\n\n",
		"\"decision\": \"needs_review\" — 原因：requested_exceeds_refundable_cap。",
	}
	var b bytes.Buffer
	b.Grow(target + 4096)
	usage := func(prompt, cands, thoughts int) string {
		return fmt.Sprintf(`{"promptTokenCount": %d,"candidatesTokenCount": %d,"totalTokenCount": %d,"promptTokensDetails": [{"modality": "TEXT","tokenCount": %d}],"thoughtsTokenCount": %d}`,
			prompt, cands, prompt+cands+thoughts, prompt, thoughts)
	}
	write := func(parts, finish, u string) {
		b.WriteString(`data: {"candidates": [{"content": {"parts": [`)
		b.WriteString(parts)
		b.WriteString(`],"role": "model"},`)
		if finish != "" {
			b.WriteString(`"finishReason": "` + finish + `",`)
		}
		b.WriteString(`"index": 0}],"usageMetadata": ` + u + `,"modelVersion": "gemini-2.5-flash","responseId": "bm1maQk3Gp2z1MkPkLuVuAs"}` + "\r\n\r\n")
	}
	str := func(s string) string { j, _ := json.Marshal(s); return string(j) }
	for i := 0; i < 200; i++ {
		write(`{"text": `+str("**Weighing the ledger** "+texts[i%len(texts)])+`,"thought": true}`, "", usage(1352, 0, i))
	}
	for i := 0; b.Len() < target; i++ {
		if i%500 == 499 {
			args := `{"order_id": "O-2048","line_id": "L1","note": ` + str(strings.Repeat(texts[i%len(texts)], 8)) + `}`
			write(`{"functionCall": {"name": "get_refund_ledger","args": `+args+`},"thoughtSignature": "VgqSpPAzVl+OMIJhw+Cvxig5dXea+xzijjY9/Omnqz5Wjf9SZkI+eNCgKxxeTSeCv6X0edSBtrUTXjn4b7kMUg=="},`+
				`{"functionCall": {"name": "get_refund_policy","args": {"policy_id": "aftersale-v3"}}}`, "", usage(1352, i, 200))
			continue
		}
		write(`{"text": `+str(texts[i%len(texts)]+texts[(i+1)%len(texts)])+`}`, "", usage(1352, i, 200))
	}
	write(`{"text": "。"}`, "STOP", usage(1352, 999999, 200))
	return b.Bytes()
})

func BenchmarkDecode(b *testing.B) {
	data := benchStream()
	p := New()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	defer reportCPU(b, cpuTime())
	for b.Loop() {
		st := adapters.NewStream(p)
		if err := adapters.ReadStream(p, st, bytes.NewReader(data), func(adapters.Step) error { return nil }); err != nil {
			b.Fatal(err)
		}
		if st.Reducer().Terminal() == nil || st.Reducer().Terminal().Status != adapters.StatusCompleted {
			b.Fatal("no completed terminal")
		}
	}
}

// reportCPU adds the CPU time per operation (see cpuTime).
func reportCPU(b *testing.B, start time.Duration) {
	if start > 0 && b.N > 0 {
		b.ReportMetric(float64(cpuTime()-start)/float64(b.N)/1e6, "cpu-ms/op")
	}
}

// BenchmarkDecoderOnly is the SSE reader and this decoder without the
// shared Reducer, to show which part of BenchmarkDecode is this package's.
func BenchmarkDecoderOnly(b *testing.B) {
	data := benchStream()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	defer reportCPU(b, cpuTime())
	for b.Loop() {
		dec := New().NewDecoder()
		r := sse.NewReader(bytes.NewReader(data))
		r.SetMaxEventSize(adapters.MaxEventSize)
		n := 0
		for {
			ev, err := r.Next()
			if err != nil {
				break
			}
			n += len(dec.Decode(adapters.RawEvent{Data: ev.Data}))
		}
		if n == 0 {
			b.Fatal("no events")
		}
	}
}

// memTransport answers every request with the same in-memory body, so the
// SDK benchmark measures decoding, not a socket.
type memTransport struct{ body []byte }

func (m memTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}},
		Body: io.NopCloser(bytes.NewReader(m.body)), Request: r}, nil
}

// BenchmarkSDK is what a go-genai user does with a stream: iterate,
// concatenate text, collect calls, keep the last finishReason and usage.
func BenchmarkSDK(b *testing.B) {
	data := benchStream()
	c, err := genai.NewClient(context.Background(), &genai.ClientConfig{
		APIKey: "x", Backend: genai.BackendGeminiAPI,
		HTTPClient:  &http.Client{Transport: memTransport{data}},
		HTTPOptions: genai.HTTPOptions{BaseURL: "http://mem"},
	})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	defer reportCPU(b, cpuTime())
	for b.Loop() {
		var text strings.Builder
		var calls []*genai.FunctionCall
		var finish genai.FinishReason
		var usage *genai.GenerateContentResponseUsageMetadata
		for r, err := range c.Models.GenerateContentStream(context.Background(), "gemini-2.5-flash", genai.Text("hi"), noContinuation) {
			if err != nil {
				b.Fatal(err)
			}
			usage = r.UsageMetadata
			for _, cand := range r.Candidates[:1] {
				if cand.FinishReason != "" {
					finish = cand.FinishReason
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
		if finish != genai.FinishReasonStop || usage == nil || len(calls) == 0 {
			b.Fatal("stream not read to its end")
		}
	}
}

// BenchmarkBare is the floor: split lines, json.Valid on each data payload.
func BenchmarkBare(b *testing.B) {
	data := benchStream()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	defer reportCPU(b, cpuTime())
	for b.Loop() {
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(make([]byte, 64<<10), adapters.MaxEventSize)
		n := 0
		for sc.Scan() {
			line := bytes.TrimSuffix(sc.Bytes(), []byte("\r"))
			if payload, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
				if !json.Valid(payload) {
					b.Fatal("invalid payload")
				}
				n++
			}
		}
		if n == 0 {
			b.Fatal("no events")
		}
	}
}
