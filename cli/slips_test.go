package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/registry"
	"github.com/modelwire/modelwire/samples"
	"github.com/modelwire/modelwire/sim"
	"github.com/modelwire/modelwire/store"
)

// A mistyped global flag stops every command with exit 2 and one line,
// before anything is created.
func TestGlobalFlagsAreChecked(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "no-such-dir", "m.db")
	for _, args := range [][]string{
		{"--db", bad},
		{"--db", bad, "sessions"},
		{"--db", bad, "run", "--approve", "auto"},
		{"--db", dir, "sessions"},
		{"--theme", "neon", "--db", filepath.Join(dir, "m.db")},
		{"--theme", "neon", "--db", filepath.Join(dir, "m.db"), "sessions"},
		{"--theme", "neon", "--db", filepath.Join(dir, "m.db"), "run", "--approve", "auto"},
	} {
		code, out, errs := mw(t, args...)
		if code != ExitUsage || strings.Count(strings.TrimSpace(errs), "\n") != 0 || out != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and one line", args, code, out, errs)
		}
		if !strings.Contains(errs, "--db") && !strings.Contains(errs, "neon") {
			t.Errorf("%v: %q does not name the problem", args, errs)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "no-such-dir")); err == nil {
		t.Error("a mistyped --db created its directory")
	}
	if _, err := os.Stat(filepath.Join(dir, "m.db")); err == nil {
		t.Error("--theme neon created the database before failing")
	}
	// MODELWIRE_DB is as explicit as --db.
	t.Setenv("MODELWIRE_DB", bad)
	if code, _, errs := mw(t, "sessions"); code != ExitUsage || !strings.Contains(errs, "does not exist") {
		t.Errorf("MODELWIRE_DB in a missing directory: %d %q", code, errs)
	}
}

// run --provider P without --protocol speaks P's own protocol: each
// provider is pointed at the simulator, which answers every protocol.
func TestRunUsesTheProvidersOwnProtocol(t *testing.T) {
	sc, err := samples.Lookup("refund")
	if err != nil {
		t.Fatal(err)
	}
	base, err := sim.New(sim.Options{Scenario: sc, Lookup: samples.Lookup}).Start(t.Context(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ provider, env, base, want string }{
		{"anthropic", "ANTHROPIC", base, "anthropic-messages"},
		{"gemini", "GEMINI", base, "gemini"},
		{"deepseek", "DEEPSEEK", base, "deepseek-chat"},
		{"compatible", "COMPATIBLE", base + "/v1", "openai-chat"},
		{"openai", "OPENAI", base + "/v1", "openai-responses"},
	} {
		t.Setenv(c.env+"_API_KEY", "test-key")
		t.Setenv(c.env+"_BASE_URL", c.base)
		db := filepath.Join(t.TempDir(), "m.db")
		if code, _, errs := mw(t, "--db", db, "run", "--provider", c.provider, "--approve", "auto"); code != 0 {
			t.Errorf("%s: exit %d %s", c.provider, code, errs)
			continue
		}
		if _, out, _ := mw(t, "--db", db, "sessions", "--json"); !strings.Contains(out, `"protocol":"`+c.want+`"`) {
			t.Errorf("%s ran as %s, want %s", c.provider, out, c.want)
		}
	}
	if code, _, errs := mw(t, "--db", filepath.Join(t.TempDir(), "m.db"), "run", "--provider", "mars", "--approve", "auto"); code != ExitUsage ||
		!strings.Contains(errs, `unknown provider "mars"`) {
		t.Errorf("unknown provider: %d %q", code, errs)
	}
}

// A run that fails prints its verdict once: at the end of the report, not
// again on stderr; with --json the verdict is on stderr, as stdout is JSON.
func TestFailedRunVerdictPrintedOnce(t *testing.T) {
	db := filepath.Join(t.TempDir(), "m.db")
	// Without the regeneration, whose own line names the failure it asks
	// the model to fix.
	code, out, errs := mw(t, "--db", db, "run", "--scenario", "refund/wrong-cap", "--approve", "auto", "--regenerate=false")
	if code != ExitFailed {
		t.Fatalf("exit %d: %s", code, errs)
	}
	both := out + errs
	if n := strings.Count(both, "the domain layer failed"); n != 1 {
		t.Errorf("the verdict appears %d times in stdout+stderr:\n%s\n---\n%s", n, out, errs)
	}
	code, _, errs = mw(t, "--db", db, "run", "--scenario", "refund/wrong-cap", "--approve", "auto", "--json", "--fault", "rate-limit")
	if code != ExitFailed || strings.Count(errs, "the domain layer failed") != 1 {
		t.Errorf("--json: exit %d, stderr %q", code, errs)
	}
	// The list names the failing layer and the fault.
	_, out, _ = mw(t, "--db", db, "sessions", "--json")
	if !strings.Contains(out, `"failed_layer":"domain"`) || !strings.Contains(out, `"faults":["rate-limit"]`) {
		t.Errorf("sessions --json lacks the failing layer or the fault:\n%s", out)
	}
}

// export -o accepts an existing directory and writes ID.FORMAT there,
// readable by others.
func TestExportIntoADirectory(t *testing.T) {
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "m.db")
	ids := seedSessions(t, dbPath)
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ o, format, want string }{
		{dir, "jsonl", filepath.Join(dir, ids[0]+".jsonl")},
		{filepath.Join(dir, "sub") + "/", "har", filepath.Join(dir, "sub", ids[0]+".har")},
		{filepath.Join(dir, "sub", "s.har"), "har", filepath.Join(dir, "sub", "s.har")},
	} {
		code, _, errs := mw(t, "--db", dbPath, "export", ids[0], "--format", c.format, "-o", c.o)
		st, err := os.Stat(c.want)
		if code != 0 || err != nil {
			t.Fatalf("-o %s: exit %d %s; %v", c.o, code, errs, err)
		}
		if st.Mode().Perm() != 0o644 || st.Size() == 0 {
			t.Errorf("%s: mode %v size %d", c.want, st.Mode().Perm(), st.Size())
		}
	}
	// The file written into the directory is not replaced without --force.
	if code, _, errs := mw(t, "--db", dbPath, "export", ids[0], "-o", dir); code != ExitUsage || !strings.Contains(errs, "--force") {
		t.Errorf("second export into the directory: %d %q", code, errs)
	}
}

