package bench

import (
	"context"
	"math"
)

func storeRows(ctx context.Context, o Options) ([]Row, error)   { return nil, nil }
func proxyRows(ctx context.Context, o Options) ([]Row, error)   { return nil, nil }

// simRows points at the simulator's own benchmark: engineer A's
// sim/bench_test.go measures the refund loop against @copilotkit/aimock
// (it needs node and npm); it is not duplicated here.
func simRows() []Row {
	return []Row{{Group: "sim", Path: "refund loop req/s vs aimock", Unit: "req/s", Ours: math.NaN(), Ratio: math.NaN(),
		Target: "≥ 2× aimock", Note: "see go test ./sim -run '^$' -bench RefundLoop"}}
}
