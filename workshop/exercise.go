// Package workshop is modelwire's workshop mode: exercises as data (a
// scenario, the steps a participant's program must take, and checks on
// each request it sends, written as the scenarios' domain checks are, in
// expr over the request read canonically), the grading of each request as
// it arrives, and the room: every participant's grades, hints and
// recorded session, each seen only by its own participant (and the
// teacher's room view).
package workshop

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/expr-lang/expr/vm"

	"github.com/modelwire/modelwire/jsonschema"
	"github.com/modelwire/modelwire/session"
)

// Text is a text in Chinese and in English.
type Text struct {
	ZH string `json:"zh"`
	EN string `json:"en"`
}

// Exercise is one exercise file.
type Exercise struct {
	Name  string `json:"name"`
	Title Text   `json:"title"`
	Intro Text   `json:"intro"`
	// Scenario answers the participants' requests (a built-in name such
	// as refund, or a scenario file's path).
	Scenario string `json:"scenario"`
	Steps    []Step `json:"steps"`
	File     string `json:"-"`
}

// Step is what a participant's program must send at one model turn.
type Step struct {
	ID string `json:"id"`
	// Turn is the model turns the request's history carries (0: the
	// first request).
	Turn  int  `json:"turn"`
	Title Text `json:"title"`
	// Expect is the shape the request should have, shown beside a
	// failing one.
	Expect string  `json:"expect,omitempty"`
	Checks []Check `json:"checks"`
}

// Check is one expression over the request that must hold, and what to
// tell a participant when it does not.
type Check struct {
	ID      string `json:"id"`
	Expr    string `json:"expr"`
	Section string `json:"section"` // the chapter's section its hint cites
	Hint    Text   `json:"hint"`
	prog    *vm.Program
}

// Error names the file, the JSON pointer (and its line, when known) and
// what is wrong.
type Error struct {
	File    string
	Pointer string
	Line    int
	Problem string
}

func (e *Error) Error() string {
	p := e.Pointer
	if p == "" {
		p = "/"
	}
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s: %s", e.File, e.Line, p, e.Problem)
	}
	return fmt.Sprintf("%s: %s: %s", e.File, p, e.Problem)
}

//go:embed exercise.schema.json
var schemaJSON []byte

//go:embed exercises/*.json
var builtin embed.FS

var fileSchema = sync.OnceValue(func() *jsonschema.Schema {
	s, err := jsonschema.CompileSchema(schemaJSON)
	if err != nil {
		panic("exercise.schema.json: " + err.Error()) // a build bug, caught by every test
	}
	return s
})

// maxFile bounds an exercise file: a real one is a few kilobytes.
const maxFile = 1 << 20

// Names lists the built-in exercises.
func Names() []string {
	entries, _ := builtin.ReadDir("exercises")
	var out []string
	for _, e := range entries {
		out = append(out, strings.TrimSuffix(e.Name(), ".json"))
	}
	slices.Sort(out)
	return out
}

// Lookup is a built-in exercise by name, or an exercise file by path
// (anything ending in .json). scenarioExists says whether an exercise's
// scenario can be loaded.
func Lookup(name string, scenarioExists func(string) error) (*Exercise, error) {
	if strings.HasSuffix(name, ".json") {
		return LoadFile(name, scenarioExists)
	}
	data, err := builtin.ReadFile(path.Join("exercises", name+".json"))
	if err != nil {
		return nil, fmt.Errorf("no exercise %q (built in: %s; or a .json file)", name, strings.Join(Names(), ", "))
	}
	return Parse(name, data, scenarioExists)
}

// LoadFile reads and checks an exercise file.
func LoadFile(file string, scenarioExists func(string) error) (*Exercise, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, &Error{File: file, Problem: "cannot read: " + err.Error()}
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxFile+1))
	if err != nil {
		return nil, &Error{File: file, Problem: "cannot read: " + err.Error()}
	}
	if len(data) > maxFile {
		return nil, &Error{File: file, Problem: fmt.Sprintf("larger than %d KiB: not an exercise", maxFile>>10)}
	}
	return Parse(file, data, scenarioExists)
}

