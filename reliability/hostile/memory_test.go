package hostile

// Memory bounded by configuration, not by the attacker (issue 29): each
// test runs the real binary against a hostile upstream, client or file
// and asserts the proxy's (or the command's) peak RSS stays under the
// documented bound with headroom. Wall time is never asserted.

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelwire/modelwire/internal/suite"
	_ "modernc.org/sqlite"
)

// The documented bounds these tests hold the binary to (docs/measurements.md,
// "Reliability, measured"), with the headroom a Go heap needs on top.
const (
	// memProxyCap is the proxy's peak RSS under a hostile response:
	// --max-decoded (64 MiB) decoded, the spool (64 MiB) behind the client,
	// the decoded copies of one body, and the runtime.
	memProxyCap = 768 << 20
	// memStreamGrowth is how much the proxy's peak may grow between the
	// middle of a long stream and its end.
	memStreamGrowth = 96 << 20
	// memCommandCap bounds a command reading a crafted database.
	memCommandCap = 1 << 30
)

// memStart starts a long-running command of the binary (proxy, serve),
// waits for the line that starts with banner and returns the process and
// the address that follows the banner.
func memStart(t *testing.T, banner string, args ...string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(binPath, args...)
	cmd.Env = suite.Env(t.TempDir())
	var errb bytes.Buffer
	cmd.Stderr = &errb
	line, rest, err := suite.Start(cmd, banner)
	if err != nil {
		t.Fatalf("%v did not start: %v: %s", args, err, errb.String())
	}
	addr, _, _ := strings.Cut(line, " ")
	go func() { _, _ = io.Copy(io.Discard, rest) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd, addr
}

// memClient is the application: no compression of its own, no timeout
// (the bodies are large; the test's deadline bounds it).
var memClient = &http.Client{Transport: &http.Transport{DisableCompression: true}}

// memChatRequest is a chat completions request (stream or not).
func memChatRequest(stream bool) string {
	return fmt.Sprintf(`{"model":"gpt-4o-mini","stream":%v,"messages":[{"role":"user","content":"hostile memory test"}]}`, stream)
}

// memPost sends body to the proxy and returns the response body's length
// and hash, as the application received it.
func memPost(t *testing.T, url string, body io.Reader) (int, int64, [32]byte) {
	t.Helper()
	resp, err := memClient.Post(url, "application/json", body)
	if err != nil {
		t.Fatalf("the application got no response: %v", err)
	}
	defer resp.Body.Close()
	h := sha256.New()
	n, err := io.Copy(h, resp.Body)
	if err != nil {
		t.Fatalf("the application's body broke after %d bytes: %v", n, err)
	}
	var sum [32]byte
	copy(sum[:], h.Sum(nil))
	return resp.StatusCode, n, sum
}

// memBomb is the gzip of n zero bytes (a few hundred KiB per GiB),
// compressed by a goroutine as it is read, once per size.
func memBomb(n int64) []byte {
	pr, pw := io.Pipe()
	go func() {
		zw, _ := gzip.NewWriterLevel(pw, gzip.BestCompression)
		zero := make([]byte, 1<<20)
		for left := n; left > 0; left -= int64(len(zero)) {
			if _, err := zw.Write(zero[:min(int64(len(zero)), left)]); err != nil {
				pw.CloseWithError(err)
				return
			}
		}
		pw.CloseWithError(zw.Close())
	}()
	b, _ := io.ReadAll(pr)
	return b
}

func TestMemoryGzipBomb(t *testing.T) {
	inflated := size(1<<30, 8<<30)
	bomb := memBomb(inflated)
	want := sha256.Sum256(bomb)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Set("Content-Length", fmt.Sprint(len(bomb)))
		_, _ = w.Write(bomb)
	}))
	defer up.Close()
	dbPath := filepath.Join(t.TempDir(), "bomb.db")
	cmd, base := memStart(t, "modelwire proxy on ", "--db", dbPath, "proxy", "--listen", "127.0.0.1:0", "--upstream", up.URL+"/v1")
	status, n, sum := memPost(t, base+"/v1/chat/completions", strings.NewReader(memChatRequest(false)))
	if status != 200 || n != int64(len(bomb)) || sum != want {
		t.Fatalf("the application got status %d, %d bytes (want %d, whole)", status, n, len(bomb))
	}
	memStopProxy(t, cmd)
	peak := memPeakAfter(cmd)
	report("proxy: gzip bomb response", "%s gzip inflating to %s: served whole, peak RSS %s (bound %s)", memMiB(int64(len(bomb))), mib(inflated), mib(peak), mib(memProxyCap))
	if peak > memProxyCap {
		t.Errorf("the proxy's peak RSS was %s, over its bound %s", mib(peak), mib(memProxyCap))
	}
	memRecorded(t, dbPath, "too large to decode")
}

