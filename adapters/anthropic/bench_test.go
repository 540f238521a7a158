package anthropic

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/modelwire/modelwire/adapters"
)

// benchStream builds a realistic Anthropic stream of about size bytes:
// message_start and a ping, then until the size is reached a cycle of a
// text block (2,000 deltas of 1–8 characters, Chinese and English), a
// thinking block every fourth cycle, and a tool_use block whose arguments
// come in 400 fragments; message_delta and message_stop at the end.
func benchStream(size int) []byte {
	var b bytes.Buffer
	b.Grow(size + 1<<16)
	event := func(name, data string) {
		b.WriteString("event: ")
		b.WriteString(name)
		b.WriteString("\ndata: ")
		b.WriteString(data)
		b.WriteString("\n\n")
	}
	str := func(s string) string { j, _ := json.Marshal(s); return string(j) }
	event("message_start", `{"type":"message_start","message":{"id":"msg_01BenchAbCdEfGhIjKlMnOpQr","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":2011,"cache_creation_input_tokens":0,"cache_read_input_tokens":1800,"output_tokens":1,"service_tier":"standard"}}}`)
	event("ping", `{"type":"ping"}`)
	text := []rune("退款核查：订单 O-2048 第 L1 行实付 180 元，已退 30 元，另有 20 元冻结。The refundable cap is paid − refunded − pending hold, so at most 130 yuan. ")
	args := `{"order_id":"O-2048","line_id":"L1","note":"` + strings.Repeat("核查退款台账 ledger entry; ", 120) + `"}`
	argRunes := []rune(args)
	pos, index, cycle := 0, 0, 0
	for b.Len() < size {
		if cycle%4 == 3 {
			event("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"thinking","thinking":"","signature":""}}`, index))
			for i := 0; i < 200; i++ {
				n := 1 + i%8
				frag := make([]rune, n)
				for k := range frag {
					frag[k] = text[(pos+k)%len(text)]
				}
				pos += n
				event("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"thinking_delta","thinking":%s}}`, index, str(string(frag))))
			}
			event("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"signature_delta","signature":"EqQBCkgIARABGAIiQL2n0Zr1s7YdQ=="}}`, index))
			event("content_block_stop", fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, index))
			index++
		}
		event("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"text","text":""}}`, index))
		for i := 0; i < 2000; i++ {
			n := 1 + (i*7)%8
			frag := make([]rune, n)
			for k := range frag {
				frag[k] = text[(pos+k)%len(text)]
			}
			pos += n
			event("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"text_delta","text":%s}}`, index, str(string(frag))))
		}
		event("content_block_stop", fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, index))
		index++
		event("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"tool_use","id":"toolu_01Bench%08d","name":"get_refund_ledger","input":{}}}`, index, index))
		event("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"input_json_delta","partial_json":""}}`, index))
		step := (len(argRunes) + 399) / 400
		for i := 0; i < len(argRunes); i += step {
			frag := string(argRunes[i:min(i+step, len(argRunes))])
			event("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"input_json_delta","partial_json":%s}}`, index, str(frag)))
		}
		event("content_block_stop", fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, index))
		index++
		cycle++
	}
	event("message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":912345}}`)
	event("message_stop", `{"type":"message_stop"}`)
	return b.Bytes()
}

var (
	benchOnce  sync.Map
	benchSizes = []struct {
		name string
		size int
	}{{"5MB", 5 << 20}, {"50MB", 50 << 20}}
)

func streamOf(size int) []byte {
	if v, ok := benchOnce.Load(size); ok {
		return v.([]byte)
	}
	data := benchStream(size)
	benchOnce.Store(size, data)
	return data
}

func decodeAll(p adapters.Protocol, data []byte) (int, adapters.Summary) {
	st := adapters.NewStream(p)
	n := 0
	_ = adapters.ReadStream(p, st, bytes.NewReader(data), func(s adapters.Step) error {
		n += len(s.Events)
		return nil
	})
	return n, st.Summary()
}

// BenchmarkDecode is ours: the SSE reader, this decoder and the Reducer.
func BenchmarkDecode(b *testing.B) {
	p := New()
	for _, sz := range benchSizes {
		b.Run(sz.name, func(b *testing.B) {
			data := streamOf(sz.size)
			if _, s := decodeAll(p, data); s.Terminal != adapters.StatusCompleted || len(s.ToolCalls) == 0 || len(s.Diagnostics) != 0 {
				b.Fatalf("bad bench stream: %s %d calls %v", s.Terminal, len(s.ToolCalls), s.Diagnostics)
			}
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				decodeAll(p, data)
			}
		})
	}
}

// BenchmarkBare is the floor: split lines and json.Valid each data payload.
func BenchmarkBare(b *testing.B) {
	for _, sz := range benchSizes {
		b.Run(sz.name, func(b *testing.B) {
			data := streamOf(sz.size)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				sc := bufio.NewScanner(bytes.NewReader(data))
				sc.Buffer(make([]byte, 64<<10), 16<<20)
				valid := 0
				for sc.Scan() {
					line := sc.Bytes()
					if bytes.HasPrefix(line, []byte("data:")) && json.Valid(bytes.TrimSpace(line[5:])) {
						valid++
					}
				}
				if valid == 0 {
					b.Fatal("nothing valid")
				}
			}
		})
	}
}

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// BenchmarkSDK is the official SDK: Messages.NewStreaming over an in-memory
// response and Message.Accumulate on every event. Accumulate appends each
// delta to the block's string (cb.Text += …), so its cost grows with the
// square of a block's deltas; it runs on the 5 MB stream only unless
// ANTHROPIC_BENCH_SDK_50MB is set.
func BenchmarkSDK(b *testing.B) {
	for _, sz := range benchSizes {
		b.Run(sz.name, func(b *testing.B) {
			if sz.size > 5<<20 && !sdkBig {
				b.Skip("the SDK accumulator is slow on 50 MB; set ANTHROPIC_BENCH_SDK_50MB=1 to run it")
			}
			data := streamOf(sz.size)
			c := sdk.NewClient(option.WithAPIKey("k"), option.WithBaseURL("http://bench.invalid"), option.WithMaxRetries(0),
				option.WithHTTPClient(&http.Client{Transport: roundTrip(func(r *http.Request) (*http.Response, error) {
					return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}},
						Body: io.NopCloser(bytes.NewReader(data)), Request: r}, nil
				})}))
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				stream := c.Messages.NewStreaming(context.Background(), sdkParams)
				msg := sdk.Message{}
				for stream.Next() {
					if err := msg.Accumulate(stream.Current()); err != nil {
						b.Fatal(err)
					}
				}
				if stream.Err() != nil || msg.StopReason != "tool_use" {
					b.Fatalf("%v %s", stream.Err(), msg.StopReason)
				}
			}
		})
	}
}

var sdkBig = os.Getenv("ANTHROPIC_BENCH_SDK_50MB") != ""
