package bench

import (
	"bufio"
	"bytes"
	"context"
	"debug/elf"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// startRuns is how many times each command is started; the median is
// reported, as hyperfine does, after warm-up runs that fill the page cache.
const startRuns, startWarmup = 30, 3

// startupRows times whole processes: `modelwire version` and `modelwire
// decode --summary` of a small capture, against starting /bin/true (what
// any process costs here), and sums the package initialisation times the
// runtime reports (GODEBUG=inittrace=1), naming the slowest packages.
func startupRows(ctx context.Context, o Options) ([]Row, error) {
	if o.Exe == "" {
		return nil, nil
	}
	dir, err := os.MkdirTemp("", "modelwire-bench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	// The proxy rows' Chat stream (see chatProtocol), so the decode row
	// measures the stream it always has.
	small, err := Capture(chatProtocol(), 16<<10)
	if err != nil {
		return nil, err
	}
	capture := filepath.Join(dir, "small.sse")
	if err := os.WriteFile(capture, small, 0o644); err != nil {
		return nil, err
	}
	// A database path of its own, so no command touches the user's.
	env := append(os.Environ(), "MODELWIRE_DB="+filepath.Join(dir, "bench.db"))

	o.progress("startup: /bin/true ×%d", startRuns)
	floor, err := medianRun(ctx, env, "/bin/true")
	if err != nil {
		floor = math.NaN() // no /bin/true: the row keeps its absolute target
	}
	var rows []Row
	for _, c := range []struct {
		name string
		args []string
	}{
		{"modelwire version", []string{"version"}},
		{"modelwire decode (16 KB)", []string{"decode", "--protocol", chatProtocol(), "--summary", capture}},
	} {
		o.progress("startup: %s ×%d", c.name, startRuns)
		ms, err := medianRun(ctx, env, o.Exe, c.args...)
		if err != nil {
			return rows, fmt.Errorf("%s: %w", c.name, err)
		}
		rows = append(rows, Row{Group: "startup", Path: c.name + " (median)", Unit: "ms", Ours: ms,
			RefName: "/bin/true", Ref: floor, Ratio: ms / floor, Target: "≤ 20 ms", Checked: true, Met: ms <= 20,
			Note: exeNote(o.Exe)})
	}
	initMS, top, err := initTrace(ctx, env, o.Exe)
	if err != nil {
		return rows, err
	}
	rows = append(rows, Row{Group: "startup", Path: "package init (inittrace)", Unit: "ms", Ours: initMS, Ratio: math.NaN(),
		Target: "where start-up goes", Note: top})
	return rows, nil
}

// medianRun starts name with args startRuns times and returns the median
// wall time in ms.
func medianRun(ctx context.Context, env []string, name string, args ...string) (float64, error) {
	var ts []time.Duration
	for i := range startWarmup + startRuns {
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Env = env
		t := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			return 0, fmt.Errorf("%v: %s", err, firstLine(out))
		}
		if i >= startWarmup {
			ts = append(ts, time.Since(t))
		}
	}
	slices.Sort(ts)
	return float64(percentile(ts, 50).Microseconds()) / 1000, nil
}

// initTrace runs `version` with GODEBUG=inittrace=1 and returns the sum of
// the package init clock times and the three slowest packages.
func initTrace(ctx context.Context, env []string, exe string) (float64, string, error) {
	cmd := exec.CommandContext(ctx, exe, "version")
	cmd.Env = append(env, "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return 0, "", fmt.Errorf("version with inittrace: %v", err)
	}
	type pkg struct {
		name string
		ms   float64
	}
	var pkgs []pkg
	total := 0.0
	sc := bufio.NewScanner(&stderr)
	for sc.Scan() {
		// init github.com/x/y @22 ms, 0.24 ms clock, 16976 bytes, 30 allocs
		f := strings.Fields(sc.Text())
		if len(f) < 7 || f[0] != "init" || f[6] != "clock," {
			continue
		}
		ms, err := strconv.ParseFloat(f[4], 64)
		if err != nil {
			continue
		}
		total += ms
		pkgs = append(pkgs, pkg{f[1], ms})
	}
	slices.SortFunc(pkgs, func(a, b pkg) int { return int(math.Copysign(1, b.ms-a.ms)) })
	var top []string
	for _, p := range pkgs[:min(3, len(pkgs))] {
		// The last two path elements name a package well enough
		// (chroma/v2/lexers → v2/lexers is less clear than chroma/lexers).
		parts := strings.Split(p.name, "/")
		parts = slices.DeleteFunc(parts, func(s string) bool { return len(s) == 2 && s[0] == 'v' && s[1] >= '0' && s[1] <= '9' })
		name := strings.Join(parts[max(0, len(parts)-2):], "/")
		top = append(top, fmt.Sprintf("%s %.1f", name, p.ms))
	}
	return total, "slowest: " + strings.Join(top, ", "), nil
}

// exeNote names the binary timed, its size and its linking: start-up grows
// with the size, and a dynamically linked binary (cgo on, as go build does
// where a C compiler is installed) first loads libc.
func exeNote(exe string) string {
	st, err := os.Stat(exe)
	if err != nil {
		return filepath.Base(exe)
	}
	return fmt.Sprintf("%s, %d MB, %s", filepath.Base(exe), st.Size()>>20, linking(exe))
}

// linking says whether an ELF binary asks for a dynamic loader.
func linking(exe string) string {
	f, err := elf.Open(exe)
	if err != nil {
		return "not ELF"
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return "dynamically linked (CGO_ENABLED=0 builds it static)"
		}
	}
	return "static"
}

func firstLine(b []byte) string {
	s, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	return s
}
