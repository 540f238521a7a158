package openairesponses

import (
	"testing"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/adapterstest"
)

// The fast path must decode every event exactly as the general path does.
func TestFastPathAgrees(t *testing.T) {
	raws := adapterstest.StreamRaws(t, Protocol{}, adapterstest.MixedTurn(3))
	adapterstest.FastShare(t, raws, 0.75, func(data string) bool { var f fields; return fastMembers(data, &f) })
	adapterstest.SameDecoding(t, func(general bool) adapters.Decoder {
		d := newDecoder()
		d.general = general
		return d
	}, raws)
}

// The API's older member order (sequence_number and output_index before
// the delta) and repeated keys: the fast path reads them as scanMembers
// does.
func TestFastPathAgreesOtherOrders(t *testing.T) {
	raws := adapterstest.StreamRaws(t, Protocol{}, adapterstest.MixedTurn(1))
	extra := []adapters.RawEvent{
		{Data: `{"type":"response.output_text.delta","sequence_number":900,"output_index":1,"content_index":0,"item_id":"x","delta":"a","item_id":"y","logprobs":[]}`},
		{Data: `{"type":"response.output_text.delta","sequence_number":901,"output_index":1,"content_index":0,"delta":"b","item_id":"y"}`},
		{Data: `{"type":"response.output_text.delta","delta":"c","type":"response.refusal.delta","sequence_number":902,"output_index":1}`},
		{Data: `{"type":"response.output_text.delta","delta":"d","sequence_number":00,"output_index":1}`},
	}
	adapterstest.SameDecoding(t, func(general bool) adapters.Decoder {
		d := newDecoder()
		d.general = general
		return d
	}, append(raws[:len(raws)/2:len(raws)/2], extra...))
}