// Parse checks an exercise document against the format's schema, then
// its meaning: ids unique, steps in turn order, every expression
// compiles, the scenario exists.
func Parse(file string, data []byte, scenarioExists func(string) error) (*Exercise, error) {
	fail := func(ptr, format string, args ...any) error {
		return &Error{File: file, Pointer: ptr, Line: lineOf(data, ptr), Problem: fmt.Sprintf(format, args...)}
	}
	if !utf8.Valid(data) {
		return nil, fail("", "not valid UTF-8: an exercise is a JSON document")
	}
	if vs := fileSchema().Validate(data); vs != nil {
		return nil, fail(vs[0].Pointer, "%s", vs[0].Message)
	}
	var ex Exercise
	if err := json.NewDecoder(bytes.NewReader(data)).Decode(&ex); err != nil {
		return nil, fail("", "%v", err)
	}
	ex.File = file
	if scenarioExists != nil {
		if err := scenarioExists(ex.Scenario); err != nil {
			return nil, fail("/scenario", "%v", err)
		}
	}
	steps := map[string]bool{}
	for i := range ex.Steps {
		st := &ex.Steps[i]
		at := fmt.Sprintf("/steps/%d", i)
		if steps[st.ID] {
			return nil, fail(at+"/id", "step id %q is used twice", st.ID)
		}
		steps[st.ID] = true
		if i > 0 && st.Turn <= ex.Steps[i-1].Turn {
			return nil, fail(at+"/turn", "turn %d does not follow the step before's turn %d: steps go in turn order, one a turn", st.Turn, ex.Steps[i-1].Turn)
		}
		checks := map[string]bool{}
		for j := range st.Checks {
			c := &st.Checks[j]
			if checks[c.ID] {
				return nil, fail(fmt.Sprintf("%s/checks/%d/id", at, j), "check id %q is used twice in step %s", c.ID, st.ID)
			}
			checks[c.ID] = true
			prog, err := session.CompileExpr(c.Expr)
			if err != nil {
				return nil, fail(fmt.Sprintf("%s/checks/%d/expr", at, j), "does not compile: %s", firstLine(err.Error()))
			}
			c.prog = prog
		}
	}
	return &ex, nil
}

// StepAt is the step for a request at model turn turn, or nil.
func (ex *Exercise) StepAt(turn int) (int, *Step) {
	for i := range ex.Steps {
		if ex.Steps[i].Turn == turn {
			return i, &ex.Steps[i]
		}
	}
	return -1, nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// lineOf is the 1-based line where the value at pointer ptr starts in
// data (0 when it cannot be found): a person fixes a file by line.
func lineOf(data []byte, ptr string) int {
	if ptr == "" {
		return 0
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	type frame struct {
		obj   bool
		key   string
		index int
		want  bool // an object frame waiting for its next key
	}
	var stack []frame
	here := func() string {
		var b strings.Builder
		for _, f := range stack {
			b.WriteByte('/')
			if f.obj {
				b.WriteString(jsonschema.EscapeToken(f.key))
			} else {
				fmt.Fprint(&b, f.index)
			}
		}
		return b.String()
	}
	for {
		off := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return 0
		}
		top := len(stack) - 1
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:top]
			if top > 0 && stack[top-1].obj {
				stack[top-1].want = true
			}
			continue
		}
		if top >= 0 && stack[top].obj && stack[top].want {
			stack[top].key, stack[top].want = tok.(string), false
			continue
		}
		// A value starts here.
		if top >= 0 && !stack[top].obj {
			stack[top].index++
		}
		if top >= 0 && here() == ptr {
			// off is where the previous token ended: skip to the value.
			rest := data[off:]
			skip := bytes.IndexFunc(rest, func(r rune) bool { return !strings.ContainsRune(" \t\r\n:,", r) })
			return 1 + bytes.Count(data[:off+int64(max(skip, 0))], []byte("\n"))
		}
		if d, ok := tok.(json.Delim); ok {
			stack = append(stack, frame{obj: d == '{', index: -1, want: d == '{'})
			continue
		}
		if top >= 0 && stack[top].obj {
			stack[top].want = true
		}
	}
}
