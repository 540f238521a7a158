package sim_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/adapterstest"
	"github.com/modelwire/modelwire/internal/e2e"
	"github.com/modelwire/modelwire/samples"
)

// TestJavaScriptSDKs drives the official JavaScript SDKs (openai,
// @anthropic-ai/sdk, @google/genai, pinned in jstest/package-lock.json)
// through the refund loop against a real `modelwire serve`, streaming and
// not, for every protocol. It needs node and npm (and the npm registry
// for `npm ci`); without node it is skipped with a message.
func TestJavaScriptSDKs(t *testing.T) {
	e2e.Require(t, "the JavaScript SDK check", "node", "npm")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	e2e.NPMCI(ctx, t, "jstest")

	bin := e2e.Binary(ctx, t)
	serve := exec.CommandContext(ctx, bin, "serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(t.TempDir(), "x.db"))
	stdout, _ := serve.StdoutPipe()
	serve.Stderr = os.Stderr
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = serve.Process.Kill(); _ = serve.Wait() }()
	first, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the serve banner: %v", err)
	}
	base := strings.Fields(strings.TrimPrefix(first, "modelwire simulator on "))[0]

	sc, err := samples.Lookup("refund")
	if err != nil {
		t.Fatal(err)
	}
	// The JavaScript loops send no output format of their own: the
	// schema travels in the instructions, as modelwire sends it where a
	// protocol has no native one.
	system, task := adapterstest.SDKPrompt(sc.Sources)
	system += "\n\n" + adapters.SchemaInstruction(sc.Output)
	fixture := map[string]any{"system": system, "task": task, "tools": sc.Tools, "results": map[string]string{}}
	var wantTurns [][][2]any
	for _, turn := range sc.Script {
		calls := [][2]any{}
		for _, it := range turn.Items {
			if it.Kind != adapters.KindToolCall {
				continue
			}
			var args any
			_ = json.Unmarshal(it.Arguments, &args)
			content, _ := sc.RunTool(ctx, it.Name, it.Arguments)
			key, _ := json.Marshal(args) // Go sorts object keys, as the script does
			fixture["results"].(map[string]string)[it.Name+" "+string(key)] = content
			calls = append(calls, [2]any{it.Name, args})
		}
		wantTurns = append(wantTurns, calls)
	}
	last := sc.Script[len(sc.Script)-1].Items
	wantFinal := last[len(last)-1].Text
	fxPath := filepath.Join(t.TempDir(), "fixture.json")
	b, _ := json.Marshal(fixture)
	if err := os.WriteFile(fxPath, b, 0o644); err != nil {
		t.Fatal(err)
	}

	node := exec.CommandContext(ctx, "node", "refund_loop.mjs", base, fxPath)
	node.Dir = "jstest"
	node.Stderr = os.Stderr
	out, runErr := node.Output()
	runs := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var r struct {
			Run   string     `json:"run"`
			Turns [][][2]any `json:"turns"`
			Final string     `json:"final"`
			Error string     `json:"error"`
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("node printed %q", line)
		}
		if r.Error != "" {
			t.Errorf("%s failed: %s", r.Run, r.Error)
			continue
		}
		runs[r.Run] = true
		if r.Final != wantFinal {
			t.Errorf("%s: final answer %q, want the script's", r.Run, r.Final)
		}
		if !reflect.DeepEqual(normalise(r.Turns), normalise(wantTurns)) {
			t.Errorf("%s: tool calls per turn %v, want %v", r.Run, r.Turns, wantTurns)
		}
	}
	if runErr != nil && !t.Failed() {
		t.Fatalf("node: %v", runErr)
	}
	if len(runs) != 12 && !t.Failed() {
		t.Fatalf("%d runs passed, want 12: %v", len(runs), runs)
	}
}

func normalise(v any) any {
	b, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}