func TestMemoryPlainBody(t *testing.T) {
	total := size(256<<20, 1<<30)
	write := func(w io.Writer) {
		_, _ = io.WriteString(w, `{"id":"chatcmpl-big","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"`)
		line := bytes.Repeat([]byte("all work and no play "), 3000)
		for left := total; left > 0; left -= int64(len(line)) {
			_, _ = w.Write(line[:min(int64(len(line)), left)])
		}
		_, _ = io.WriteString(w, `"},"finish_reason":"stop"}]}`)
	}
	h := sha256.New()
	cw := &memCounter{w: h}
	write(cw)
	var want [32]byte
	copy(want[:], h.Sum(nil))
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", fmt.Sprint(cw.n))
		write(w)
	}))
	defer up.Close()
	dbPath := filepath.Join(t.TempDir(), "plain.db")
	cmd, base := memStart(t, "modelwire proxy on ", "--db", dbPath, "proxy", "--listen", "127.0.0.1:0", "--upstream", up.URL+"/v1")
	status, n, sum := memPost(t, base+"/v1/chat/completions", strings.NewReader(memChatRequest(false)))
	if status != 200 || n != cw.n || sum != want {
		t.Fatalf("the application got status %d, %d bytes (want %d, whole)", status, n, cw.n)
	}
	memStopProxy(t, cmd)
	peak := memPeakAfter(cmd)
	report("proxy: large plain response body", "%s JSON body: served whole, peak RSS %s (bound %s)", mib(total), mib(peak), mib(memProxyCap))
	if peak > memProxyCap {
		t.Errorf("the proxy's peak RSS was %s, over its bound %s", mib(peak), mib(memProxyCap))
	}
	memRecorded(t, dbPath, "too large to decode")
}

