package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/modelwire/modelwire/adapters"
	application "github.com/modelwire/modelwire/app"
	"github.com/modelwire/modelwire/proxy"
	"github.com/modelwire/modelwire/redact"
	"github.com/modelwire/modelwire/samples"
	"github.com/modelwire/modelwire/session"
	"github.com/modelwire/modelwire/sim"
	"github.com/modelwire/modelwire/store"
	"github.com/modelwire/modelwire/ui"
	"github.com/modelwire/modelwire/validate"
)

func init() { register(newProxyCmd) }

// proxyFlags are the flags of `modelwire proxy`.
type proxyFlags struct {
	listen, upstream, fault string
	rules                   string // --rules FILE (proxy_rules.go)
	tui, hold, otelContent  bool
	// maxDecoded (MiB) and maxInflate bound what the recorder decodes.
	maxDecoded, maxInflate int64
	maxStreamText          int64 // MiB
	requestBudget          int64 // MiB of request bodies held at once

	redactBody string // --redact-body: a body redaction rules file (proxy_redact.go)
	// command, after --, runs with the base URLs pointing here (proxy_launch.go).
	command []string
}

func newProxyCmd(app *App) *cobra.Command {
	f := proxyFlags{}
	cmd := &cobra.Command{
		Use:   "proxy [-- CMD ARGS…]",
		Short: "Sit between any application and its LLM provider; record and show every exchange",
		Long: `Forward every request to its provider and record what passes, with no change to
the application beyond its base URL: point OPENAI_BASE_URL, ANTHROPIC_BASE_URL,
GOOGLE_GEMINI_BASE_URL (or the SDK's base URL option) at the proxy; the application
keeps its own key, which is forwarded and never stored or shown.

Requests go to the provider their path names (/v1/responses and
/v1/chat/completions to OpenAI, /v1/messages to Anthropic, /v1beta/models/… to
Gemini, /chat/completions to DeepSeek), or all to --upstream: a gateway, DeepSeek,
a local Ollama or vLLM, or "sim" for the built-in simulator (with --fault).
Request and response bytes pass unchanged, status codes and headers kept, streams
flushed to the application event by event as they arrive.

Every exchange is decoded, validated (transport, protocol, and schema when the
request asked for an output schema) and stored; the turns of one conversation
(linked by their history or previous_response_id) make one session, listed by
'modelwire sessions' with source proxy. Requests it cannot decode are forwarded
untouched and recorded in an "unknown" session. --tui shows the exchanges live in
the workbench.

--hold-tools CHANGES WHAT THE APPLICATION SEES: a response to a request that offers
tools is held back whole (so a stream arrives all at once, after the decision)
and, when it proposes tool calls, each call waits for approval (on the terminal,
or in the TUI with --tui). Approved: the response is passed on unchanged.
Rejected — or approved while its arguments fail the request's own tool schema —
the application gets the provider's own error instead (HTTP 403, in that
provider's error format, saying the operator rejected the call). Edited (in
$EDITOR, or one line of JSON when it is unset): the response is re-encoded
in the protocol's own wire format, stream included, with the edited
arguments; the session keeps the original beside the edit.

--rules FILE edits, replaces (with a stored session), faults, delays or holds
what its rules match, unattended; the file is reloaded when it changes
(docs/proxy.md, "Rules").`,
		Example: `  modelwire proxy
  OPENAI_BASE_URL=http://127.0.0.1:8788/v1 python my_agent.py
  modelwire proxy --upstream sim --fault rate-limit --tui
  modelwire proxy --upstream http://127.0.0.1:11434/v1 --hold-tools
  modelwire proxy -- python my_agent.py   # base URLs set for it; exits with its status
  modelwire proxy --upstream sim --rules rules.json`,
		Args: proxyArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			f.command = launchCommand(cmd, args)
			return runProxy(cmd, app, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.listen, "listen", "127.0.0.1:8788", "address to listen on")
	fl.StringVar(&f.upstream, "upstream", "", `forward everything here (a base URL, or "sim"); default: the provider named by each path`)
	fl.StringVar(&f.fault, "fault", "", "faults for --upstream sim, comma-separated (NAME or NAME:always)")
	fl.BoolVar(&f.tui, "tui", false, "show the exchanges live in the workbench")
	fl.BoolVar(&f.hold, "hold-tools", false, "hold responses that propose tool calls for approval (changes what the application sees)")
	fl.Int64Var(&f.maxDecoded, "max-decoded", proxy.DefaultMaxDecoded>>20,
		"MiB: a whole response body larger than this once decompressed is forwarded untouched and recorded as too large to decode")
	fl.Int64Var(&f.maxStreamText, "max-stream-text", proxy.DefaultMaxStreamText>>20,
		"MiB: a stream is recorded until its content (text, reasoning, arguments) passes this; the rest is forwarded, not recorded")
	fl.Int64Var(&f.maxInflate, "max-inflate", proxy.DefaultMaxInflate,
		"a compressed response inflating more than this many times its size (past 1 MiB) is forwarded untouched and recorded as too large to decode")
	fl.Int64Var(&f.requestBudget, "request-budget", proxy.DefaultRequestBudget>>20,
		"MiB of request bodies read, decoded and recorded at once; a request that does not fit waits its turn")
	fl.StringVar(&f.redactBody, "redact-body", "", redactBodyUsage)
	fl.StringVar(&f.rules, "rules", "", "a rules file (JSON): match → edit, replace, fault, delay or hold; reloaded when it changes (docs/proxy.md)")
	fl.BoolVar(&f.otelContent, "otel-content", false, "with OTEL_EXPORTER_OTLP_ENDPOINT: include prompts, answers and tool data in the traces")
	completeWith(cmd, "fault", sim.FaultNames())
	return cmd
}

// openProxyStore opens the database for writing as the proxy records:
// committing every proxy.StoreFlush.
func openProxyStore(app *App) (*store.DB, error) {
	return openForWriteWith(app, store.Options{FlushInterval: proxy.StoreFlush})
}

// softMemoryLimit is the long-running commands' soft memory limit
// (debug.SetMemoryLimit): what their bounds leave live is a few hundred
// MiB at worst, and the garbage a large body or a runaway expression
// leaves behind would grow the heap well past it before the collector ran
// on a busy machine. GOMEMLIMIT overrides it; a live heap over the limit
// is never refused, only collected more often.
const softMemoryLimit = 512 << 20

// limitMemory sets softMemoryLimit unless GOMEMLIMIT says otherwise.
func limitMemory() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(softMemoryLimit)
	}
}

