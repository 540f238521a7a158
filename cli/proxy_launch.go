package cli

// `modelwire proxy -- CMD ARGS…`: the proxy on a free loopback port, and
// the command run with every provider's base-URL variable pointing at it.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/modelwire/modelwire/adapters/registry"
	"github.com/modelwire/modelwire/redact"
	"github.com/modelwire/modelwire/session"
	"github.com/modelwire/modelwire/store"
)

// launchSignals are forwarded to the command; the proxy itself stops only
// once the command has exited.
var launchSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}

// launchGrace is how long a command still running when the proxy fails
// has after SIGTERM before it is killed.
const launchGrace = 5 * time.Second

// proxyArgs is `proxy`'s Args: nothing but a command after "--".
func proxyArgs(cmd *cobra.Command, args []string) error {
	dash := cmd.ArgsLenAtDash()
	switch {
	case dash < 0 && len(args) > 0, dash > 0:
		return usageErr("proxy takes no arguments; a command to run goes after --: modelwire proxy [flags] -- CMD ARGS…")
	case dash == 0 && len(args) == 0:
		return usageErr("nothing to run after --: modelwire proxy [flags] -- CMD ARGS…")
	}
	return nil
}

// launchCommand is the command after "--", nil when there is none.
func launchCommand(cmd *cobra.Command, args []string) []string {
	if cmd.ArgsLenAtDash() < 0 {
		return nil
	}
	return args[cmd.ArgsLenAtDash():]
}

// launch runs the command of `proxy -- CMD ARGS…` and carries its exit
// status out. A nil *launch is the plain proxy: every method then does
// what the proxy does without a command.
type launch struct {
	argv []string
	// tag is the command line as sessions are tagged with it: redacted,
	// one line, bounded.
	tag string

	// in, out and errw are the terminal's streams, the command's own.
	in        io.Reader
	out, errw io.Writer

	sigs   chan os.Signal
	cancel context.CancelCauseFunc

	mu     sync.Mutex
	child  *exec.Cmd
	exited chan struct{} // closed once the command has been waited for
	status int           // its exit status, as a shell reports it
	tagged map[string]bool
}

// newLaunch prepares the command given after "--" (nil for none). The
// workbench cannot share the terminal with it.
func newLaunch(f proxyFlags) (*launch, error) {
	if len(f.command) == 0 {
		return nil, nil
	}
	if f.tui {
		return nil, usageErr("--tui cannot share the terminal with %s: run `modelwire proxy --tui` in one terminal and the command in another, with the variables it prints", f.command[0])
	}
	return &launch{argv: f.command, tag: commandTag(f.command), exited: make(chan struct{}), tagged: map[string]bool{}}, nil
}

// commandTag is argv as one redacted line of at most 80 characters.
func commandTag(argv []string) string {
	parts := make([]string, len(argv))
	for i, a := range argv {
		if a == "" || strings.ContainsAny(a, " \t\n\"'\\$`") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		parts[i] = a
	}
	line := redact.Text(strings.Join(parts, " "))
	line = strings.Join(strings.Fields(line), " ")
	if r := []rune(line); len(r) > 80 {
		line = string(r[:79]) + "…"
	}
	return line
}

// notify is the proxy's stop signal. Without a command it is notifyStop.
// With one, the stop signals (and SIGQUIT) go to the command instead, and
// ctx ends once the command has exited.
func (l *launch) notify(parent context.Context) (context.Context, context.CancelFunc) {
	if l == nil {
		return notifyStop(parent)
	}
	if parent == nil {
		parent = context.Background()
	}
	ctx, cancel := context.WithCancelCause(parent)
	l.cancel = cancel
	l.sigs = make(chan os.Signal, 8)
	signal.Notify(l.sigs, launchSignals...)
	return ctx, func() { signal.Stop(l.sigs); cancel(nil) }
}

// listenAddr is where the proxy listens: with a command, a free loopback
// port unless --listen was given.
func (l *launch) listenAddr(cmd *cobra.Command, listen string) string {
	if l == nil || cmd.Flags().Changed("listen") {
		return listen
	}
	return "127.0.0.1:0"
}

// output keeps the command's standard output its own: the proxy's banner
// and lines go to standard error.
func (l *launch) output(app *App) *App {
	if l == nil {
		return app
	}
	l.in, l.out, l.errw = app.In, app.Out, app.Err
	quiet := *app
	quiet.Out = app.Err
	return &quiet
}

// observe tags each new session with the command line (its title), as
// soon as the proxy has created it.
func (l *launch) observe(db *store.DB, log *slog.Logger) session.Observer {
	return func(u session.Update) {
		if u.Kind != session.UpStarted || u.SessionID == "" {
			return
		}
		l.mu.Lock()
		seen := l.tagged[u.SessionID]
		l.tagged[u.SessionID] = true
		l.mu.Unlock()
		if seen {
			return
		}
		if err := db.TagTitle(u.SessionID, l.tag); err != nil {
			log.Warn("tagging the session with the command", "session", u.SessionID, "err", err)
		}
	}
}

// observers adds the tagging to the proxy's observer (none without a
// command).
func (l *launch) observers(obs session.Observer, db *store.DB, log *slog.Logger) session.Observer {
	if l == nil {
		return obs
	}
	return bothObservers(obs, l.observe(db, log))
}

