//go:build unix

package gemini

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time this process has used (all threads, GC
// included), so benchmarks can be compared on a loaded machine where wall
// time mostly measures the neighbours.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
