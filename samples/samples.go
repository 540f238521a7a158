// Package samples holds the scenarios that ship with modelwire, as data
// embedded in the binary, plus the few parts of them that are computed in
// Go (the refund case's tools read its backend snapshot; its domain checks
// recompute the cap from what the tools returned).
package samples

import (
	"embed"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/modelwire/modelwire/session"
)

//go:embed *.json
var files embed.FS

// computed adds the Go parts of a built-in scenario by name.
var computed = map[string]func(*session.Scenario) error{
	"refund": wireRefund,
}

// Names lists the built-in scenarios with their variants ("refund",
// "refund/wrong-cap", …).
func Names() []string {
	entries, _ := files.ReadDir(".")
	var out []string
	for _, e := range entries {
		name := strings.TrimSuffix(e.Name(), ".json")
		sc, err := load(name, "")
		if err != nil {
			continue
		}
		out = append(out, name)
		for _, v := range sc.VariantNames() {
			out = append(out, name+"/"+v)
		}
	}
	sort.Strings(out)
	return out
}

// Lookup loads a scenario by name — "refund", "refund/<variant>" — or from
// a file path (anything with a path separator or a .json suffix).
func Lookup(name string) (*session.Scenario, error) {
	if name == "" {
		name = "refund"
	}
	if strings.HasSuffix(name, ".json") || strings.ContainsRune(name, os.PathSeparator) {
		if _, err := os.Stat(name); err == nil {
			return session.LoadScenarioFile(name, "")
		}
	}
	base, variant, _ := strings.Cut(name, "/")
	if _, err := files.ReadFile(base + ".json"); err != nil {
		if strings.HasSuffix(name, ".json") {
			return nil, fmt.Errorf("cannot read scenario file %s", name)
		}
		return nil, fmt.Errorf("unknown scenario %q (built in: %s; or a path to a scenario file)", name, strings.Join(Names(), ", "))
	}
	return load(base, variant)
}

func load(base, variant string) (*session.Scenario, error) {
	data, err := files.ReadFile(base + ".json")
	if err != nil {
		return nil, err
	}
	sc, err := session.ParseScenario("samples/"+base+".json", data, variant)
	if err != nil {
		return nil, err
	}
	if wire := computed[base]; wire != nil {
		if err := wire(sc); err != nil {
			return nil, fmt.Errorf("samples/%s.json: %v", base, err)
		}
	}
	return sc, nil
}