// launchEnv is env with each protocol's base-URL variable pointing at
// the proxy (base, "http://127.0.0.1:PORT"), the path the SDK expects in
// it kept (OpenAI's /v1). When env names an HTTP proxy, the proxy's host
// joins NO_PROXY, so the command's requests are not sent through it.
func launchEnv(env []string, base string) []string {
	set := launchVars(base)
	out := make([]string, 0, len(env)+len(set)+2)
	hasProxy := false
	noProxy := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if _, ok := set[k]; ok {
			continue
		}
		switch strings.ToUpper(k) {
		case "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY":
			hasProxy = hasProxy || v != ""
		case "NO_PROXY":
			noProxy[k] = v
			continue
		}
		out = append(out, kv)
	}
	if hasProxy {
		host := strings.TrimPrefix(base, "http://")
		if h, _, ok := strings.Cut(host, ":"); ok {
			host = h
		}
		for _, k := range []string{"NO_PROXY", "no_proxy"} {
			if v := noProxy[k]; v != "" {
				noProxy[k] = v + "," + host
			} else {
				noProxy[k] = host
			}
		}
	}
	for k, v := range noProxy {
		out = append(out, k+"="+v)
	}
	for _, k := range sortedKeys(set) {
		out = append(out, k+"="+set[k])
	}
	return out
}

// launchVars are the base-URL variables of every protocol's descriptor,
// each the proxy's base plus the path of the protocol's own BaseURL.
func launchVars(base string) map[string]string {
	vars := map[string]string{}
	for _, d := range registry.All() {
		e := d.Endpoint
		if e.BaseURLEnv == "" {
			continue
		}
		path := ""
		if u, err := url.Parse(e.BaseURL); err == nil {
			path = strings.TrimSuffix(u.Path, "/")
		}
		vars[e.BaseURLEnv] = base + path
	}
	return vars
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// banner says where the proxy is and what runs through it.
func (l *launch) banner(app *App, base, label string) {
	vars := launchVars(base)
	fmt.Fprintf(app.Out, "modelwire proxy on %s → %s; recording to %s\n", base, label, app.DB)
	fmt.Fprintf(app.Out, "  running %s with %s pointing here\n", l.tag, strings.Join(sortedKeys(vars), ", "))
}

// start runs the command with the terminal's standard streams and the
// base-URL variables; signals go to it from here on. When it cannot be
// started, or once it exits, the proxy's ctx ends as Ctrl-C ends it.
func (l *launch) start(app *App, base string) {
	if l == nil {
		return
	}
	c := exec.Command(l.argv[0], l.argv[1:]...)
	c.Env = launchEnv(os.Environ(), base)
	c.Stdin, c.Stdout, c.Stderr = l.in, l.out, l.errw
	if err := c.Start(); err != nil {
		l.status = 127 // as a shell says a command it cannot find
		if errors.Is(err, os.ErrPermission) {
			l.status = 126
		}
		fmt.Fprintf(app.Err, "modelwire: cannot run %s: %v\n", l.argv[0], err)
		close(l.exited)
		l.cancel(fmt.Errorf("the command could not be started: %w", err))
		return
	}
	l.mu.Lock()
	l.child = c
	l.mu.Unlock()
	go l.forward(c)
	go func() {
		_ = c.Wait()
		l.status = exitStatus(c.ProcessState)
		close(l.exited)
		l.cancel(fmt.Errorf("the command exited with status %d", l.status))
	}()
}

// forward passes each signal the proxy gets to the command, until it has
// exited. A Ctrl-C or Ctrl-\ typed on the terminal whose foreground group
// is modelwire's has reached the command already (it shares the group, as
// in a shell's pipeline): sent again it would arrive twice.
func (l *launch) forward(c *exec.Cmd) {
	tty, _ := l.in.(*os.File)
	for {
		select {
		case <-l.exited:
			return
		case sig := <-l.sigs:
			if (sig == os.Interrupt || sig == syscall.SIGQUIT) && terminalSentToGroup(tty) {
				continue
			}
			_ = c.Process.Signal(sig)
		}
	}
}

// exitStatus is a finished command's status as a shell reports it: its
// exit code, or 128 plus the signal that killed it.
func exitStatus(ps *os.ProcessState) int {
	if ps == nil {
		return 1
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	if code := ps.ExitCode(); code >= 0 {
		return code
	}
	return 1
}

// finish ends the launch once the proxy has stopped: a command still
// running (the proxy failed under it) gets SIGTERM, then SIGKILL after
// launchGrace. The proxy's own failure wins; else modelwire exits with
// the command's status.
func (l *launch) finish(runErr error) error {
	if l == nil {
		return runErr
	}
	l.mu.Lock()
	c := l.child
	l.mu.Unlock()
	if c != nil {
		select {
		case <-l.exited:
		default:
			_ = c.Process.Signal(syscall.SIGTERM)
			select {
			case <-l.exited:
			case <-time.After(launchGrace):
				_ = c.Process.Kill()
				<-l.exited
			}
		}
	}
	if runErr != nil {
		return runErr
	}
	if l.status == 0 {
		return nil
	}
	return &exitError{code: l.status, err: fmt.Errorf("%s exited with status %d", l.argv[0], l.status), shown: true}
}
