//go:build !unix

package gemini

import "time"

func cpuTime() time.Duration { return 0 }
