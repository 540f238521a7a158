package sim_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/modelwire/modelwire/samples"
	"github.com/modelwire/modelwire/sim"
)

// BenchmarkBatch1000 runs a batch of 1,000 Responses requests through the
// SDK: upload, create, the retrievals to completed (the lines run in the
// one that enters in_progress).
func BenchmarkBatch1000(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	sc, err := samples.Lookup("refund")
	if err != nil {
		b.Fatal(err)
	}
	base, err := sim.New(sim.Options{Scenario: sc}).Start(ctx, "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	c := openai.NewClient(option.WithBaseURL(base+"/v1/"), option.WithAPIKey("sk-any"), option.WithMaxRetries(0))
	var in strings.Builder
	for i := range 1000 {
		in.WriteString(responsesLine(fmt.Sprintf("req-%d", i), "gpt-4.1-mini") + "\n")
	}
	for b.Loop() {
		bt := createBatch(b, c, in.String())
		for bt.Status != openai.BatchStatusCompleted {
			var err error
			if bt, err = c.Batches.Get(ctx, bt.ID); err != nil {
				b.Fatal(err)
			}
		}
		if bt.RequestCounts.Completed != 1000 {
			b.Fatal(bt.RawJSON())
		}
	}
}
