package reliability

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelwire/modelwire/internal/suite"
	"github.com/modelwire/modelwire/store"
)

// committed reads, through a read-only handle as a second process would,
// the stream the first session of the database holds: the number of text
// deltas, which must be "w0 ", "w1 ", … with none missing or out of place.
func committed(path string) (id string, n int, err error) {
	db, err := store.OpenWith(path, store.Options{ReadOnly: true})
	if err != nil {
		return "", 0, err
	}
	defer db.Close()
	list, err := db.ListSessions(store.Filter{})
	if err != nil || len(list) == 0 {
		return "", 0, err
	}
	id = list[len(list)-1].ID // the oldest: the one under test
	n, err = deltas(db, id)
	return id, n, err
}

// deltas counts session id's text deltas, which must be "w0 ", "w1 ", …
// with none missing or out of place.
func deltas(db *store.DB, id string) (int, error) {
	n := 0
	err := db.EachEntry(id, 1, 0, func(e store.Entry) error {
		if e.Type != "text.delta" {
			return nil
		}
		ev, ok, err := e.Canonical()
		if err != nil || !ok {
			return fmt.Errorf("entry %d does not decode: %v", e.Seq, err)
		}
		if want := fmt.Sprintf("w%d ", n); ev.Delta != want {
			return fmt.Errorf("entry %d holds %q where %q belongs: an event is lost or out of order", e.Seq, ev.Delta, want)
		}
		n++
		return nil
	})
	return n, err
}

// killOutcome is what a kill left behind, checked by afterKill.
type killOutcome struct {
	seen, kept int
}

// killTally counts kills survived and events lost over a test.
type killTally struct{ survived, lost int }

func (k *killTally) add(o killOutcome) {
	if o.kept >= o.seen {
		k.survived++
	} else {
		k.lost += o.seen - o.kept
	}
}

// afterKill opens the database a killed process was writing and checks it:
// intact, the session interrupted, and every delta a reader saw committed
// before the kill still there, in order.
func afterKill(t *testing.T, path string, seen int) killOutcome {
	t.Helper()
	db, err := store.Open(path) // a writer: it finds the dead writer's session
	if err != nil {
		t.Fatalf("the database does not open after the kill: %v", err)
	}
	list, err := db.ListSessions(store.Filter{})
	db.Close()
	if err != nil || len(list) == 0 {
		t.Fatalf("no session after the kill: %v", err)
	}
	if st := list[len(list)-1].Status; st != store.StatusInterrupted {
		t.Errorf("session %s is %q after the kill, want interrupted", list[len(list)-1].ID, st)
	}
	if res := integrity(t, path); res != "ok" {
		t.Errorf("integrity_check after the kill: %s", res)
	}
	_, kept, err := committed(path)
	if err != nil {
		t.Errorf("after the kill: %v", err)
	}
	if kept < seen {
		t.Errorf("a reader saw %d deltas committed before the kill; %d survived it", seen, kept)
	}
	return killOutcome{seen: seen, kept: kept}
}

