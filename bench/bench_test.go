package bench

import (
	"bytes"
	"context"
	"encoding/csv"
	"math"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

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

// benchSize is the capture size of the decode benchmarks: smaller than
// the command's 100 MB so that -bench runs stay short; MB/s does not
// depend on it (allocs/event shows the cost per event is constant).
const benchSize = 20 << 20

var captures sync.Map // protocol → []byte

func capture(b *testing.B, name string) []byte {
	if v, ok := captures.Load(name); ok {
		return v.([]byte)
	}
	data, err := Capture(name, benchSize)
	if err != nil {
		b.Fatal(err)
	}
	captures.Store(name, data)
	return data
}

// BenchmarkDecode is ours, as the decode group measures it.
func BenchmarkDecode(b *testing.B) {
	for _, name := range registry.Protocols {
		b.Run(name, func(b *testing.B) {
			data := capture(b, name)
			p, _ := registry.Lookup(name)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			events := 0
			for b.Loop() {
				n, err := Decode(p, data)
				if err != nil {
					b.Fatal(err)
				}
				events = n
			}
			b.ReportMetric(float64(events), "events/op")
		})
	}
}

// BenchmarkFloor is the floor on the same captures.
func BenchmarkFloor(b *testing.B) {
	for _, name := range registry.Protocols {
		b.Run(name, func(b *testing.B) {
			data := capture(b, name)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Floor(data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSDK is each official SDK on the same captures (with -tags
// sdkbench).
func BenchmarkSDK(b *testing.B) {
	for _, name := range registry.Protocols {
		b.Run(name, func(b *testing.B) {
			sdk := sdkFor(name)
			if sdk.run == nil {
				b.Skip(sdk.why)
			}
			data := capture(b, name)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if err := sdk.run(data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkStoreJump opens a stored 1,000,000-event session and jumps to
// its middle, as the store group does.
func BenchmarkStoreJump(b *testing.B) {
	path := filepath.Join(b.TempDir(), "j.db")
	const n = 1_000_000
	id, _, err := BuildSession(context.Background(), path, n, 1000)
	if err != nil {
		b.Fatal(err)
	}
	var first, state time.Duration
	b.ResetTimer()
	for b.Loop() {
		f, s, err := Jump(path, id, n/2+7)
		if err != nil {
			b.Fatal(err)
		}
		first, state = first+f, state+s
	}
	b.ReportMetric(float64(first.Microseconds())/1000/float64(b.N), "ms-to-event")
	b.ReportMetric(float64(state.Microseconds())/1000/float64(b.N), "ms-to-state")
}

func TestTableAndCSV(t *testing.T) {
	rows := []Row{
		{Group: "decode", Path: "x vs floor", Unit: "MB/s", Ours: 300, RefName: "floor", Ref: 400, Ratio: 1.33, Target: "≤ 2× floor time", Checked: true, Met: true},
		{Group: "sim", Path: "loop", Unit: "req/s", Ours: math.NaN(), Ratio: math.NaN(), Target: "≥ 2×", Note: "see, elsewhere"},
	}
	var tb bytes.Buffer
	if err := WriteTable(&tb, rows); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(tb.String(), "300 MB/s") || !strings.Contains(tb.String(), "400 MB/s (floor)") || !strings.Contains(tb.String(), "1.33×") {
		t.Errorf("table:\n%s", tb.String())
	}
	var cb bytes.Buffer
	if err := WriteCSV(&cb, rows); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&cb).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3 || recs[1][3] != "300" || recs[1][5] != "400" || recs[1][8] != "true" || recs[2][3] != "" || recs[2][9] != "see, elsewhere" {
		t.Errorf("csv: %q", recs)
	}
}

func TestUnknownGroup(t *testing.T) {
	if _, err := Run(context.Background(), Options{Only: []string{"decod"}}); err == nil || !strings.Contains(err.Error(), `"decod"`) {
		t.Fatalf("got %v", err)
	}
}

// TestStoreJumpFindsTheEvent keeps the store group honest on a small
// session: the jump lands on the event it asked for.
func TestStoreJumpFindsTheEvent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	id, _, err := BuildSession(context.Background(), path, 3000, 1000)
	if err != nil {
		t.Fatal(err)
	}
	for _, seq := range []int{1, 1500, 3000} {
		if _, _, err := Jump(path, id, seq); err != nil {
			t.Errorf("jump to %d: %v", seq, err)
		}
	}
	if _, _, err := Jump(path, id, 3001); err == nil {
		t.Error("a jump past the end found an event")
	}
}