// export -o and --db follow one rule: a file in a directory that does not
// exist is refused with one line naming the directory, and nothing is
// created (issue 27).
func TestMissingParentDirectoryIsRefused(t *testing.T) {
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "m.db")
	ids := seedSessions(t, dbPath)
	for i, args := range []func(missing string) []string{
		func(m string) []string {
			return []string{"--db", dbPath, "export", ids[0], "-o", filepath.Join(m, "x.jsonl")}
		},
		func(m string) []string {
			return []string{"--db", dbPath, "export", ids[0], "--format", "har", "-o", m + "/"}
		},
		func(m string) []string {
			return []string{"--db", dbPath, "export", ids[0], "--format", "python", "-o", filepath.Join(m, "x.py")}
		},
		func(m string) []string { return []string{"--db", filepath.Join(m, "x.db"), "sessions"} },
		func(m string) []string { return []string{"--db", filepath.Join(m, "x.db"), "run", "--approve", "auto"} },
	} {
		top := filepath.Join(dir, "missing"+strconv.Itoa(i))
		missing := filepath.Join(top, "dir")
		code, out, errs := mw(t, args(missing)...)
		if code != ExitUsage || out != "" || strings.Count(strings.TrimSpace(errs), "\n") != 0 ||
			!strings.Contains(errs, "directory "+missing+" does not exist") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and one line naming %s", args(missing), code, out, errs, missing)
		}
		if _, err := os.Stat(top); err == nil {
			t.Errorf("%v created %s", args(missing), top)
		}
	}
}

