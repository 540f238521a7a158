package session

import (
	"context"
	"time"
)

// SetClockForTest replaces the session's clock and its wait between
// retries, so tests check timings and backoff delays without wall time.
func (s *Session) SetClockForTest(now func() time.Time, sleep func(ctx context.Context, d time.Duration) error) {
	s.now, s.sleep = now, sleep
}
