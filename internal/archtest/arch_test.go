// Package archtest keeps the dependency rule written in ARCHITECTURE.md:
// it lists this module's packages with `go list`, and fails on the first
// import that the rule does not allow, naming it and the reason.
//
// The rule is two tables. forbidden holds the edges that break the
// layering, each with the reason a person needs to read when one appears;
// allowed holds, for every package, the module packages it may import —
// the current truth, so a new edge is a decision made here and in
// ARCHITECTURE.md, not a drift. Only the packages' own (non-test) imports
// are checked: a test may import what it needs to build its fixtures (the
// workbench's tests run the simulator and the store, for instance).
package archtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// module is this module's path; imports outside it are not checked.
const module = "github.com/modelwire/modelwire"

// A pattern names packages by their path inside the module: "store" is
// that package, "adapters/..." is adapters and every package below it,
// "adapters/*" one level below, "*" every package of the module, and
// "main" the module root (main.go).

// rule is a forbidden edge: a package matching from (and not notFrom)
// imports one matching to (and not notTo).
type rule struct {
	from, notFrom, to, notTo []string
	why                      string
}

// forbidden is checked first, so that the message says why. Keep each
// reason in step with ARCHITECTURE.md's "The dependency rule".
var forbidden = []rule{
	{from: p("adapters/..."), to: p("*"), notTo: p("adapters/..."),
		why: "adapters/ is the bottom layer: the canonical model and the wire formats import nothing else of the module"},
	{from: p("*"), to: p("adapters/adapterstest"),
		why: "adapterstest is for the adapters' tests only"},
	{from: p("store session timeline"), to: p("har jsonl"),
		why: "har and jsonl are file formats over the store (and, for a HAR import, the timeline's journal): they import store, session and timeline, never the reverse"},
	{from: p("store"), to: p("*"), notTo: p("adapters redact background"),
		why: "the store keeps sessions and knows only the canonical model (adapters), the one redaction (redact) and where its commits run (background)"},
	{from: p("background"), to: p("*"),
		why: "background is a leaf: it runs functions and loops of tasks on lowered threads and knows nothing of what they do"},
	{from: p("redact"), to: p("*"),
		why: "redact is a leaf: every layer calls it, so it imports nothing of the module"},
	{from: p("validate"), to: p("*"), notTo: p("adapters jsonschema store"),
		why: "validate is the validation pipeline every front end shares: it judges the canonical model against a contract and knows the store's verdict type, nothing above"},
	{from: p("jsonschema"), to: p("*"),
		why: "jsonschema is a leaf: the validator and the JSON reader every layer calls import nothing of the module"},
	{from: p("pricing"), to: p("*"), notTo: p("adapters"),
		why: "pricing is the table of model facts and the cost rule: it knows only the canonical usage (adapters)"},
	{from: p("capacity"), to: p("*"), notTo: p("adapters"),
		why: "capacity is the chapter's throughput bound over rate limits and measured requests: it knows only the canonical rate-limit figures (adapters)"},
	{from: p("check"), to: p("*"), notTo: p("adapters store validate pricing"),
		why: "check judges what re-sent sessions stored against their recordings: it reads the store and runs nothing (app re-sends them)"},
	{from: p("stats"), to: p("*"), notTo: p("adapters store pricing"),
		why: "stats aggregates what the store keeps and prices it: it reads the store and runs nothing"},
	{from: p("transport"), to: p("*"), notTo: p("adapters/..."),
		why: "transport carries requests to a provider: it knows the wire formats only by their descriptors (adapters/...), never a session"},
	{from: p("session"), to: p("timeline"),
		why: "session is the engine; the timeline (journal and replayer) sits above it: the engine records through its own Journal interface, which timeline.StoreJournal implements"},
	{from: p("session"), to: p("ui cli app sim samples proxy vcr diff bench telemetry collect copyout themes"),
		why: "session is the runtime only: front ends, the simulator and the scenarios' data sit above it"},
	{from: p("timeline"), to: p("ui cli app sim samples proxy vcr diff bench telemetry collect copyout themes har jsonl batch"),
		why: "timeline records and replays sessions over session and store: front ends, file formats and the simulator sit above it"},
	{from: p("ui"), to: p("store har jsonl batch sim samples cli app proxy vcr bench telemetry collect"),
		why: "the workbench sees sessions only through session types, the timeline's Replayer and its Engine, Library and Catalog interfaces"},
	{from: p("*"), notFrom: p("main"), to: p("cli"),
		why: "cli is the composition root: only main.go calls it"},
	{from: p("*"), notFrom: p("cli bench"), to: p("app"),
		why: "app is what front ends call: only cli (and bench, which measures it) import it"},
	{from: p("*"), notFrom: p("cli"), to: p("bench"),
		why: "bench is the workload of `modelwire bench`: only cli runs it"},
	{from: p("*"), to: p("internal/e2e"),
		why: "internal/e2e decides tests' skips: only tests import it"},
}

