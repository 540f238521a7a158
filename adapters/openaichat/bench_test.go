package openaichat

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/modelwire/modelwire/adapters"
)

// Run: go test -run XXX -bench . -benchtime 3x ./adapters/openaichat/

const benchSize = 50 << 20

var benchOnce sync.Once
var benchData []byte

// benchStream is a ~50 MB Chat stream as OpenAI sends it: the envelope on
// every chunk (usage:null, obfuscation), ~90% text deltas mixing Chinese,
// English and escapes, then four tool calls with many argument fragments,
// finish_reason, the usage-only chunk and [DONE].
func benchStream() []byte {
	benchOnce.Do(func() {
		var b bytes.Buffer
		b.Grow(benchSize + 1<<20)
		env := `{"id":"chatcmpl-CRf2b7Lx4Qm9Tz2Wv6Kc1YbNd","object":"chat.completion.chunk","created":1767571200,"model":"gpt-4.1-2025-04-14","service_tier":"default","system_fingerprint":"fp_b3f1157249","choices":[{"index":0,"delta":`
		chunk := func(delta, finish string) {
			b.WriteString("data: ")
			b.WriteString(env)
			b.WriteString(delta)
			b.WriteString(`,"logprobs":null,"finish_reason":`)
			b.WriteString(finish)
			b.WriteString(`}],"usage":null,"obfuscation":"Qm3x"}` + "\n\n")
		}
		chunk(`{"role":"assistant","content":"","refusal":null}`, "null")
		pieces := []string{"您好", "，订单", " O-2048", " 的退款", "申请", "已收到", "。\\n", "The cap", " is", " 13000", " cents", " (\\\"可退\\\")", "；复核", "前不会", "执行任何", "退款。"}
		for i := 0; b.Len() < benchSize*9/10; i++ {
			chunk(`{"content":"`+pieces[i%len(pieces)]+`"}`, "null")
		}
		for call := 0; call < 4; call++ {
			chunk(fmt.Sprintf(`{"tool_calls":[{"index":%d,"id":"call_bench%02d","type":"function","function":{"name":"get_order_line","arguments":""}}]}`, call, call), "null")
			chunk(fmt.Sprintf(`{"tool_calls":[{"index":%d,"function":{"arguments":"{\"lines\":["}}]}`, call), "null")
			for i := 0; b.Len() < benchSize*(90+(call+1)*10/4)/100; i++ {
				sep := ","
				if i == 0 {
					sep = ""
				}
				chunk(fmt.Sprintf(`{"tool_calls":[{"index":%d,"function":{"arguments":"%s\"L%d-行\""}}]}`, call, sep, i), "null")
			}
			chunk(fmt.Sprintf(`{"tool_calls":[{"index":%d,"function":{"arguments":"]}"}}]}`, call), "null")
		}
		chunk(`{}`, `"tool_calls"`)
		b.WriteString(`data: {"id":"chatcmpl-CRf2b7Lx4Qm9Tz2Wv6Kc1YbNd","object":"chat.completion.chunk","created":1767571200,"model":"gpt-4.1-2025-04-14","choices":[],"usage":{"prompt_tokens":1187,"completion_tokens":900000,"total_tokens":901187,"prompt_tokens_details":{"cached_tokens":1024,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}}` + "\n\ndata: [DONE]\n\n")
		benchData = b.Bytes()
	})
	return benchData
}

// TestBenchStreamDecodes makes sure the benchmark measures a correct decode.
func TestBenchStreamDecodes(t *testing.T) {
	if testing.Short() {
		t.Skip("50 MB")
	}
	st := adapters.NewStream(New())
	if err := adapters.ReadStream(New(), st, bytes.NewReader(benchStream()), func(adapters.Step) error { return nil }); err != nil {
		t.Fatal(err)
	}
	s := st.Summary()
	if s.Terminal != adapters.StatusCompleted || s.StopReason != adapters.StopToolCall || len(s.ToolCalls) != 4 || len(s.Diagnostics) != 0 ||
		!strings.HasPrefix(s.Text, "您好，订单 O-2048 的退款申请已收到。\nThe cap is 13000 cents (\"可退\")") {
		t.Fatalf("terminal %s/%s, %d calls, diagnostics %+v, text %.80q", s.Terminal, s.StopReason, len(s.ToolCalls), s.Diagnostics, s.Text)
	}
}

func BenchmarkDecode(b *testing.B) {
	data := benchStream()
	p := New()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		st := adapters.NewStream(p)
		if err := adapters.ReadStream(p, st, bytes.NewReader(data), func(adapters.Step) error { return nil }); err != nil {
			b.Fatal(err)
		}
		if !st.Reducer().Done() {
			b.Fatal("no terminal")
		}
	}
}

// BenchmarkSDK is openai-go's own path: its SSE decoder, json.Unmarshal of
// each chunk into ChatCompletionChunk, and ChatCompletionAccumulator.
func BenchmarkSDK(b *testing.B) {
	data := benchStream()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		res := &http.Response{Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: io.NopCloser(bytes.NewReader(data))}
		stream := ssestream.NewStream[openai.ChatCompletionChunk](ssestream.NewDecoder(res), nil)
		var acc openai.ChatCompletionAccumulator
		for stream.Next() {
			if !acc.AddChunk(stream.Current()) {
				b.Fatal("the accumulator refused a chunk")
			}
		}
		if err := stream.Err(); err != nil {
			b.Fatal(err)
		}
		if len(acc.Choices) != 1 || len(acc.Choices[0].Message.ToolCalls) != 4 {
			b.Fatal("wrong accumulation")
		}
	}
}

// BenchmarkBare is the floor: split lines, json.Valid on each data payload.
func BenchmarkBare(b *testing.B) {
	data := benchStream()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	prefix, done := []byte("data: "), []byte("[DONE]")
	for b.Loop() {
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		for sc.Scan() {
			if payload, ok := bytes.CutPrefix(sc.Bytes(), prefix); ok && !bytes.Equal(payload, done) && !json.Valid(payload) {
				b.Fatal("invalid payload")
			}
		}
	}
}

// BenchmarkDecoderOnly isolates the chunk decoder: the same stream, split
// into data payloads beforehand, without the SSE reader and the Reducer.
func BenchmarkDecoderOnly(b *testing.B) {
	data := benchStream()
	var raws []adapters.RawEvent
	for _, block := range strings.Split(string(data), "\n\n") {
		if payload, ok := strings.CutPrefix(block, "data: "); ok {
			raws = append(raws, adapters.RawEvent{Data: payload})
		}
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		d := New().NewDecoder()
		for _, r := range raws {
			d.Decode(r)
		}
		d.Finish()
	}
}
