package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/samples"
	"github.com/modelwire/modelwire/sim"
	"github.com/modelwire/modelwire/store"
	"github.com/modelwire/modelwire/vcr"
)

// sdkApp is an application written with the official openai-go SDK: the
// refund case's tool loop over streamed Chat Completions, its tools run
// from the scenario. system replaces the system prompt when not empty.
// It returns the final answer's text.
func sdkApp(ctx context.Context, base, system string) (string, error) {
	sc, err := samples.Lookup("refund")
	if err != nil {
		return "", err
	}
	c := openai.NewClient(option.WithBaseURL(base+"/v1/"), option.WithAPIKey("sk-app"), option.WithMaxRetries(0))
	p := openai.ChatCompletionNewParams{Model: sc.Model}
	for _, s := range sc.Sources {
		switch {
		case s.Role == adapters.RoleSystem && system != "":
			p.Messages = append(p.Messages, openai.SystemMessage(system))
		case s.Role == adapters.RoleSystem:
			p.Messages = append(p.Messages, openai.SystemMessage(s.Text))
		case s.Role == adapters.RoleDeveloper:
			p.Messages = append(p.Messages, openai.DeveloperMessage(s.Text))
		default:
			p.Messages = append(p.Messages, openai.UserMessage(adapters.SourceText(s)))
		}
	}
	for _, t := range sc.Tools {
		var params map[string]any
		_ = json.Unmarshal(t.Parameters, &params)
		p.Tools = append(p.Tools, openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name: t.Name, Description: openai.String(t.Description), Parameters: params}))
	}
	var schema map[string]any
	_ = json.Unmarshal(sc.Output.Schema, &schema)
	p.ResponseFormat = openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
		JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: sc.Output.Name, Schema: schema, Strict: openai.Bool(true)}}}
	for range 5 {
		stream := c.Chat.Completions.NewStreaming(ctx, p)
		var acc openai.ChatCompletionAccumulator
		for stream.Next() {
			acc.AddChunk(stream.Current())
		}
		if err := stream.Err(); err != nil {
			return "", err
		}
		msg := acc.Choices[0].Message
		if len(msg.ToolCalls) == 0 {
			return msg.Content, nil
		}
		p.Messages = append(p.Messages, msg.ToParam())
		for _, call := range msg.ToolCalls {
			content, _ := sc.RunTool(ctx, call.Function.Name, json.RawMessage(call.Function.Arguments))
			p.Messages = append(p.Messages, openai.ToolMessage(content, call.ID))
		}
	}
	return "", errors.New("no answer in 5 turns")
}

// startProxy runs `modelwire proxy --upstream sim` into db and returns its
// address and a function that stops it.
func startProxy(t *testing.T, db string, args ...string) (string, func()) {
	t.Helper()
	return startCommand(t, `modelwire proxy on (http://127\.0\.0\.1:\d+)`,
		append([]string{"proxy", "--upstream", "sim", "--listen", "127.0.0.1:0", "--db", db}, args...)...)
}

