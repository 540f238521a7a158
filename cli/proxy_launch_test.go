package cli

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/openai/openai-go/v3"
	"google.golang.org/genai"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/registry"
	"github.com/modelwire/modelwire/internal/e2e"
	"github.com/modelwire/modelwire/store"
)

// launchChildEnv names what TestLaunchHelperChild does when the test
// binary is re-run as the command of `proxy -- CMD`. It reaches the child
// as everything else in modelwire's environment does.
const launchChildEnv = "MODELWIRE_LAUNCH_CHILD"

// TestLaunchHelperChild is the command `proxy --` runs in these tests:
// the test binary again. "requests": one request to each protocol at the
// base URL its variable names, then exit 5. "signal": one request, "ready"
// on stdout, then wait for a signal, say which, and die of SIGTERM (Go's
// runtime ends a SIGQUIT with exit 2, not by the signal).
func TestLaunchHelperChild(t *testing.T) {
	mode := os.Getenv(launchChildEnv)
	if mode == "" {
		t.Skip("the command of the launch tests")
	}
	switch mode {
	case "requests":
		for _, d := range registry.All() {
			if err := launchRequest(d); err != nil {
				fmt.Fprintf(os.Stderr, "%s: %v\n", d.Name, err)
				os.Exit(1)
			}
		}
		os.Exit(5)
	case "signal":
		sigs := make(chan os.Signal, 1)
		signal.Notify(sigs, launchSignals...)
		d, _ := registry.Describe(adapters.OpenAIChat)
		if err := launchRequest(d); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println("ready")
		sig := <-sigs
		fmt.Println("got", sig)
		signal.Reset()
		self, _ := os.FindProcess(os.Getpid())
		_ = self.Signal(syscall.SIGTERM)
		time.Sleep(5 * time.Second)
		os.Exit(1)
	case "gosdk":
		if err := launchGoSDKs(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(6)
	case "count":
		sigs := make(chan os.Signal, 4)
		signal.Notify(sigs, os.Interrupt)
		fmt.Println("ready")
		n := 0
		for deadline := time.After(3 * time.Second); ; {
			select {
			case <-sigs:
				n++
				continue
			case <-deadline:
			}
			break
		}
		_ = os.WriteFile(os.Getenv("MODELWIRE_LAUNCH_COUNT"), []byte(fmt.Sprint(n)), 0o644)
		os.Exit(4)
	}
}

// launchRequest sends d's protocol a minimal request where the official
// SDK would: the base URL from d's variable, then the path the SDK
// appends to it.
func launchRequest(d adapters.Descriptor) error {
	base := os.Getenv(d.Endpoint.BaseURLEnv)
	if base == "" {
		return fmt.Errorf("%s is not set", d.Endpoint.BaseURLEnv)
	}
	hr, err := d.New().Encode(&adapters.Request{Model: "launch-model",
		Sources: []adapters.Source{{ID: "task", Role: adapters.RoleUser, Text: "hello from " + d.Name}}}, d.Provider)
	if err != nil {
		return err
	}
	basePath := ""
	if u, err := url.Parse(d.Endpoint.BaseURL); err == nil {
		basePath = strings.TrimSuffix(u.Path, "/")
	}
	req, err := http.NewRequest(http.MethodPost, base+strings.TrimPrefix(hr.Path, basePath), bytes.NewReader(hr.Body))
	if err != nil {
		return err
	}
	for k, v := range hr.Headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", "application/json")
	name, value := d.Auth.SendHeader("sk-launch-secret-0123456789")
	req.Header.Set(name, value)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: HTTP %d: %s", req.URL, resp.StatusCode, body)
	}
	return nil
}

// launchGoSDKs calls each official Go SDK as an application would,
// with no base URL in the code: openai-go, anthropic-sdk-go and go-genai
// read theirs (and their keys) from the environment.
func launchGoSDKs() error {
	ctx := context.Background()
	oa := openai.NewClient()
	if _, err := oa.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "gpt-4o-mini",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hello from openai-go")}}); err != nil {
		return fmt.Errorf("openai-go: %w", err)
	}
	an := anthropic.NewClient()
	if _, err := an.Messages.New(ctx, anthropic.MessageNewParams{Model: "claude-sonnet-4-5", MaxTokens: 256,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hello from anthropic-sdk-go"))}}); err != nil {
		return fmt.Errorf("anthropic-sdk-go: %w", err)
	}
	gc, err := genai.NewClient(ctx, &genai.ClientConfig{Backend: genai.BackendGeminiAPI})
	if err != nil {
		return fmt.Errorf("go-genai: %w", err)
	}
	if _, err := gc.Models.GenerateContent(ctx, "gemini-2.5-flash", genai.Text("hello from go-genai"), nil); err != nil {
		return fmt.Errorf("go-genai: %w", err)
	}
	return nil
}

