package bench

import "math"

// simRows points at the simulator's own benchmark: sim/bench_test.go
// (engineer A's) measures the refund loop against @copilotkit/aimock,
// installing it with npm; it is not duplicated here.
func simRows() []Row {
	return []Row{{Group: "sim", Path: "refund loop req/s vs aimock", Unit: "req/s", Ours: math.NaN(), Ratio: math.NaN(),
		Target: "≥ 2× aimock", Note: "see go test ./sim -run '^$' -bench RefundLoop"}}
}
