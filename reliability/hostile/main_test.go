// Package hostile is the reliability suite's hostile half: each test is an
// attack as a hostile upstream, client or file would make it, run against
// the real binary, and asserts the bound or the refusal modelwire
// promises. Each prints what it measured (peak RSS per attack) into one
// table at the end. The default run is sized for CI on two cores;
// MODELWIRE_RELIABILITY=long runs the heavy cases at full size
// (gigabyte bodies and streams).
package hostile

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// long is the full-size variant (MODELWIRE_RELIABILITY=long).
var long = os.Getenv("MODELWIRE_RELIABILITY") == "long"

// size picks the default or the long variant's figure.
func size(short, full int64) int64 {
	if long {
		return full
	}
	return short
}

// binPath is the modelwire binary the suite drives, built once.
var binPath string

func TestMain(m *testing.M) {
	flag.Parse()
	if f := flag.Lookup("test.list"); f != nil && f.Value.String() != "" {
		os.Exit(m.Run()) // listing tests (CI's fuzz loop) needs no binary
	}
	dir, err := os.MkdirTemp("", "modelwire-hostile-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binPath = filepath.Join(dir, "modelwire")
	build := exec.Command("go", "build", "-o", binPath, "../..")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building modelwire:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	printFigures()
	os.RemoveAll(dir)
	os.Exit(code)
}

// figure is one row of the table: the attack, what was measured.
type figure struct{ attack, measured string }

var (
	figMu   sync.Mutex
	figures []figure
)

// report adds a row to the table printed at the end.
func report(attack, format string, args ...any) {
	figMu.Lock()
	defer figMu.Unlock()
	figures = append(figures, figure{attack, fmt.Sprintf(format, args...)})
}

func printFigures() {
	if len(figures) == 0 {
		return
	}
	sort.Slice(figures, func(i, j int) bool { return figures[i].attack < figures[j].attack })
	fmt.Println("\n| attack | measured |\n|---|---|")
	for _, f := range figures {
		fmt.Printf("| %s | %s |\n", f.attack, f.measured)
	}
}

// peakRSS is a running process's peak resident set (VmHWM), in bytes; 0
// when it cannot be read (the process is gone).
func peakRSS(pid int) int64 {
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

// mib writes bytes as MiB for the table.
func mib(n int64) string { return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20)) }
