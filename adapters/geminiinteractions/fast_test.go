package geminiinteractions

import (
	"testing"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/adapterstest"
)

// The fast path must decode every event exactly as the general path does.
func TestFastPathAgrees(t *testing.T) {
	raws := adapterstest.StreamRaws(t, New(), adapterstest.MixedTurn(3))
	adapterstest.FastShare(t, raws, 0.75, func(data string) bool { _, _, _, ok := fastStepDelta(data); return ok })
	adapterstest.SameDecoding(t, func(general bool) adapters.Decoder { return &decoder{general: general} }, raws)
}

// Deltas that do not fit their step: the fast path leaves them to the
// general path, which reports them.
func TestFastPathAgreesOutOfPlace(t *testing.T) {
	raws := []adapters.RawEvent{
		{Data: `{"index":0,"step":{"type":"model_output"},"event_type":"step.start"}`},
		{Data: `{"index":1,"step":{"type":"thought"},"event_type":"step.start"}`},
		{Data: `{"index":2,"step":{"type":"function_call","id":"c1","name":"f"},"event_type":"step.start"}`},
		{Data: `{"index":3,"step":{"type":"google_search_call"},"event_type":"step.start"}`},
		{Data: `{"index":0,"delta":{"arguments":"{\"a","type":"arguments_delta"},"event_type":"step.delta"}`},
		{Data: `{"index":1,"delta":{"text":"t","type":"text"},"event_type":"step.delta"}`},
		{Data: `{"index":2,"delta":{"text":"t","type":"text"},"event_type":"step.delta"}`},
		{Data: `{"index":2,"delta":{"content":{"text":"t","type":"text"},"type":"thought_summary"},"event_type":"step.delta"}`},
		{Data: `{"index":3,"delta":{"text":"t","type":"text"},"event_type":"step.delta"}`},
		{Data: `{"index":9,"delta":{"text":"t","type":"text"},"event_type":"step.delta"}`},
		{Data: `{"index":0,"delta":{"text":"","type":"text"},"event_type":"step.delta"}`},
		{Data: `{"index":2,"delta":{"arguments":"","type":"arguments_delta"},"event_type":"step.delta"}`},
		{Data: `{"index":0,"event_type":"step.stop"}`},
		{Data: `{"index":0,"delta":{"text":"late","type":"text"},"event_type":"step.delta"}`},
	}
	adapterstest.SameDecoding(t, func(general bool) adapters.Decoder { return &decoder{general: general} }, raws)
}