func TestMemoryLongStream(t *testing.T) {
	// Once the content passes --max-stream-text (16 MiB, reached after
	// ~25 MiB of these events) the recorder stops; the sample at half the
	// stream is past it, so the second half must leave RSS flat.
	total := size(128<<20, 1<<30)
	delta := strings.Repeat("lorem ipsum ", 20)
	event := `data: {"id":"chatcmpl-long","object":"chat.completion.chunk","model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"` + delta + `"}}]}` + "\n\n"
	events := total / int64(len(event))
	half := make(chan struct{})
	resume := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		batch := int64(256) // ~100 KiB, then a pause: a paced stream the recorder keeps up with
		for i := int64(0); i < events; i++ {
			if _, err := io.WriteString(w, event); err != nil {
				return
			}
			if i%batch == batch-1 {
				_ = rc.Flush()
				time.Sleep(time.Millisecond)
			}
			if i == events/2 {
				_ = rc.Flush()
				close(half)
				<-resume
			}
		}
		_, _ = io.WriteString(w, `data: {"id":"chatcmpl-long","object":"chat.completion.chunk","model":"gpt-4o-mini","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
	}))
	defer up.Close()
	dbPath := filepath.Join(t.TempDir(), "stream.db")
	cmd, base := memStart(t, "modelwire proxy on ", "--db", dbPath, "proxy", "--listen", "127.0.0.1:0", "--upstream", up.URL+"/v1")
	earlyc := make(chan int64, 1)
	go func() {
		<-half
		time.Sleep(500 * time.Millisecond) // the recorder catches up with the first half
		earlyc <- suite.PeakRSS(cmd.Process.Pid)
		close(resume)
	}()
	status, n, _ := memPost(t, base+"/v1/chat/completions", strings.NewReader(memChatRequest(true)))
	if status != 200 || n < events*int64(len(event)) {
		t.Fatalf("the application got status %d, %d bytes (want over %d)", status, n, events*int64(len(event)))
	}
	early := <-earlyc
	memStopProxy(t, cmd)
	late := memPeakAfter(cmd)
	report("proxy: long paced stream", "%s of events: peak RSS %s at half, %s at the end (growth bound %s, bound %s)", mib(total), mib(early), mib(late),
		mib(memStreamGrowth), mib(memProxyCap))
	if late-early > memStreamGrowth || late > memProxyCap {
		t.Errorf("the proxy's peak RSS went from %s at half the stream to %s at its end: more than %s growth or over %s", mib(early), mib(late),
			mib(memStreamGrowth), mib(memProxyCap))
	}
	memRecorded(t, dbPath, "too large to record whole")
}

func TestMemoryRequestBodies(t *testing.T) {
	const clients = 8
	each := size(24<<20, 60<<20)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"chatcmpl-1","object":"chat.completion","model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}`)
	}))
	defer up.Close()
	dbPath := filepath.Join(t.TempDir(), "requests.db")
	cmd, base := memStart(t, "modelwire proxy on ", "--db", dbPath, "proxy", "--listen", "127.0.0.1:0", "--upstream", up.URL+"/v1")
	body := func(i int) []byte {
		text := strings.Repeat(fmt.Sprintf("request %d says ", i), int(each)/16)
		return []byte(`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"` + text + `"}]}`)
	}
	var wg sync.WaitGroup
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if status, _, _ := memPost(t, base+"/v1/chat/completions", bytes.NewReader(body(i))); status != 200 {
				t.Errorf("client %d got status %d", i, status)
			}
		}()
	}
	wg.Wait()
	memStopProxy(t, cmd)
	peak := memPeakAfter(cmd)
	report("proxy: large request bodies", "%d × %s at once: peak RSS %s (bound %s)", clients, mib(each), mib(peak), mib(memProxyCap))
	if peak > memProxyCap {
		t.Errorf("the proxy's peak RSS was %s, over its bound %s", mib(peak), mib(memProxyCap))
	}
}

func TestMemoryServeKeepsBytes(t *testing.T) {
	// The simulator reads an input at a few MB/s: the default run keeps
	// it short, past the bound several times over all the same.
	const keepMiB = 8
	requests := int(size(16, 160))
	each := int(size(2<<20, 4<<20))
	cmd, base := memStart(t, "modelwire simulator on ", "serve", "--addr", "127.0.0.1:0", "--keep-mib", fmt.Sprint(keepMiB))
	for i := range requests {
		text := strings.Repeat(fmt.Sprintf("input %d ", i), each/9)
		req := `{"model":"gpt-4o-mini","input":"` + text + `"}`
		if status, _, _ := memPost(t, base+"/v1/responses", strings.NewReader(req)); status != 200 {
			t.Fatalf("request %d got status %d", i, status)
		}
	}
	peak := suite.PeakRSS(cmd.Process.Pid)
	bound := int64(keepMiB<<20) + 256<<20
	report("serve: many large responses kept", "%d × %s inputs, --keep-mib %d: peak RSS %s (bound %s)", requests, mib(int64(each)), keepMiB, mib(peak), mib(bound))
	if peak > bound {
		t.Errorf("serve's peak RSS was %s, over its bound %s", mib(peak), mib(bound))
	}
}

