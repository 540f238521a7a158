package samples

import (
	"encoding/json"
	"testing"

	"github.com/modelwire/modelwire/adapters/wire"
)

// The model's call arguments copy values out of an order line's result;
// they must read as they did when results were decoded into maps and the
// values marshalled back (the wire reader keeps the raw text instead).
func TestOrderedArgsAsMarshalled(t *testing.T) {
	for _, result := range []string{
		`{"category":"apparel","received_at":"2026-05-02","reason":"质量问题"}`,
		`{"category":"a\u0062c","received_at":"x<y&z>","reason":"\u8d28\u91cf"}`,
		`{"category":1.50,"received_at":1e3,"reason":{"z":1,"a":[true,null]}}`,
		`{"category":null,"reason":"line\nbreak","received_at":"sep\u2028x"}`,
		`{"category":"dup","category":"last"}`,
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
		if got := string(orderedArgs(keys, obj)); got != want {
			t.Errorf("%s\n got %s\nwant %s", result, got, want)
		}
	}
}
