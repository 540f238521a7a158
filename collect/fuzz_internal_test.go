package collect

import (
	"encoding/json"
	"testing"
)

// FuzzDecode reads arbitrary bodies as OTLP/JSON or protobuf and every
// span of those that decode as collect reads a turn (messages in their
// every form, tool calls, usage, the terminal, what is unmapped): never
// a panic. (The store is left out: instrumented SQLite fuzzes too slowly
// to find anything.)
func FuzzDecode(f *testing.F) {
	seed, _ := json.Marshal(map[string]any{"resourceSpans": []any{map[string]any{"scopeSpans": []any{map[string]any{"spans": []any{
		map[string]any{"traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": "a000000000000001", "name": "chat", "attributes": []any{
			map[string]any{"key": "gen_ai.output.messages", "value": map[string]any{"stringValue": `[{"role":"assistant","parts":[{"type":"tool_call","id":"c","arguments":{"a":1}}]}]`}},
			map[string]any{"key": "gen_ai.completion.0.tool_calls.1.name", "value": map[string]any{"stringValue": "n"}},
			map[string]any{"key": "ai.response.toolCalls", "value": map[string]any{"stringValue": `[{"toolCallId":"x","input":"{}"}]`}},
			map[string]any{"key": "gen_ai.usage.input_tokens", "value": map[string]any{"intValue": "7"}},
			map[string]any{"key": "x", "value": map[string]any{"kvlistValue": map[string]any{"values": []any{}}}},
		}}}}}}}})
	f.Add(seed, true)
	f.Add([]byte{0x0a, 0x02, 0x12, 0x00}, false)
	f.Fuzz(func(t *testing.T, body []byte, asJSON bool) {
		req, err := decode(body, asJSON)
		if err != nil {
			return
		}
		for _, rs := range req.GetResourceSpans() {
			for _, ss := range rs.GetScopeSpans() {
				for _, s := range ss.GetSpans() {
					sp := newSpan(s, "")
					_ = sp.input()
					out := sp.output()
					_ = usageOf(sp)
					_ = terminal(sp, out)
					_ = restoredVerdict(sp)
					_ = sp.unmapped()
				}
			}
		}
	})
}
