package reliability

import (
	"database/sql"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"

	_ "modernc.org/sqlite"
)

// long is the full-size variant (MODELWIRE_RELIABILITY=long).
var long = os.Getenv("MODELWIRE_RELIABILITY") == "long"

// size picks the default or the long variant's figure.
func size(short, full int) int {
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
	dir, err := os.MkdirTemp("", "modelwire-reliability-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binPath = filepath.Join(dir, "modelwire")
	// go test puts its own go first on PATH.
	build := exec.Command("go", "build", "-o", binPath, "..")
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

// The figures table: each test adds its rows; TestMain prints them once.
type figure struct {
	area, what string
	tried      int
	held       int
	lost       int
	note       string
}

var (
	figMu   sync.Mutex
	figures []figure
)

func addFigure(f figure) {
	figMu.Lock()
	figures = append(figures, f)
	figMu.Unlock()
}

func printFigures() {
	figMu.Lock()
	defer figMu.Unlock()
	if len(figures) == 0 {
		return
	}
	sort.SliceStable(figures, func(i, j int) bool { return figures[i].area < figures[j].area })
	variant := "default"
	if long {
		variant = "long (MODELWIRE_RELIABILITY=long)"
	}
	fmt.Printf("\nreliability figures, %s variant, %s/%s, %d CPUs\n\n", variant, runtime.GOOS, runtime.GOARCH, runtime.NumCPU())
	fmt.Println("| area | what | tried | held | lost / found | note |")
	fmt.Println("|---|---|---:|---:|---:|---|")
	for _, f := range figures {
		fmt.Printf("| %s | %s | %d | %d | %d | %s |\n", f.area, f.what, f.tried, f.held, f.lost, strings.ReplaceAll(f.note, "|", "/"))
	}
	fmt.Println()
}

// runBin runs the binary with args and stdin, and returns its stdout,
// stderr and exit code.
func runBin(t *testing.T, stdin string, env []string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(binPath, args...)
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Env = append(baseEnv(t), env...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running modelwire %v: %v", args, err)
	}
	return out.String(), errb.String(), code
}

// baseEnv keeps the binary's state inside the test's directories, never
// the user's, and out of reach of a developer's OTel or provider settings.
func baseEnv(t *testing.T) []string {
	home := t.TempDir()
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "OTEL_") || strings.HasSuffix(k, "_API_KEY") || strings.HasSuffix(k, "_BASE_URL") ||
			k == "MODELWIRE_DB" || k == "HOME" || strings.HasPrefix(k, "XDG_") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "HOME="+home, "XDG_DATA_HOME="+filepath.Join(home, "data"), "XDG_STATE_HOME="+filepath.Join(home, "state"),
		"NO_COLOR=1")
}

// openSQL opens a SQLite file directly, as any other program would.
func openSQL(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// integrity runs PRAGMA integrity_check on a database file.
func integrity(t *testing.T, path string) string {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var res string
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&res); err != nil {
		return err.Error()
	}
	return res
}
