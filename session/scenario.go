package session

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/expr-lang/expr/vm"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/jsonschema"
	"github.com/modelwire/modelwire/validate"
)

// Scenario is a case to run: what the application sends (sources, tools,
// output contract), how its tools answer, how the answer is checked, the
// teaching notes, and the model's script for the simulator. The format is
// documented in docs/scenario-format.md and checked by scenario.schema.json.
type Scenario struct {
	Name        string                  `json:"name"`
	Title       string                  `json:"title"`
	Description string                  `json:"description,omitempty"`
	Model       string                  `json:"model,omitempty"`
	Sources     []adapters.Source       `json:"sources"`
	Tools       []ScenarioTool          `json:"tools,omitempty"`
	ToolChoice  adapters.ToolChoice     `json:"tool_choice"`
	Output      adapters.OutputContract `json:"output"`
	Limits      adapters.Limits         `json:"limits"`
	// Backend is the (fictional) data the tools read, shown to the user.
	Backend json.RawMessage `json:"backend,omitempty"`
	// FinalTurn changes the tool choice once the evidence is complete (the
	// chapter's third request keeps its tools and sends tool_choice none).
	FinalTurn *FinalTurn `json:"final_turn,omitempty"`
	// Reads are facts read from the prompt the request carries (the
	// order a task names, the amount it asks for), for the simulated
	// model and the checks alike (reading.go).
	Reads []PromptFact `json:"reads,omitempty"`
	// Facts are computed from the observations before the checks run.
	Facts  []Fact  `json:"facts,omitempty"`
	Checks []Check `json:"checks,omitempty"`
	// Notes are markdown teaching notes per protocol step (see Step
	// names), narrowed to a turn or a variant by their key (notes.go):
	// read them with Note.
	Notes map[string]string `json:"notes,omitempty"`
	// Script is the model's side, for the simulator: one turn per request.
	Script []adapters.ModelTurn `json:"script"`
	// Variants replace the script (and optionally add a note).
	Variants map[string]Variant `json:"variants,omitempty"`
	// TurnLimit stops a runaway tool loop.
	TurnLimit int `json:"turn_limit,omitempty"`

	// Variant is the variant this scenario was loaded as ("" for the base).
	Variant string `json:"-"`
	// File is where the scenario came from, for error messages.
	File string `json:"-"`

	toolSchemas   map[string]*jsonschema.Schema
	outputSchema  *jsonschema.Schema
	factPrograms  []*vm.Program
	checkPrograms []*vm.Program // per check; nil for pointer checks
	// Executors run tools in Go; tools without one use their canned
	// results or command.
	Executors map[string]Executor `json:"-"`
	// Responder is a built-in case's simulated model in Go (it reads the
	// request and computes its answer); nil plays Script.
	Responder Responder `json:"-"`
	// application: the scenario stands in for an application whose
	// requests a fork re-sends (ResendScenario).
	application bool
}

// Responder answers one request as a simulated model would.
type Responder func(in *adapters.Inbound) (adapters.ModelTurn, error)

// FinalTurn is the tool choice the application sends once every tool in
// After has a successful result.
type FinalTurn struct {
	After      []string            `json:"after"`
	ToolChoice adapters.ToolChoice `json:"tool_choice"`
}

// ScenarioTool is a tool definition plus how it answers.
type ScenarioTool struct {
	adapters.Tool
	// Results are canned answers keyed by arguments (compared as JSON).
	Results []CannedResult `json:"results,omitempty"`
	// Default answers arguments no canned result matches; without it
	// such a call is an error result.
	Default *CannedResult `json:"default,omitempty"`
	// Command runs a program with the arguments JSON on stdin; its stdout
	// is the result, a non-zero exit an error result.
	Command []string `json:"command,omitempty"`
}

// CannedResult is one canned tool answer.
type CannedResult struct {
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error,omitempty"`
}

// Variant is a named change to a scenario: edits of its prompt (what the
// application sends, which a model reads) or a script of its own.
type Variant struct {
	Description string `json:"description"`
	// FailsAt is the validation layer this variant is meant to fail
	// ("" when it passes: it teaches something else).
	FailsAt string `json:"fails_at,omitempty"`
	// Edits change the scenario's sources, tools or contract (variant.go).
	Edits []Edit `json:"edits,omitempty"`
	// Script replaces the base script.
	Script []adapters.ModelTurn `json:"script,omitempty"`
	Note   string               `json:"note,omitempty"`
}

