package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/registry"
	application "github.com/modelwire/modelwire/app"
	"github.com/modelwire/modelwire/samples"
	"github.com/modelwire/modelwire/session"
	"github.com/modelwire/modelwire/sim"
	"github.com/modelwire/modelwire/store"
	"github.com/modelwire/modelwire/transport"
	"github.com/modelwire/modelwire/validate"
)

func init() { register(newRunCmd) }

// runFlags are the flags of `modelwire run`.
type runFlags struct {
	scenario, protocol, provider, model, baseURL    string
	stream, noStream, json, regenerate, otelContent bool
	approve, fault, history                         string
	pace                                            float64
	timeouts                                        transport.Timeouts
	// fork, when set, continues a stored session (modelwire fork).
	fork *forkPlan
	// repeat runs the session that many times (repeat.go); ran, when
	// set, is told each session's id.
	repeat int
	ran    func(id string)
}

func newRunCmd(app *App) *cobra.Command {
	f := runFlags{}
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run one whole session headless: assemble, send, stream, decide tools, validate",
		Long: `Run a scenario end to end against the built-in simulator or a real provider:
assemble the request, send it, stream the response, stop at every tool proposal for
a decision, run the approved tools, feed the results back, and validate the answer
layer by layer (transport, protocol, parse, schema, domain). Every step is stored.

Exit status: 0 when every layer passes, 1 when the session ran and a layer failed,
2 on bad usage or input.

Real providers read OPENAI_API_KEY, ANTHROPIC_API_KEY, DEEPSEEK_API_KEY,
GEMINI_API_KEY (and COMPATIBLE_API_KEY), and <PROVIDER>_BASE_URL.`,
		Example: `  modelwire run --approve auto
  modelwire run --scenario refund/wrong-cap --protocol anthropic-messages --approve auto --json
  modelwire run --fault rate-limit --approve auto
  modelwire run --provider openai --protocol openai-chat --model gpt-4.1-mini`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runRepeated(cmd.Context(), app, f, cmd.Flags().Changed("stream"))
		},
	}
	addRunFlags(cmd, &f)
	return cmd
}

// addRunFlags gives cmd the flags of run (fork takes them too).
func addRunFlags(cmd *cobra.Command, f *runFlags) {
	fl := cmd.Flags()
	fl.IntVar(&f.repeat, "repeat", 1, "run it K times and say how often the final object's fields and the verdicts changed")
	fl.StringVar(&f.scenario, "scenario", "refund", "scenario name (refund, refund/<variant>) or scenario file")
	fl.StringVar(&f.protocol, "protocol", "", "wire format: "+strings.Join(registry.Protocols, ", ")+" (default: the provider's own)")
	fl.StringVar(&f.provider, "provider", adapters.ProviderSim, "who answers: sim, openai, anthropic, deepseek, gemini, compatible")
	fl.StringVar(&f.model, "model", "", "model to ask for (default: the scenario's)")
	fl.StringVar(&f.baseURL, "base-url", "", "provider base URL (OpenAI and compatible include /v1)")
	fl.BoolVar(&f.stream, "stream", true, "stream the responses")
	fl.BoolVar(&f.noStream, "no-stream", false, "ask for whole JSON responses")
	fl.StringVar(&f.approve, "approve", "manual", "tool approval: auto, reject or manual")
	fl.StringVar(&f.fault, "fault", "", "faults for the simulator, comma-separated (NAME or NAME:always)")
	fl.Float64Var(&f.pace, "pace", 0, "the simulator's pace, words a second (0: as fast as it goes)")
	fl.StringVar(&f.history, "history", "full", "history: full, or previous-response-id (openai-responses previous_response_id, gemini-interactions previous_interaction_id)")
	fl.BoolVar(&f.regenerate, "regenerate", true, "when parse, schema or domain fails, ask the model once more with the exact error (--regenerate=false: stop at the first failure)")
	fl.BoolVar(&f.json, "json", false, "print JSON lines: canonical events, decisions, results, and the session result")
	fl.BoolVar(&f.otelContent, "otel-content", false, "with OTEL_EXPORTER_OTLP_ENDPOINT: include prompts, answers and tool data in the trace")
	fl.DurationVar(&f.timeouts.Connect, "connect-timeout", transport.DefaultTimeouts.Connect, "limit on connecting")
	fl.DurationVar(&f.timeouts.FirstEvent, "first-event-timeout", transport.DefaultTimeouts.FirstEvent, "limit from sending to the first event")
	fl.DurationVar(&f.timeouts.Idle, "idle-timeout", transport.DefaultTimeouts.Idle, "limit between two events")
	fl.DurationVar(&f.timeouts.Total, "total-timeout", transport.DefaultTimeouts.Total, "limit on one attempt")
	completeWith(cmd, "protocol", registry.Protocols)
	completeWith(cmd, "provider", []string{adapters.ProviderSim, adapters.ProviderOpenAI, adapters.ProviderAnthropic, adapters.ProviderDeepSeek,
		adapters.ProviderGemini, adapters.ProviderCompatible})
	completeWith(cmd, "approve", []string{"auto", "reject", "manual"})
	completeWith(cmd, "fault", sim.FaultNames())
	completeScenarios(cmd)
	completeWith(cmd, "history", []string{"full", "previous-response-id"})
}

