package reliability

import (
	"database/sql"
	"fmt"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/modelwire/modelwire/internal/suite"
)

// size picks the default or the long variant's figure.
var size = suite.Size[int]

// binPath is the modelwire binary the suite drives, built once.
var binPath string

func TestMain(m *testing.M) {
	suite.Main(m, "..", "modelwire-reliability-", &binPath, figures.Print)
}

// The figures table: each test adds its rows; TestMain prints them once.
type figure struct {
	area, what string
	tried      int
	held       int
	lost       int
	note       string
}

var figures = suite.Figures{
	Title: func() string {
		variant := "default"
		if suite.Long() {
			variant = "long (MODELWIRE_RELIABILITY=long)"
		}
		return fmt.Sprintf("reliability figures, %s variant, %s/%s, %d CPUs", variant, runtime.GOOS, runtime.GOARCH, runtime.NumCPU())
	},
	Columns: []string{"area", "what", "tried", "held", "lost / found", "note"},
	Align:   []string{"---", "---", "---:", "---:", "---:", "---"},
}

func addFigure(f figure) {
	figures.Add(f.area, f.what, fmt.Sprint(f.tried), fmt.Sprint(f.held), fmt.Sprint(f.lost), f.note)
}

// runBin runs the binary with args and stdin, and returns its stdout,
// stderr and exit code.
func runBin(t *testing.T, stdin string, env []string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(binPath, args...)
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Env = suite.Env(t.TempDir(), env...)
	out, errs, code, err := suite.Output(cmd)
	if err != nil {
		t.Fatalf("running modelwire %v: %v", args, err)
	}
	return out, errs, code
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