// startLaunch starts `modelwire proxy --upstream sim --db db -- <this test
// binary> mode`, with extra in modelwire's environment.
func startLaunch(t *testing.T, db, mode string, extra ...string) (*exec.Cmd, *bufio.Reader, *bytes.Buffer) {
	t.Helper()
	args := []string{"-test.run=^TestHelperMain$", "--", "proxy", "--db", db, "--upstream", "sim",
		"--", os.Args[0], "-test.run=^TestLaunchHelperChild$"}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), append([]string{"MODELWIRE_HELPER_MAIN=1", launchChildEnv + "=" + mode}, extra...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	return cmd, bufio.NewReader(stdout), &stderr
}

// launchSessions are the sessions stored in db.
func launchSessions(t *testing.T, db string) []store.SessionInfo {
	t.Helper()
	d, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	list, err := d.ListSessions(store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	return list
}

func exitCodeOf(t *testing.T, err error) int {
	t.Helper()
	if err == nil {
		return 0
	}
	ee, ok := err.(*exec.ExitError)
	if !ok {
		t.Fatalf("modelwire did not run: %v", err)
	}
	return ee.ExitCode()
}

// Every protocol's variable points at the proxy: a command that reads
// them and sends one request to each gets every one recorded, as its own
// session tagged with the command, and modelwire exits with its status.
// Variables already in the environment (a stale OPENAI_BASE_URL) are
// replaced; the key the command sends is forwarded, never stored.
func TestLaunchPointsEveryProtocolAtTheProxy(t *testing.T) {
	db := filepath.Join(t.TempDir(), "mw.db")
	var stale []string
	for k := range launchVars("") {
		stale = append(stale, k+"=http://127.0.0.1:1/stale")
	}
	cmd, stdout, stderr := startLaunch(t, db, "requests", stale...)
	out, _ := io.ReadAll(stdout)
	code := exitCodeOf(t, cmd.Wait())
	if code != 5 {
		t.Fatalf("modelwire exited %d, want the command's 5\nstdout: %s\nstderr: %s", code, out, stderr)
	}
	if len(out) != 0 {
		t.Errorf("the proxy wrote to the command's stdout: %q", out)
	}
	if !strings.Contains(stderr.String(), "running ") || !strings.Contains(stderr.String(), "OPENAI_BASE_URL") {
		t.Errorf("no banner on stderr: %s", stderr)
	}
	list := launchSessions(t, db)
	var protocols []string
	for _, s := range list {
		protocols = append(protocols, s.Protocol)
		if !strings.HasPrefix(s.Title, "[") || !strings.Contains(s.Title, "'-test.run=^TestLaunchHelperChild$'] POST ") {
			t.Errorf("session %s is not tagged with the command: %q", s.ID, s.Title)
		}
		if s.Source != store.SourceProxy || s.Status != store.StatusDone {
			t.Errorf("session %s: source %q status %q, want proxy, done", s.ID, s.Source, s.Status)
		}
	}
	for _, d := range registry.All() {
		if !slices.Contains(protocols, d.Name) {
			t.Errorf("no session of %s (via %s); recorded: %v\nstderr: %s", d.Name, d.Endpoint.BaseURLEnv, protocols, stderr)
		}
	}
	raw, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, []byte("sk-launch-secret-0123456789")) {
		t.Error("the command's key was stored")
	}
}

// A signal to modelwire goes to the command; the proxy records until the
// command has died of it, keeps its sessions, and exits as a shell
// reports a death by signal: 128 + the signal.
func TestLaunchForwardsSignals(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT} {
		t.Run(sig.String(), func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "mw.db")
			cmd, stdout, stderr := startLaunch(t, db, "signal")
			line, err := stdout.ReadString('\n')
			if err != nil || line != "ready\n" {
				t.Fatalf("the command said %q (%v); stderr: %s", line, err, stderr)
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			rest, _ := io.ReadAll(stdout)
			code := exitCodeOf(t, cmd.Wait())
			if !strings.Contains(string(rest), "got "+sig.String()) {
				t.Errorf("the command did not get %v: %q; stderr: %s", sig, rest, stderr)
			}
			if want := 128 + int(syscall.SIGTERM); code != want {
				t.Errorf("modelwire exited %d, want %d; stderr: %s", code, want, stderr)
			}
			list := launchSessions(t, db)
			if len(list) != 1 || list[0].Status != store.StatusDone || list[0].Turns != 1 {
				t.Fatalf("sessions after %v: %+v", sig, list)
			}
		})
	}
}

