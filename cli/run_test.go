package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelwire/modelwire/adapters/registry"
	"github.com/modelwire/modelwire/samples"
)

// runJSON runs `modelwire run … --json` in-process and returns the exit
// code and the JSON lines.
func runJSON(t *testing.T, args ...string) (int, []map[string]any, string) {
	t.Helper()
	var out, errb bytes.Buffer
	db := filepath.Join(t.TempDir(), "mw.db")
	code := Main(append([]string{"run", "--db", db, "--json"}, args...), strings.NewReader(""), &out, &errb)
	var lines []map[string]any
	sc := bufio.NewScanner(&out)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("stdout line is not JSON: %q", sc.Text())
		}
		lines = append(lines, m)
	}
	return code, lines, errb.String()
}

func sessionResult(t *testing.T, lines []map[string]any) map[string]any {
	t.Helper()
	if len(lines) == 0 {
		t.Fatal("no output")
	}
	last := lines[len(lines)-1]
	if last["type"] != "session.result" {
		t.Fatalf("last line is %v, want session.result", last["type"])
	}
	return last
}

func layerStatus(res map[string]any) map[string]string {
	out := map[string]string{}
	for _, l := range res["validation"].([]any) {
		m := l.(map[string]any)
		out[m["layer"].(string)] = m["status"].(string)
	}
	return out
}

func firstFailed(res map[string]any) string {
	for _, l := range res["validation"].([]any) {
		m := l.(map[string]any)
		if m["status"] == "fail" {
			return m["layer"].(string)
		}
	}
	return ""
}

// For every protocol, the refund case passes all five layers with a cap of
// 13000 and decision needs_review, streaming and not.
func TestRunRefundEveryProtocol(t *testing.T) {
	for _, p := range registry.Protocols {
		for _, stream := range []string{"--stream", "--no-stream"} {
			t.Run(p+stream, func(t *testing.T) {
				code, lines, stderr := runJSON(t, "--protocol", p, "--approve", "auto", stream)
				res := sessionResult(t, lines)
				if code != 0 {
					t.Fatalf("exit %d, stderr %s, validation %v", code, stderr, res["validation"])
				}
				for _, l := range []string{"transport", "protocol", "parse", "schema", "domain"} {
					if layerStatus(res)[l] != "pass" {
						t.Fatalf("layer %s: %v", l, res["validation"])
					}
				}
				out := res["output"].(map[string]any)
				if out["max_refund_cents"] != float64(13000) || out["decision"] != "needs_review" {
					t.Fatalf("output %v", out)
				}
				var decisions, results int
				for _, l := range lines {
					switch l["type"] {
					case "tool.decision":
						decisions++
						if l["decision"] != "approved" {
							t.Errorf("decision %v", l)
						}
					case "tool.result":
						results++
					}
					if l["type"] != "session.result" && l["type"] != "tool.decision" && l["type"] != "tool.result" {
						if _, ok := l["turn"]; !ok {
							t.Fatalf("canonical event without turn: %v", l)
						}
					}
				}
				if decisions != 3 || results != 3 {
					t.Fatalf("%d decisions and %d results, want 3 and 3", decisions, results)
				}
			})
		}
	}
}

// Both stateful protocols carry the refund case to five passing layers
// when each request chains on the previous response's id.
func TestRunChainedHistory(t *testing.T) {
	for _, p := range []string{"openai-responses", "gemini-interactions"} {
		for _, stream := range []string{"--stream", "--no-stream"} {
			t.Run(p+stream, func(t *testing.T) {
				code, lines, stderr := runJSON(t, "--protocol", p, "--history", "previous-response-id", "--approve", "auto", stream)
				if res := sessionResult(t, lines); code != 0 || firstFailed(res) != "" {
					t.Fatalf("exit %d, stderr %s, validation %v", code, stderr, res["validation"])
				}
			})
		}
	}
}

// Each variant fails at its own layer (or passes, for the ones that teach
// something else), on every protocol.
func TestRunVariantsFailAtTheirLayer(t *testing.T) {
	base, err := samples.Lookup("refund")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range registry.Protocols {
		for _, v := range base.VariantNames() {
			want := base.Variants[v].FailsAt
			t.Run(p+"/"+v, func(t *testing.T) {
				code, lines, stderr := runJSON(t, "--protocol", p, "--approve", "auto", "--scenario", "refund/"+v)
				res := sessionResult(t, lines)
				if got := firstFailed(res); got != want {
					t.Fatalf("first failing layer %q, want %q: %v (stderr %s)", got, want, res["validation"], stderr)
				}
				wantCode := 1
				if want == "" {
					wantCode = 0
				}
				if code != wantCode {
					t.Fatalf("exit %d, want %d", code, wantCode)
				}
			})
		}
	}
}

