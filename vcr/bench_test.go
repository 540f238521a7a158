package vcr_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelwire/modelwire/vcr"
)

// BenchmarkReplayRefund replays the refund case's 3-turn cassette through
// openai-go (streamed, as an agent's test would), offline: what one turn
// costs a test suite. Reported as ms/turn.
func BenchmarkReplayRefund(b *testing.B) {
	b.Setenv(vcr.EnvMode, "")
	ctx := context.Background()
	a := refundApp(b)
	path := filepath.Join(b.TempDir(), "refund")
	rec := &fakeTB{name: "BenchmarkReplayRefund"}
	r := vcr.New(rec, path, vcr.WithMode(vcr.Record))
	want, err := chatLoop(ctx, a, startSim(b), r.Client(), true)
	rec.finish()
	if err != nil || len(rec.errs) > 0 || len(want) != 3 {
		b.Fatalf("recording: %v %q, %d turns (want 3)", err, rec.errs, len(want))
	}
	play := vcr.New(b, path, vcr.WithUpstream(offline{b}))
	client := play.Client()
	b.ResetTimer()
	start := time.Now()
	turns := 0
	for b.Loop() {
		got, err := chatLoop(ctx, a, "http://127.0.0.1:9", client, true)
		if err != nil || len(got) != 3 {
			b.Fatalf("replay: %v", err)
		}
		turns += len(got)
	}
	b.ReportMetric(float64(time.Since(start).Microseconds())/1000/float64(turns), "ms/turn")
}