// allowed lists, for every package, the module packages it may import
// (patterns as above). A package needs a row; "adapters/*" is the row of
// every wire-format package that has none of its own.
var allowed = map[string][]string{
	"main":       p("cli"),
	"cli":        p("app check stats ui proxy collect telemetry themes bench vcr session transport timeline validate store har jsonl batch sim samples diff copyout workshop capacity adapters/... redact"),
	"bench":      p("app ui proxy store adapters/..."),
	"app":        p("session transport timeline validate store jsonl sim samples diff proxy check adapters/... redact jsonschema"),
	"check":      p("adapters store validate pricing"),
	"stats":      p("adapters store pricing"),
	"ui":         p("session stats pricing capacity transport timeline validate diff copyout themes workshop adapters/... redact jsonschema"),
	"vcr":        p("adapters/... jsonschema redact"),
	"proxy":      p("session transport timeline validate store adapters/... redact jsonschema background"),
	"diff":       p("session store adapters/... jsonschema"),
	"telemetry":  p("store adapters/... redact"),
	"collect":    p("session timeline validate store adapters/... redact"),
	"sim":        p("session adapters/..."),
	"samples":    p("session adapters/..."),
	"workshop":   p("sim session timeline validate store redact jsonschema adapters/..."),
	"copyout":    p("adapters/... redact"),
	"har":        p("session timeline store adapters/... redact"),
	"batch":      p("session timeline store adapters/... redact"),
	"jsonl":      p("store adapters"),
	"session":    p("pricing transport validate store adapters/... redact jsonschema"),
	"pricing":    p("adapters"),
	"capacity":   p("adapters"),
	"transport":  p("adapters/..."),
	"timeline":   p("session validate store adapters/..."),
	"validate":   p("adapters jsonschema store"),
	"store":      p("adapters redact background"),
	"redact":     nil,
	"jsonschema": nil,
	"themes":     nil,
	"background": nil,

	"adapters":              p("adapters/sse"),
	"adapters/sse":          nil,
	"adapters/wire":         p("adapters adapters/sse"),
	"adapters/adapterstest": p("adapters adapters/sse adapters/wire"),
	"adapters/registry":     p("adapters/..."),
	"adapters/*":            p("adapters adapters/sse adapters/wire"),
	"adapters/claudecode":   p("adapters adapters/sse adapters/wire adapters/anthropic"),

	"internal/e2e":        nil,
	"internal/archtest":   nil,
	"internal/suite":      nil,
	"reliability":         nil,
	"reliability/hostile": nil,
	"docs/screens/grid":   nil,
}

func p(s string) []string { return strings.Fields(s) }

// match reports whether pkg (a path inside the module, "main" for the
// root) matches pattern.
func match(pattern, pkg string) bool {
	switch {
	case pattern == "*":
		return true
	case strings.HasSuffix(pattern, "/..."):
		base := strings.TrimSuffix(pattern, "/...")
		return pkg == base || strings.HasPrefix(pkg, base+"/")
	case strings.HasSuffix(pattern, "/*"):
		base := strings.TrimSuffix(pattern, "*")
		return strings.HasPrefix(pkg, base) && !strings.Contains(pkg[len(base):], "/")
	}
	return pattern == pkg
}

func matchAny(patterns []string, pkg string) bool {
	return slices.ContainsFunc(patterns, func(pat string) bool { return match(pat, pkg) })
}

// row is the allowed row that governs pkg: its own, else the first
// wildcard row that matches it.
func row(pkg string) ([]string, bool) {
	if r, ok := allowed[pkg]; ok {
		return r, true
	}
	for pat, r := range allowed {
		if strings.ContainsRune(pat, '*') && match(pat, pkg) {
			return r, true
		}
	}
	return nil, false
}

// check returns the verdict on one edge, "" when the rule allows it.
func check(from, to string) string {
	for _, r := range forbidden {
		if matchAny(r.from, from) && !matchAny(r.notFrom, from) && matchAny(r.to, to) && !matchAny(r.notTo, to) {
			return from + " imports " + to + ": " + r.why + " (ARCHITECTURE.md)"
		}
	}
	r, ok := row(from)
	if !ok {
		return from + " has no row in the allowed table: give it one in internal/archtest/arch_test.go and a line in ARCHITECTURE.md"
	}
	if !matchAny(r, to) {
		return from + " imports " + to + ": not in the allowed table; if the layering allows it, add it to internal/archtest/arch_test.go and ARCHITECTURE.md's rule"
	}
	return ""
}

// listed is one package as `go list -json` reports it.
type listed struct {
	ImportPath string
	Imports    []string
	Error      *struct{ Err string }
}

