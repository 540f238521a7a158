package reliability

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelwire/modelwire/internal/suite"
)

// An input is a name and a way to make its bytes: a file on disk or a
// stream on stdin, both written lazily so a 1 GB line never sits in memory.
type input struct {
	name string
	gen  func(w io.Writer) error
}

func bytesInput(name string, b []byte) input {
	return input{name, func(w io.Writer) error { _, err := w.Write(b); return err }}
}

// hugeLine is one line of n bytes: a JSON string that never ends in time.
func hugeLine(prefix string, n int64) input {
	return input{fmt.Sprintf("huge line (%d MiB)", n>>20), func(w io.Writer) error {
		if _, err := io.WriteString(w, prefix); err != nil {
			return err
		}
		chunk := bytes.Repeat([]byte("x"), 1<<20)
		for left := n; left > 0; left -= int64(len(chunk)) {
			if _, err := w.Write(chunk[:min(int64(len(chunk)), left)]); err != nil {
				return err
			}
		}
		_, err := io.WriteString(w, "\"}\n")
		return err
	}}
}

func (in input) file(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, fmt.Sprintf("%x", sha256.Sum256([]byte(in.name))))
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	if err := in.gen(bw); err != nil {
		t.Fatal(err)
	}
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return p
}

// badOutcome is what one bad input did to one command.
type badOutcome struct {
	code   int
	stderr string
	maxRSS int64 // KiB
}

// runWith runs the binary with in on stdin (nil: none). A command that
// has not finished within a few minutes has hung: it is killed and fails.
func runWith(t *testing.T, in *input, args ...string) badOutcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(size(2, 10))*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binPath, args...)
	cmd.Env = suite.Env(t.TempDir())
	var errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &errb
	var pw *io.PipeWriter
	if in != nil {
		var pr *io.PipeReader
		pr, pw = io.Pipe()
		cmd.Stdin = pr
		go func() {
			bw := bufio.NewWriterSize(pw, 1<<20)
			err := in.gen(bw)
			if err == nil {
				err = bw.Flush()
			}
			pw.CloseWithError(err)
		}()
	}
	err := cmd.Run()
	if pw != nil {
		pw.CloseWithError(io.ErrClosedPipe) // the reader may have stopped early: release the writer
	}
	o := badOutcome{stderr: errb.String()}
	if ctx.Err() != nil {
		o.stderr = fmt.Sprintf("hung: killed after %v\n", time.Duration(size(2, 10))*time.Minute)
	}
	if o.code, err = suite.ExitCode(err); err != nil {
		t.Fatalf("running %v: %v", args, err)
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		o.maxRSS = ru.Maxrss
	}
	return o
}

// judge checks an outcome against the contract: no panic; exit want; an
// exit 2 says what is wrong in one line.
func judge(t *testing.T, label string, o badOutcome, want int) bool {
	t.Helper()
	ok := true
	if strings.Contains(o.stderr, "panic") || strings.Contains(o.stderr, "goroutine ") {
		t.Errorf("%s: panicked:\n%s", label, o.stderr)
		return false
	}
	if o.code != want {
		t.Errorf("%s: exit %d, want %d (%s)", label, o.code, want, strings.TrimSpace(o.stderr))
		ok = false
	}
	if want == 2 && (strings.Count(o.stderr, "\n") != 1 || !strings.HasPrefix(o.stderr, "modelwire: ")) {
		t.Errorf("%s: want one line \"modelwire: …\" on stderr, got %q", label, o.stderr)
		ok = false
	}
	return ok
}

func fileSum(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		return "missing"
	}
	return fmt.Sprintf("%x", sha256.Sum256(b))
}

// dirListing is the names in a directory, to see that nothing was added.
func dirListing(t *testing.T, dir string) string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return strings.Join(names, ",")
}