// `proxy -- node app.mjs 3`: the unmodified official openai npm SDK (new
// OpenAI(), no base URL in its code) reads OPENAI_BASE_URL from the
// environment it inherits; nothing is set by hand here but its key. The
// proxy records its sessions, tagged with the command, and modelwire exits
// with the app's 3.
func TestLaunchNodeOpenAISDK(t *testing.T) {
	e2e.Require(t, "the launch check with the openai npm SDK", "node", "npm")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dir, err := filepath.Abs(filepath.Join("testdata", "launchjs"))
	if err != nil {
		t.Fatal(err)
	}
	npm := exec.CommandContext(ctx, "npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund")
	npm.Dir = dir
	if out, err := npm.CombinedOutput(); err != nil {
		t.Fatalf("npm ci: %v\n%s", err, out)
	}
	bin := e2e.Binary(ctx, t)
	db := filepath.Join(t.TempDir(), "mw.db")
	run := exec.CommandContext(ctx, bin, "proxy", "--db", db, "--upstream", "sim", "--", "node", "app.mjs", "3")
	run.Dir = dir
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if !strings.HasSuffix(k, "_BASE_URL") && k != "OPENAI_API_KEY" {
			env = append(env, kv)
		}
	}
	run.Env = append(env, "OPENAI_API_KEY=sk-launch-node-0123456789")
	var stdout, stderr bytes.Buffer
	run.Stdout, run.Stderr = &stdout, &stderr
	code := exitCodeOf(t, run.Run())
	if code != 3 {
		t.Fatalf("modelwire exited %d, want the app's 3\nstdout: %s\nstderr: %s", code, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "chat: ") || !strings.Contains(stdout.String(), "responses stream events: ") {
		t.Errorf("the app's output: %q", stdout.String())
	}
	list := launchSessions(t, db)
	var protocols []string
	for _, s := range list {
		protocols = append(protocols, s.Protocol)
		if !strings.HasPrefix(s.Title, "[node app.mjs 3] ") {
			t.Errorf("session %s is not tagged with the command: %q", s.ID, s.Title)
		}
	}
	slices.Sort(protocols)
	if want := []string{adapters.OpenAIChat, adapters.OpenAIResponses}; !slices.Equal(protocols, want) {
		t.Errorf("recorded %v, want %v\nstderr: %s", protocols, want, stderr.String())
	}
	raw, _ := os.ReadFile(db)
	if bytes.Contains(raw, []byte("sk-launch-node-0123456789")) {
		t.Error("the app's key was stored")
	}
}

// The usage errors: arguments without --, nothing after it, --tui with a
// command.
func TestLaunchUsageErrors(t *testing.T) {
	db := filepath.Join(t.TempDir(), "mw.db")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"proxy", "--db", db, "node", "app.mjs"}, "a command to run goes after --"},
		{[]string{"proxy", "--db", db, "--"}, "nothing to run after --"},
		{[]string{"proxy", "--db", db, "--tui", "--", "node", "app.mjs"}, "--tui cannot share the terminal"},
	} {
		var out, errb bytes.Buffer
		if code := Main(c.args, strings.NewReader(""), &out, &errb); code != ExitUsage || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%v: exit %d, %q; want %d and %q", c.args, code, errb.String(), ExitUsage, c.want)
		}
	}
}

// A command that cannot be started: the proxy stops and says so; exit 127
// as a shell's.
func TestLaunchCommandNotFound(t *testing.T) {
	db := filepath.Join(t.TempDir(), "mw.db")
	var out, errb bytes.Buffer
	code := Main([]string{"proxy", "--db", db, "--upstream", "sim", "--", "modelwire-no-such-command"}, strings.NewReader(""), &out, &errb)
	if code != 127 || !strings.Contains(errb.String(), "cannot run modelwire-no-such-command") {
		t.Errorf("exit %d, %q; want 127 and why", code, errb.String())
	}
}