func completeWith(cmd *cobra.Command, flag string, values []string) {
	_ = cmd.RegisterFlagCompletionFunc(flag, func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return values, cobra.ShellCompDirectiveNoFileComp
	})
}

// completeScenarios completes --scenario with the built-in scenarios,
// listed only when the shell asks: listing them parses and checks every
// scenario (the first JSON Schema compile), tens of milliseconds that
// every command paid at start-up when it built its flags (issue 20).
func completeScenarios(cmd *cobra.Command) {
	_ = cmd.RegisterFlagCompletionFunc("scenario", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return samples.Names(), cobra.ShellCompDirectiveNoFileComp
	})
}

func runSession(ctx context.Context, app *App, f runFlags, streamSet bool) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if f.noStream && streamSet && f.stream {
		return usageErr("--stream and --no-stream contradict each other")
	}
	stream := !f.noStream
	var sc *session.Scenario
	if f.fork == nil || !f.fork.Application() {
		// (A fork of an application's session has the application's
		// requests instead: its plan stands in for the scenario.)
		var err error
		if sc, err = samples.Lookup(f.scenario); err != nil {
			return usageErr("%v", err)
		}
	}
	if f.protocol == "" {
		if f.protocol = adapters.NativeProtocol(f.provider); f.protocol == "" {
			return usageErr("unknown provider %q (want sim, openai, anthropic, deepseek, gemini or compatible)", f.provider)
		}
	}
	if _, err := registry.Lookup(f.protocol); err != nil || f.protocol == adapters.ClaudeCode {
		return usageErr("unknown protocol %q (want %s)", f.protocol, strings.Join(registry.Protocols, ", "))
	}
	policy, err := session.ParsePolicy(f.approve)
	if err != nil {
		return usageErr("%v", err)
	}
	var history adapters.HistoryMode
	switch f.history {
	case "full":
		history = adapters.HistoryFull
	case "previous-response-id":
		history = adapters.HistoryPreviousResponse
	default:
		return usageErr("unknown --history %q (want full or previous-response-id)", f.history)
	}
	if policy == session.PolicyManual && !isTerminal(app.In) {
		return usageErr("--approve manual asks on the terminal, and there is none: pass --approve auto (or reject)")
	}
	if _, err := sim.ParseFaults(f.fault); err != nil {
		return usageErr("%v", err)
	}
	if f.fault != "" && f.provider != adapters.ProviderSim {
		return usageErr("--fault applies to the built-in simulator only (--provider sim)")
	}
	if err := checkPace(f.pace); err != nil {
		return err
	}
	if _, err := adapters.CapabilitiesFor(f.provider, f.protocol); err != nil {
		return usageErr("%v", err)
	}

	ctx, stop := notifyStop(ctx)
	limitMemory()
	defer stop()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	out := stopOnClosedOutput(app.Out, cancel)
	db, err := openForWrite(app)
	if err != nil {
		return err
	}
	defer db.Close()
	printer := &runPrinter{out: out, json: f.json}
	eng := &application.Engine{DB: db, Version: Version, Source: store.SourceRun}
	params := map[string]any{"approve": f.approve, "timeouts": f.timeouts}
	setup := session.Setup{Scenario: sc, Protocol: f.protocol, Provider: f.provider, BaseURL: f.baseURL, Model: f.model,
		Stream: stream, History: history, Faults: strings.Split(f.fault, ","), Pace: f.pace, Policy: policy,
		Timeouts: f.timeouts, NoRegeneration: !f.regenerate, Params: params}
	if f.fork != nil {
		if err := f.fork.Apply(&setup); err != nil {
			return usageErr("%v", err)
		}
		f.fork.announce(out, f.json)
	}
	var decider session.Decider
	if policy == session.PolicyManual {
		decider = &terminalDecider{in: app.In, out: app.Err, scenario: setup.Scenario}
	}
	res, err := eng.Run(ctx, setup, session.Hooks{Observe: printer.observe, Decider: decider})
	var bad *application.SetupError
	switch {
	case errors.As(err, &bad):
		return usageErr("%v", err)
	case err != nil:
		return failedErr("%v", err)
	}
	if f.ran != nil {
		f.ran(res.SessionID)
	}
	printer.result(res)
	liveExport(ctx, app, db, res.SessionID, f.otelContent)
	if !res.Passed() {
		// The text report ends with this verdict already; JSON lines do not
		// carry it, so stderr does.
		return &exitError{code: ExitFailed, err: fmt.Errorf("session %s: %s", res.SessionID, session.FirstFailure(res.Layers)), shown: !f.json}
	}
	return nil
}

