package geminiinteractions

import (
	"bytes"
	"strings"
	"sync"
	"testing"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/adapterstest"
)

// benchStream is an ~60 MB interaction as the simulator writes it: a long
// thought summary, a long answer mixing Chinese and English, and a call
// with large arguments, each in the API's small deltas.
var benchStream = sync.OnceValue(func() []byte {
	text := strings.Repeat("根据订单记录，该商品实付 180 元，已退 30 元；the refundable cap is paid − refunded − hold. ", 20000)
	turn := adapters.ModelTurn{Stop: adapters.StopToolCall, Items: []adapters.OutputItem{
		{Kind: adapters.KindReasoning, Text: text[:len(text)/4]},
		{Kind: adapters.KindMessage, Text: text},
		{Kind: adapters.KindToolCall, Name: "get_refund_ledger", Arguments: []byte(`{"order_id":"O-2048","note":"` + strings.Repeat("x", 1<<16) + `"}`)},
	}}
	return adapterstest.SSE(New().(adapters.Simulated).StreamEvents(turn, adapters.ResponseOptions{Seed: 1}), "\n")
})

// BenchmarkDecodeStream: SSE framing, the decoder and the Reducer, as
// `decode` and a live session run them (go test -bench . ./adapters/geminiinteractions).
func BenchmarkDecodeStream(b *testing.B) {
	body := benchStream()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		st := adapters.NewStream(New())
		if err := adapters.ReadStream(New(), st, bytes.NewReader(body), func(adapters.Step) error { return nil }); err != nil {
			b.Fatal(err)
		}
		if s := st.Summary(); s.StopReason != adapters.StopToolCall || len(s.ToolCalls) != 1 {
			b.Fatalf("%+v", s)
		}
	}
}
