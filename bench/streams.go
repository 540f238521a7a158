package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/registry"
)

// Capture renders a streamed response of about size bytes in protocol's
// exact wire format, with the protocol's own simulator encoder (the bytes
// the built-in simulator sends): one response whose output repeats a
// cycle of a reasoning item, a message of mixed Chinese and English text
// and a tool call with ~1 KB of arguments, each streamed in the
// provider's few-byte fragments. It is generated, never stored.
func Capture(protocol string, size int) ([]byte, error) {
	p, err := registry.Lookup(protocol)
	if err != nil {
		return nil, err
	}
	sim, ok := p.(adapters.Simulated)
	if !ok {
		return nil, fmt.Errorf("%s has no stream encoder", protocol)
	}
	// One cycle first, to learn how many make the size.
	one := render(sim, turn(1))
	cycles := max(1, size/len(one))
	return render(sim, turn(cycles)), nil
}

var (
	benchText = strings.Repeat("根据订单记录，该商品实付 180 元，已退 30 元，另有 20 元处于待处理冻结。"+
		"The refundable cap is paid minus refunded minus the pending hold, so at most 130 yuan; "+
		"\"decision\": \"needs_review\" — 复核前不会执行任何退款。\n\n", 6)
	benchThought = strings.Repeat("**Checking the ledger** 先查订单行，再并行查台账与政策；the cap decides. ", 6)
	benchArgs    = func() json.RawMessage {
		b, _ := json.Marshal(map[string]string{"order_id": "O-2048", "line_id": "L1",
			"note": strings.Repeat("核查退款台账 ledger entry; ", 40)})
		return b
	}()
)

// turn is a model turn of n cycles that ends in tool calls.
func turn(n int) adapters.ModelTurn {
	t := adapters.ModelTurn{Stop: adapters.StopToolCall}
	for i := range n {
		t.Items = append(t.Items,
			adapters.OutputItem{Kind: adapters.KindReasoning, Text: benchThought, Signature: "EqQBCkgIARABGAIiQL2n0Zr1s7YdQ=="},
			adapters.OutputItem{Kind: adapters.KindMessage, Text: benchText},
			adapters.OutputItem{Kind: adapters.KindToolCall, CallID: fmt.Sprintf("call_bench%06d", i), Name: "get_refund_ledger", Arguments: benchArgs})
	}
	in, out := int64(2011), int64(900*n)
	t.Usage = adapters.Usage{InputTokens: &in, OutputTokens: &out}
	return t
}

// render writes the turn's stream events as SSE in the protocol's line
// ends.
func render(sim adapters.Simulated, t adapters.ModelTurn) []byte {
	le := sim.LineEnd()
	evs := sim.StreamEvents(t, adapters.ResponseOptions{Model: "bench-model", Seed: 7, IncludeUsage: true, Created: 1767571200})
	var b bytes.Buffer
	for _, e := range evs {
		if e.ID != "" {
			b.WriteString("id: " + e.ID + le)
		}
		if e.Event != "" {
			b.WriteString("event: " + e.Event + le)
		}
		b.WriteString("data: " + e.Data + le + le)
	}
	return b.Bytes()
}
