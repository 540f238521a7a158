//go:build unix

package bench

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time this process has used (all threads, GC
// included). On a machine shared with other work, wall time mostly
// measures the neighbours; CPU time is what one core spent on the path.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