func runProxy(cmd *cobra.Command, app *App, f proxyFlags) error {
	faults, err := checkProxyFlags(app, f)
	if err != nil {
		return err
	}
	bodyRules, err := loadBodyRules(f.redactBody)
	if err != nil {
		return err
	}
	l, err := newLaunch(f)
	if err != nil {
		return err
	}
	app = l.output(app)
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := l.notify(ctx)
	defer stop()
	limitMemory()
	// A log reader that goes away (`modelwire proxy | head`) must not take
	// the application's streams and their recording down with it.
	survivePipeClose(app.Out)

	listen := l.listenAddr(cmd, f.listen)
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return usageErr("cannot listen on %s: %v", listen, err)
	}
	defer ln.Close()
	base := "http://" + ln.Addr().String()

	db, err := openProxyStore(app)
	if err != nil {
		return err
	}
	defer db.Close()

	simCtx, cancel := context.WithCancel(context.Background())
	defer cancel()
	upstream, provider, label, err := proxyUpstream(simCtx, f, faults)
	if err != nil {
		return err
	}

	var log *slog.Logger
	closeLog := func() {}
	if f.tui {
		log, closeLog = openTUILog()
	} else {
		log = slog.New(slog.NewTextHandler(app.Err, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	defer closeLog()

	opts := proxy.Options{Upstream: upstream, Provider: provider, DB: db, Version: Version, Log: log,
		MaxDecoded: f.maxDecoded << 20, MaxInflate: f.maxInflate, RequestBudget: f.requestBudget << 20,
		MaxStreamText: f.maxStreamText << 20}
	opts.BodyRules = bodyRules
	rec := proxyObservers(app, f, db, log, &opts)
	opts.Observe = l.observers(opts.Observe, db, log)
	if err := wireRules(ctx, app, f, db, log, rec, &opts); err != nil {
		return err
	}
	if live := newLiveExporter(db, f.otelContent, log); live != nil {
		defer live.close()
		opts.Observe = bothObservers(opts.Observe, live.observe)
	}
	px := proxy.New(opts)
	srv := &http.Server{Handler: px, ReadHeaderTimeout: 30 * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	if l != nil {
		l.banner(app, base, label)
	} else {
		fmt.Fprintf(app.Out, "modelwire proxy on %s → %s; recording to %s\n", base, label, app.DB)
		fmt.Fprintf(app.Out, "  OPENAI_BASE_URL=%s/v1\n  ANTHROPIC_BASE_URL=%s\n  GOOGLE_GEMINI_BASE_URL=%s\n  DeepSeek base_url: %s\n", base, base, base, base)
	}
	if f.hold {
		fmt.Fprintln(app.Out, "Hold mode: responses that propose tool calls wait for approval.")
	}
	if !f.tui && l == nil {
		fmt.Fprintln(app.Out, "Ctrl-C stops it.")
	}
	l.start(app, base)

	var runErr error
	if f.tui {
		uopts := ui.Options{Theme: app.Theme, NoColor: colourOff(), ASCII: app.ASCII, Log: log, Backend: rec, Library: application.Library{DB: db}, Catalog: application.Catalog{},
			Run: ui.RecordingRunConfig(ln.Addr().String(), labelShort(f.upstream))}
		if err := ui.Run(ctx, uopts); err != nil {
			runErr = failedErr("the workbench stopped: %v", err)
		}
	} else {
		select {
		case <-ctx.Done():
		case err := <-served:
			if err != nil && !errors.Is(err, http.ErrServerClosed) {
				runErr = failedErr("the proxy stopped: %v", err)
			}
		}
	}
	px.Stopping(context.Cause(ctx))
	// Stop taking requests; give those in flight a moment, then cut them.
	sctx, cancelShutdown := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancelShutdown()
	if err := srv.Shutdown(sctx); err != nil {
		_ = srv.Close()
	}
	if err := px.Close(); err != nil && runErr == nil {
		runErr = failedErr("ending the recorded sessions: %v", err)
	}
	return l.finish(runErr)
}

// checkProxyFlags refuses flags that do not go together, and reads the
// faults to inject.
func checkProxyFlags(app *App, f proxyFlags) (*sim.Faults, error) {
	if f.fault != "" && f.upstream != "sim" {
		return nil, usageErr("--fault applies to the built-in simulator only (--upstream sim)")
	}
	faults, err := sim.ParseFaults(f.fault)
	if err != nil {
		return nil, usageErr("%v", err)
	}
	if f.maxDecoded < 1 || f.maxDecoded > 1<<20 || f.maxInflate < 1 || f.requestBudget < 1 || f.requestBudget > 1<<20 ||
		f.maxStreamText < 1 || f.maxStreamText > 1<<20 {
		return nil, usageErr("--max-decoded, --max-stream-text, --request-budget (MiB) and --max-inflate must be positive")
	}
	if f.upstream != "" && f.upstream != "sim" {
		u, err := url.Parse(f.upstream)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, usageErr("--upstream %q: want an http(s) base URL or sim", f.upstream)
		}
	}
	if f.hold && !f.tui && !isTerminal(app.In) {
		return nil, usageErr("--hold-tools asks on the terminal, and there is none: add --tui, or run it in a terminal")
	}
	return faults, nil
}

// proxyUpstream is where the proxy forwards to: the simulator, started
// here until ctx ends, for --upstream sim; else the URL given, or ""
// (each path's own provider). label says it for people.
func proxyUpstream(ctx context.Context, f proxyFlags, faults *sim.Faults) (upstream, provider, label string, err error) {
	if f.upstream != "sim" {
		if f.upstream == "" {
			return "", "", "the provider each path names", nil
		}
		return f.upstream, "", redact.Text(f.upstream), nil // userinfo and key= are not for the banner
	}
	sc, err := samples.Lookup("refund")
	if err != nil {
		return "", "", "", failedErr("%v", err)
	}
	if upstream, err = application.StartSimulator(ctx, "127.0.0.1:0", sim.Options{Scenario: sc, Faults: faults}); err != nil {
		return "", "", "", failedErr("%v", err)
	}
	label = "sim (" + upstream + ")"
	if f.fault != "" {
		label += ", faults " + faults.String()
	}
	return upstream, adapters.ProviderSim, label, nil
}

// proxyObservers sets who sees each exchange and who decides held tool
// calls: the workbench (returned, to run) with --tui, else lines on the
// terminal and questions on it.
func proxyObservers(app *App, f proxyFlags, db *store.DB, log *slog.Logger, opts *proxy.Options) *ui.Recording {
	if !f.tui {
		pr := &proxyPrinter{out: app.Out, seen: map[proxyKey]*proxyLine{}}
		opts.Observe = pr.observe
		if f.hold {
			opts.Hold = &terminalDecider{in: app.In, out: app.Err, scenario: &session.Scenario{}, lineEdit: true}
		}
		return nil
	}
	rec := ui.NewRecording()
	rec.Engine = workbenchEngine(db, f.otelContent, log)
	opts.Observe = rec.Observe
	if f.hold {
		opts.Hold = rec
	}
	return rec
}

func labelShort(upstream string) string {
	switch upstream {
	case "":
		return "providers"
	case "sim":
		return "sim"
	}
	if u, err := url.Parse(upstream); err == nil {
		return u.Host
	}
	return upstream
}

// proxyPrinter prints one line per exchange once it is judged.
type proxyPrinter struct {
	out  io.Writer
	mu   sync.Mutex
	seen map[proxyKey]*proxyLine
}

type proxyKey struct {
	session string
	turn    int
}

type proxyLine struct {
	method, path, status, result string
	attempt                      int
}

func (p *proxyPrinter) observe(u session.Update) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if u.Turn == 0 {
		return
	}
	k := proxyKey{u.SessionID, u.Turn}
	l := p.seen[k]
	if l == nil {
		l = &proxyLine{}
		p.seen[k] = l
	}
	switch u.Kind {
	case session.UpAssembled:
		l.method, l.path = u.Request.Method, strings.SplitN(u.Request.Path, "?", 2)[0]
	case session.UpAttempt:
		l.attempt = u.Attempt
		l.status = fmt.Sprintf("HTTP %d", u.HTTPStatus)
		if u.HTTPStatus == 0 {
			l.status = u.Err
		}
	case session.UpResponse:
		if s := u.Summary; s != nil {
			l.result = fmt.Sprintf("%s/%s", s.Terminal, s.StopReason)
			if n := len(s.ToolCalls); n > 0 {
				l.result += fmt.Sprintf(", %d tool call(s)", n)
			}
		}
	case session.UpDecision:
		fmt.Fprintf(p.out, "%s turn %d: %s %s %s\n", u.SessionID, u.Turn, u.Proposal.Name, u.Decision.Kind, u.Decision.Reason)
	case session.UpValidated:
		var verdict []string
		for _, lr := range u.Layers {
			if lr.Status != validate.Skip {
				verdict = append(verdict, string(lr.Layer)+" "+string(lr.Status))
			}
		}
		att := ""
		if l.attempt > 1 {
			att = fmt.Sprintf(" (attempt %d)", l.attempt)
		}
		fmt.Fprintf(p.out, "%s turn %d%s  %s %s  %s  %s  [%s]\n", u.SessionID, u.Turn, att, l.method, l.path, l.status, l.result, strings.Join(verdict, ", "))
		delete(p.seen, k)
	}
}