// Check is a declarative business check on the final JSON answer: an
// expression that must be true (see expr.go), or a value at a pointer
// compared with a constant or another pointer.
type Check struct {
	ID   string `json:"id"`
	Expr string `json:"expr,omitempty"`
	// Show names the values a failure detail prints (expressions).
	Show    []string        `json:"show,omitempty"`
	Pointer string          `json:"pointer,omitempty"`
	Equals  json.RawMessage `json:"equals,omitempty"`
	OneOf   []any           `json:"one_of,omitempty"`
	Exists  *bool           `json:"exists,omitempty"`
	// Number relations: the value compared with a number or with the
	// value at another pointer ({"pointer": "/x"}).
	LT      *Operand `json:"lt,omitempty"`
	LTE     *Operand `json:"lte,omitempty"`
	GT      *Operand `json:"gt,omitempty"`
	GTE     *Operand `json:"gte,omitempty"`
	Message string   `json:"message,omitempty"`
}

// Operand is a number, or a pointer into the answer.
type Operand struct {
	Number  *float64
	Pointer string
}

// UnmarshalJSON reads 12 or {"pointer":"/x"}.
func (o *Operand) UnmarshalJSON(b []byte) error {
	var n float64
	if json.Unmarshal(b, &n) == nil {
		o.Number = &n
		return nil
	}
	var p struct {
		Pointer string `json:"pointer"`
	}
	if err := json.Unmarshal(b, &p); err != nil || p.Pointer == "" {
		return fmt.Errorf("want a number or {\"pointer\": \"/path\"}")
	}
	o.Pointer = p.Pointer
	return nil
}

// MarshalJSON writes the form UnmarshalJSON reads.
func (o Operand) MarshalJSON() ([]byte, error) {
	if o.Number != nil {
		return json.Marshal(*o.Number)
	}
	return json.Marshal(map[string]string{"pointer": o.Pointer})
}

//go:embed scenario.schema.json
var scenarioSchemaJSON []byte

// scenarioSchema is compiled on first use, not at start-up: `version`
// and `decode` never need it (issue 20).
var scenarioSchema = sync.OnceValue(func() *jsonschema.Schema {
	s, err := jsonschema.CompileSchema(scenarioSchemaJSON)
	if err != nil {
		panic("scenario.schema.json: " + err.Error()) // a build bug, caught by every test
	}
	return s
})

// ScenarioError names the file, the place inside it and what is wrong.
type ScenarioError struct {
	File    string
	Pointer string
	Problem string
}

func (e *ScenarioError) Error() string {
	p := e.Pointer
	if p == "" {
		p = "/"
	}
	return fmt.Sprintf("%s: %s: %s", e.File, p, e.Problem)
}

// maxScenarioFile bounds a scenario file: checking one takes several times
// its size in memory, and a real scenario is a few kilobytes.
const maxScenarioFile = 16 << 20

// LoadScenarioFile reads a scenario file; variant selects a variant of it.
func LoadScenarioFile(path, variant string) (*Scenario, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &ScenarioError{File: path, Problem: "cannot read: " + err.Error()}
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxScenarioFile+1))
	if err != nil {
		return nil, &ScenarioError{File: path, Problem: "cannot read: " + err.Error()}
	}
	if len(b) > maxScenarioFile {
		return nil, &ScenarioError{File: path, Problem: fmt.Sprintf("larger than %d MiB: not a scenario", maxScenarioFile>>20)}
	}
	return ParseScenario(path, b, variant)
}

