package adapters_test

import (
	"fmt"
	"testing"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/adapterstest"
	"github.com/modelwire/modelwire/adapters/registry"
)

// The results a request carries are found where each protocol puts them,
// and an edited one is written back there in that protocol's shape.
func TestBodyResultsAndEditResult(t *testing.T) {
	ids := adapterstest.IDs{Call: func(turn, i int) string { return fmt.Sprintf("call_%d_%d", turn, i) }}
	for _, protocol := range registry.Protocols {
		t.Run(protocol, func(t *testing.T) {
			p, _ := registry.Lookup(protocol)
			w, err := p.Encode(adapterstest.RefundRequest(3, ids, false), adapters.ProviderSim)
			if err != nil {
				t.Fatal(err)
			}
			rs := adapters.BodyResults(protocol, w.Body)
			if len(rs) != 3 || rs[0].Name != "get_order_line" || rs[2].Name != "get_refund_policy" {
				t.Fatalf("results %+v", rs)
			}
			if rs[0].Content != adapterstest.RefundTurn1[0].Result {
				t.Errorf("the order result reads %q, want %q", rs[0].Content, adapterstest.RefundTurn1[0].Result)
			}
			edited := adapters.EditResult(protocol, w.Body, rs[0], `{"paid_cents":20000}`)
			again := adapters.BodyResults(protocol, edited)
			if len(again) != 3 || again[0].Content != `{"paid_cents":20000}` || again[1].Content != rs[1].Content {
				t.Errorf("after the edit: %+v", again)
			}
		})
	}
}
