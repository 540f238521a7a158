// Package telemetry hands stored sessions to OpenTelemetry backends: one
// trace per session, in the GenAI semantic conventions, sent over OTLP/HTTP
// with the official SDK. It reads only what the store holds, so `modelwire
// export --format otlp` and the live export of run, proxy and the workbench
// produce the same trace for the same session.
package telemetry

import (
	"context"
	"crypto/sha256"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/modelwire/modelwire/redact"
	"github.com/modelwire/modelwire/store"
)

// Options say where a trace goes and what it carries.
type Options struct {
	// Endpoint is the OTLP/HTTP base URL (http://127.0.0.1:4318), as
	// OTEL_EXPORTER_OTLP_ENDPOINT means it: /v1/traces is added unless the
	// path already ends with it. Empty: the SDK reads the OTEL_EXPORTER_OTLP_*
	// environment itself.
	Endpoint string
	// Content adds prompts, answers, tool arguments and results. Off by
	// default: traces often travel further than the database.
	Content bool
	// Version is modelwire's version, the resource's service.version.
	Version string
	// Turn, when > 0, sends only that turn's spans (its model calls and tool
	// executions) and RootOnly only the session's root span: the proxy sends
	// each exchange as it ends and the root when its conversation ends.
	// Both unset: the whole session.
	Turn     int
	RootOnly bool
}

// EnvEndpoint is the endpoint the OpenTelemetry environment configures for
// traces, "" when there is none: live export is on exactly when it is set.
func EnvEndpoint() string {
	if v := os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"); v != "" {
		return v
	}
	return os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT")
}

// TracesURL turns an OTLP/HTTP base URL into the traces URL, or says what
// is wrong with it.
func TracesURL(endpoint string) (string, error) {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("endpoint %q: want an http:// or https:// URL such as http://127.0.0.1:4318", endpoint)
	}
	if u.User != nil || u.RawQuery != "" {
		// Credentials belong in OTEL_EXPORTER_OTLP_HEADERS, never in a URL that
		// error messages repeat.
		return "", fmt.Errorf("endpoint %q: no credentials or query in the URL (use OTEL_EXPORTER_OTLP_HEADERS)", redact.Text(u.String()))
	}
	if !strings.HasSuffix(u.Path, "/v1/traces") {
		u.Path = strings.TrimSuffix(u.Path, "/") + "/v1/traces"
	}
	return u.String(), nil
}

// Export sends session id as one trace and returns its trace id. The ids
// are derived from the session id, so exporting the same session twice
// gives the same trace (backends merge or deduplicate it).
func Export(ctx context.Context, db *store.DB, id string, o Options) (trace.TraceID, error) {
	var opts []otlptracehttp.Option
	if o.Endpoint != "" {
		u, err := TracesURL(o.Endpoint)
		if err != nil {
			return trace.TraceID{}, err
		}
		opts = append(opts, otlptracehttp.WithEndpointURL(u))
	}
	// One try, bounded: a backend that is down must not hold up a command.
	opts = append(opts, otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false}))
	if os.Getenv("OTEL_EXPORTER_OTLP_TIMEOUT") == "" && os.Getenv("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT") == "" {
		opts = append(opts, otlptracehttp.WithTimeout(10*time.Second))
	}
	spans, tid, err := Spans(db, id, o)
	if err != nil || len(spans) == 0 {
		return tid, err // nothing recorded for that part of the session: nothing to send
	}
	exp, err := otlptracehttp.New(ctx, opts...)
	if err != nil {
		return tid, err
	}
	err = exp.ExportSpans(ctx, spans)
	if serr := exp.Shutdown(ctx); err == nil {
		err = serr
	}
	if err != nil {
		return tid, fmt.Errorf("sending the trace: %w", err)
	}
	return tid, nil
}