// startCommand runs a command that serves until stopped, in process, and
// returns the base URL its banner prints (banner's first group) and the
// stop function.
func startCommand(t *testing.T, banner string, args ...string) (string, func()) {
	t.Helper()
	out := &syncBuffer{}
	app := &App{Out: out, Err: &syncBuffer{}, In: strings.NewReader("")}
	root := NewRoot(app)
	root.SetArgs(args)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()
	addr := regexp.MustCompile(banner)
	for deadline := time.Now().Add(10 * time.Second); ; {
		if m := addr.FindStringSubmatch(out.String()); m != nil {
			return m[1], func() {
				cancel()
				if err := <-done; err != nil {
					t.Errorf("%s: %v", args[0], err)
				}
			}
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("no %s banner: %q", args[0], out.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func onlySession(t *testing.T, db string) string {
	t.Helper()
	_, out, _ := mw(t, "sessions", "--db", db, "--json")
	ls := lines(t, out)
	if len(ls) != 1 {
		t.Fatalf("%d sessions, want 1: %v", len(ls), ls)
	}
	return ls[0]["id"].(string)
}

// serveTape plays session id of db on an httptest server.
func serveTape(t *testing.T, db, id string) string {
	t.Helper()
	s, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	c, err := loadCassette(s, id)
	s.Close()
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(vcr.Handler(c, true))
	t.Cleanup(srv.Close)
	return srv.URL
}

// An application's own traffic, recorded by the proxy, played back by the
// VCR to the same application (the official openai-go SDK, streaming):
// it gets the same answer offline; changed, it gets a 409 that names the
// field it changed.
func TestVCRPlaysAProxiedSessionBackToTheSDK(t *testing.T) {
	db := filepath.Join(t.TempDir(), "mw.db")
	base, stop := startProxy(t, db)
	ctx := context.Background()
	want, err := sdkApp(ctx, base, "")
	stop()
	if err != nil {
		t.Fatalf("the app through the proxy: %v", err)
	}
	if !strings.Contains(want, `"max_refund_cents":13000`) {
		t.Fatalf("the app's answer %q", want)
	}
	vcrURL := serveTape(t, db, onlySession(t, db))

	got, err := sdkApp(ctx, vcrURL, "")
	if err != nil || got != want {
		t.Errorf("played back: %q, %v\nwant %q", got, err, want)
	}
	_, err = sdkApp(ctx, vcrURL, "another system prompt")
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 409 || !strings.Contains(apiErr.Message, "/messages/0/content") ||
		!strings.Contains(apiErr.Message, "another system prompt") {
		t.Errorf("a changed request: %v, want 409 naming messages/0/content", err)
	}
}

// A run played back to the same run is the same session (diff finds
// nothing); a turn that was retried answers as it did, 429 first; and a
// run that asks for another model is stopped by a 409 naming model.
func TestVCRPlaysARunBack(t *testing.T) {
	db := filepath.Join(t.TempDir(), "mw.db")
	args := []string{"--db", db, "--protocol", "anthropic-messages", "--approve", "auto"}
	if code, _, errs := mw(t, append([]string{"run", "--fault", "rate-limit"}, args...)...); code != 0 {
		t.Fatalf("run: %s", errs)
	}
	orig := onlySession(t, db)
	vcrURL := serveTape(t, db, orig)
	code, out, errs := mw(t, append([]string{"run", "--base-url", vcrURL}, args...)...)
	if code != 0 {
		t.Fatalf("run against the recording: exit %d: %s\n%s", code, errs, out)
	}
	if !strings.Contains(out, "attempt 1: HTTP 429") {
		t.Errorf("the retried turn did not answer 429 first:\n%s", out)
	}
	replayed := strings.TrimSuffix(strings.Fields(out[strings.LastIndex(out, "\nsession ")+1:])[1], ":")
	if code, changes := diffJSON(t, db, orig, replayed); code != 0 {
		t.Errorf("the played-back run differs from the recording: %+v", changes)
	}
	code, out, _ = mw(t, append([]string{"run", "--base-url", vcrURL, "--model", "other-model"}, args...)...)
	if code != 1 || !strings.Contains(out, "409") || !strings.Contains(out, "differs first at /model") {
		t.Errorf("another model: exit %d, want 1 with a 409 naming model:\n%s", code, out)
	}
}

// A request the recording never saw gets one 409 and is not sent again:
// asking again would get the same mismatch, so the run stops at the first
// attempt, as an official SDK does, told by x-should-retry: false
// (issue 27).
func TestServeSessionMismatchIsTriedOnce(t *testing.T) {
	db := filepath.Join(t.TempDir(), "mw.db")
	args := []string{"--db", db, "--protocol", "anthropic-messages", "--approve", "auto"}
	if code, _, errs := mw(t, append([]string{"run"}, args...)...); code != 0 {
		t.Fatalf("run: %s", errs)
	}
	vcrURL := serveTape(t, db, onlySession(t, db))
	code, out, errs := mw(t, append([]string{"run", "--base-url", vcrURL, "--model", "other-model"}, args...)...)
	attempts := regexp.MustCompile(`(?m)^  attempt \d+:.*$`).FindAllString(out, -1)
	if code != ExitFailed || len(attempts) != 1 || !strings.Contains(attempts[0], "attempt 1: HTTP 409") {
		t.Errorf("exit %d, attempts %q, want exactly one, a 409:\n%s\n%s", code, attempts, out, errs)
	}
}

// serve --cassettes refuses bad flags with one line and exit 2, before
// listening.
func TestServeCassettesBadFlags(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--cassettes", filepath.Join(dir, "absent")}, "not a directory"},
		{[]string{"--cassettes", dir, "--mode", "rewind"}, `--mode "rewind"`},
		{[]string{"--cassettes", dir, "--mode", "live"}, `--mode "live"`},
		{[]string{"--cassettes", dir, "--mode", "record", "--upstream", "ftp://x"}, "--upstream"},
		{[]string{"--cassettes", dir, "--fault", "rate-limit"}, "--fault is the simulator's"},
		{[]string{"--cassettes", dir, "--redact-body", filepath.Join(dir, "absent.json")}, "--redact-body"},
		{[]string{"--cassettes", dir, "--ignore", "no-slash"}, "no-slash"},
		{[]string{"--ignore", "/user"}, "--ignore goes with --cassettes"},
	} {
		code, _, errs := mw(t, append([]string{"serve", "--addr", "127.0.0.1:0"}, tc.args...)...)
		if code != 2 || !strings.Contains(errs, tc.want) || strings.Count(strings.TrimSpace(errs), "\n") > 0 {
			t.Errorf("%v: exit %d %q, want 2 and one line with %q", tc.args, code, errs, tc.want)
		}
	}
}

// serve --cassettes --redact-body records an application's traffic with
// personal data removed, and replays it to the same application (its
// requests redacted the same way before they are matched).
func TestServeCassettesRedactBody(t *testing.T) {
	sc, err := samples.Lookup("refund")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	upstream, err := sim.New(sim.Options{Scenario: sc}).Start(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	rules := filepath.Join(t.TempDir(), "rules.json")
	if err := os.WriteFile(rules, []byte(`{"patterns": ["[a-z.]+@example\\.com"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	system := sc.Sources[0].Text + " The customer is jane.doe@example.com."
	serve := func(mode string) (string, func()) {
		return startCommand(t, `cassettes in .* on (http://127\.0\.0\.1:\d+)`, "serve", "--addr", "127.0.0.1:0",
			"--cassettes", dir, "--mode", mode, "--upstream", upstream, "--redact-body", rules)
	}
	base, stop := serve("record")
	want, err := sdkApp(ctx, base+"/c/refund", system)
	stop()
	if err != nil || !strings.Contains(want, `"max_refund_cents":13000`) {
		t.Fatalf("recording: %q %v", want, err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "refund.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte("jane.doe")) || !bytes.Contains(b, []byte("customer is")) {
		t.Fatalf("the cassette holds the address, or not the sentence around it")
	}
	base, stop = serve("replay")
	defer stop()
	if got, err := sdkApp(ctx, base+"/c/refund", system); err != nil || got != want {
		t.Errorf("replayed: %q %v, want the recorded answer", got, err)
	}
}
