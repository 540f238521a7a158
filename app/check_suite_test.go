package app

import (
	"context"
	"os"
	"testing"

	"github.com/modelwire/modelwire/check"
	"github.com/modelwire/modelwire/store"
)

// TestCheckSuite: on the clean simulator every probe of the capability
// suite passes; with each probe's planted regression (a fault or variant
// that breaks its capability) that probe fails.
func TestCheckSuite(t *testing.T) {
	db := openTemp(t)
	eng := &Engine{DB: db, Version: "test", Source: store.SourceRun, Getenv: func(string) string { return "" }}
	target, err := ParseCheckTarget("sim", "")
	if err != nil {
		t.Fatal(err)
	}
	cells, err := eng.RunSuite(context.Background(), check.Probes, []CheckTarget{target}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv("CHECK_SHOW") != "" {
		check.WriteText(os.Stdout, cells)
	}
	for _, c := range cells {
		if c.Regressed {
			t.Errorf("clean simulator, probe %s: %v %s", c.Session, c.Regressions, c.Error)
		}
	}
	for _, p := range check.Probes {
		planted := p
		planted.Faults = p.PlantFaults
		if p.PlantScenario != "" {
			planted.Scenario = p.PlantScenario
		}
		cells, err := eng.RunSuite(context.Background(), []check.Probe{planted}, []CheckTarget{target}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if os.Getenv("CHECK_SHOW") != "" {
			check.WriteText(os.Stdout, cells)
		}
		if c := cells[0]; !c.Regressed {
			t.Errorf("probe %s with %v %s planted: not found (%s, capabilities %v)", p.Name, p.PlantFaults, p.PlantScenario, c.Status, c.Capabilities)
		}
	}
}
