package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/spf13/cobra"

	application "github.com/modelwire/modelwire/app"
	"github.com/modelwire/modelwire/collect"
	"github.com/modelwire/modelwire/session"
	"github.com/modelwire/modelwire/telemetry"
	"github.com/modelwire/modelwire/ui"
)

func init() { register(newCollectCmd) }

type collectFlags struct {
	http, grpc, forward string
	tui                 bool
	idle                time.Duration
	maxRequest, fwdBuf  int64
	maxOpen             int
}

func newCollectCmd(app *App) *cobra.Command {
	var f collectFlags
	cmd := &cobra.Command{
		Use:   "collect",
		Short: "Receive OpenTelemetry traces (OTLP) and record their GenAI spans as sessions",
		Long: `Receive traces from any application instrumented with OpenTelemetry's GenAI
semantic conventions — the Vercel AI SDK with experimental_telemetry, OpenLLMetry,
the OpenAI Agents SDK, Pydantic AI/Logfire, LangChain, the Go SDK — with no proxy
in between: point OTEL_EXPORTER_OTLP_ENDPOINT at it.

OTLP/HTTP (protobuf or JSON, gzip or not) on --http, POST /v1/traces; OTLP/gRPC
(TraceService/Export) on --grpc. Either may be "" to turn it off; both listen on
loopback only. Each trace becomes one session: a turn per model call
(gen_ai.operation.name chat, generate_content or text_completion), tool executions
(execute_tool) by their call_id, usage and model as reported, the messages and
tool arguments when the application captured content ("content not captured"
otherwise), the span's timing as the turn's. A session ends when its root span
arrives, or after --idle with no span. Spans that are not GenAI pass by, counted.

--forward URL passes every request on unchanged to another OTLP/HTTP endpoint (an
OpenTelemetry Collector, Jaeger, Tempo), from a queue bounded by --forward-buffer:
a request that does not fit is dropped and counted, never waited for. See
docs/collect.md.`,
		Example: `  modelwire collect
  OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 node app.mjs
  modelwire collect --tui --forward http://127.0.0.1:14318`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runCollect(cmd, app, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.http, "http", "127.0.0.1:4318", `OTLP/HTTP address (loopback; "" for none)`)
	fl.StringVar(&f.grpc, "grpc", "127.0.0.1:4317", `OTLP/gRPC address (loopback; "" for none)`)
	fl.StringVar(&f.forward, "forward", "", "pass every request on unchanged to this OTLP/HTTP endpoint (base URL or …/v1/traces)")
	fl.BoolVar(&f.tui, "tui", false, "show the sessions live in the workbench")
	fl.DurationVar(&f.idle, "idle", 30*time.Second, "end a trace's session after this long without a span of it (when its root never comes)")
	fl.Int64Var(&f.maxRequest, "max-request", 16, "MiB: the largest request taken, decompressed (larger: 413 / ResourceExhausted)")
	fl.Int64Var(&f.fwdBuf, "forward-buffer", 64, "MiB of requests waiting to be forwarded; past it a request is dropped and counted")
	fl.IntVar(&f.maxOpen, "max-open", 1000, "sessions written at once; past it the quietest one ends")
	return cmd
}

// listenLoopback listens on addr, which must name a loopback host.
func listenLoopback(flag, addr string) (net.Listener, error) {
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return nil, usageErr("--%s %q: want host:port", flag, addr)
	}
	if !loopback(addr) {
		return nil, usageErr("--%s %q: collect listens on loopback only (127.0.0.1, ::1 or localhost)", flag, addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, usageErr("cannot listen on %s: %v", addr, err)
	}
	return ln, nil
}

func runCollect(cmd *cobra.Command, app *App, f collectFlags) error {
	if f.http == "" && f.grpc == "" {
		return usageErr("--http and --grpc are both off: nothing would receive")
	}
	if f.idle <= 0 || f.maxRequest < 1 || f.maxRequest > 1<<10 || f.fwdBuf < 1 || f.fwdBuf > 1<<20 || f.maxOpen < 1 {
		return usageErr("--idle, --max-request (MiB, at most 1024), --forward-buffer (MiB) and --max-open must be positive")
	}
	forward := ""
	if f.forward != "" {
		u, err := telemetry.TracesURL(f.forward)
		if err != nil {
			return usageErr("--forward: %v", err)
		}
		forward = u
	}
	var httpLn, grpcLn net.Listener
	var err error
	if f.http != "" {
		if httpLn, err = listenLoopback("http", f.http); err != nil {
			return err
		}
		defer httpLn.Close()
	}
	if f.grpc != "" {
		if grpcLn, err = listenLoopback("grpc", f.grpc); err != nil {
			return err
		}
		defer grpcLn.Close()
	}
	ctx, stop := notifyStop(cmd.Context())
	defer stop()
	limitMemory()
	db, err := openForWrite(app)
	if err != nil {
		return err
	}
	defer db.Close()

	log := slog.New(slog.NewTextHandler(app.Err, &slog.HandlerOptions{Level: slog.LevelWarn}))
	closeLog := func() {}
	var rec *ui.Recording
	opts := collect.Options{DB: db, Version: Version, Idle: f.idle, MaxOpen: f.maxOpen, MaxRequest: f.maxRequest << 20,
		Forward: forward, ForwardBuffer: f.fwdBuf << 20}
	if f.tui {
		log, closeLog = openTUILog()
		rec = ui.NewRecording()
		rec.Engine = workbenchEngine(db, false, log)
		opts.Observe = rec.Observe
	} else {
		opts.Observe = (&collectPrinter{out: app.Out}).observe
	}
	defer closeLog()
	opts.Log = log
	c := collect.New(opts)

	served := make(chan error, 2)
	var httpSrv *http.Server
	if httpLn != nil {
		httpSrv = &http.Server{Handler: c.Handler(), ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 2 * time.Minute,
			ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
		go func() { served <- httpSrv.Serve(httpLn) }()
	}
	grpcSrv := c.GRPC()
	if grpcLn != nil {
		go func() { served <- grpcSrv.Serve(grpcLn) }()
	}

	var runErr error
	if f.tui {
		addr := f.grpc
		if httpLn != nil {
			addr = httpLn.Addr().String()
		}
		uopts := ui.Options{Theme: app.Theme, NoColor: colourOff(), ASCII: app.ASCII, Log: log, Backend: rec,
			Library: application.Library{DB: db}, Catalog: application.Catalog{},
			Run: ui.CollectRunConfig(addr)}
		if err := ui.Run(ctx, uopts); err != nil {
			runErr = failedErr("the workbench stopped: %v", err)
		}
	} else {
		fmt.Fprintf(app.Out, "modelwire collect recording to %s\n", app.DB)
		if httpLn != nil {
			fmt.Fprintf(app.Out, "  OTLP/HTTP  http://%s%s (protobuf, JSON)\n  OTEL_EXPORTER_OTLP_ENDPOINT=http://%s\n", httpLn.Addr(), collect.TracesPath, httpLn.Addr())
		}
		if grpcLn != nil {
			fmt.Fprintf(app.Out, "  OTLP/gRPC  %s\n", grpcLn.Addr())
		}
		if forward != "" {
			fmt.Fprintf(app.Out, "  forwarding to %s\n", telemetry.Display(forward))
		}
		fmt.Fprintln(app.Out, "Ctrl-C stops it.")
		select {
		case <-ctx.Done():
		case err := <-served:
			if err != nil && !errors.Is(err, http.ErrServerClosed) {
				runErr = failedErr("collect stopped: %v", err)
			}
		}
	}
	sctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if httpSrv != nil {
		if err := httpSrv.Shutdown(sctx); err != nil {
			_ = httpSrv.Close()
		}
	}
	stopped := make(chan struct{})
	go func() { grpcSrv.GracefulStop(); close(stopped) }()
	select {
	case <-stopped:
	case <-sctx.Done():
		grpcSrv.Stop() // an export still running past the grace period is cut
	}
	if err := c.Close(sctx); err != nil && runErr == nil {
		runErr = failedErr("ending the collected sessions: %v", err)
	}
	if !f.tui {
		s := c.Stats()
		fmt.Fprintf(app.Out, "received %d spans in %d requests: %d sessions, %d turns, %d tool executions; %d spans passed by (not GenAI), %d refused, %d not recorded",
			s.Spans, s.Requests, s.Sessions, s.Turns, s.Tools, s.Passed, s.Rejected, s.Failed)
		if forward != "" {
			fmt.Fprintf(app.Out, "; forwarded %d requests (%d dropped, %d failed)", s.Forwarded, s.Dropped, s.FwdFailed)
		}
		fmt.Fprintln(app.Out)
	}
	return runErr
}

// collectPrinter prints a line per session as it ends.
type collectPrinter struct {
	mu    sync.Mutex
	out   io.Writer
	turns map[string]int
}

func (p *collectPrinter) observe(u session.Update) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.turns == nil {
		p.turns = map[string]int{}
	}
	switch u.Kind {
	case session.UpAttempt:
		p.turns[u.SessionID] = max(p.turns[u.SessionID], u.Turn)
	case session.UpFinished:
		fmt.Fprintf(p.out, "session %s %s · %d turns\n", u.SessionID, u.Status, p.turns[u.SessionID])
		delete(p.turns, u.SessionID)
	}
}
