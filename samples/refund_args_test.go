package samples

import (
	"encoding/json"
	"testing"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/wire"
)

// The model's call arguments copy values out of an order line's result;
// they must read as they did when results were decoded into maps and the
// values marshalled back (the wire reader keeps the raw text instead).
func TestArgsAsMarshalled(t *testing.T) {
	for _, result := range []string{
		`{"category":"apparel","received_at":"2026-05-02","reason":"质量问题"}`,
		`{"category":"a\u0062c","received_at":"x<y&z>","reason":"\u8d28\u91cf"}`,
		`{"category":1.50,"received_at":1e3,"reason":{"z":1,"a":[true,null]}}`,
		`{"category":"c","reason":"line\nbreak","received_at":"sep\u2028x"}`,
		`{"category":"dup","category":"last","received_at":"r","reason":"q"}`,
	} {
		keys := []string{"category", "received_at", "reason"}
		var m map[string]any
		if err := json.Unmarshal([]byte(result), &m); err != nil {
			t.Fatal(err)
		}
		want := "{"
		for i, k := range keys {
			if i > 0 {
				want += ","
			}
			kb, _ := json.Marshal(k)
			vb, _ := json.Marshal(m[k])
			want += string(kb) + ":" + string(vb)
		}
		want += "}"
		v, _ := wire.ParseString(result)
		obj, _ := v.Members()
		known := map[string]wire.Value{}
		for _, k := range keys {
			known[k] = obj.Get(k)
		}
		in := &adapters.Inbound{ToolDefs: []adapters.Tool{{Name: toolPolicy, Parameters: json.RawMessage(`{"type":"object","required":["category","received_at","reason"]}`)}}}
		var why whyLines
		got, ok := argsFor(in, toolPolicy, known, "", &why)
		if !ok || string(got) != want {
			t.Errorf("%s\n got %s (%v)\nwant %s", result, got, ok, want)
		}
	}
}

// The model remembers its readings of prompts it was sent before, and an
// edited prompt is read anew.
func TestReadingsFollowAnEdit(t *testing.T) {
	sc, err := Lookup("refund")
	if err != nil {
		t.Fatal(err)
	}
	in := func(task string) *adapters.Inbound {
		return &adapters.Inbound{Prompt: []adapters.PromptPart{{Role: adapters.RoleUser, Text: task}}}
	}
	var c readings
	for _, want := range []int64{15000, 15000, 12000, 15000} {
		amount := map[int64]string{15000: "150", 12000: "120"}[want]
		if r := c.read(sc, in("核查订单 O-2048 中商品 L1 的 "+amount+" 元退款申请")); r.requested != want {
			t.Errorf("read %d cents, want %d", r.requested, want)
		}
	}
	if len(c.byID) != 2 {
		t.Errorf("%d readings kept for two prompts", len(c.byID))
	}
}