// graph lists the module's packages and their imports of the module, by
// path inside it ("main" for the root).
func graph(t *testing.T) (map[string][]string, []string) {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the import rule needs the go command on PATH: %v", err)
	}
	// -e: a package that fails to load (an import cycle, say) is still
	// listed with its imports, so the rule can name the edge.
	cmd := exec.Command(goTool, "list", "-e", "-json=ImportPath,Imports,Error", "./...")
	cmd.Dir = "../.."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	g := map[string][]string{}
	var loadErrs []string
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var l listed
		if err := dec.Decode(&l); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		from, ok := inModule(l.ImportPath)
		if !ok {
			continue
		}
		g[from] = []string{}
		for _, imp := range l.Imports {
			if to, ok := inModule(imp); ok {
				g[from] = append(g[from], to)
			}
		}
		if l.Error != nil {
			loadErrs = append(loadErrs, from+": "+l.Error.Err)
		}
	}
	if len(g) == 0 {
		t.Fatalf("go list found no package of %s in ../..", module)
	}
	return g, loadErrs
}

func inModule(path string) (string, bool) {
	if path == module {
		return "main", true
	}
	rest, ok := strings.CutPrefix(path, module+"/")
	return rest, ok
}

// TestImportRule fails on every import the rule does not allow, one line
// each.
func TestImportRule(t *testing.T) {
	g, loadErrs := graph(t)
	pkgs := slices.Sorted(func(yield func(string) bool) {
		for k := range g {
			if !yield(k) {
				return
			}
		}
	})
	for _, from := range pkgs {
		if _, ok := row(from); !ok {
			t.Error(check(from, ""))
			continue
		}
		for _, to := range g[from] {
			if msg := check(from, to); msg != "" {
				t.Error(msg)
			}
		}
	}
	for pkg := range allowed {
		if _, ok := g[pkg]; !ok && !strings.ContainsRune(pkg, '*') {
			t.Errorf("the allowed table has a row for %s, which is not a package any more: remove it here and from ARCHITECTURE.md", pkg)
		}
	}
	if cycle := findCycle(g, pkgs); cycle != nil {
		t.Errorf("import cycle: %s (ARCHITECTURE.md: imports run one way)", strings.Join(cycle, " → "))
	}
	for _, e := range loadErrs {
		t.Errorf("go list: %s", e)
	}
}

// findCycle returns one cycle of g, nil when there is none.
func findCycle(g map[string][]string, pkgs []string) []string {
	const (
		unseen = iota
		open
		done
	)
	state := map[string]int{}
	var stack []string
	var visit func(string) []string
	visit = func(n string) []string {
		state[n] = open
		stack = append(stack, n)
		for _, m := range g[n] {
			switch state[m] {
			case open:
				i := slices.Index(stack, m)
				return append(slices.Clone(stack[i:]), m)
			case unseen:
				if c := visit(m); c != nil {
					return c
				}
			}
		}
		stack = stack[:len(stack)-1]
		state[n] = done
		return nil
	}
	for _, n := range pkgs {
		if state[n] == unseen {
			if c := visit(n); c != nil {
				return c
			}
		}
	}
	return nil
}

// TestRuleReasons checks the tables themselves on a few edges, so that an
// edit which loosens the rule by accident shows here.
func TestRuleReasons(t *testing.T) {
	for _, c := range []struct {
		from, to string
		ok       bool
	}{
		{"ui", "session", true},
		{"ui", "store", false},
		{"ui", "sim", false},
		{"session", "store", true},
		{"session", "ui", false},
		{"session", "samples", false},
		{"session", "pricing", true},
		{"pricing", "session", false},
		{"pricing", "adapters/registry", false},
		{"session", "transport", true},
		{"transport", "adapters/registry", true},
		{"transport", "session", false},
		{"store", "adapters", true},
		{"store", "adapters/registry", false},
		{"store", "session", false},
		{"adapters/openaichat", "adapters/wire", true},
		{"adapters/openaichat", "session", false},
		{"adapters/openaichat", "adapters/registry", false},
		{"adapters/registry", "adapters/adapterstest", false},
		{"adapters/newformat", "adapters/wire", true},
		{"app", "cli", false},
		{"app", "check", true},
		{"check", "app", false},
		{"check", "session", false},
		{"main", "cli", true},
		{"proxy", "internal/e2e", false},
		{"session", "jsonschema", true},
		{"jsonschema", "session", false},
		{"jsonschema", "adapters", false},
		{"vcr", "session", false},
		{"vcr", "store", false},
		{"ui", "timeline", true},
		{"session", "timeline", false},
		{"timeline", "session", true},
		{"timeline", "store", true},
		{"timeline", "ui", false},
		{"store", "timeline", false},
		{"validate", "store", true},
		{"validate", "session", false},
		{"validate", "adapters/registry", false},
		{"session", "validate", true},
	} {
		if msg := check(c.from, c.to); (msg == "") != c.ok {
			t.Errorf("%s → %s: allowed %v, want %v (%s)", c.from, c.to, msg == "", c.ok, msg)
		}
	}
	if got := check("ui", "store"); !strings.HasPrefix(got, "ui imports store: the workbench sees sessions only through session types") {
		t.Errorf("ui → store says %q", got)
	}
}
