// Package e2e decides whether an end-to-end test that needs an outside
// tool (tmux, node, npm) may skip. Locally a missing tool is a skip with a
// message; in CI (.ci/run exports MODELWIRE_REQUIRE_E2E=1) it is a
// failure, so a machine without the tool cannot turn the suite green by
// running less of it.
package e2e

import (
	"os"
	"os/exec"
	"testing"
)

// RequireEnv is the variable that turns the skips into failures.
const RequireEnv = "MODELWIRE_REQUIRE_E2E"

// Required reports whether end-to-end tests must run.
func Required() bool { return os.Getenv(RequireEnv) == "1" }

// Require skips t (or fails it when Required) unless every tool is on
// PATH and the run is not -short. what names the test's purpose for the
// message.
func Require(t testing.TB, what string, tools ...string) {
	t.Helper()
	stop := t.Skipf
	if Required() {
		stop = t.Fatalf
	}
	if testing.Short() {
		stop("%s: not run with -short (%s=1 requires it)", what, RequireEnv)
		return
	}
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			stop("%s needs %s, which is not on PATH (%s=1 requires it)", what, tool, RequireEnv)
			return
		}
	}
}
