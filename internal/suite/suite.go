// Package suite is what the reliability suites (reliability and
// reliability/hostile) share: the TestMain that builds the binary they
// drive, the long variant's switch, the figures table printed at the end,
// a clean environment for the binary, starting a long-running command and
// reading its banner, exit codes, peak RSS and an OTLP sink. It imports
// nothing of the module.
package suite

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Long reports the full-size variant (MODELWIRE_RELIABILITY=long).
func Long() bool { return os.Getenv("MODELWIRE_RELIABILITY") == "long" }

// Size picks the default or the long variant's figure.
func Size[N ~int | ~int64](short, full N) N {
	if Long() {
		return full
	}
	return short
}

// BuildBinary builds the modelwire binary from the module root
// (moduleRootRel, relative to the test's directory) into a new temporary
// directory named after prefix. cleanup removes it.
func BuildBinary(moduleRootRel, prefix string) (path string, cleanup func(), err error) {
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return "", nil, err
	}
	cleanup = func() { os.RemoveAll(dir) }
	path = filepath.Join(dir, "modelwire")
	// go test puts its own go first on PATH.
	build := exec.Command("go", "build", "-o", path, moduleRootRel)
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		cleanup()
		return "", nil, fmt.Errorf("building modelwire: %w", err)
	}
	return path, cleanup, nil
}

// Main is a suite's TestMain: it builds the binary into *bin, runs the
// tests, calls after (the figures table) and exits. Listing the tests
// (CI's fuzz loop) needs no binary and builds none.
func Main(m *testing.M, moduleRootRel, prefix string, bin *string, after func()) {
	flag.Parse()
	if f := flag.Lookup("test.list"); f != nil && f.Value.String() != "" {
		os.Exit(m.Run())
	}
	path, cleanup, err := BuildBinary(moduleRootRel, prefix)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	*bin = path
	code := m.Run()
	if after != nil {
		after()
	}
	cleanup()
	os.Exit(code)
}

// Figures is the table each test adds its rows to and TestMain prints
// once, in the order of the first column.
type Figures struct {
	Title   func() string // the line above the table; nil: none
	Columns []string
	Align   []string // each column's markdown alignment row cell ("---", "---:")

	mu   sync.Mutex
	rows [][]string
}

// Add adds a row; safe from any goroutine.
func (f *Figures) Add(cells ...string) {
	f.mu.Lock()
	f.rows = append(f.rows, cells)
	f.mu.Unlock()
}

// Print writes the table to standard output; nothing when it has no rows.
func (f *Figures) Print() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.rows) == 0 {
		return
	}
	sort.SliceStable(f.rows, func(i, j int) bool { return f.rows[i][0] < f.rows[j][0] })
	fmt.Println()
	if f.Title != nil {
		fmt.Println(f.Title())
		fmt.Println()
	}
	fmt.Println("| " + strings.Join(f.Columns, " | ") + " |")
	fmt.Println("|" + strings.Join(f.Align, "|") + "|")
	for _, r := range f.rows {
		cells := make([]string, len(r))
		for i, c := range r {
			cells[i] = strings.ReplaceAll(c, "|", "/")
		}
		fmt.Println("| " + strings.Join(cells, " | ") + " |")
	}
	fmt.Println()
}

// Env keeps the binary's state inside home, never the user's, and out of
// reach of a developer's OTel or provider settings; extra is appended.
func Env(home string, extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "OTEL_") || strings.HasSuffix(k, "_API_KEY") || strings.HasSuffix(k, "_BASE_URL") ||
			k == "MODELWIRE_DB" || k == "HOME" || strings.HasPrefix(k, "XDG_") {
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "HOME="+home, "XDG_DATA_HOME="+filepath.Join(home, "data"), "XDG_STATE_HOME="+filepath.Join(home, "state"),
		"NO_COLOR=1")
	return append(env, extra...)
}

// ExitCode is the exit code a finished command's error carries: 0 for
// nil, the code for an exit status, and err itself when the command did
// not run or was not waited for.
func ExitCode(err error) (int, error) {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), nil
	}
	return 0, err
}

// Start starts cmd (its Stdout unset) and reads its standard output up to
// the first line that begins with banner ("": the first line). It returns
// that line after the banner, without its line end, and the rest of the
// output, which the caller drains. When no such line comes, it kills the
// process, waits for it and returns the error.
func Start(cmd *exec.Cmd, banner string) (line string, rest *bufio.Reader, err error) {
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	br := bufio.NewReader(out)
	var seen strings.Builder
	for {
		l, err := br.ReadString('\n')
		seen.WriteString(l)
		if after, ok := strings.CutPrefix(strings.TrimRight(l, "\r\n"), banner); ok && (l != "" || err == nil) {
			return after, br, nil
		}
		if err != nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			return "", nil, fmt.Errorf("no line starting with %q in its output %q: %w", banner, seen.String(), err)
		}
	}
}

// PeakRSS is a running process's peak resident set (VmHWM), in bytes; 0
// when it cannot be read (the process is gone).
func PeakRSS(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}

// Sink keeps the raw bodies an OTLP/HTTP endpoint is sent.
type Sink struct {
	Mu   sync.Mutex
	Body bytes.Buffer
	N    int
}

func (s *Sink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	s.Mu.Lock()
	s.Body.Write(b)
	s.N++
	s.Mu.Unlock()
	w.Header().Set("Content-Type", "application/x-protobuf")
}

// Output runs cmd to its end and returns its standard output and error,
// its exit code and, when it did not run, the error.
func Output(cmd *exec.Cmd) (stdout, stderr string, code int, err error) {
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	code, err = ExitCode(cmd.Run())
	return out.String(), errb.String(), code, err
}

// Tmux is a tmux server of its own (its socket in a test's directory),
// for a test to look at a terminal program's screen.
type Tmux struct{ sock string }

// NewTmux is a server whose socket is in dir; nothing runs until a
// command starts it.
func NewTmux(dir string) *Tmux { return &Tmux{sock: filepath.Join(dir, "tmux.sock")} }

// Run runs a tmux command on the server and returns what it printed.
func (x *Tmux) Run(args ...string) string {
	out, _ := exec.Command("tmux", append([]string{"-S", x.sock}, args...)...).CombinedOutput()
	return string(out)
}

// Poll captures pane's screen every 200ms until ok holds or d passes; it
// returns the last screen and whether ok held.
func (x *Tmux) Poll(pane string, ok func(string) bool, d time.Duration) (string, bool) {
	var screen string
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if screen = x.Run("capture-pane", "-p", "-t", pane); ok(screen) {
			return screen, true
		}
	}
	return screen, false
}

// PeakWhile samples a running process's VmHWM every 10 ms until done is
// closed, and returns the highest it saw. A child's rusage maxrss is no
// measure of the child: Linux carries the parent's high-water mark across
// fork and exec, so a test process holding a gigabyte reports a gigabyte
// for every command it runs.
func PeakWhile(pid int, done <-chan struct{}) int64 {
	var peak int64
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for {
		peak = max(peak, PeakRSS(pid))
		select {
		case <-done:
			return peak
		case <-t.C:
		}
	}
}