// killWhen polls the database while cmd runs and kills it with SIGKILL
// once ready says so (given what a reader last saw committed). It returns
// how many deltas the reader saw, and false when the process ended first.
func killWhen(t *testing.T, cmd *exec.Cmd, exited <-chan error, path string, ready func(seen int) bool) (int, bool) {
	t.Helper()
	seen := 0
	for {
		select {
		case <-exited:
			return seen, false
		default:
		}
		if _, n, err := committed(path); err == nil {
			seen = max(seen, n)
		} else if !strings.Contains(err.Error(), "no such file") && !isBusy(err) {
			t.Logf("reading while the writer runs: %v", err)
		}
		if ready(seen) {
			_ = cmd.Process.Kill()
			<-exited
			return seen, true
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func isBusy(err error) bool {
	s := err.Error()
	return strings.Contains(s, "busy") || strings.Contains(s, "locked") || strings.Contains(s, "not a modelwire database") ||
		strings.Contains(s, "no such table") || strings.Contains(s, "does not exist")
}

// TestKillRun SIGKILLs `modelwire run` at random points of a long stream.
// The upstream holds the stream open at a random event, so the run is
// certainly mid-stream, and the kill comes a random few milliseconds
// later, while the last events may still be on their way to the disk.
func TestKillRun(t *testing.T) {
	kills, events := size(8, 30), size(3000, 10000)
	seed := rand.Uint64()
	rng := rand.New(rand.NewPCG(seed, 1))
	t.Logf("seed %d", seed)
	var tally killTally
	for i := 0; i < kills; i++ {
		cs, upstream := newStallingChatStream(t, events, 10, 1+rng.IntN(events-1))
		delay := time.Duration(rng.IntN(40)) * time.Millisecond
		path := filepath.Join(t.TempDir(), "run.db")
		cmd := exec.Command(binPath, "--db", path, "run", "--provider", "compatible", "--base-url", upstream+"/v1",
			"--protocol", "openai-chat", "--approve", "auto", "--json")
		cmd.Env = suite.Env(t.TempDir())
		cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		var at time.Time
		seen, killed := killWhen(t, cmd, exited, path, func(int) bool {
			select {
			case <-cs.stalled:
				if at.IsZero() {
					at = time.Now()
				}
				return time.Since(at) >= delay
			default:
				return false
			}
		})
		if !killed {
			t.Fatalf("kill %d: the run ended on its own in the middle of its stream", i)
		}
		tally.add(afterKill(t, path, seen))
	}
	addFigure(figure{area: "crash", what: fmt.Sprintf("SIGKILL during `run` (%d-event stream)", events), tried: kills, held: tally.survived, lost: tally.lost,
		note: "integrity_check ok, session interrupted, every delta seen committed kept"})
}

// TestKillProxy SIGKILLs `modelwire proxy` in the middle of a stream it
// is passing to a client.
func TestKillProxy(t *testing.T) {
	kills, events := size(8, 30), size(3000, 10000)
	seed := rand.Uint64()
	rng := rand.New(rand.NewPCG(seed, 2))
	t.Logf("seed %d", seed)
	_, upstream := newChatStream(t, events, 10)
	want := expectedStream(t, upstream)
	var tally killTally
	for i := 0; i < kills; i++ {
		path := filepath.Join(t.TempDir(), "proxy.db")
		cmd, base, exited := startProxy(t, path, "--upstream", upstream+"/v1")
		got := make(chan []byte, 1)
		go func() {
			resp, err := http.Post(base+"/v1/chat/completions", "application/json", strings.NewReader(chatRequest(fmt.Sprint(i))))
			if err != nil {
				got <- nil
				return
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			got <- b
		}()
		target := 1 + rng.IntN(events*9/10)
		seen, killed := killWhen(t, cmd, exited, path, func(seen int) bool { return seen >= target })
		if !killed {
			t.Fatalf("the proxy exited on its own")
		}
		b := <-got
		if !bytes.HasPrefix(want, b) {
			t.Errorf("kill %d: the client got %d bytes that are not a prefix of the upstream's stream", i, len(b))
		}
		tally.add(afterKill(t, path, seen))
	}
	addFigure(figure{area: "crash", what: fmt.Sprintf("SIGKILL of `proxy` mid-stream (%d events)", events), tried: kills, held: tally.survived, lost: tally.lost,
		note: "client got an exact prefix; DB intact; session interrupted"})
}

// expectedStream fetches the upstream's stream once, directly, as the
// reference the proxied copies must be prefixes of.
func expectedStream(t *testing.T, upstream string) []byte {
	t.Helper()
	resp, err := http.Post(upstream+"/v1/chat/completions", "application/json", strings.NewReader(chatRequest("reference")))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || !bytes.HasSuffix(b, []byte("data: [DONE]\n\n")) {
		t.Fatalf("the reference stream: %v", err)
	}
	return b
}

// startProxy starts `modelwire proxy` on a free loopback port and returns
// it, its base URL and a channel that receives its exit.
func startProxy(t *testing.T, dbPath string, args ...string) (*exec.Cmd, string, chan error) {
	t.Helper()
	cmd := exec.Command(binPath, append([]string{"--db", dbPath, "proxy", "--listen", "127.0.0.1:0"}, args...)...)
	cmd.Env = suite.Env(t.TempDir())
	var errb bytes.Buffer
	cmd.Stderr = &errb
	base, exited := proxyUp(t, cmd, &errb)
	return cmd, base, exited
}

// proxyUp starts cmd, a proxy whose standard error goes to errb, and
// returns its base URL and a channel that receives its exit.
func proxyUp(t *testing.T, cmd *exec.Cmd, errb *bytes.Buffer) (string, chan error) {
	t.Helper()
	line, rest, err := suite.Start(cmd, "modelwire proxy on ")
	if err != nil {
		t.Fatalf("the proxy did not start: %v: %s", err, errb.String())
	}
	base, _, _ := strings.Cut(line, " ")
	exited := make(chan error, 1)
	go func() {
		_, _ = io.Copy(io.Discard, rest)
		exited <- cmd.Wait()
	}()
	t.Cleanup(func() { _ = cmd.Process.Kill() }) // an error when it has already ended
	return base, exited
}
