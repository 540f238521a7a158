package workshop_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelwire/modelwire/samples"
	"github.com/modelwire/modelwire/workshop"
)

func scenarioExists(name string) error { _, err := samples.Lookup(name); return err }

// TestBuiltinExercises: the three refund exercises load, every check
// compiles and cites a section, in both languages.
func TestBuiltinExercises(t *testing.T) {
	names := workshop.Names()
	if strings.Join(names, ",") != "refund-1,refund-2,refund-3" {
		t.Fatalf("built in: %v", names)
	}
	for _, n := range names {
		ex, err := workshop.Lookup(n, scenarioExists)
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range ex.Steps {
			for _, c := range st.Checks {
				if c.Hint.ZH == "" || c.Hint.EN == "" || !strings.HasPrefix(c.Section, "13.") {
					t.Errorf("%s/%s/%s: hint or section missing", n, st.ID, c.ID)
				}
			}
		}
	}
	if _, err := workshop.Lookup("refund-9", scenarioExists); err == nil || !strings.Contains(err.Error(), "refund-1") {
		t.Errorf("an unknown exercise: %v", err)
	}
}

const good = `{
  "name": "mine",
  "title": {"zh": "练习", "en": "Exercise"},
  "scenario": "refund",
  "steps": [
    {
      "id": "first",
      "turn": 0,
      "title": {"zh": "第一轮", "en": "First"},
      "checks": [
        {"id": "tools", "expr": "len(tools) > 0", "section": "13.6.3", "hint": {"zh": "给工具", "en": "offer tools"}}
      ]
    },
    {
      "id": "second",
      "turn": 1,
      "title": {"zh": "第二轮", "en": "Second"},
      "checks": [
        {"id": "ids", "expr": "all(results, .call_id != \"\")", "section": "13.2.8", "hint": {"zh": "带 call_id", "en": "send call_id"}}
      ]
    }
  ]
}
`

// TestExerciseFileErrors: each kind of mistake in an exercise file is one
// error naming the file, the JSON pointer and the line.
func TestExerciseFileErrors(t *testing.T) {
	if _, err := workshop.Parse("mine.json", []byte(good), scenarioExists); err != nil {
		t.Fatalf("the good file: %v", err)
	}
	cases := []struct {
		name, find, replace, want string
	}{
		{"missing field", `"scenario": "refund",`, ``, `mine.json: /: `},
		{"wrong type", `"turn": 1,`, `"turn": "1",`, `mine.json:16: /steps/1/turn: `},
		{"unknown field", `"turn": 0,`, `"turn": 0, "turns": 2,`, `/steps/0`},
		{"section pattern", `"section": "13.2.8"`, `"section": "chapter 13"`, `mine.json:19: /steps/1/checks/0/section: `},
		{"missing hint language", `"en": "send call_id"`, `"fr": "x"`, `/steps/1/checks/0/hint`},
		{"duplicate step", `"id": "second"`, `"id": "first"`, `mine.json:15: /steps/1/id: step id "first" is used twice`},
		{"turn order", `"turn": 1,`, `"turn": 0,`, `mine.json:16: /steps/1/turn: turn 0 does not follow`},
		{"expr does not compile", `len(tools) > 0`, `len(tools) >`, `mine.json:11: /steps/0/checks/0/expr: does not compile`},
		{"unknown scenario", `"scenario": "refund"`, `"scenario": "nowhere"`, `mine.json:4: /scenario: `},
		{"not JSON", `"steps": [`, `"steps": [,`, `mine.json: /: `},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			doc := strings.Replace(good, c.find, c.replace, 1)
			if doc == good {
				t.Fatal("the edit did not apply")
			}
			_, err := workshop.Parse("mine.json", []byte(doc), scenarioExists)
			var we *workshop.Error
			if !errors.As(err, &we) {
				t.Fatalf("error %v is not a *workshop.Error", err)
			}
			if !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q, want it to contain %q on one line", err, c.want)
			}
		})
	}
	if _, err := workshop.Parse("bad.json", []byte{'{', 0xff, '}'}, nil); err == nil || !strings.Contains(err.Error(), "UTF-8") {
		t.Errorf("not UTF-8: %v", err)
	}
	dir := t.TempDir()
	if _, err := workshop.LoadFile(filepath.Join(dir, "none.json"), nil); err == nil || !strings.Contains(err.Error(), "cannot read") {
		t.Errorf("a missing file: %v", err)
	}
	big := filepath.Join(dir, "big.json")
	if err := os.WriteFile(big, []byte(fmt.Sprintf(`{"name":%q}`, strings.Repeat("x", 2<<20))), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := workshop.LoadFile(big, nil); err == nil || !strings.Contains(err.Error(), "not an exercise") {
		t.Errorf("a huge file: %v", err)
	}
}