// errOutputClosed ends a run whose reader went away.
var errOutputClosed = errors.New("the output was closed")

// stopOnClosedOutput makes a reader that goes away (`run --json | head`)
// end the run as Ctrl-C does: what was recorded is committed and the
// session says why it stopped. Without it Go exits at the first write to
// a closed standard output (SIGPIPE), dropping the events not yet
// committed and leaving an "interrupted" session with none.
func stopOnClosedOutput(w io.Writer, cancel context.CancelCauseFunc) io.Writer {
	survivePipeClose(w)
	return &closedOutput{w: w, cancel: cancel}
}

// survivePipeClose makes a write to w, when it is the standard output or
// error and its reader has gone, fail with EPIPE instead of ending the
// process.
func survivePipeClose(w io.Writer) {
	if f, ok := w.(*os.File); ok && (f == os.Stdout || f == os.Stderr) {
		signal.Ignore(syscall.SIGPIPE)
	}
}

type closedOutput struct {
	w      io.Writer
	cancel context.CancelCauseFunc
}

func (c *closedOutput) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	if errors.Is(err, syscall.EPIPE) || errors.Is(err, os.ErrClosed) {
		c.cancel(errOutputClosed)
	}
	return n, err
}

// isTerminal reports whether r is an interactive terminal.
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// runPrinter prints a session as it runs: JSON lines, or a readable report.
type runPrinter struct {
	out  io.Writer
	json bool
	enc  *json.Encoder
	// times are each attempt's time points as they came, for --json's
	// session.result.
	times []attemptTimes
}

// attemptTimes are one attempt's six time points (13.7.1) as --json's
// session.result lists them, in ms from the request's start (so
// request_start_ms is 0), and the provider's own figure apart.
type attemptTimes struct {
	Turn         int     `json:"turn"`
	Attempt      int     `json:"attempt"`
	RequestStart float64 `json:"request_start_ms"`
	session.Timings
}

// keepTimes notes an update's timings under its attempt.
func (p *runPrinter) keepTimes(u session.Update) {
	if u.Timings == nil || u.Attempt == 0 {
		return
	}
	if n := len(p.times); n > 0 && p.times[n-1].Turn == u.Turn && p.times[n-1].Attempt == u.Attempt {
		p.times[n-1].Timings = *u.Timings
		return
	}
	p.times = append(p.times, attemptTimes{Turn: u.Turn, Attempt: u.Attempt, Timings: *u.Timings})
}

type turnEvent struct {
	Turn int `json:"turn"`
	adapters.Event
}

func (p *runPrinter) line(v any) {
	if p.enc == nil {
		p.enc = json.NewEncoder(p.out)
		p.enc.SetEscapeHTML(false)
	}
	_ = p.enc.Encode(v)
}

