package claudecode

import (
	"encoding/json"
	"strings"
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/tidwall/gjson"

	"github.com/modelwire/modelwire/adapters/adapterstest"
)

// The oracle for stream_event lines is the official Go SDK: each embedded
// Anthropic event goes through MessageStreamEventUnion and
// Message.Accumulate, a new Message at each message_start, one thread per
// parent_tool_use_id. The messages' text, tool calls and last stop_reason
// must match our summary.
func TestSDKAccumulateEmbeddedEvents(t *testing.T) {
	for _, name := range []string{"partial_tool_call.ndjson", "oddities.ndjson"} {
		t.Run(name, func(t *testing.T) {
			body := string(adapterstest.ReadCapture(t, name))
			threads := map[string]*sdk.Message{}
			var order []*sdk.Message
			var mainStop string
			for _, line := range strings.Split(body, "\n") {
				if !gjson.Valid(line) || gjson.Get(line, "type").String() != "stream_event" {
					continue
				}
				parent := gjson.Get(line, "parent_tool_use_id").String()
				raw := gjson.Get(line, "event").Raw
				var ev sdk.MessageStreamEventUnion
				if err := json.Unmarshal([]byte(raw), &ev); err != nil {
					t.Fatal(err)
				}
				if ev.Type == "message_start" {
					threads[parent] = &sdk.Message{}
					order = append(order, threads[parent])
				}
				if err := threads[parent].Accumulate(ev); err != nil {
					t.Fatal(err)
				}
				if parent == "" && threads[parent].StopReason != "" {
					mainStop = string(threads[parent].StopReason)
				}
			}
			var text strings.Builder
			var calls []sdk.ContentBlockUnion
			for _, m := range order {
				for _, b := range m.Content {
					switch b.Type {
					case "text":
						text.WriteString(b.Text)
					case "tool_use":
						calls = append(calls, b)
					}
				}
			}
			_, s := decode(t, name)
			if text.String() != s.Text {
				t.Errorf("text: sdk %q, ours %q", text.String(), s.Text)
			}
			if len(calls) != len(s.ToolCalls) {
				t.Fatalf("calls: sdk %d, ours %d", len(calls), len(s.ToolCalls))
			}
			for i, c := range calls {
				var a, b any
				_ = json.Unmarshal(c.Input, &a)
				_ = json.Unmarshal(s.ToolCalls[i].Arguments, &b)
				ja, _ := json.Marshal(a)
				jb, _ := json.Marshal(b)
				if c.ID != s.ToolCalls[i].CallID || c.Name != s.ToolCalls[i].Name || string(ja) != string(jb) {
					t.Errorf("call %d: sdk %s %s %s, ours %+v", i, c.ID, c.Name, ja, s.ToolCalls[i])
				}
			}
			if mainStop != s.ProviderStopReason {
				t.Errorf("stop reason: sdk %q, ours %q", mainStop, s.ProviderStopReason)
			}
		})
	}
}
