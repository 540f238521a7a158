package samples

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/modelwire/modelwire/session"
)

// MaxServedScenario bounds a scenario file a client names over the
// network: the simulator reads no more of it than this.
const MaxServedScenario = 1 << 20

// LookupIn resolves a scenario a client names over the network (the
// simulator's X-Modelwire-Scenario header): a built-in by name
// ("refund/fenced"), or, when dir is set, a regular file inside dir named
// by a local relative path ("mine.json"). Never an arbitrary path: an
// absolute path, "..", a symlink that leads out of dir, a FIFO or device,
// or a file over MaxServedScenario is refused before anything is read, so
// a client learns nothing of the server's files outside dir and cannot
// pin a thread on a pipe.
func LookupIn(dir string) func(name string) (*session.Scenario, error) {
	return func(name string) (*session.Scenario, error) {
		if name == "" {
			return nil, fmt.Errorf("empty scenario name")
		}
		base, variant, _ := strings.Cut(name, "/")
		if !strings.ContainsAny(base, `.\`) {
			if _, err := files.ReadFile(base + ".json"); err == nil {
				return load(base, variant)
			}
		}
		if dir == "" {
			return nil, fmt.Errorf("unknown scenario %q: a request may name a built-in scenario (%s); files need `serve --scenarios DIR`", name, strings.Join(Names(), ", "))
		}
		return loadInside(dir, name)
	}
}

// loadInside reads name as a scenario file inside dir, through an
// os.Root so that no path or symlink escapes it.
func loadInside(dir, name string) (*session.Scenario, error) {
	if filepath.IsAbs(name) || !filepath.IsLocal(name) || strings.Contains(name, `\`) {
		return nil, fmt.Errorf("scenario %q: not a relative path inside the scenarios directory", name)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("scenarios directory: %v", err)
	}
	defer root.Close()
	notFound := fmt.Errorf("scenario %q: no such scenario file in the scenarios directory", name)
	st, err := root.Stat(name)
	if err != nil {
		if strings.Contains(err.Error(), "escapes") {
			return nil, fmt.Errorf("scenario %q: leads out of the scenarios directory", name)
		}
		return nil, notFound
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("scenario %q: not a regular file", name)
	}
	if st.Size() > MaxServedScenario {
		return nil, fmt.Errorf("scenario %q: larger than %d KiB", name, MaxServedScenario>>10)
	}
	f, err := root.Open(name)
	if err != nil {
		return nil, notFound
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() { // swapped since the Stat
		return nil, fmt.Errorf("scenario %q: not a regular file", name)
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxServedScenario+1))
	if err != nil || len(b) > MaxServedScenario {
		return nil, fmt.Errorf("scenario %q: unreadable or larger than %d KiB", name, MaxServedScenario>>10)
	}
	return session.ParseScenario(name, b, "")
}
