package collect_test

import (
	"bufio"
	"bytes"
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelwire/modelwire/collect"
	"github.com/modelwire/modelwire/internal/e2e"
)

// TestBinary runs `modelwire collect` as a user does: it prints where it
// listens, records a trace sent to it, prints a line when its session
// ends, and on SIGINT what it received.
func TestBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds the binary")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := t.TempDir()
	bin := e2e.Binary(ctx, t)
	cmd := exec.CommandContext(ctx, bin, "--db", filepath.Join(dir, "mw.db"), "collect", "--http", "127.0.0.1:0", "--grpc", "")
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	lines := bufio.NewScanner(stdout)
	endpoint := ""
	for endpoint == "" && lines.Scan() {
		if v, ok := strings.CutPrefix(strings.TrimSpace(lines.Text()), "OTEL_EXPORTER_OTLP_ENDPOINT="); ok {
			endpoint = v
		}
	}
	if endpoint == "" {
		t.Fatal("no endpoint in the banner")
	}
	body := jsonRequest(
		jsonSpan(traceA, "a000000000000001", "", "invoke_agent bot", map[string]any{"gen_ai.operation.name": "invoke_agent"}),
		jsonSpan(traceA, "a000000000000002", "a000000000000001", "chat m", map[string]any{"gen_ai.operation.name": "chat",
			"gen_ai.request.model": "m", "gen_ai.usage.input_tokens": 3, "gen_ai.usage.output_tokens": 2}))
	resp, err := http.Post(endpoint+collect.TracesPath, "application/json", bytes.NewReader(body))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("post: %v %v", err, resp)
	}
	resp.Body.Close()
	for lines.Scan() && lines.Text() != "Ctrl-C stops it." {
	}
	if !lines.Scan() || !strings.Contains(lines.Text(), "done · 1 turns") {
		t.Fatalf("want the session's line, got %q", lines.Text())
	}
	_ = cmd.Process.Signal(syscall.SIGINT)
	var rest strings.Builder
	for lines.Scan() {
		rest.WriteString(lines.Text() + "\n")
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit: %v\n%s", err, rest.String())
	}
	if !strings.Contains(rest.String(), "received 2 spans in 1 requests: 1 sessions, 1 turns, 0 tool executions") {
		t.Errorf("summary: %q", rest.String())
	}
}
