package cli

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/spf13/cobra"

	"github.com/modelwire/modelwire/sim"
	"github.com/modelwire/modelwire/vcr"
)

// serveSession is serve --session: a recorded session played back as the
// provider (package vcr).
func serveSession(app *App, cmd *cobra.Command, addr, prefix, speed string, bodyTimeout time.Duration, maxConns int) error {
	for _, f := range []string{"scenario", "fault", "delay-ms", "pace", "require-key", "scenarios"} {
		if cmd.Flags().Changed(f) {
			return usageErr("--session plays a recording back; --%s is the simulator's", f)
		}
	}
	if speed != "recorded" && speed != "full" {
		return usageErr("--speed %q: want recorded or full", speed)
	}
	db, id, err := resolveSession(app, prefix)
	if err != nil {
		return err
	}
	tape, err := vcr.Load(db, id)
	db.Close()
	if err != nil {
		return storeErr(err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return usageErr("cannot listen on %s: %v", addr, err)
	}
	srv, ln := sim.BoundedServer(ln, tape.Handler(vcr.Options{Full: speed == "full"}), bodyTimeout, maxConns)
	go func() { _ = srv.Serve(ln) }()
	url := "http://" + ln.Addr().String()
	fmt.Fprintf(app.Out, "modelwire replaying session %s (%s, %s speed) on %s\n  OpenAI base URL:    %s/v1\n  Anthropic base URL: %s\n  Gemini base URL:    %s\n  DeepSeek base URL:  %s\nA request the recording never saw gets 409 naming the first field that differs. Ctrl-C stops it.\n",
		tape.SessionID, tape.Protocol, speed, url, url, url, url, url)
	ctx, stop := notifyStop(cmd.Context())
	defer stop()
	<-ctx.Done()
	sctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	return srv.Shutdown(sctx)
}
