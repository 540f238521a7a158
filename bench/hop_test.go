package bench

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// TestBenchProxyTable runs the proxy group end to end on a tiny load —
// the upstream, direct, the three proxies as child processes, every
// phase — and checks the table prints a row for each proxy (mitmdump's
// may say it is not installed) and the three target rows. It measures
// nothing: no time is asserted.
func TestBenchProxyTable(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a proxy process for each phase")
	}
	load := ProxyLoad{Streams: 3, Events: 20, Interval: 5 * time.Millisecond, Rounds: 1,
		Sequential: 100 * time.Millisecond, UnpacedStreams: 2, UnpacedBytes: 64 << 10}
	var progress bytes.Buffer
	rows, err := Run(context.Background(), Options{Only: []string{"proxy"}, ProxyLoad: &load, Progress: &progress})
	if err != nil {
		t.Fatalf("%v\n%s", err, progress.String())
	}
	var out bytes.Buffer
	if err := WriteTable(&out, rows); err != nil {
		t.Fatal(err)
	}
	table := out.String()
	for _, want := range []string{"hop: direct (no proxy)", "hop: bare ReverseProxy, added", "hop: modelwire (recording), added",
		"hop: mitmdump, added", "against bare ReverseProxy", "against mitmdump", "unpaced throughput against direct"} {
		if !strings.Contains(table, want) {
			t.Errorf("no %q row in\n%s", want, table)
		}
	}
	for _, r := range rows {
		if !strings.HasPrefix(r.Path, "hop: ") || !strings.Contains(r.Path, ", added") {
			continue
		}
		installed := !strings.Contains(r.Note, "not installed")
		if installed && (r.Ours != r.Ours || !strings.Contains(r.Note, "req/s") || !strings.Contains(r.Note, "peak RSS")) {
			t.Errorf("%s: measured nothing: %+v", r.Path, r)
		}
		if !installed && !strings.Contains(r.Path, "mitmdump") {
			t.Errorf("%s: %s", r.Path, r.Note)
		}
	}
	t.Logf("\n%s", table)
}
