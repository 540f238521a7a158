package cli

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"
)

// SIGTERM and SIGHUP stop a command as Ctrl-C does, with a cause that
// names the signal (issue 29).
func TestNotifyStopTakesTermAndHup(t *testing.T) {
	for sig, want := range map[syscall.Signal]string{syscall.SIGTERM: "terminated", syscall.SIGHUP: "hangup"} {
		ctx, stop := notifyStop(context.Background())
		if err := syscall.Kill(syscall.Getpid(), sig); err != nil {
			t.Fatal(err)
		}
		select {
		case <-ctx.Done():
			if c := context.Cause(ctx); c == nil || !strings.Contains(c.Error(), want) {
				t.Errorf("%v: cause %v", sig, c)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%v did not stop the context", sig)
		}
		stop()
	}
}
