//go:build !linux

package background

// lowers: only Linux lowers a single thread; elsewhere background work
// runs on ordinary goroutines.
const lowers = false

func lower() {}
