package cli

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/spf13/cobra"

	"github.com/modelwire/modelwire/jsonl"
	"github.com/modelwire/modelwire/sim"
	"github.com/modelwire/modelwire/store"
	"github.com/modelwire/modelwire/vcr"
)

// simulatorFlags are serve's flags that only the simulator takes.
var simulatorFlags = []string{"scenario", "fault", "delay-ms", "pace", "require-key", "scenarios", "workshop", "max-participants", "tui",
	"max-file-mib", "keep-files", "keep-files-mib", "keep-batches", "batch-polls", "batch-window"}

// serveSession is serve --session: a recorded session played back as the
// provider (package vcr), through its JSONL export: a stored session is a
// cassette.
func serveSession(app *App, cmd *cobra.Command, addr, prefix, speed string, bodyTimeout time.Duration, maxConns int) error {
	if err := onlyRecordingFlags(cmd, "--session"); err != nil {
		return err
	}
	if speed != "recorded" && speed != "full" {
		return usageErr("--speed %q: want recorded or full", speed)
	}
	db, id, err := resolveSession(app, prefix)
	if err != nil {
		return err
	}
	c, err := loadCassette(db, id)
	db.Close()
	if err != nil {
		return storeErr(err)
	}
	banner := fmt.Sprintf("modelwire replaying session %s (%s, %s speed)", c.SessionID(), c.Protocol(), speed)
	return serveRecordings(app, cmd, addr, bodyTimeout, maxConns, vcr.Handler(c, speed == "recorded"), banner,
		"A request the recording never saw gets 409 naming the first field that differs.")
}

// loadCassette is a stored session as a cassette, through its JSONL
// export (the cassette format).
func loadCassette(db *store.DB, id string) (*vcr.Cassette, error) {
	var buf bytes.Buffer
	if err := jsonl.Export(db, &buf, id); err != nil {
		return nil, err
	}
	c, err := vcr.Read(&buf)
	if err != nil {
		return nil, err
	}
	if c.Len() == 0 {
		return nil, fmt.Errorf("session %s has no recorded requests to play back", id)
	}
	return c, nil
}

// cassetteFlags are serve --cassettes DIR and the flags that go with it.
type cassetteFlags struct {
	dir, mode, upstream string
	redactBody          string   // a body redaction rules file, as proxy --redact-body reads
	ignore              []string // JSON pointers left out of matching
}

// serveCassettes is serve --cassettes DIR: test cassettes served to any
// client by base URL, one per test named by header or path prefix.
func serveCassettes(app *App, cmd *cobra.Command, addr string, f cassetteFlags, speed string, bodyTimeout time.Duration, maxConns int) error {
	if err := onlyRecordingFlags(cmd, "--cassettes"); err != nil {
		return err
	}
	m, err := vcr.ParseMode(f.mode)
	if err != nil || m == vcr.Live {
		return usageErr("--mode %q: want replay, record, update or hybrid", f.mode)
	}
	if speed != "recorded" && speed != "full" {
		return usageErr("--speed %q: want recorded or full", speed)
	}
	rules, err := loadBodyRules(f.redactBody)
	if err != nil {
		return err
	}
	o := vcr.ServerOptions{Dir: f.dir, Mode: m, Timed: cmd.Flags().Changed("speed") && speed == "recorded", Rules: rules, Ignore: f.ignore}
	if f.upstream != "" {
		u, err := url.Parse(f.upstream)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return usageErr("--upstream %q: want an http(s) base URL", f.upstream)
		}
		o.Upstream = u
	}
	srv, err := vcr.NewServer(o)
	if err != nil {
		return usageErr("%v", err)
	}
	banner := fmt.Sprintf("modelwire serving cassettes in %s (%s)", f.dir, m)
	return serveRecordings(app, cmd, addr, bodyTimeout, maxConns, srv, banner,
		"Name each test's cassette with the header "+vcr.CassetteHeader+": NAME, or put /c/NAME before the base URL's path.")
}

func onlyRecordingFlags(cmd *cobra.Command, what string) error {
	for _, f := range simulatorFlags {
		if cmd.Flags().Changed(f) {
			return usageErr("%s plays recordings; --%s is the simulator's", what, f)
		}
	}
	return nil
}

// serveRecordings serves h until stopped, after a banner with the base
// URLs.
func serveRecordings(app *App, cmd *cobra.Command, addr string, bodyTimeout time.Duration, maxConns int, h http.Handler, banner, note string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return usageErr("cannot listen on %s: %v", addr, err)
	}
	srv, ln := sim.BoundedServer(ln, h, bodyTimeout, maxConns)
	go func() { _ = srv.Serve(ln) }()
	url := "http://" + ln.Addr().String()
	fmt.Fprintf(app.Out, "%s on %s\n  OpenAI base URL:    %s/v1\n  Anthropic base URL: %s\n  Gemini base URL:    %s\n  DeepSeek base URL:  %s\n%s Ctrl-C stops it.\n",
		banner, url, url, url, url, url, note)
	ctx, stop := notifyStop(cmd.Context())
	defer stop()
	<-ctx.Done()
	sctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	return srv.Shutdown(sctx)
}