// Spans builds session id's spans, ended and ready to export, without
// sending them.
func Spans(db *store.DB, id string, o Options) ([]sdktrace.ReadOnlySpan, trace.TraceID, error) {
	if err := db.Flush(); err != nil {
		return nil, trace.TraceID{}, err
	}
	s, err := db.GetSession(id)
	if err != nil {
		return nil, trace.TraceID{}, err
	}
	replies := map[attemptKey]*reply{}
	if !o.RootOnly {
		from, to := timelineOf(s, o.Turn)
		if replies, err = readReplies(db, id, from, to, o.Content); err != nil {
			return nil, trace.TraceID{}, err
		}
	}
	col := &collector{}
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithSpanProcessor(col),
		sdktrace.WithIDGenerator(fixedIDs{}),
		sdktrace.WithResource(resourceFor(o.Version)),
		sdktrace.WithSampler(sdktrace.AlwaysSample()),
		sdktrace.WithRawSpanLimits(sdktrace.SpanLimits{
			AttributeValueLengthLimit: -1, AttributeCountLimit: 128,
			EventCountLimit: 1024, LinkCountLimit: 0, AttributePerEventCountLimit: 16, AttributePerLinkCountLimit: 0,
		}),
	)
	build(tp.Tracer(instrumentation), s, replies, o.Content)
	if err := tp.Shutdown(context.Background()); err != nil {
		return nil, trace.TraceID{}, err
	}
	spans := col.spans[:0]
	for _, sp := range col.spans {
		root := !sp.Parent().IsValid()
		if (o.RootOnly && root) || (o.Turn > 0 && !root && turnOf(sp) == o.Turn) || (!o.RootOnly && o.Turn == 0) {
			spans = append(spans, sp)
		}
	}
	return spans, TraceID(id), nil
}

// TraceID is the trace id a session is exported under.
func TraceID(sessionID string) trace.TraceID {
	var t trace.TraceID
	sum := sha256.Sum256([]byte("modelwire/trace/" + sessionID))
	copy(t[:], sum[:])
	return t
}

// spanID names a span of a session by its role (root, call/turn/attempt,
// tool/call_id), so re-exports keep their ids.
func spanID(sessionID, role string) trace.SpanID {
	var s trace.SpanID
	sum := sha256.Sum256([]byte("modelwire/span/" + sessionID + "/" + role))
	copy(s[:], sum[:])
	return s
}

// fixedIDs hands the SDK the ids chosen for the span being started (put
// in its context by withIDs).
type fixedIDs struct{}

type idsKey struct{}

type ids struct {
	trace trace.TraceID
	span  trace.SpanID
}

func withIDs(ctx context.Context, t trace.TraceID, s trace.SpanID) context.Context {
	return context.WithValue(ctx, idsKey{}, ids{t, s})
}

func (fixedIDs) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	v, _ := ctx.Value(idsKey{}).(ids)
	return v.trace, v.span
}

func (fixedIDs) NewSpanID(ctx context.Context, _ trace.TraceID) trace.SpanID {
	v, _ := ctx.Value(idsKey{}).(ids)
	return v.span
}

// collector keeps ended spans for one ExportSpans call, so an export error
// reaches the caller instead of the SDK's global error handler.
type collector struct{ spans []sdktrace.ReadOnlySpan }

func (c *collector) OnStart(context.Context, sdktrace.ReadWriteSpan) {}
func (c *collector) OnEnd(s sdktrace.ReadOnlySpan)                   { c.spans = append(c.spans, s) }
func (c *collector) Shutdown(context.Context) error                  { return nil }
func (c *collector) ForceFlush(context.Context) error                { return nil }

// ExportFromEnv is the live export of run, proxy and the workbench: it
// exports session id when the OpenTelemetry environment names an endpoint
// (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), and
// does nothing (ok false) when it does not.
func ExportFromEnv(ctx context.Context, db *store.DB, id string, o Options) (ok bool, err error) {
	if EnvEndpoint() == "" {
		return false, nil
	}
	o.Endpoint = ""
	_, err = Export(ctx, db, id, o)
	return true, err
}

// Display is an endpoint as messages may show it: without a password or
// a query, where credentials hide.
func Display(endpoint string) string {
	u, err := url.Parse(endpoint)
	if err != nil {
		return "the configured endpoint"
	}
	u.RawQuery, u.Fragment = "", ""
	return redact.Text(u.String())
}
