package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/internal/e2e"
	"github.com/modelwire/modelwire/store"
)

// TestJavaScriptSDKsThroughProxy runs the official JavaScript SDKs' refund
// loops (sim/jstest/refund_loop.mjs: openai, @anthropic-ai/sdk,
// @google/genai, pinned; streaming and not, every protocol) through the
// proxy in front of an in-process simulator, and once straight against a
// simulator: the two outputs must be identical; the proxy must have
// recorded each run as one session of three turns holding every raw event
// the simulator sent, and the key the SDKs sent must have reached the
// upstream and nowhere in the database. It needs node and npm (and the
// npm registry or cache for `npm ci`, run in a private copy so the sim
// package's own JavaScript test can run at the same time); without node
// it is skipped with a message.
func TestJavaScriptSDKsThroughProxy(t *testing.T) {
	e2e.Require(t, "the JavaScript SDK check", "node", "npm")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	dir := e2e.NPMDir(ctx, t, "../sim/jstest", "../sim/jstest/refund_loop.mjs")

	rc := refund(t)
	fixture := map[string]any{"system": rc.system, "task": rc.task, "tools": rc.sc.Tools, "results": map[string]string{}}
	for _, turn := range rc.sc.Script {
		for _, it := range turn.Items {
			if it.Kind != adapters.KindToolCall {
				continue
			}
			var args any
			_ = json.Unmarshal(it.Arguments, &args)
			key, _ := json.Marshal(args) // sorted keys, as the script sorts them
			fixture["results"].(map[string]string)[it.Name+" "+string(key)] = rc.result(it.Name, it.Arguments)
		}
	}
	fxPath := filepath.Join(dir, "fixture.json")
	b, _ := json.Marshal(fixture)
	if err := os.WriteFile(fxPath, b, 0o644); err != nil {
		t.Fatal(err)
	}
	const key = "sk-js-PLANTED-4d1c9e77b2"
	node := func(base string) []string {
		cmd := exec.CommandContext(ctx, "node", "refund_loop.mjs", base, fxPath, key)
		cmd.Dir = dir
		cmd.Stderr = os.Stderr
		out, err := cmd.Output()
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if err != nil {
			t.Fatalf("node against %s: %v\n%s", base, err, out)
		}
		return lines
	}

	simURL, _ := startSim(t, "")
	want := node(simURL)
	r := newRig(t, "", Options{})
	got := node(r.url)
	if len(want) != 12 {
		t.Fatalf("%d runs straight to the simulator, want 12:\n%s", len(want), strings.Join(want, "\n"))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the SDKs' results differ through the proxy:\n%s\nstraight:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	sent := r.sim.responses()
	keys := r.sim.keys
	sessions := r.stop()
	if len(sessions) != 12 {
		for _, s := range sessions {
			t.Logf("%s %s %d turns", s.Protocol, s.Title, s.Turns)
		}
		t.Fatalf("%d sessions recorded, want one per run (12)", len(sessions))
	}
	attempts, stored, total := 0, 0, 0
	for _, s := range sessions {
		if s.Turns != len(rc.sc.Script) || s.Status != store.StatusDone || s.Source != "proxy" {
			t.Errorf("session %s (%s): %d turns, %s", s.ID, s.Protocol, s.Turns, s.Status)
		}
		for _, a := range s.Attempts {
			attempts++
			stored += a.RawEvents
			i := answered(sent, a.ResponseID)
			if i < 0 {
				t.Errorf("session %s turn %d: response %q is none the simulator sent", s.ID, a.Turn, a.ResponseID)
				continue
			}
			if n := rawEvents(t, s.Protocol, sent[i]); a.RawEvents != n {
				t.Errorf("session %s turn %d: %d raw events stored, the simulator sent %d", s.ID, a.Turn, a.RawEvents, n)
			}
		}
	}
	for _, s := range sent {
		total += rawEvents(t, classify(s.method, s.path, ""), s)
	}
	if attempts != len(sent) || stored != total {
		t.Errorf("%d attempts with %d raw events recorded; the simulator answered %d requests with %d", attempts, stored, len(sent), total)
	}
	for _, k := range keys {
		if k != key {
			t.Fatalf("the upstream got key %q", k)
		}
	}
	files, _ := filepath.Glob(r.dbPath + "*")
	for _, f := range files {
		if b, _ := os.ReadFile(f); bytes.Contains(b, []byte(key)) {
			t.Errorf("%s holds the SDKs' key", filepath.Base(f))
		}
	}
}
