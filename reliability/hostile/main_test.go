// Package hostile is the reliability suite's hostile half: each test is an
// attack as a hostile upstream, client or file would make it, run against
// the real binary, and asserts the bound or the refusal modelwire
// promises. Each prints what it measured (peak RSS per attack) into one
// table at the end. The default run is sized for CI on two cores;
// MODELWIRE_RELIABILITY=long runs the heavy cases at full size
// (gigabyte bodies and streams).
package hostile

import (
	"fmt"
	"testing"

	"github.com/modelwire/modelwire/internal/suite"
)

// size picks the default or the long variant's figure.
var size = suite.Size[int64]

// binPath is the modelwire binary the suite drives, built once.
var binPath string

func TestMain(m *testing.M) {
	suite.Main(m, "../..", "modelwire-hostile-", &binPath, figures.Print)
}

// figures is the table printed at the end: the attack, what was measured.
var figures = suite.Figures{Columns: []string{"attack", "measured"}, Align: []string{"---", "---"}}

// report adds a row to the table printed at the end.
func report(attack, format string, args ...any) {
	figures.Add(attack, fmt.Sprintf(format, args...))
}

// mib writes bytes as MiB for the table.
func mib(n int64) string { return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20)) }
