package cli

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"

	"github.com/modelwire/modelwire/session"
	"github.com/modelwire/modelwire/store"
	"github.com/modelwire/modelwire/telemetry"
)

// exportOTLP sends one stored session to an OpenTelemetry backend as a
// trace (export --format otlp).
func exportOTLP(ctx context.Context, app *App, prefix, endpoint string, content bool) error {
	where := endpoint
	if endpoint == "" {
		if where = telemetry.EnvEndpoint(); where == "" {
			return usageErr("--format otlp needs --endpoint URL (or OTEL_EXPORTER_OTLP_ENDPOINT)")
		}
	} else if _, err := telemetry.TracesURL(endpoint); err != nil {
		return usageErr("--%v", err)
	}
	where = telemetry.Display(where)
	db, id, err := resolveSession(app, prefix)
	if err != nil {
		return err
	}
	defer db.Close()
	if ctx == nil {
		ctx = context.Background()
	}
	tid, err := telemetry.Export(ctx, db, id, telemetry.Options{Endpoint: endpoint, Content: content, Version: Version})
	if err != nil {
		return storeErr(fmt.Errorf("exporting session %s to %s: %w", id, where, err))
	}
	fmt.Fprintf(app.Out, "session %s sent to %s as trace %s\n", id, where, tid)
	return nil
}

// liveExport sends a finished session to the backend the OpenTelemetry
// environment names, if any. A backend that is down costs a line on
// stderr, never the session or the exit code.
func liveExport(ctx context.Context, app *App, db *store.DB, id string, content bool) {
	if ctx == nil || ctx.Err() != nil {
		ctx = context.Background()
	}
	if _, err := telemetry.ExportFromEnv(ctx, db, id, telemetry.Options{Content: content, Version: Version}); err != nil {
		fmt.Fprintf(app.Err, "modelwire: OpenTelemetry export of session %s: %v\n", id, err)
	}
}

// tuiExport is the workbench's live export: each session it runs is sent
// when it ends, failures logged (never shown over the screen). Nil when
// the environment names no endpoint.
func tuiExport(db *store.DB, content bool, log *slog.Logger) func(context.Context, string) {
	if telemetry.EnvEndpoint() == "" {
		return nil
	}
	return func(ctx context.Context, id string) {
		if ctx.Err() != nil {
			ctx = context.Background() // the session was stopped; what it recorded is still sent
		}
		if _, err := telemetry.ExportFromEnv(ctx, db, id, telemetry.Options{Content: content, Version: Version}); err != nil {
			log.Warn("OpenTelemetry export", "session", id, "err", err)
		}
	}
}

// liveExporter is the proxy's live export: each exchange's spans are sent
// once the exchange is judged, the session's root span when its
// conversation ends. It works on a goroutine of its own behind a bounded
// queue, so the recording never waits for a backend; when the backend
// falls that far behind, exports are dropped and counted in the log.
type liveExporter struct {
	db      *store.DB
	content bool
	log     *slog.Logger
	jobs    chan liveJob
	done    chan struct{}
	dropped atomic.Int64
}

// liveQueue bounds the exports waiting for the backend.
const liveQueue = 256

type liveJob struct {
	id   string
	opts telemetry.Options
}

// newLiveExporter starts the exporter; nil when the environment names no
// endpoint.
func newLiveExporter(db *store.DB, content bool, log *slog.Logger) *liveExporter {
	if telemetry.EnvEndpoint() == "" {
		return nil
	}
	e := &liveExporter{db: db, content: content, log: log, jobs: make(chan liveJob, liveQueue), done: make(chan struct{})}
	go e.run()
	return e
}

// observe queues an export for each judged exchange and each ended session.
func (e *liveExporter) observe(u session.Update) {
	if u.SessionID == "" {
		return
	}
	o := telemetry.Options{Content: e.content, Version: Version}
	switch u.Kind {
	case session.UpValidated:
		if u.Turn == 0 {
			return
		}
		o.Turn = u.Turn
	case session.UpFinished:
		o.RootOnly = true
	default:
		return
	}
	select {
	case e.jobs <- liveJob{u.SessionID, o}:
	default:
		if n := e.dropped.Add(1); n == 1 || n%100 == 0 {
			e.log.Warn("OpenTelemetry export falling behind: exports dropped", "count", n)
		}
	}
}

func (e *liveExporter) run() {
	defer close(e.done)
	for j := range e.jobs {
		if _, err := telemetry.ExportFromEnv(context.Background(), e.db, j.id, j.opts); err != nil {
			e.log.Warn("OpenTelemetry export", "session", j.id, "turn", j.opts.Turn, "err", err)
		}
	}
}

// close sends what is queued and stops.
func (e *liveExporter) close() {
	close(e.jobs)
	<-e.done
}

// bothObservers calls a, then b.
func bothObservers(a, b session.Observer) session.Observer {
	if a == nil {
		return b
	}
	return func(u session.Update) { a(u); b(u) }
}
