//go:build !unix

package bench

import (
	"os"
	"time"
)

// processCPU is not measured on this platform.
func processCPU() (time.Duration, bool) { return 0, false }

// rusageOf is a waited-for child's CPU; its peak RSS is not known here.
func rusageOf(ps *os.ProcessState) (time.Duration, int64) { return ps.UserTime() + ps.SystemTime(), 0 }

// childCPU is not read on this platform: a child's CPU then includes its start.
func childCPU(int) time.Duration { return 0 }
