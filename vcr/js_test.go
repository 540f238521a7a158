package vcr_test

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelwire/modelwire/internal/e2e"
)

// TestJavaScriptReplaysThroughServe: the official openai npm package
// (pinned in sim/jstest) runs a node:test suite (testdata/js, the README's
// example) through `modelwire serve --cassettes`: recorded from the
// simulator, then replayed with the simulator gone; the cassettes hold no
// key. It needs node and npm; without them it is skipped with a message.
func TestJavaScriptReplaysThroughServe(t *testing.T) {
	e2e.Require(t, "the JavaScript cassette check", "node", "npm")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dir := e2e.NPMDir(ctx, t, "../sim/jstest", "testdata/js/refund.test.mjs")
	bin := e2e.Binary(ctx, t)
	cassettes := filepath.Join(t.TempDir(), "cassettes")
	const key = "sk-js-cassette-key-0123456789abcdef"

	// serve starts `modelwire serve ARGS` and returns its base URL.
	serve := func(args ...string) (string, func()) {
		cmd := exec.CommandContext(ctx, bin, append([]string{"serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(t.TempDir(), "x.db")}, args...)...)
		stdout, _ := cmd.StdoutPipe()
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		stop := func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }
		first, err := bufio.NewReader(stdout).ReadString('\n')
		if err != nil {
			stop()
			t.Fatalf("reading the serve banner: %v", err)
		}
		return strings.Fields(first[strings.LastIndex(first, " on ")+4:])[0], stop
	}
	nodeTest := func(base string) {
		t.Helper()
		node := exec.CommandContext(ctx, "node", "--test", "refund.test.mjs")
		node.Dir = dir
		node.Env = append(os.Environ(), "MODELWIRE_URL="+base, "OPENAI_API_KEY="+key)
		if out, err := node.CombinedOutput(); err != nil || !strings.Contains(string(out), "# pass 2") {
			t.Fatalf("node --test against %s: %v\n%s", base, err, out)
		}
	}

	simURL, stopSim := serve()
	rec, stopRec := serve("--cassettes", cassettes, "--mode", "record", "--upstream", simURL)
	nodeTest(rec)
	stopRec()
	stopSim()

	for _, name := range []string{"refund-answer.jsonl", "refund-answer-streamed.jsonl"} {
		b, err := os.ReadFile(filepath.Join(cassettes, name))
		if err != nil {
			t.Fatalf("cassette %s: %v", name, err)
		}
		if strings.Contains(string(b), key) {
			t.Errorf("%s holds the key", name)
		}
	}
	play, stopPlay := serve("--cassettes", cassettes)
	defer stopPlay()
	nodeTest(play)
}
