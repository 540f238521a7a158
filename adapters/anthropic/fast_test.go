package anthropic

import (
	"testing"

	"github.com/tidwall/gjson"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/adapterstest"
)

var fastSeeds = []string{
	`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}`,
	`{"type":"content_block_delta","index":12,"delta":{"type":"input_json_delta","partial_json":"{\"order_id\": \"O-2"}}`,
	`{"type":"content_block_delta","index":1,"delta":{"type":"thinking_delta","thinking":"巴黎\u6674\n"}}`,
	`{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"bad \x"}}`,
	`{"type":"content_block_delta","index":01,"delta":{"type":"text_delta","text":"x"}}`,
	`{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"x"}} `,
	`{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"x"}}}`,
	`{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"a` + "\t" + `b"}}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"a","type":"b"}}`,
	`{"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "spaced"}}`,
}

// The fast path must accept only what the general path reads the same way.
func TestFastDeltaAgreesWithGJSON(t *testing.T) {
	for _, s := range fastSeeds {
		checkFast(t, s)
	}
	if _, _, _, _, ok := fastDelta(fastSeeds[0]); !ok {
		t.Error("the compact shape is not on the fast path")
	}
	for _, s := range fastSeeds[3:] {
		if _, _, _, _, ok := fastDelta(s); ok {
			t.Errorf("accepted %s", s)
		}
	}
}

func checkFast(t *testing.T, s string) {
	index, dtype, key, value, ok := fastDelta(s)
	if !ok {
		return
	}
	if !gjson.Valid(s) {
		t.Fatalf("fast path accepted invalid JSON %q", s)
	}
	if g := gjson.Get(s, "index"); g.Type != gjson.Number || g.Int() != index {
		t.Fatalf("%q: index %d, gjson %v", s, index, g)
	}
	if g := gjson.Get(s, "delta.type").String(); g != dtype {
		t.Fatalf("%q: type %q, gjson %q", s, dtype, g)
	}
	if g := gjson.Get(s, "delta."+key).String(); g != value {
		t.Fatalf("%q: value %q, gjson %q", s, value, g)
	}
	if gjson.Get(s, "type").String() != "content_block_delta" {
		t.Fatalf("%q: not a content_block_delta", s)
	}
}

func FuzzFastDelta(f *testing.F) {
	for _, s := range fastSeeds {
		f.Add(s)
	}
	f.Fuzz(checkFast)
}

// The decoder with its fast path must decode every event of a stream
// exactly as without it.
func TestFastPathAgrees(t *testing.T) {
	raws := adapterstest.StreamRaws(t, New(), adapterstest.MixedTurn(3))
	adapterstest.FastShare(t, raws, 2.0/3, func(data string) bool { _, _, _, _, ok := fastDelta(data); return ok })
	adapterstest.SameDecoding(t, func(general bool) adapters.Decoder {
		d := NewEventDecoder()
		d.general = general
		return d
	}, raws)
}
