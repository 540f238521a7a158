package adapterstest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/modelwire/modelwire/adapters"
)

// The random-turn round trip: a generated model turn, rendered by a
// simulator and read back by the same protocol's decoder, must come back
// exactly — text, reasoning, every parallel call with its arguments, and
// the terminal — streaming and not. The generator, not the code under
// test, says what is expected.

// TurnShape says what a protocol's wire can carry, so the generator only
// makes turns the protocol can express.
type TurnShape struct {
	// Reasoning: the wire carries reasoning text (not OpenAI Chat).
	Reasoning bool
}

// runes the generator writes text from: ASCII, JSON's escapes, CJK,
// combining marks and a character outside the BMP.
var roundTripRunes = []rune("abcxyz ABC 019 .,:;!?-_/\\\"'{}[]<>&\n\t退款上限分人工复核订单é\u0301😀")

func randText(r *rand.Rand, min, max int) string {
	n := min + r.IntN(max-min+1)
	var b strings.Builder
	for range n {
		b.WriteRune(roundTripRunes[r.IntN(len(roundTripRunes))])
	}
	return b.String()
}

// randJSON is a random JSON value of at most depth levels; numbers are
// integers or short decimals, whose text every encoder keeps as is.
func randJSON(r *rand.Rand, depth int) any {
	k := r.IntN(7)
	if depth <= 0 {
		k = r.IntN(4)
	}
	switch k {
	case 0:
		return randText(r, 0, 12)
	case 1:
		return json.Number(fmt.Sprint(r.IntN(2_000_001) - 1_000_000))
	case 2:
		return json.Number(fmt.Sprintf("%d.%d", r.IntN(1000), 1+r.IntN(9)))
	case 3:
		return []any{true, false, nil}[r.IntN(3)]
	case 4:
		a := make([]any, r.IntN(4))
		for i := range a {
			a[i] = randJSON(r, depth-1)
		}
		return a
	}
	return randObject(r, depth-1)
}

func randObject(r *rand.Rand, depth int) map[string]any {
	o := map[string]any{}
	for range r.IntN(5) {
		o[fmt.Sprintf("k%d_%s", r.IntN(100), randText(r, 0, 4))] = randJSON(r, depth)
	}
	return o
}

// RandomTurn generates a turn: maybe reasoning, maybe text, 0–4 parallel
// calls with random object arguments, and a terminal that fits — tool_call
// when there are calls, else final or truncated.
func RandomTurn(r *rand.Rand, shape TurnShape) adapters.ModelTurn {
	var t adapters.ModelTurn
	if shape.Reasoning && r.IntN(2) == 0 {
		t.Items = append(t.Items, adapters.OutputItem{Kind: adapters.KindReasoning, Text: randText(r, 1, 60)})
	}
	calls := r.IntN(5)
	if calls == 0 || r.IntN(2) == 0 {
		t.Items = append(t.Items, adapters.OutputItem{Kind: adapters.KindMessage, Text: randText(r, 1, 120)})
	}
	names := []string{"get_order_line", "get_refund_ledger", "get_refund_policy", "lookup"}
	for range calls {
		args, err := marshalPlain(randObject(r, 3))
		if err != nil {
			panic(err) // the generator only makes marshalable values
		}
		t.Items = append(t.Items, adapters.OutputItem{Kind: adapters.KindToolCall, Name: names[r.IntN(len(names))], Arguments: args})
	}
	switch {
	case calls > 0:
		t.Stop = adapters.StopToolCall
	case r.IntN(3) == 0:
		t.Stop = adapters.StopTruncated
	default:
		t.Stop = adapters.StopFinal
	}
	return t
}

// marshalPlain is json.Marshal without HTML escaping, as models write.
func marshalPlain(v any) (json.RawMessage, error) { return adapters.MarshalBody(v) }

