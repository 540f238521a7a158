// Package reliability holds modelwire's reliability suite: Go tests that
// drive the real binary through bad input, SIGKILLs, concurrent writers
// and streams, secret canaries and the proxy's safety promises, and print
// what they tried and what survived as one table.
//
// The default run is the smaller variant, within a few minutes on two
// cores under -race. MODELWIRE_RELIABILITY=long runs the full
// sizes (30 kills of a 10k-event run, a 1 GB line, a 1M-event stream):
//
//	MODELWIRE_RELIABILITY=long go test -v -run . -timeout 60m ./reliability/
package reliability
