package bench

import (
	"bytes"
	"context"
	"encoding/csv"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelwire/modelwire/adapters/registry"
	"github.com/modelwire/modelwire/store"
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

// TestPacedStreamsThroughTheProxy keeps the proxy group's target rows
// honest on a small run: every paced event of every stream is timed from
// its stamp, through the proxy as straight, and the proxy recorded each
// stream as a session that ended done with all its events.
func TestPacedStreamsThroughTheProxy(t *testing.T) {
	g, err := newProxyRig()
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	const streams, events = 4, 30
	for _, proxied := range []bool{false, true} {
		var lat []time.Duration
		if _, err := g.measure(proxied, func(base string) (err error) {
			lat, err = PacedRun(context.Background(), g.client, base, streams, events, 2*time.Millisecond)
			return err
		}); err != nil {
			t.Fatalf("%s: %v", side(proxied), err)
		}
		if len(lat) != streams*events {
			t.Fatalf("%s: %d latencies, want %d", side(proxied), len(lat), streams*events)
		}
		for i, d := range lat {
			if d <= 0 {
				t.Fatalf("%s: event %d took %v", side(proxied), i, d)
			}
		}
	}
	ss, err := g.db.ListSessions(store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ss) != streams {
		t.Fatalf("%d sessions recorded, want %d (one a stream)", len(ss), streams)
	}
	for _, s := range ss {
		// started, assembled, attempt, each event, the terminal step,
		// response, validated: at least the events themselves.
		if s.Status != store.StatusDone || s.Events < events {
			t.Errorf("session %s: %s with %d entries, want done with at least %d", s.ID, s.Status, s.Events, events)
		}
	}
}

// TestRateLimitedFirehose checks the throughput rows' streams: every byte
// of the body reaches the client at the link's rate and at full speed,
// straight and through the proxy.
func TestRateLimitedFirehose(t *testing.T) {
	g, err := newProxyRig()
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	body, err := Capture("openai-chat", 64<<10)
	if err != nil {
		t.Fatal(err)
	}
	g.up.setBody(body)
	for _, proxied := range []bool{false, true} {
		for _, rate := range []int{0, 1 << 20} {
			if _, err := g.measure(proxied, func(base string) error {
				return FirehoseRun(context.Background(), g.client, base, 3, len(body), rate)
			}); err != nil {
				t.Errorf("%s at %d B/s: %v", side(proxied), rate, err)
			}
		}
	}
}

// BenchmarkProxyPaced is the proxy group's latency row on a smaller run:
// 20 streams of 100 Chat chunks at 100 events/s, straight then through a
// recording proxy, each op one of each. It reports the p50 and p99 of
// each side (µs, upstream write → client read), the p99 added, and the
// process CPU per event of each side (the proxy's recording included).
func BenchmarkProxyPaced(b *testing.B) {
	g, err := newProxyRig()
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close()
	var lat [2][]time.Duration
	var cpu [2]time.Duration
	b.ReportAllocs()
	for b.Loop() {
		for i, proxied := range []bool{false, true} {
			var l []time.Duration
			m, err := g.measure(proxied, func(base string) (err error) {
				l, err = PacedRun(context.Background(), g.client, base, 20, 100, 10*time.Millisecond)
				return err
			})
			if err != nil {
				b.Fatal(err)
			}
			lat[i], cpu[i] = append(lat[i], l...), cpu[i]+m.cpu
		}
	}
	us := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1000 }
	for i, name := range []string{"direct", "proxy"} {
		slices.Sort(lat[i])
		b.ReportMetric(us(percentile(lat[i], 50)), name+"-p50-µs")
		b.ReportMetric(us(percentile(lat[i], 99)), name+"-p99-µs")
		b.ReportMetric(us(cpu[i])/float64(len(lat[i])), name+"-cpu-µs/event")
	}
	b.ReportMetric(us(percentile(lat[1], 99)-percentile(lat[0], 99)), "added-p99-µs")
}

// BenchmarkProxyRecord is the proxy's whole cost per byte: 8 streams of a
// 2 MB Chat capture at full speed through a recording proxy, each op
// ending when every event is recorded. MB/s and allocs/op are the
// forward path's and the recorder's together; cpu-ms/MB is the process's
// (the upstream and the client included: see BenchmarkProxyDirect).
func BenchmarkProxyRecord(b *testing.B) { benchFirehose(b, true) }

// BenchmarkProxyDirect is BenchmarkProxyRecord without the proxy.
func BenchmarkProxyDirect(b *testing.B) { benchFirehose(b, false) }

func benchFirehose(b *testing.B, proxied bool) {
	g, err := newProxyRig()
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close()
	body, err := Capture("openai-chat", 2<<20)
	if err != nil {
		b.Fatal(err)
	}
	g.up.setBody(body)
	const streams = 8
	b.SetBytes(int64(streams * len(body)))
	b.ReportAllocs()
	var cpu time.Duration
	for b.Loop() {
		m, err := g.measure(proxied, func(base string) error {
			return FirehoseRun(context.Background(), g.client, base, streams, len(body), 0)
		})
		if err != nil {
			b.Fatal(err)
		}
		cpu += m.cpu
	}
	b.ReportMetric(float64(cpu.Microseconds())/1000/(float64(b.N*streams*len(body))/(1<<20)), "cpu-ms/MB")
}