// TestBadInput feeds every command that reads a file, stdin or a database
// truncated, binary, huge, deeply nested, invalid UTF-8 and hostile input.
func TestBadInput(t *testing.T) {
	huge := int64(size(16<<20, 1<<30))
	work := t.TempDir()
	dbDir := t.TempDir()
	dbPath := filepath.Join(dbDir, "mw.db")
	if _, errs, code := runBin(t, "", nil, "--db", dbPath, "run", "--approve", "auto"); code != 0 {
		t.Fatalf("the reference session: exit %d: %s", code, errs)
	}
	list, _, _ := runBin(t, "", nil, "--db", dbPath, "sessions", "--json")
	id := strings.SplitN(strings.SplitN(list, `"id":"`, 2)[1], `"`, 2)[0]
	jsonl, _, _ := runBin(t, "", nil, "--db", dbPath, "export", id)
	har, _, _ := runBin(t, "", nil, "--db", dbPath, "export", id, "--format", "har")
	scenario, err := os.ReadFile("../samples/refund.json")
	if err != nil {
		t.Fatal(err)
	}
	sse, err := os.ReadFile("../adapters/openaichat/testdata/chat_function_call.sse")
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(21, 21))
	binary := make([]byte, 64<<10)
	for i := range binary {
		binary[i] = byte(rng.UintN(256))
	}
	badUTF8 := func(b []byte) []byte {
		i := bytes.Index(b, []byte("退款"))
		if i < 0 {
			i = bytes.Index(b, []byte(`"text"`)) + 9
		}
		out := append([]byte(nil), b...)
		out[i], out[i+1] = 0xff, 0xfe
		return out
	}
	common := func(ref []byte, hugePrefix string) []input {
		return []input{
			bytesInput("truncated at a third", ref[:len(ref)/3]),
			bytesInput("truncated by 7 bytes", ref[:len(ref)-7]),
			bytesInput("binary", binary),
			bytesInput("nested [×10⁶", bytes.Repeat([]byte("["), 1_000_000)),
			bytesInput(`nested {"a":×10⁶`, bytes.Repeat([]byte(`{"a":`), 1_000_000)),
			bytesInput("invalid UTF-8", badUTF8(ref)),
			hugeLine(hugePrefix, huge),
		}
	}
	hostileHAR := []input{
		bytesInput("HAR entries not a list", []byte(`{"log":{"entries":"all of them"}}`)),
		bytesInput("HAR null log", []byte(`{"log":null}`)),
		bytesInput("HAR bad base64 body", []byte(`{"log":{"entries":[{"request":{"method":"POST","url":"http://x/v1/chat/completions","postData":{"text":"@@@"}},"response":{"status":200,"content":{"text":"%%%","encoding":"base64"}}}]}}`)),
		bytesInput("HAR url not a URL", []byte(`{"log":{"entries":[{"request":{"method":"POST","url":"http://[::1"},"response":{"status":200}}]}}`)),
		bytesInput("HAR negative sizes", []byte(`{"log":{"entries":[{"request":{"method":"POST","url":"http://x/v1/messages","bodySize":-5},"response":{"status":-1,"bodySize":-9,"content":{"size":-1,"text":"data: {\"type\":\"message_start\"\n\n"}}}]}}`)),
	}
	hostileJSONL := []input{
		bytesInput("JSONL header only", []byte(strings.SplitN(jsonl, "\n", 2)[0]+"\n")),
		bytesInput("JSONL lines reordered", []byte(reorder(jsonl))),
		bytesInput("JSONL wrong types", []byte(strings.SplitN(jsonl, "\n", 2)[0]+"\n"+`{"type":"session","id":42,"turns":"many"}`+"\n")),
		bytesInput("JSONL seq backwards", []byte(strings.Replace(jsonl, `"seq":3,`, `"seq":1,`, 1))),
	}
	hostileScenario := []input{
		bytesInput("scenario dangling $ref in a tool schema", editScenario(t, scenario, func(m map[string]any) {
			m["tools"].([]any)[0].(map[string]any)["parameters"] = map[string]any{"$ref": "#/definitions/missing"}
		})),
		bytesInput("scenario unknown tool in the script", editScenario(t, scenario, func(m map[string]any) {
			m["script"].([]any)[0].(map[string]any)["items"].([]any)[0].(map[string]any)["name"] = "no_such_tool"
		})),
		bytesInput("scenario two tools of one name", editScenario(t, scenario, func(m map[string]any) {
			tools := m["tools"].([]any)
			m["tools"] = append(tools, tools[0])
		})),
		bytesInput("scenario invalid regex in a schema", editScenario(t, scenario, func(m map[string]any) {
			m["tools"].([]any)[0].(map[string]any)["parameters"] = map[string]any{"type": "object", "properties": map[string]any{"x": map[string]any{"type": "string", "pattern": "(["}}}
		})),
		bytesInput("scenario empty object", []byte(`{}`)),
		bytesInput("scenario a JSON string", []byte(`"refund"`)),
	}
	hostileSSE := []input{
		bytesInput("SSE 10⁵ data lines in one event", bytes.Repeat([]byte("data: {\"x\":1}\n"), 100_000)),
		bytesInput("SSE NUL bytes", []byte("data: {\"id\":\"a\x00b\"}\n\n\x00\x00\x00")),
		bytesInput("SSE bare CRs", bytes.Repeat([]byte("data: {}\r"), 50_000)),
		bytesInput("SSE retry and id floods", bytes.Repeat([]byte("retry: 99999999999999999999\nid: \x00\nevent: \n\n"), 20_000)),
	}

	tried, held := 0, 0
	var maxRSS int64
	check := func(label string, o badOutcome, want int) {
		tried++
		if judge(t, label, o, want) {
			held++
		}
		maxRSS = max(maxRSS, o.maxRSS)
	}
	before := fileSum(t, dbPath)
	_ = before // the reference database is checked by its session list: WAL checkpoints move bytes

	// decode: malformed input becomes diagnostics (exit 0), from a file or stdin.
	protocols := []string{"openai-responses", "openai-chat", "anthropic-messages", "gemini", "deepseek-chat", "claude-code"}
	for _, in := range append(common(sse, "data: {\"a\":\""), hostileSSE...) {
		for _, p := range protocols {
			in := in
			check(fmt.Sprintf("decode --protocol %s < %s", p, in.name), runWith(t, &in, "decode", "--protocol", p, "-"), 0)
		}
		p := in.file(t, work)
		check("decode --summary FILE "+in.name, runWith(t, nil, "decode", "--protocol", "anthropic-messages", "--summary", p), 0)
		os.Remove(p)
	}
	// import: JSONL and HAR, sniffed and forced; nothing imported.
	for _, c := range []struct {
		ref    []byte
		extra  []input
		format string
	}{{[]byte(jsonl), hostileJSONL, "jsonl"}, {[]byte(har), hostileHAR, "har"}} {
		for _, in := range append(common(c.ref, `{"type":"modelwire.export","x":"`), c.extra...) {
			p := in.file(t, work)
			check(fmt.Sprintf("import %s (%s)", in.name, c.format), runWith(t, nil, "--db", dbPath, "import", p), 2)
			check(fmt.Sprintf("import --format %s %s", c.format, in.name), runWith(t, nil, "--db", dbPath, "import", "--format", c.format, p), 2)
			os.Remove(p)
		}
	}
	// scenarios: run, assemble and serve refuse them.
	for _, in := range append(common(scenario, `{"name":"`), hostileScenario...) {
		p := in.file(t, work)
		check("run --scenario "+in.name, runWith(t, nil, "--db", dbPath, "run", "--approve", "auto", "--scenario", p), 2)
		check("assemble --scenario "+in.name, runWith(t, nil, "assemble", "--scenario", p), 2)
		check("serve --scenario "+in.name, runWith(t, nil, "serve", "--addr", "127.0.0.1:0", "--scenario", p), 2)
		os.Remove(p)
	}
	// databases that are not ours: every command that opens one refuses it
	// and leaves it, and its directory, exactly as they were.
	real, err := os.ReadFile(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	notOurs := []input{
		bytesInput("text file as --db", []byte(strings.Repeat("not a database\n", 100))),
		bytesInput("binary file as --db", binary),
		bytesInput("truncated modelwire database", real[:len(real)/2]),
		bytesInput("foreign SQLite database", foreignSQLite(t)),
	}
	jsonlFile := filepath.Join(work, "ok.jsonl")
	if err := os.WriteFile(jsonlFile, []byte(jsonl), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, in := range notOurs {
		dir := t.TempDir()
		p := filepath.Join(dir, "x.db")
		if err := os.WriteFile(p, []byte{}, 0o644); err != nil {
			t.Fatal(err)
		}
		f, _ := os.Create(p)
		_ = in.gen(f)
		f.Close()
		sum, listing := fileSum(t, p), dirListing(t, dir)
		for _, args := range [][]string{{"sessions"}, {"sessions", "--json"}, {"replay", id, "--json"}, {"export", id},
			{"export", id, "--format", "har"}, {"import", jsonlFile}, {"run", "--approve", "auto"}, {"version"}} {
			label := fmt.Sprintf("%s: %s", in.name, strings.Join(args, " "))
			want := 2
			if args[0] == "version" {
				want = 0 // version reports the schema it finds; it must still not touch the file
			}
			check(label, runWith(t, nil, append([]string{"--db", p}, args...)...), want)
			if s, l := fileSum(t, p), dirListing(t, dir); s != sum || l != listing {
				t.Errorf("%s: the file or its directory changed (%s → %s)", label, listing, l)
			}
		}
	}
	out, _, _ := runBin(t, "", nil, "--db", dbPath, "sessions", "--json")
	if n := strings.Count(out, "\n"); n != 1 {
		t.Errorf("the reference database holds %d sessions after the bad imports, want 1", n)
	}
	addFigure(figure{area: "bad input", what: fmt.Sprintf("decode, import, run, assemble, serve, sessions, replay, export, version × bad inputs (huge line %d MiB)", huge>>20),
		tried: tried, held: held, lost: tried - held, note: fmt.Sprintf("no panic; exit 2 with one line (decode: diagnostics, exit 0); nothing written; max RSS %d MiB", maxRSS>>10)})
}

// editScenario is the refund scenario with one hostile edit.
func editScenario(t *testing.T, scenario []byte, edit func(map[string]any)) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(scenario, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// reorder swaps the export's second and third lines.
func reorder(jsonl string) string {
	lines := strings.Split(jsonl, "\n")
	if len(lines) > 3 {
		lines[1], lines[2] = lines[2], lines[1]
	}
	return strings.Join(lines, "\n")
}

// foreignSQLite is a SQLite database of someone else's.
func foreignSQLite(t *testing.T) []byte {
	t.Helper()
	p := filepath.Join(t.TempDir(), "other.db")
	db := openSQL(t, p)
	if _, err := db.Exec(`CREATE TABLE accounts (id INTEGER PRIMARY KEY, owner TEXT); INSERT INTO accounts VALUES (1, 'someone')`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