func (p *runPrinter) observe(u session.Update) {
	p.keepTimes(u)
	if p.json {
		p.observeJSON(u)
		return
	}
	w := p.out
	switch u.Kind {
	case session.UpStarted:
		fmt.Fprintf(w, "session %s\n", u.SessionID)
	case session.UpAssembled:
		fmt.Fprintf(w, "\nturn %d  %s %s\n", u.Turn, u.Request.Method, u.Request.Path)
		for _, d := range u.Request.Degradations {
			fmt.Fprintf(w, "  degraded: %s\n", d)
		}
		for _, d := range u.Request.Warnings {
			fmt.Fprintf(w, "  note: %s\n", d)
		}
		if u.Budget != nil {
			fmt.Fprintf(w, "  budget: %s\n", u.Budget)
		}
	case session.UpAttempt:
		switch {
		case u.Err != "" && u.HTTPStatus != 0:
			fmt.Fprintf(w, "  attempt %d: HTTP %d, %s\n", u.Attempt, u.HTTPStatus, u.Err)
		case u.Err != "":
			fmt.Fprintf(w, "  attempt %d: %s\n", u.Attempt, u.Err)
		case u.APIError != nil:
			fmt.Fprintf(w, "  attempt %d: %s\n", u.Attempt, u.APIError.Error())
		default:
			fmt.Fprintf(w, "  attempt %d: HTTP %d\n", u.Attempt, u.HTTPStatus)
		}
		if rl := adapters.RateLimitHeaders(u.Header); len(rl) > 0 && u.HTTPStatus != 0 {
			fmt.Fprintf(w, "    %s\n", strings.Join(rl, " · "))
		}
	case session.UpStep:
		for _, ev := range u.Step.Events {
			if ev.Type == adapters.EvDiagnostic {
				fmt.Fprintf(w, "  ! %s: %s\n", ev.Kind, ev.Detail)
			}
		}
		if tm := u.Timings; tm != nil {
			fmt.Fprintf(w, "  from the request's start: headers %s, first event %s, first token %s, first text %s, terminal %s\n",
				ms(tm.Headers), ms(tm.FirstEvent), ms(tm.FirstToken), ms(tm.FirstText), ms(tm.Terminal))
			if tm.Server != nil {
				fmt.Fprintf(w, "  server-reported %s (%s; the provider's clock, not one of the above)\n", ms(tm.Server.MS), tm.Server.Source)
			}
		}
	case session.UpResponse:
		s := u.Summary
		fmt.Fprintf(w, "  response %s: %s / %s (%s)\n", s.ResponseID, s.Terminal, s.StopReason, s.ProviderStopReason)
		if s.Reasoning != "" {
			fmt.Fprintf(w, "  reasoning: %s\n", oneLine(s.Reasoning))
		}
		if s.Text != "" {
			fmt.Fprintf(w, "  text: %s\n", oneLine(s.Text))
		}
		if s.Refusal != nil {
			fmt.Fprintf(w, "  refusal: %s\n", oneLine(*s.Refusal))
		}
		for _, c := range s.IncompleteToolCalls {
			fmt.Fprintf(w, "  incomplete call %s %s: %q\n", c.CallID, c.Name, c.PartialArguments)
		}
		if s.Usage != nil {
			fmt.Fprintf(w, "  usage: %s\n", usageLine(s.Usage))
		}
		if next := validate.TerminalAdvice(s.Terminal, s.StopReason); next != "" {
			fmt.Fprintf(w, "  next: %s\n", next)
		}
	case session.UpProposal:
		pr := u.Proposal
		fmt.Fprintf(w, "  proposed %s %s %s\n", pr.CallID, pr.Name, pr.Arguments)
		for _, v := range pr.Violations {
			fmt.Fprintf(w, "    schema: %s\n", v)
		}
	case session.UpDecision:
		d := u.Decision
		fmt.Fprintf(w, "  %s by %s", d.Kind, d.By)
		if d.Reason != "" {
			fmt.Fprintf(w, ": %s", d.Reason)
		}
		if d.Kind == session.Edited {
			fmt.Fprintf(w, " → %s", d.Arguments)
		}
		fmt.Fprintln(w)
	case session.UpResult:
		tag := "result"
		if u.Result.IsError {
			tag = "error result"
		}
		fmt.Fprintf(w, "  %s for %s: %s\n", tag, u.Result.CallID, oneLine(u.Result.Content))
	case session.UpRegenerate:
		fmt.Fprintf(w, "\nturn %d regenerates turn %d's answer: %s\n", u.Turn, u.Turn-1, session.FirstFailure(u.Layers))
	case session.UpValidated:
		fmt.Fprintln(w, "\nvalidation")
		for _, l := range u.Layers {
			fmt.Fprintf(w, "  %-9s %-4s  %s\n", l.Layer, l.Status, l.Detail)
		}
		// The output, or the cannot-complete outcome in its place, is
		// printed with the result: only the result says which.
	}
}