func TestRunRateLimitPassesAfterRetry(t *testing.T) {
	for _, p := range registry.Protocols {
		t.Run(p, func(t *testing.T) {
			code, lines, stderr := runJSON(t, "--protocol", p, "--approve", "auto", "--fault", "rate-limit")
			res := sessionResult(t, lines)
			if code != 0 {
				t.Fatalf("exit %d: %v %s", code, res["validation"], stderr)
			}
			transport := res["validation"].([]any)[0].(map[string]any)
			if !strings.Contains(fmt.Sprint(transport["detail"]), "429") {
				t.Fatalf("transport detail does not mention the retry: %v", transport)
			}
		})
	}
}

func TestRunDisconnectMidArgsRunsNoTool(t *testing.T) {
	for _, p := range registry.Protocols {
		t.Run(p, func(t *testing.T) {
			code, lines, _ := runJSON(t, "--protocol", p, "--approve", "auto", "--fault", "disconnect-mid-args")
			res := sessionResult(t, lines)
			if code != 1 {
				t.Fatalf("exit %d", code)
			}
			if layerStatus(res)["protocol"] != "fail" {
				t.Fatalf("protocol layer: %v", res["validation"])
			}
			for _, l := range lines {
				if l["type"] == "tool.result" || l["type"] == "tool.proposed" {
					t.Fatalf("a tool was proposed or run after a cut stream: %v", l)
				}
			}
		})
	}
}

func TestRunManualWithoutTerminalIsUsageError(t *testing.T) {
	var out, errb bytes.Buffer
	code := Main([]string{"run", "--db", filepath.Join(t.TempDir(), "x.db")}, strings.NewReader(""), &out, &errb)
	if code != 2 || !strings.Contains(errb.String(), "--approve auto") {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
	if out.Len() != 0 {
		t.Fatalf("stdout not empty: %q", out.String())
	}
}

// TestHelperMain is modelwire's main for tests that need a process of its
// own (standard output a real pipe): it runs only when
// MODELWIRE_HELPER_MAIN is set, with the arguments after "--".
func TestHelperMain(t *testing.T) {
	if os.Getenv("MODELWIRE_HELPER_MAIN") == "" {
		t.Skip("a helper process for other tests")
	}
	args := os.Args
	for i, a := range args {
		if a == "--" {
			args = args[i+1:]
			break
		}
	}
	os.Exit(Main(args, os.Stdin, os.Stdout, os.Stderr))
}

// startModelwire starts `modelwire args…` as a process of its own, its
// standard output a pipe to read, its standard error collected.
func startModelwire(t *testing.T, args ...string) (*exec.Cmd, io.ReadCloser, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestHelperMain$", "--"}, args...)...)
	cmd.Env = append(os.Environ(), "MODELWIRE_HELPER_MAIN=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	return cmd, stdout, &stderr
}

// `modelwire run --json | head -c 300`: the reader goes away after the
// first events. The run stops as on Ctrl-C, says why, and keeps what it
// recorded; it used to die of SIGPIPE at the next write, leaving a session
// with no events.
func TestRunIntoAClosedPipeKeepsTheSession(t *testing.T) {
	db := filepath.Join(t.TempDir(), "mw.db")
	// Paced, so that the run is still going when the reader leaves: its
	// whole output (21 KB) fits in a pipe's buffer.
	cmd, stdout, stderr := startModelwire(t, "run", "--db", db, "--approve", "auto", "--json", "--pace", "50")
	if _, err := io.ReadFull(stdout, make([]byte, 300)); err != nil {
		t.Fatal(err)
	}
	stdout.Close()
	err := cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != ExitFailed {
		t.Fatalf("exit: %v (want status %d); stderr: %s", err, ExitFailed, stderr.String())
	}
	if !strings.Contains(stderr.String(), "the output was closed") {
		t.Errorf("stderr does not say why the run stopped: %q", stderr.String())
	}
	var out, errb bytes.Buffer
	if code := Main([]string{"sessions", "--db", db, "--json"}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("sessions: exit %d: %s", code, errb.String())
	}
	var s struct {
		Status string
		Events int
	}
	if err := json.Unmarshal(bytes.TrimSpace(out.Bytes()), &s); err != nil {
		t.Fatalf("sessions --json: %v: %s", err, out.String())
	}
	if s.Status != "failed" || s.Events == 0 {
		t.Errorf("the session: status %q with %d events, want failed with the events recorded", s.Status, s.Events)
	}
}