func TestMemoryCraftedTurn(t *testing.T) {
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "crafted.db")
	if out, code, _ := memRun(t, "--db", dbPath, "run", "--approve", "auto"); code != 0 {
		t.Fatalf("recording a session: %s", out)
	}
	db, err := sql.Open("sqlite", dbPath)
	if err != nil {
		t.Fatal(err)
	}
	var id string
	if err := db.QueryRow(`SELECT id FROM sessions LIMIT 1`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`UPDATE attempts SET turn = 2000000000 WHERE aid = (SELECT max(aid) FROM attempts)`,
		`UPDATE sessions SET turns = 2000000000`,
		// The chunks' entry numbers are the file's word too: they must not vouch for the turn.
		`UPDATE chunks SET last_seq = 2000000000 WHERE cid = (SELECT max(cid) FROM chunks)`} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()
	worst := int64(0)
	for _, args := range [][]string{{"replay", id}, {"replay", "--json", id}, {"diff", id, id}, {"export", id}, {"export", id, "--format", "har"}, {"sessions"}} {
		out, code, peak := memRun(t, append([]string{"--db", dbPath}, args...)...)
		t.Logf("%v: exit %d, peak %s: %.300s", args, code, mib(peak), out)
		worst = max(worst, peak)
		if peak > memCommandCap {
			t.Errorf("%v: peak RSS %s, over %s", args, mib(peak), mib(memCommandCap))
		}
		if code != 0 && !strings.Contains(out, "damaged") {
			t.Errorf("%v: exit %d without saying the session is damaged: %s", args, code, out)
		}
		if code < 0 {
			t.Errorf("%v: killed (%s)", args, out)
		}
	}
	report("store: crafted turn number 2·10⁹", "replay, replay --json, diff, export, sessions: a clear error or output, worst peak RSS %s (bound %s)", mib(worst), mib(memCommandCap))
}

// memRun runs a command of the binary to its end, killing it past
// memCommandCap or two minutes; it returns its output, exit code (-1:
// killed) and peak RSS.
func memRun(t *testing.T, args ...string) (string, int, int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binPath, args...)
	cmd.Env = suite.Env(t.TempDir())
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var peak int64
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			code, _ := suite.ExitCode(err)
			s := out.String()
			if len(s) > 2000 {
				s = s[:2000] + "…"
			}
			return s, code, peak
		case <-tick.C:
			if p := suite.PeakRSS(cmd.Process.Pid); p > peak {
				peak = p
			}
			if peak > memCommandCap {
				_ = cmd.Process.Kill()
			}
		}
	}
}

// memStopProxy ends the proxy as Ctrl-C does, so that it finishes its
// recordings; the process is left unreaped for memPeakAfter.
func memStopProxy(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	_ = cmd.Process.Signal(os.Interrupt)
}

// memPeakAfter is the process's peak RSS as it ends: VmHWM sampled until
// it is gone (a zombie has none), the last reading kept. (The kernel's
// rusage maximum would be simpler, but for a child of this process it
// counts the test's own memory at the fork.)
func memPeakAfter(cmd *exec.Cmd) int64 {
	var peak int64
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		p := suite.PeakRSS(cmd.Process.Pid)
		if p == 0 {
			break
		}
		peak = max(peak, p)
		time.Sleep(5 * time.Millisecond)
	}
	return peak
}

// memRecorded checks that the database records why a body was not
// decoded.
func memRecorded(t *testing.T, dbPath, want string) {
	t.Helper()
	out, code, _ := memRun(t, "--db", dbPath, "sessions")
	if code != 0 {
		t.Fatalf("sessions: %s", out)
	}
	fields := strings.Fields(strings.SplitN(out, "\n", 3)[1])
	if len(fields) == 0 {
		t.Fatalf("no session listed: %s", out)
	}
	// The recording may be a large one: its JSON is searched as it comes.
	cmd := exec.Command(binPath, "--db", dbPath, "replay", "--json", fields[0])
	cmd.Env = suite.Env(t.TempDir())
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	found := false
	sc := bufio.NewScanner(stdout)
	sc.Buffer(nil, 256<<20)
	for sc.Scan() {
		found = found || strings.Contains(sc.Text(), want)
	}
	_, _ = io.Copy(io.Discard, stdout)
	_ = cmd.Wait()
	if !found {
		t.Errorf("the recording does not say %q", want)
	}
}

// memCounter counts what passes to w.
type memCounter struct {
	w io.Writer
	n int64
}

func (c *memCounter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return c.w.Write(p)
}

func memMiB(n int64) string { return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20)) }
