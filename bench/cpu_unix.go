//go:build unix

package bench

import (
	"syscall"
	"time"
)

// cpuClock is the CPU time this process has used (all threads, the
// garbage collector's included): the work a path does, which the load of
// a shared machine does not stretch as it stretches the wall clock.
func cpuClock() func() time.Duration {
	return func() time.Duration {
		var ru syscall.Rusage
		if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
			return 0
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
}