func (p *runPrinter) observeJSON(u session.Update) {
	switch u.Kind {
	case session.UpStep:
		for _, ev := range u.Step.Events {
			p.line(turnEvent{Turn: u.Turn, Event: ev})
		}
	case session.UpDecision:
		args := u.Proposal.Arguments
		m := map[string]any{"type": "tool.decision", "turn": u.Turn, "call_id": u.Proposal.CallID, "name": u.Proposal.Name,
			"decision": u.Decision.Kind, "arguments": args, "by": u.Decision.By}
		if u.Decision.Kind == session.Edited {
			m["arguments"], m["original_arguments"] = u.Decision.Arguments, args
		}
		if u.Decision.Reason != "" {
			m["reason"] = u.Decision.Reason
		}
		p.line(m)
	case session.UpAssembled:
		if u.Budget != nil {
			p.line(struct {
				Type string `json:"type"`
				Turn int    `json:"turn"`
				*session.Budget
			}{"request.budget", u.Turn, u.Budget})
		}
	case session.UpRegenerate:
		p.line(map[string]any{"type": "regeneration", "turn": u.Turn, "of_turn": u.Turn - 1, "validation": u.Layers, "message": u.Message})
	case session.UpResult:
		p.line(map[string]any{"type": "tool.result", "turn": u.Turn, "call_id": u.Result.CallID, "name": u.Result.Name,
			"is_error": u.Result.IsError, "content": u.Result.Content})
	}
}

func (p *runPrinter) result(res *session.Result) {
	if !p.json {
		p.outcome(res)
		verdict := "every layer passed"
		if res.AsSent {
			verdict = "no layer failed (modelwire cannot judge the application's parsing or business rules)"
		}
		if !res.Passed() {
			verdict = session.FirstFailure(res.Layers)
		}
		fmt.Fprintf(p.out, "\ncost %s\n", res.Cost)
		fmt.Fprintf(p.out, "\nsession %s: %s\n", res.SessionID, verdict)
		return
	}
	var output any
	if len(res.Output) > 0 {
		output = res.Output
	}
	line := map[string]any{"type": "session.result", "session_id": res.SessionID, "status": res.Status,
		"validation": res.Layers, "output": output, "regenerated": res.Regeneration != nil, "cost": res.Cost,
		"timings": append([]attemptTimes{}, p.times...)}
	if res.CannotComplete != nil {
		line["cannot_complete"] = res.CannotComplete
	}
	p.line(line)
}

// outcome prints what the session delivers, as --json's session.result
// has it: the parsed output, or, when the session failed, cannot complete
// with the tool results as the evidence — never the answer the validation
// rejected (issue 27).
func (p *runPrinter) outcome(res *session.Result) {
	cc := res.CannotComplete
	if cc == nil {
		if len(res.Output) > 0 {
			fmt.Fprintf(p.out, "\noutput %s\n", res.Output)
		}
		return
	}
	head := "cannot complete"
	if len(res.Output) > 0 {
		head += ": the answer is withheld"
	}
	if len(cc.Evidence) == 0 {
		fmt.Fprintf(p.out, "\n%s; no tool result was observed\n", head)
		return
	}
	fmt.Fprintf(p.out, "\n%s; the tool results are the evidence\n", head)
	for _, e := range cc.Evidence {
		tag := "evidence"
		if e.IsError {
			tag = "evidence (error)"
		}
		fmt.Fprintf(p.out, "  %s %s %s: %s\n", tag, e.CallID, e.Name, oneLine(e.Content))
	}
}

// ms shows a timing; zero means it never happened (no text, say).
func ms(v float64) string {
	if v == 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f ms", v)
}

func usageLine(u *adapters.Usage) string {
	f := func(p *int64) string {
		if p == nil {
			return "–"
		}
		return fmt.Sprint(*p)
	}
	return fmt.Sprintf("input %s (cache read %s, cache write %s), output %s (reasoning %s)",
		f(u.InputTokens), f(u.CacheReadTokens), f(u.CacheWriteTokens), f(u.OutputTokens), f(u.ReasoningTokens))
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 160 {
		return string(r[:160]) + "…"
	}
	return s
}
