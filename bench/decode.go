package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"runtime"
	"time"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/registry"
)

// Floor is the reference every decoder is held to: a bufio scanner that
// splits the stream into lines and validates each data payload with
// json.Valid. It builds no events and keeps nothing. It returns the number
// of payloads.
func Floor(data []byte) (int, error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), adapters.MaxEventSize)
	n := 0
	for sc.Scan() {
		payload, ok := bytes.CutPrefix(sc.Bytes(), []byte("data:"))
		if !ok {
			continue
		}
		payload = bytes.TrimPrefix(payload, []byte(" "))
		if string(payload) == "[DONE]" {
			continue
		}
		if !json.Valid(payload) {
			return n, fmt.Errorf("payload %d is not JSON", n+1)
		}
		n++
	}
	return n, sc.Err()
}

// Decode is ours, as `modelwire decode` runs it: the SSE reader, the
// protocol's decoder and the Reducer over the whole stream. It returns the
// number of raw events and fails unless the response decoded whole (a
// terminal, no diagnostic).
func Decode(p adapters.Protocol, data []byte) (int, error) {
	st := adapters.NewStream(p)
	st.ReuseEvents() // as decode does: each step is written out (here counted), not kept
	raws := 0
	err := adapters.ReadStream(p, st, bytes.NewReader(data), func(s adapters.Step) error {
		if s.Index >= 0 {
			raws++
		}
		return nil
	})
	if err != nil {
		return raws, err
	}
	s := st.Summary()
	if s.Terminal != adapters.StatusCompleted || len(s.Diagnostics) > 0 {
		return raws, fmt.Errorf("decoded to %s with %d diagnostics %v", s.Terminal, len(s.Diagnostics), s.Diagnostics)
	}
	return raws, nil
}

// decodeRows measures each protocol: ours against the floor and the SDK,
// in MB/s, and ours' allocations per event at two sizes.
func decodeRows(ctx context.Context, o Options) ([]Row, error) {
	var rows []Row
	for _, name := range registry.Protocols {
		if err := ctx.Err(); err != nil {
			return rows, err
		}
		p, err := registry.Lookup(name)
		if err != nil {
			return rows, err
		}
		o.progress("decode %s: generating a %d MB capture", name, o.SizeMB)
		data, err := Capture(name, o.SizeMB<<20)
		if err != nil {
			return rows, err
		}
		sdk := sdkFor(name)
		// Interleaved rounds: floor, ours, SDK, again; the best of each.
		tFloor, tOurs, tSDK := time.Duration(math.MaxInt64), time.Duration(math.MaxInt64), time.Duration(math.MaxInt64)
		cFloor, cOurs := time.Duration(math.MaxInt64), time.Duration(math.MaxInt64)
		for r := range o.Rounds {
			o.progress("decode %s: round %d of %d", name, r+1, o.Rounds)
			d, c, err := timedCPU(func() error { _, err := Floor(data); return err })
			if err != nil {
				return rows, fmt.Errorf("floor on %s: %w", name, err)
			}
			tFloor, cFloor = min(tFloor, d), min(cFloor, c)
			d, c, err = timedCPU(func() error { _, err := Decode(p, data); return err })
			if err != nil {
				return rows, fmt.Errorf("%s: %w", name, err)
			}
			tOurs, cOurs = min(tOurs, d), min(cOurs, c)
			// The SDKs are an order of magnitude slower: one round says it.
			if sdk.run != nil && r == 0 {
				if d, err = timed(func() error { return sdk.run(data) }); err != nil {
					return rows, fmt.Errorf("%s on %s: %w", sdk.name, name, err)
				}
				tSDK = d
			}
		}
		mb := float64(len(data)) / (1 << 20)
		ours, floor := mb/tOurs.Seconds(), mb/tFloor.Seconds()
		ratio := tOurs.Seconds() / tFloor.Seconds()
		rows = append(rows, Row{Group: "decode", Path: name + " vs floor", Unit: "MB/s", Ours: ours,
			RefName: "bufio+json.Valid", Ref: floor, Ratio: ratio, Target: "≤ 2× floor time", Checked: true, Met: ratio <= 2,
			Note: stretch(ratio)})
		if sdk.run != nil {
			speed := tSDK.Seconds() / tOurs.Seconds()
			rows = append(rows, Row{Group: "decode", Path: name + " vs SDK", Unit: "MB/s", Ours: ours,
				RefName: sdk.name, Ref: mb / tSDK.Seconds(), Ratio: speed, Target: "≥ 10× SDK speed", Checked: true, Met: speed >= 10})
		} else {
			rows = append(rows, Row{Group: "decode", Path: name + " vs SDK", Unit: "MB/s", Ours: ours, Ratio: math.NaN(),
				Target: "≥ 10× SDK speed", Note: sdk.why})
		}
		rows = append(rows, Row{Group: "decode", Path: name + " in process", Unit: "MB/s", Ours: ours, Ratio: math.NaN(),
			Target: "≥ 500 MB/s", Checked: true, Met: ours >= 500, Note: cpuNote(mb, cOurs, cFloor)})

		// Allocations per raw event, at the full size and at a tenth:
		// equal when the cost per event does not grow with the stream.
		full, err := allocsPerEvent(p, data)
		if err != nil {
			return rows, err
		}
		small, err := Capture(name, max(1, o.SizeMB/10)<<20)
		if err != nil {
			return rows, err
		}
		tenth, err := allocsPerEvent(p, small)
		if err != nil {
			return rows, err
		}
		growth := full / tenth
		rows = append(rows, Row{Group: "decode", Path: name + " allocs/event", Unit: "allocs", Ours: full,
			RefName: "at a tenth of the size", Ref: tenth, Ratio: growth, Target: "≤ 4, constant (ratio ≤ 1.1)",
			Checked: true, Met: full <= 4 && growth <= 1.1})
	}
	return rows, nil
}

func stretch(ratio float64) string {
	if ratio <= 1.5 {
		return "(stretch 1.5× met)"
	}
	return ""
}

// cpuNote gives the speeds per CPU second, which the machine's other load
// changes far less than wall time.
func cpuNote(mb float64, ours, floor time.Duration) string {
	if ours <= 0 || floor <= 0 {
		return ""
	}
	return fmt.Sprintf("per CPU second: %.0f MB/s, floor %.0f MB/s", mb/ours.Seconds(), mb/floor.Seconds())
}

// timedCPU is timed, with the process's CPU time too.
func timedCPU(fn func() error) (wall, cpu time.Duration, err error) {
	runtime.GC()
	c0, ok0 := processCPU()
	wall, err = timed(fn)
	if c1, ok1 := processCPU(); ok0 && ok1 {
		cpu = c1 - c0
	}
	return wall, cpu, err
}

// timed runs fn once after a GC, so each run starts from the same heap.
func timed(fn func() error) (time.Duration, error) {
	runtime.GC()
	t := time.Now()
	err := fn()
	return time.Since(t), err
}

// allocsPerEvent decodes data once and divides the heap allocations by the
// raw events.
func allocsPerEvent(p adapters.Protocol, data []byte) (float64, error) {
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	n, err := Decode(p, data)
	runtime.ReadMemStats(&after)
	if err != nil {
		return 0, err
	}
	return float64(after.Mallocs-before.Mallocs) / float64(max(n, 1)), nil
}
