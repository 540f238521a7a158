package bench

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/modelwire/modelwire/adapters/registry"
)

// TestCapturesDecodeWhole makes sure each decode measurement measures a
// correct decode: every protocol's generated capture decodes to a
// completed response with no diagnostic, the floor accepts every payload,
// and the SDK reference reads it to its end.
func TestCapturesDecodeWhole(t *testing.T) {
	for _, name := range registry.Protocols {
		t.Run(name, func(t *testing.T) {
			data, err := Capture(name, 256<<10)
			if err != nil {
				t.Fatal(err)
			}
			if len(data) < 128<<10 {
				t.Fatalf("capture of %d bytes, want about 256 KB", len(data))
			}
			p, _ := registry.Lookup(name)
			raws, err := Decode(p, data)
			if err != nil {
				t.Fatal(err)
			}
			payloads, err := Floor(data)
			if err != nil {
				t.Fatal(err)
			}
			if raws < 100 || payloads < raws-1 {
				t.Errorf("%d raw events decoded, %d payloads validated", raws, payloads)
			}
			if sdk := sdkFor(name); sdk.run != nil {
				if err := sdk.run(data); err != nil {
					t.Errorf("%s: %v", sdk.name, err)
				}
			}
		})
	}
}

func TestFloorRejectsBadJSON(t *testing.T) {
	if _, err := Floor([]byte("data: {\"a\":1}\n\ndata: {\"a\":\n\n")); err == nil {
		t.Fatal("the floor accepted a payload that is not JSON")
	}
}

// BenchmarkStoreAppend is the store group's append path (BuildSession).
func BenchmarkStoreAppend(b *testing.B) {
	const n = 200_000
	for range b.N {
		_, el, err := BuildSession(context.Background(), filepath.Join(b.TempDir(), "s.db"), n, 1000)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(n)/el.Seconds(), "events/s")
	}
}
