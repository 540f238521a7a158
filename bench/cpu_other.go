//go:build !unix

package bench

import "time"

// cpuClock is nil where the process's CPU time is not read: the wall
// clock is measured instead.
func cpuClock() func() time.Duration { return nil }
