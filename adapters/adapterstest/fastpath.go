package adapterstest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/sse"
)

// MixedTurn is a turn like the bench captures: n cycles of a reasoning
// item with a signature, a message mixing Chinese and English with quotes,
// backslashes, tabs and line ends, and a tool call with ~1 KB of
// arguments, ending in tool calls. The simulators cut each into the
// provider's few-byte deltas, so it reaches every hot event shape.
func MixedTurn(n int) adapters.ModelTurn {
	text := strings.Repeat("根据订单记录，该商品实付 180 元；the cap is \"paid − refunded\" \\ hold.\t\n\n", 4)
	thought := strings.Repeat("**Checking the ledger** 先查订单行；the cap decides. ", 4)
	args, _ := json.Marshal(map[string]string{"order_id": "O-2048", "note": strings.Repeat("核查退款台账 \"ledger\" entry; ", 30)})
	t := adapters.ModelTurn{Stop: adapters.StopToolCall}
	for i := range n {
		t.Items = append(t.Items,
			adapters.OutputItem{Kind: adapters.KindReasoning, Text: thought, Signature: "EqQBCkgIARABGAIiQL2n0Zr1s7YdQ=="},
			adapters.OutputItem{Kind: adapters.KindMessage, Text: text},
			adapters.OutputItem{Kind: adapters.KindToolCall, CallID: fmt.Sprintf("call_fast%03d", i), Name: "get_refund_ledger", Arguments: args})
	}
	in, out := int64(2011), int64(900*n)
	t.Usage = adapters.Usage{InputTokens: &in, OutputTokens: &out}
	return t
}

// StreamRaws renders turn with p's simulator encoder and reads it back
// with the SSE reader: the raw events a decoder is fed.
func StreamRaws(t testing.TB, p adapters.Protocol, turn adapters.ModelTurn) []adapters.RawEvent {
	t.Helper()
	sim, ok := p.(adapters.Simulated)
	if !ok {
		t.Fatalf("%s has no stream encoder", p.Name())
	}
	body := SSE(sim.StreamEvents(turn, adapters.ResponseOptions{Model: "m", Seed: 7, IncludeUsage: true, Created: 1767571200}), sim.LineEnd())
	r := sse.NewReader(bytes.NewReader(body))
	var raws []adapters.RawEvent
	for {
		ev, err := r.Next()
		if err == io.EOF {
			return raws
		}
		if err != nil {
			t.Fatal(err)
		}
		raw := adapters.RawEvent{Event: ev.Type, Data: ev.Data}
		if ev.HasID {
			raw.ID = ev.ID
		}
		raws = append(raws, raw)
	}
}

// mutations replace one byte of an event to push it off a fast path at
// every position: JSON's structural bytes, white space, a digit, a letter,
// a control byte.
var mutations = []string{`"`, `\`, ` `, `}`, `{`, `[`, `,`, `:`, `0`, `-`, `.`, `x`, "\x01"}

// FastShare fails t unless at least min (a fraction) of raws are in the
// fast path's shape by isFast: a fast path the stream never takes would
// be checked against nothing.
func FastShare(t testing.TB, raws []adapters.RawEvent, min float64, isFast func(data string) bool) {
	t.Helper()
	fast := 0
	for _, raw := range raws {
		if isFast(raw.Data) {
			fast++
		}
	}
	if float64(fast) < min*float64(len(raws)) {
		t.Fatalf("%d of %d events in the fast path's shape, want at least %.0f%%", fast, len(raws), min*100)
	}
}

// SameDecoding feeds raws to two decoders of one protocol, fast (with its
// fast paths) and general (without), and fails at the first raw event
// where their canonical events differ. Then, at some events spread over
// the stream, with both decoders brought to the state before it, it feeds
// both every prefix of the event's data and every one-byte mutation of
// it (and of the event with a byte inserted), so that a fast path can never accept what the general path reads
// otherwise.
func SameDecoding(t testing.TB, newDecoder func(general bool) adapters.Decoder, raws []adapters.RawEvent) {
	t.Helper()
	fast, general := newDecoder(false), newDecoder(true)
	same := func(what string, raw adapters.RawEvent) {
		t.Helper()
		a, b := fast.Decode(raw), general.Decode(raw)
		if len(a) != len(b) || (len(a) > 0 && !reflect.DeepEqual(a, b)) {
			t.Fatalf("%s %q: the fast path decoded\n%+v\nthe general path\n%+v", what, raw.Data, a, b)
		}
	}
	for i, raw := range raws {
		same(fmt.Sprintf("raw event %d", i), raw)
	}
	if a, b := fast.Finish(), general.Finish(); !reflect.DeepEqual(a, b) {
		t.Fatalf("finish: fast %+v, general %+v", a, b)
	}
	const samples = 24
	for s := range samples {
		k := s * len(raws) / samples
		fast, general = newDecoder(false), newDecoder(true)
		for _, raw := range raws[:k] {
			fast.Decode(raw)
			general.Decode(raw)
		}
		raw := raws[k]
		data := raw.Data
		for i := range len(data) + 1 {
			raw.Data = data[:i]
			same("prefix of", raw)
			if i == len(data) {
				break
			}
			for _, m := range mutations {
				raw.Data = data[:i] + m + data[i+1:]
				same("mutation of", raw)
				raw.Data = data[:i] + m + data[i:]
				same("insertion into", raw)
			}
			raw.Data = data // the event itself, so the state moves on as in the stream
			same("raw event", raw)
		}
	}
}