// ParseScenario checks a scenario document against the format's schema and
// then its meaning (tool names unique, schemas compile, the script names
// known tools, checks point somewhere sensible), and selects a variant.
func ParseScenario(file string, data []byte, variant string) (*Scenario, error) {
	if !utf8.Valid(data) {
		return nil, &ScenarioError{File: file, Problem: "not valid UTF-8: a scenario is a JSON document, and JSON is UTF-8"}
	}
	if vs := scenarioSchema().Validate(data); vs != nil {
		return nil, &ScenarioError{File: file, Pointer: vs[0].Pointer, Problem: vs[0].Message}
	}
	sc, err := decodeScenario(file, data)
	if err != nil {
		return nil, err
	}
	// Every variant's edits must apply, whichever is asked for: a broken
	// variant is found when its case is loaded, not when it is chosen.
	for _, name := range sc.VariantNames() {
		edits := sc.Variants[name].Edits
		if len(edits) == 0 {
			continue
		}
		edited, err := applyEdits(file, data, name, edits)
		if err != nil {
			return nil, err
		}
		if name != variant {
			continue
		}
		if vs := scenarioSchema().Validate(edited); vs != nil {
			return nil, &ScenarioError{File: file, Pointer: "/variants/" + jsonschema.EscapeToken(name) + "/edits", Problem: "the edited scenario is not valid: " + vs[0].Pointer + ": " + vs[0].Message}
		}
		if sc, err = decodeScenario(file, edited); err != nil {
			return nil, &ScenarioError{File: file, Pointer: "/variants/" + jsonschema.EscapeToken(name) + "/edits", Problem: "the edited scenario: " + err.Error()}
		}
	}
	if variant != "" {
		v, ok := sc.Variants[variant]
		if !ok {
			return nil, &ScenarioError{File: file, Pointer: "/variants", Problem: fmt.Sprintf("no variant %q (have %s)", variant, strings.Join(sc.VariantNames(), ", "))}
		}
		if len(v.Script) > 0 {
			sc.Script = v.Script
		}
		sc.Variant = variant
	}
	return sc, nil
}

// decodeScenario decodes a checked document and prepares it.
func decodeScenario(file string, data []byte) (*Scenario, error) {
	var sc Scenario
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&sc); err != nil {
		return nil, &ScenarioError{File: file, Problem: err.Error()}
	}
	sc.File = file
	if err := sc.prepare(); err != nil {
		return nil, err
	}
	return &sc, nil
}

func (sc *Scenario) fail(ptr, format string, args ...any) error {
	return &ScenarioError{File: sc.File, Pointer: ptr, Problem: fmt.Sprintf(format, args...)}
}

func (sc *Scenario) prepare() error {
	seen := map[string]bool{}
	for i, s := range sc.Sources {
		if seen[s.ID] {
			return sc.fail(fmt.Sprintf("/sources/%d/id", i), "source id %q is used twice", s.ID)
		}
		seen[s.ID] = true
	}
	sc.toolSchemas = map[string]*jsonschema.Schema{}
	for i, t := range sc.Tools {
		if sc.toolSchemas[t.Name] != nil {
			return sc.fail(fmt.Sprintf("/tools/%d/name", i), "tool %q is defined twice", t.Name)
		}
		s, err := jsonschema.CompileSchema(t.Parameters)
		if err != nil {
			return sc.fail(fmt.Sprintf("/tools/%d/parameters", i), "%v", err)
		}
		sc.toolSchemas[t.Name] = s
		for j, r := range t.Results {
			if vs := s.Validate(r.Arguments); vs != nil && !r.IsError {
				return sc.fail(fmt.Sprintf("/tools/%d/results/%d/arguments", i, j), "canned arguments fail the tool's schema: %s", jsonschema.Joined(vs))
			}
		}
	}
	if sc.ToolChoice.Mode == "" {
		sc.ToolChoice.Mode = adapters.ToolChoiceAuto
	}
	if sc.ToolChoice.Mode == adapters.ToolChoiceNamed && sc.toolSchemas[sc.ToolChoice.Name] == nil {
		return sc.fail("/tool_choice/name", "names tool %q, which is not defined", sc.ToolChoice.Name)
	}
	if sc.Output.Mode == adapters.OutputJSONSchema {
		s, err := jsonschema.CompileSchema(sc.Output.Schema)
		if err != nil {
			return sc.fail("/output/schema", "%v", err)
		}
		sc.outputSchema = s
	}
	check := func(base string, script []adapters.ModelTurn) error {
		for t, turn := range script {
			for i, it := range turn.Items {
				if it.Kind == adapters.KindToolCall && sc.toolSchemas[it.Name] == nil {
					return sc.fail(fmt.Sprintf("%s/%d/items/%d/name", base, t, i), "the script calls tool %q, which is not defined", it.Name)
				}
			}
		}
		return nil
	}
	if err := check("/script", sc.Script); err != nil {
		return err
	}
	for _, name := range sc.VariantNames() {
		if err := check("/variants/"+name+"/script", sc.Variants[name].Script); err != nil {
			return err
		}
	}
	named := map[string]bool{}
	for i := range sc.Reads {
		f := &sc.Reads[i]
		if named[f.Name] {
			return sc.fail(fmt.Sprintf("/reads/%d/name", i), "fact %q is read twice", f.Name)
		}
		named[f.Name] = true
		if err := f.compile(); err != nil {
			return sc.fail(fmt.Sprintf("/reads/%d", i), "%v", err)
		}
	}
	for i, f := range sc.Facts {
		if named[f.Name] {
			return sc.fail(fmt.Sprintf("/facts/%d/name", i), "fact %q is also read from the prompt", f.Name)
		}
		p, err := compileExpr(f.Expr)
		if err != nil {
			return sc.fail(fmt.Sprintf("/facts/%d/expr", i), "%s", validate.OneLine(err.Error(), 200))
		}
		sc.factPrograms = append(sc.factPrograms, p)
	}
	for i, c := range sc.Checks {
		var prog *vm.Program
		switch {
		case c.Expr != "":
			p, err := compileExpr(c.Expr)
			if err != nil {
				return sc.fail(fmt.Sprintf("/checks/%d/expr", i), "%s", validate.OneLine(err.Error(), 200))
			}
			prog = p
		case !strings.HasPrefix(c.Pointer, "/"):
			return sc.fail(fmt.Sprintf("/checks/%d/pointer", i), "a check needs an expr, or a JSON pointer (which starts with /)")
		}
		sc.checkPrograms = append(sc.checkPrograms, prog)
	}
	if ft := sc.FinalTurn; ft != nil {
		for i, name := range ft.After {
			if sc.toolSchemas[name] == nil {
				return sc.fail(fmt.Sprintf("/final_turn/after/%d", i), "names tool %q, which is not defined", name)
			}
		}
	}
	if err := sc.checkNotes(); err != nil {
		return err
	}
	if sc.TurnLimit == 0 {
		sc.TurnLimit = 8
	}
	return nil
}

