package ui

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelwire/modelwire/session"
)

// updating reports -update, the flag x/exp/golden (imported with teatest)
// defines: go test ./ui -run Golden -update rewrites the screens.
func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// golden compares a screen (ASCII profile, so plain text) with
// testdata/<name>.golden; -update rewrites it.
func golden(t *testing.T, name, screen string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	got := screenText(screen) + "\n"
	if updating() {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./ui -run Golden -update)", err)
	}
	if got != string(want) {
		gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Fatalf("%s differs at line %d:\n got  %q\n want %q\n\nscreen:\n%s", name, i+1, gl[i], wl[i], got)
			}
		}
		t.Fatalf("%s differs in length (%d lines, want %d):\n%s", name, len(gl), len(wl), got)
	}
}

func TestGoldenAssembled80x24(t *testing.T) {
	m := newHeld(t, 80, 24)
	m.setFocus(panelAssembly)
	golden(t, "assembled_80x24", m.View())
	m.setFocus(panelNotes)
	golden(t, "notes_80x24", m.View())
}

func TestGoldenStreaming80x24(t *testing.T) {
	m := newLive(t, 80, 24)
	ups := scriptedSession(t, m.d.scenario, m.d.rc)
	m.Update(updatesMsg{gen: m.gen, ups: ups[:20]}) // turn 1: reasoning closed, arguments streaming
	golden(t, "streaming_80x24", m.View())
}

func TestGoldenApproval120x40(t *testing.T) {
	m := newLive(t, 120, 40)
	ups := scriptedSession(t, m.d.scenario, m.d.rc)
	for i, u := range ups {
		if u.Kind == session.UpProposal {
			m.Update(updatesMsg{gen: m.gen, ups: ups[:i+1]})
			ask(m, *u.Proposal)
			break
		}
	}
	golden(t, "approval_120x40", m.View())
}

func TestGoldenValidated120x40(t *testing.T) {
	m := newLive(t, 120, 40)
	m.Update(updatesMsg{gen: m.gen, ups: scriptedSession(t, m.d.scenario, m.d.rc)})
	m.Update(pauseMsg{gen: m.gen, step: session.StepValidated, reply: make(chan struct{}, 1)})
	golden(t, "validated_120x40", m.View())
	m.Update(updatesMsg{gen: m.gen}) // nothing
	press(m, "w")
	golden(t, "wire_120x40", m.View())
}

func TestGoldenCompare120x40(t *testing.T) {
	m := newLive(t, 120, 40)
	press(m, "c")
	golden(t, "compare_120x40", m.View())
}