// randFragment splits text into random pieces, never inside a UTF-8
// character, so the decoder's joining is exercised at every boundary.
func randFragment(r *rand.Rand) func(string) []string {
	return func(s string) []string {
		var out []string
		start := 0
		for i := range s {
			if i > start && r.IntN(3) == 0 {
				out = append(out, s[start:i])
				start = i
			}
		}
		if start < len(s) {
			out = append(out, s[start:])
		}
		return out
	}
}

// TurnView is what a client reads back from a turn.
type TurnView struct {
	Text, Reasoning string
	Calls           []CallView
	Stop            adapters.StopReason
	Terminal        adapters.Status
}

// CallView is one call: its name and its arguments as a JSON value
// (numbers kept as their text).
type CallView struct {
	Name string
	Args any
}

func decodeArgs(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	err := d.Decode(&v)
	return v, err
}

// Expected is the view of a generated turn.
func Expected(t adapters.ModelTurn) TurnView {
	v := TurnView{Stop: t.Stop, Terminal: adapters.StatusCompleted}
	if t.Stop == adapters.StopTruncated {
		v.Terminal = adapters.StatusIncomplete
	}
	for _, it := range t.Items {
		switch it.Kind {
		case adapters.KindMessage:
			v.Text += it.Text
		case adapters.KindReasoning:
			v.Reasoning += it.Text
		case adapters.KindToolCall:
			args, _ := decodeArgs(it.Arguments)
			v.Calls = append(v.Calls, CallView{Name: it.Name, Args: args})
		}
	}
	return v
}

// Decoded is the view of a decoded summary; it fails t on arguments that
// are not JSON, calls without a unique id, or any diagnostic.
func Decoded(t testing.TB, s adapters.Summary) TurnView {
	t.Helper()
	v := TurnView{Text: s.Text, Reasoning: s.Reasoning, Stop: s.StopReason, Terminal: s.Terminal}
	ids := map[string]bool{}
	for _, c := range s.ToolCalls {
		args, err := decodeArgs(c.Arguments)
		if err != nil {
			t.Errorf("call %s: arguments %s: %v", c.CallID, c.Arguments, err)
		}
		if c.CallID == "" || ids[c.CallID] {
			t.Errorf("call id %q empty or repeated", c.CallID)
		}
		ids[c.CallID] = true
		v.Calls = append(v.Calls, CallView{Name: c.Name, Args: args})
	}
	if len(s.IncompleteToolCalls) > 0 || s.Refusal != nil || s.Error != nil || len(s.Diagnostics) > 0 {
		t.Errorf("incomplete %+v, refusal %v, error %+v, diagnostics %+v", s.IncompleteToolCalls, s.Refusal, s.Error, s.Diagnostics)
	}
	return v
}

// RoundTrip generates 300 turns (40 with -short; case i is seeded with i,
// so a failure names the case that reproduces it) and checks that the
// decoder reads sim's stream and body of each back to the generated turn.
func RoundTrip(t *testing.T, decoder adapters.Protocol, sim adapters.Simulated, shape TurnShape) {
	t.Helper()
	n := 300
	if testing.Short() {
		n = 40
	}
	for i := range n {
		r := rand.New(rand.NewPCG(uint64(i), 0x6d6f64656c77)) // "modelw"
		turn := RandomTurn(r, shape)
		o := adapters.ResponseOptions{Model: "round-trip-model", Seed: uint64(i), IncludeUsage: true, Fragment: randFragment(r)}
		want := Expected(turn)
		stream := SSE(sim.StreamEvents(turn, o), sim.LineEnd())
		_, s := Decode(t, decoder, stream)
		if got := Decoded(t, s); !reflect.DeepEqual(got, want) {
			t.Fatalf("case %d, streaming: the decoder read\n%+v\nfrom the simulator's rendering of\n%+v\nturn: %+v", i, got, want, turn)
		}
		_, s = Decode(t, decoder, sim.Body(turn, o))
		if got := Decoded(t, s); !reflect.DeepEqual(got, want) {
			t.Fatalf("case %d, body: the decoder read\n%+v\nfrom the simulator's rendering of\n%+v\nturn: %+v", i, got, want, turn)
		}
	}
}
