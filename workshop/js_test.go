package workshop_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelwire/modelwire/adapters/adapterstest"
	"github.com/modelwire/modelwire/internal/e2e"
	"github.com/modelwire/modelwire/samples"
	"github.com/modelwire/modelwire/workshop"
)

// TestJavaScriptParticipants: three programs written with the official
// JavaScript SDK (sim/jstest's pinned openai package) at once against a
// real `modelwire serve --workshop refund-3` — one correct, one that
// sends the item id where the call_id goes, one that leaves tool_choice
// on auto for the final turn; each grade comes back in the headers, and
// each participant sees their own grades with `modelwire workshop me`.
func TestJavaScriptParticipants(t *testing.T) {
	e2e.Require(t, "the JavaScript SDK workshop check", "node", "npm")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dir := e2e.NPMDir(ctx, t, "../sim/jstest", "testdata/participant.mjs")
	bin := e2e.Binary(ctx, t)
	db := filepath.Join(t.TempDir(), "room.db")
	serve := exec.CommandContext(ctx, bin, "serve", "--workshop", "refund-3", "--addr", "127.0.0.1:0", "--db", db)
	stdout, _ := serve.StdoutPipe()
	serve.Stderr = os.Stderr
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = serve.Process.Kill(); _ = serve.Wait() }()
	base := ""
	urlRe := regexp.MustCompile(`^modelwire simulator on (\S+) `)
	sc := bufio.NewScanner(stdout)
	for base == "" && sc.Scan() {
		if m := urlRe.FindStringSubmatch(sc.Text()); m != nil {
			base = m[1]
		}
	}
	if base == "" {
		t.Fatal("no URL in serve's banner")
	}
	go func() { // drain the rest of the banner
		for sc.Scan() {
		}
	}()

	fixture := jsFixture(t)
	fxPath := filepath.Join(dir, "fixture.json")
	b, _ := json.Marshal(fixture)
	if err := os.WriteFile(fxPath, b, 0o644); err != nil {
		t.Fatal(err)
	}
	type run struct {
		Name   string   `json:"name"`
		Grades []string `json:"grades"`
		Hints  []string `json:"hints"`
		Status int      `json:"status"`
		Error  string   `json:"error"`
	}
	people := [][3]string{{"alice", "sk-js-alice-0123456789", "none"}, {"bob", "sk-js-bob-0123456789", "item-id"}, {"carol", "sk-js-carol-0123456789", "auto-final"}}
	runs := make([]run, len(people))
	var wg sync.WaitGroup
	for i, p := range people {
		wg.Add(1)
		go func() {
			defer wg.Done()
			node := exec.CommandContext(ctx, "node", "participant.mjs", base, fxPath, p[1], p[0], p[2])
			node.Dir = dir
			node.Stderr = os.Stderr
			out, err := node.Output()
			if err != nil {
				runs[i].Error = err.Error()
				return
			}
			if err := json.Unmarshal(out, &runs[i]); err != nil {
				runs[i].Error = "node printed " + string(out)
			}
		}()
	}
	wg.Wait()
	want := [][]string{
		{"step=1 pass=5/5", "step=2 pass=4/4", "step=3 pass=8/8"},
		{"step=1 pass=5/5", "step=2 pass=1/4 fail=call-id-matches,order-result,accepted"},
		{"step=1 pass=5/5", "step=2 pass=4/4", "step=3 pass=7/8 fail=final-tool-choice"},
	}
	for i, r := range runs {
		if r.Error != "" {
			t.Fatalf("%s: %s", people[i][0], r.Error)
		}
		if strings.Join(r.Grades, " | ") != strings.Join(want[i], " | ") {
			t.Errorf("%s: grades %q, want %q", r.Name, r.Grades, want[i])
		}
	}
	if runs[1].Status != 400 || !strings.Contains(runs[1].Hints[1], "call_id") {
		t.Errorf("bob: status %d, hint %q", runs[1].Status, runs[1].Hints)
	}
	if !strings.Contains(runs[2].Hints[2], "13.6.6") {
		t.Errorf("carol's hint: %q", runs[2].Hints[2])
	}

	// Each participant asks the room with the CLI for their own view.
	for i, p := range people {
		out, err := exec.CommandContext(ctx, bin, "workshop", "me", base, "--key", p[1], "--participant", p[0], "--json").Output()
		if err != nil {
			t.Fatalf("workshop me for %s: %v", p[0], err)
		}
		var m workshop.Me
		if err := json.Unmarshal(out, &m); err != nil {
			t.Fatal(err)
		}
		last := want[i][len(want[i])-1]
		if m.Participant != p[0] || m.Step != len(want[i]) || m.SessionID == "" || !strings.HasPrefix(last, "step=") {
			t.Errorf("%s's own view: %+v", p[0], m.Row)
		}
		text, err := exec.CommandContext(ctx, bin, "workshop", "me", base, "--key", p[1], "--participant", p[0]).Output()
		if err != nil {
			t.Fatal(err)
		}
		for _, other := range people {
			if other[0] != p[0] && strings.Contains(string(text), other[0]) {
				t.Errorf("%s's view names %s:\n%s", p[0], other[0], text)
			}
		}
		if i == 1 && !strings.Contains(string(text), "call-id-matches") {
			t.Errorf("bob's view:\n%s", text)
		}
	}
}

// jsFixture is what the JavaScript participant needs of the refund case:
// its prompt, tools, output schema and the tools' canned results.
func jsFixture(t *testing.T) map[string]any {
	sc, err := samples.Lookup("refund")
	if err != nil {
		t.Fatal(err)
	}
	system, task := adapterstest.SDKPrompt(sc.Sources)
	results := map[string]string{}
	for _, turn := range sc.Script {
		for _, it := range turn.Items {
			if it.Name == "" {
				continue
			}
			var args any
			_ = json.Unmarshal(it.Arguments, &args)
			content, _ := sc.RunTool(context.Background(), it.Name, it.Arguments)
			key, _ := json.Marshal(args)
			results[it.Name+" "+string(key)] = content
		}
	}
	o := sc.Output.Sent()
	return map[string]any{"system": system, "task": task, "tools": sc.Tools, "results": results,
		"output": map[string]any{"name": o.Name, "schema": json.RawMessage(o.Schema)}}
}
