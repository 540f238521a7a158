package cli

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// stopSignals stop a long-running command (run, fork, proxy, serve, a
// VCR, bench) the way Ctrl-C does: a service manager's SIGTERM and a
// closed terminal's SIGHUP included, so none of them kills the process
// with events not yet committed and a session left without its reason.
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// notifyStop is the one path a stop signal takes: ctx is cancelled, with
// a cause that names the signal ("terminated signal received"), which is
// what the session records as why its attempt ended. stop releases the
// signals.
func notifyStop(ctx context.Context) (context.Context, context.CancelFunc) {
	if ctx == nil {
		ctx = context.Background()
	}
	return signal.NotifyContext(ctx, stopSignals...)
}