// Every command's --help shows an example (cobra's own help and
// completion commands excepted).
func TestEveryCommandHasAnExample(t *testing.T) {
	root := NewRoot(&App{Out: &strings.Builder{}, Err: &strings.Builder{}, In: strings.NewReader("")})
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Name() == "help" || c.Name() == "completion" {
			return
		}
		if strings.TrimSpace(c.Example) == "" {
			t.Errorf("%q has no example in --help", c.CommandPath())
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// Every example in every --help runs as far as its flags: the command
// exists and each flag is known and takes its value ("--pace 120ms" on a
// flag of words a second did not).
func TestEveryHelpExampleParses(t *testing.T) {
	app := func() *cobra.Command {
		return NewRoot(&App{Out: &strings.Builder{}, Err: &strings.Builder{}, In: strings.NewReader("")})
	}
	var examples []string
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		examples = append(examples, strings.Split(c.Example, "\n")...)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(app())
	checked := 0
	for _, line := range examples {
		// The modelwire part of the line: after VAR=value prefixes and
		// other programs, up to a pipe.
		fields := shellFields(strings.SplitN(line, "|", 2)[0])
		if i := slices.Index(fields, "modelwire"); i >= 0 {
			fields = fields[i+1:]
		} else if len(strings.Split(line, "| modelwire")) == 2 {
			fields = shellFields(strings.Split(line, "| modelwire")[1])
		} else {
			continue
		}
		cmd, rest, err := app().Find(fields)
		if err != nil {
			t.Errorf("example %q: %v", strings.TrimSpace(line), err)
			continue
		}
		if err := cmd.ParseFlags(rest); err != nil {
			t.Errorf("example %q: %v", strings.TrimSpace(line), err)
			continue
		}
		if err := cmd.ValidateArgs(cmd.Flags().Args()); err != nil {
			t.Errorf("example %q: %v", strings.TrimSpace(line), err)
		}
		checked++
	}
	if checked < 20 {
		t.Fatalf("checked only %d examples", checked)
	}
}

// A HAR of a three-turn exchange imports as one session of three turns:
// the refund walkthrough run headless, exported as HAR, imported into
// another database.
func TestHARImportKeepsAThreeTurnExchangeOneSession(t *testing.T) {
	dir := t.TempDir()
	db, db2 := filepath.Join(dir, "a.db"), filepath.Join(dir, "b.db")
	if code, _, errs := mw(t, "--db", db, "run", "--approve", "auto", "--json"); code != 0 {
		t.Fatalf("run: %d %s", code, errs)
	}
	list, err := listSessions(t, db)
	if err != nil || len(list) != 1 || list[0].Turns != 3 {
		t.Fatalf("the run: %+v %v", list, err)
	}
	har := filepath.Join(dir, "x.har")
	if code, _, errs := mw(t, "--db", db, "export", list[0].ID, "--format", "har", "-o", har); code != 0 {
		t.Fatalf("export: %d %s", code, errs)
	}
	code, out, errs := mw(t, "--db", db2, "import", har)
	if code != 0 || !strings.Contains(out, "imported 1 session(s)") {
		t.Fatalf("import: %d %q %q", code, out, errs)
	}
	if got, err := listSessions(t, db2); err != nil || len(got) != 1 || got[0].Turns != 3 {
		t.Errorf("imported: %+v %v", got, err)
	}
}

func listSessions(t *testing.T, path string) ([]store.SessionInfo, error) {
	t.Helper()
	db, err := store.Open(path)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	return db.ListSessions(store.Filter{})
}

// Every repository file the README, or a page of docs/ it links to, names
// in an example exists.
func TestREADMEExamplesNameRealFiles(t *testing.T) {
	pages, err := filepath.Glob(filepath.Join("..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	pathRE := regexp.MustCompile(`(?:adapters|samples|session|store|ui|themes|docs)/[\w./-]+\.\w+`)
	for _, page := range append([]string{filepath.Join("..", "README.md")}, pages...) {
		text, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		name, _ := filepath.Rel("..", page)
		paths := pathRE.FindAllString(string(text), -1)
		if name == "README.md" && len(paths) < 3 {
			t.Fatalf("found only %d paths in the README", len(paths))
		}
		for _, p := range paths {
			if _, err := os.Stat(filepath.Join("..", p)); err != nil {
				t.Errorf("%s names %s, which does not exist", name, p)
			}
		}
	}
}

// Sessions recorded by the proxy list where they came from (the upstream
// host, "sim" for the simulator, never its internal port) and the model
// the provider reported.
func TestSessionsListProxyOrigin(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "m.db")
	db, err := store.Open(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []store.SessionMeta{
		{Title: "POST sim/v1/chat/completions", Protocol: "openai-chat", Provider: "sim", Model: "refund-model",
			BaseURL: "http://127.0.0.1:41105", Source: "proxy"},
		{Title: "POST api.openai.com/v1/responses", Protocol: "openai-responses", Provider: "openai", Model: "gpt-4o",
			BaseURL: "https://api.openai.com/v1", Source: "proxy"},
	} {
		w, err := db.CreateSession(m)
		if err != nil {
			t.Fatal(err)
		}
		rec, _ := w.StartAttempt(1, store.AttemptMeta{Method: "POST", URL: m.BaseURL + "/responses"})
		rec.Append(adapters.Step{Index: 0, Raw: adapters.RawEvent{Data: "{}"},
			Events: []adapters.Event{{Type: adapters.EvResponseStarted, ResponseID: "r1", Model: m.Model + "-2024-08-06"}}})
		rec.Finish(nil)
		w.Finish(store.StatusDone)
	}
	db.Close()
	_, out, _ := mw(t, "--db", dbPath, "sessions")
	for _, want := range []string{"proxy → sim", "proxy → api.openai.com", "gpt-4o-2024-08-06"} {
		if !strings.Contains(out, want) {
			t.Errorf("the list lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "41105") {
		t.Errorf("the list shows the simulator's internal port:\n%s", out)
	}
}

// shellFields splits a command line as a POSIX shell would for the
// examples' needs: blanks separate words, single quotes keep everything,
// double quotes keep all but a backslash's escape.
func shellFields(line string) []string {
	var out []string
	var word strings.Builder
	inWord := false
	var quote rune
	escaped := false
	for _, r := range line {
		switch {
		case escaped:
			word.WriteRune(r)
			escaped = false
		case quote == '\'' && r == '\'':
			quote = 0
		case quote == '\'':
			word.WriteRune(r)
		case r == '\\':
			escaped, inWord = true, true
		case quote == '"' && r == '"':
			quote = 0
		case quote == '"':
			word.WriteRune(r)
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				out = append(out, word.String())
				word.Reset()
				inWord = false
			}
		default:
			word.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		out = append(out, word.String())
	}
	return out
}

// decode without --protocol and a HAR import's skipped entries name the
// protocols from the registry's list, so a protocol added there cannot
// leave them stale (issue 27).
func TestProtocolListsComeFromTheRegistry(t *testing.T) {
	names := append(slices.Clone(registry.Protocols), adapters.ClaudeCode)
	code, out, errs := mw(t, "decode", "-")
	if code != ExitUsage || out != "" || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
		t.Fatalf("decode without --protocol: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	_, help, _ := mw(t, "decode", "--help")
	for _, p := range names {
		if !strings.Contains(errs, p) {
			t.Errorf("decode without --protocol does not name %s: %q", p, errs)
		}
		if !strings.Contains(help, p) {
			t.Errorf("decode --help does not name %s", p)
		}
	}
	dir := t.TempDir()
	harPath := filepath.Join(dir, "capture.har")
	writeJSONFile(t, harPath, map[string]any{"log": map[string]any{"version": "1.2", "creator": map[string]any{"name": "x", "version": "1"},
		"entries": []any{harEntry("GET", "https://platform.openai.com/favicon.ico", 200, "image/x-icon", "", "", "")}}})
	code, out, errs = mw(t, "--db", filepath.Join(dir, "m.db"), "import", harPath)
	want := fmt.Sprintf("not one of the %d protocols", len(registry.Protocols))
	if code != 0 || !strings.Contains(out, "1 of 1 HAR entries skipped: "+want) {
		t.Errorf("HAR import: exit %d, stdout %q, stderr %q; want %q", code, out, errs, want)
	}
	_, help, _ = mw(t, "import", "--help")
	for _, p := range registry.Protocols {
		if !strings.Contains(help, p) {
			t.Errorf("import --help does not name %s", p)
		}
	}
}
