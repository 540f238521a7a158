//go:build !sdkbench

package bench

// sdkRef is an SDK reference; without -tags sdkbench there are none (see
// sdk.go for why).
type sdkRef struct {
	name string
	run  func(data []byte) error
	why  string
}

func sdkFor(string) sdkRef {
	return sdkRef{why: "SDKs not linked: go run -tags sdkbench . bench"}
}