// VariantNames lists the variants in order.
func (sc *Scenario) VariantNames() []string {
	names := make([]string, 0, len(sc.Variants))
	for n := range sc.Variants {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// FullName is "refund" or "refund/wrong-cap".
func (sc *Scenario) FullName() string {
	if sc.Variant == "" {
		return sc.Name
	}
	return sc.Name + "/" + sc.Variant
}

// ToolSchema returns the compiled argument schema of a tool, or nil.
func (sc *Scenario) ToolSchema(name string) *jsonschema.Schema { return sc.toolSchemas[name] }

// OutputSchema returns the compiled output schema, or nil.
func (sc *Scenario) OutputSchema() *jsonschema.Schema { return sc.outputSchema }

// Tool returns a tool by name.
func (sc *Scenario) Tool(name string) (*ScenarioTool, bool) {
	for i := range sc.Tools {
		if sc.Tools[i].Name == name {
			return &sc.Tools[i], true
		}
	}
	return nil, false
}

// ChoiceFor is the tool choice of the request that follows turns: the
// final turn's once every tool it waits for has a successful result.
func (sc *Scenario) ChoiceFor(turns []adapters.Turn) adapters.ToolChoice {
	ft := sc.FinalTurn
	if ft == nil {
		return sc.ToolChoice
	}
	ok := map[string]bool{}
	for _, t := range turns {
		for _, r := range t.Results {
			ok[r.Name] = ok[r.Name] || !r.IsError
		}
	}
	for _, name := range ft.After {
		if !ok[name] {
			return sc.ToolChoice
		}
	}
	return ft.ToolChoice
}

// Request builds the canonical request of the scenario's first turn.
func (sc *Scenario) Request(stream bool, history adapters.HistoryMode) *adapters.Request {
	tools := make([]adapters.Tool, len(sc.Tools))
	for i, t := range sc.Tools {
		tools[i] = t.Tool
	}
	model := sc.Model
	if model == "" {
		model = "sim-model"
	}
	return &adapters.Request{
		Model:   model,
		Sources: append([]adapters.Source(nil), sc.Sources...),
		Tools:   tools,
		Choice:  sc.ToolChoice,
		Output:  sc.Output.Sent(),
		Limits:  sc.Limits,
		Stream:  stream,
		History: history,
	}
}