// launchEnv replaces the base-URL variables, keeps everything else (keys
// included), and keeps loopback off an HTTP proxy the environment names.
func TestLaunchEnv(t *testing.T) {
	env := launchEnv([]string{"OPENAI_BASE_URL=https://stale/v1", "OPENAI_API_KEY=sk-x", "PATH=/bin", "HTTPS_PROXY=http://corp:3128", "no_proxy=internal"},
		"http://127.0.0.1:4000")
	got := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if _, dup := got[k]; dup {
			t.Errorf("%s set twice", k)
		}
		got[k] = v
	}
	want := map[string]string{"OPENAI_BASE_URL": "http://127.0.0.1:4000/v1", "ANTHROPIC_BASE_URL": "http://127.0.0.1:4000",
		"GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:4000", "DEEPSEEK_BASE_URL": "http://127.0.0.1:4000",
		"OPENAI_API_KEY": "sk-x", "PATH": "/bin", "HTTPS_PROXY": "http://corp:3128", "no_proxy": "internal,127.0.0.1", "NO_PROXY": "127.0.0.1"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s=%q, want %q", k, got[k], v)
		}
	}
	if commandTag([]string{"python", "agent.py", "--api-key", "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789", "two words"}) ==
		"" || strings.Contains(commandTag([]string{"python", "--key=sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"}), "abcdefghij") {
		t.Errorf("the tag keeps a key: %q", commandTag([]string{"python", "--key=sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"}))
	}
}

// Ctrl-C typed on the terminal reaches the command once: the terminal
// sends it to the foreground group, which the command shares with
// modelwire, so modelwire does not forward it a second time.
func TestLaunchCtrlCOnTheTerminalArrivesOnce(t *testing.T) {
	e2e.Require(t, "the launch Ctrl-C check", "tmux")
	dir := t.TempDir()
	sock, count, status := filepath.Join(dir, "tmux.sock"), filepath.Join(dir, "count"), filepath.Join(dir, "status")
	line := fmt.Sprintf("env MODELWIRE_HELPER_MAIN=1 %s=count MODELWIRE_LAUNCH_COUNT=%s %s -test.run='^TestHelperMain$' -- proxy --db %s --upstream sim -- %s -test.run='^TestLaunchHelperChild$'; echo $? > %s; sleep 60",
		launchChildEnv, count, os.Args[0], filepath.Join(dir, "mw.db"), os.Args[0], status)
	tmux := func(args ...string) string {
		out, err := exec.Command("tmux", append([]string{"-S", sock}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %v: %v: %s", args, err, out)
		}
		return string(out)
	}
	tmux("new-session", "-d", "-x", "200", "-y", "50", line)
	defer exec.Command("tmux", "-S", sock, "kill-server").Run()
	for i := 0; !strings.Contains(tmux("capture-pane", "-p"), "ready"); i++ {
		if i == 100 {
			t.Fatalf("the command never started: %s", tmux("capture-pane", "-p"))
		}
		time.Sleep(100 * time.Millisecond)
	}
	tmux("send-keys", "C-c")
	var got []byte
	for i := 0; i < 100; i++ {
		if got, _ = os.ReadFile(status); len(got) > 0 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if strings.TrimSpace(string(got)) != "4" {
		t.Fatalf("modelwire exited %q, want the command's 4: %s", got, tmux("capture-pane", "-p"))
	}
	if n, _ := os.ReadFile(count); string(n) != "1" {
		t.Errorf("the command got %s SIGINT(s) for one Ctrl-C, want 1", n)
	}
}

// The official Go SDKs, unmodified and given no base URL, find the proxy
// through the variables: openai-go (OPENAI_BASE_URL with /v1),
// anthropic-sdk-go (ANTHROPIC_BASE_URL), go-genai (GOOGLE_GEMINI_BASE_URL).
func TestLaunchGoSDKsReadTheVariables(t *testing.T) {
	db := filepath.Join(t.TempDir(), "mw.db")
	cmd, stdout, stderr := startLaunch(t, db, "gosdk", "OPENAI_API_KEY=sk-launch-go-0123456789",
		"ANTHROPIC_API_KEY=sk-ant-launch-go-0123456789", "GEMINI_API_KEY=launch-go-gemini-0123456789", "GOOGLE_API_KEY=",
		"GOOGLE_GENAI_USE_VERTEXAI=", "ANTHROPIC_AUTH_TOKEN=", "OPENAI_ADMIN_KEY=")
	out, _ := io.ReadAll(stdout)
	if code := exitCodeOf(t, cmd.Wait()); code != 6 {
		t.Fatalf("modelwire exited %d, want the command's 6\nstdout: %s\nstderr: %s", code, out, stderr)
	}
	var protocols []string
	for _, s := range launchSessions(t, db) {
		protocols = append(protocols, s.Protocol)
	}
	slices.Sort(protocols)
	if want := []string{adapters.AnthropicMessages, adapters.Gemini, adapters.OpenAIChat}; !slices.Equal(protocols, want) {
		t.Errorf("recorded %v, want %v\nstderr: %s", protocols, want, stderr)
	}
}
