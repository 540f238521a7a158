package cli

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelwire/modelwire/samples"
	"github.com/modelwire/modelwire/sim"
)

// export --format curl writes a command that runs: against the simulator
// requiring a key, the curl — its key read from $ANTHROPIC_API_KEY —
// gets turn 1's stream back, the tool call in it.
func TestExportCurlRuns(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("no curl on this machine")
	}
	dir := t.TempDir()
	db := filepath.Join(dir, "mw.db")
	id, _, _ := refundRun(t, db, "--protocol", "anthropic-messages")
	code, out, errs := mw(t, "export", id, "--db", db, "--format", "curl", "--turn", "1")
	if code != 0 {
		t.Fatalf("export: %s", errs)
	}
	if !strings.Contains(out, `x-api-key: $ANTHROPIC_API_KEY`) || strings.Contains(strings.ToLower(out), "redacted") {
		t.Fatalf("the curl does not take its key from the environment:\n%s", out)
	}
	sc, _ := samples.Lookup("refund")
	srv := sim.New(sim.Options{Scenario: sc, Lookup: samples.Lookup, RequireKey: true, Keys: map[string]string{"anthropic-messages": "sk-ant-test"}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	base, err := srv.Start(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	script := strings.Replace(out, "http://127.0.0.1:8787", base, 1)
	cmd := exec.Command("sh", "-c", script)
	cmd.Env = append(os.Environ(), "ANTHROPIC_API_KEY=sk-ant-test")
	got, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(got), `"type":"tool_use"`) || !strings.Contains(string(got), "get_order_line") {
		t.Errorf("the curl: %v\n%s", err, got)
	}
	cmd = exec.Command("sh", "-c", script)
	cmd.Env = append(os.Environ(), "ANTHROPIC_API_KEY=wrong")
	if got, _ := cmd.CombinedOutput(); !strings.Contains(string(got), "authentication_error") {
		t.Errorf("with another key the simulator should refuse it: %s", got)
	}
}

// Python and TypeScript use the official SDK where its call takes the
// body as it is, else the REST call; the http file names the key by its
// variable. No snippet carries a key.
func TestExportSnippets(t *testing.T) {
	db := filepath.Join(t.TempDir(), "mw.db")
	resp, _, _ := refundRun(t, db, "--protocol", "openai-responses")
	gem, _, _ := refundRun(t, db, "--protocol", "gemini")
	for _, c := range []struct {
		id, format string
		want       []string
	}{
		{resp, "python", []string{`from openai import OpenAI`, `base_url="http://127.0.0.1:8787/v1"`, `api_key=os.environ["OPENAI_API_KEY"]`,
			`for event in client.responses.create(**body)`, `"input": [`}},
		{resp, "ts", []string{`import OpenAI from "openai"`, `apiKey: process.env.OPENAI_API_KEY`, `await client.responses.create(body)`}},
		{resp, "http", []string{"### session " + resp + ", turn 2", "POST http://127.0.0.1:8787/v1/responses HTTP/1.1",
			"authorization: Bearer {{$processEnv OPENAI_API_KEY}}"}},
		{gem, "python", []string{`httpx.stream("POST", "http://127.0.0.1:8787/v1beta/models/`, `"x-goog-api-key": os.environ["GEMINI_API_KEY"]`}},
		{gem, "ts", []string{`await fetch("http://127.0.0.1:8787/v1beta/models/`, `"x-goog-api-key": process.env.GEMINI_API_KEY!`}},
	} {
		args := []string{"export", c.id, "--db", db, "--format", c.format}
		if c.format != "http" {
			args = append(args, "--turn", "2")
		}
		code, out, errs := mw(t, args...)
		if code != 0 {
			t.Fatalf("%v: %s", args, errs)
		}
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s of %s lacks %q:\n%s", c.format, c.id, w, out)
			}
		}
		if strings.Contains(strings.ToLower(out), "redacted") {
			t.Errorf("%s carries a redacted key", c.format)
		}
	}
	if code, _, errs := mw(t, "export", resp, "--db", db, "--format", "curl", "--turn", "7"); code != 2 || !strings.Contains(errs, "turns 1 to 3") {
		t.Errorf("--turn 7: exit %d %q", code, errs)
	}
	if code, _, _ := mw(t, "export", resp, "--db", db, "--format", "jsonl", "--turn", "1"); code != 2 {
		t.Errorf("--turn with jsonl: exit %d", code)
	}
}
