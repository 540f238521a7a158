package vcr_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"

	"github.com/modelwire/modelwire/vcr"
)

// withCassette names a cassette by header, as a test runner in another
// language would.
type withCassette struct{ name string }

func (w withCassette) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(vcr.CassetteHeader, w.name)
	return http.DefaultTransport.RoundTrip(r)
}

func serve(t *testing.T, o vcr.ServerOptions) string {
	t.Helper()
	s, err := vcr.NewServer(o)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return ts.URL
}

// serve --cassettes: a cassette recorded through the server by path
// prefix replays by header and by prefix with the simulator gone; a
// changed request gets the SDK's 409 naming the pointer and the update
// mode; hybrid records only the miss.
func TestServerModes(t *testing.T) {
	ctx := context.Background()
	up, _ := url.Parse(startSim(t))
	dir := t.TempDir()
	a := refundApp(t)
	count := &counting{}
	rec := serve(t, vcr.ServerOptions{Dir: dir, Mode: vcr.Record, Upstream: up, Transport: count})
	want, err := chatLoop(ctx, a, rec+"/c/refund", http.DefaultClient, true)
	if err != nil {
		t.Fatal(err)
	}
	turns := int(count.n.Load())
	b, err := os.ReadFile(filepath.Join(dir, "refund.jsonl"))
	if err != nil || bytes.Contains(b, []byte(sdkKey)) {
		t.Fatalf("the cassette: %v (or it holds the key)", err)
	}

	play := serve(t, vcr.ServerOptions{Dir: dir, Mode: vcr.Replay, Transport: offline{t}})
	if got, err := chatLoop(ctx, a, play+"/c/refund", http.DefaultClient, true); err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("replayed by path prefix: %v\n%q", err, got)
	}
	if got, err := chatLoop(ctx, a, play, &http.Client{Transport: withCassette{"refund"}}, true); err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("replayed by header: %v\n%q", err, got)
	}
	changed := *a
	changed.task += " (urgent)"
	_, err = chatLoop(ctx, &changed, play+"/c/refund", http.DefaultClient, true)
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 409 || !strings.Contains(apiErr.Message, "differs first at /messages/1/content") ||
		!strings.Contains(apiErr.Message, "(urgent)") || !strings.Contains(apiErr.Message, "--mode update") {
		t.Errorf("a changed request: %v", err)
	}
	if _, err := chatLoop(ctx, a, play+"/c/nothing-here", http.DefaultClient, true); !errors.As(err, &apiErr) || !strings.Contains(apiErr.Message, "no cassette nothing-here") {
		t.Errorf("an unknown cassette: %v", err)
	}
	resp, err := http.Post(play+"/v1/chat/completions", "application/json", strings.NewReader("{}"))
	if err != nil || resp.StatusCode != 400 {
		t.Errorf("no cassette named: %v %v", resp.StatusCode, err)
	}

	count.n.Store(0)
	hyb := serve(t, vcr.ServerOptions{Dir: dir, Mode: vcr.Hybrid, Upstream: up, Transport: count})
	if _, err := chatLoop(ctx, &changed, hyb+"/c/refund", http.DefaultClient, true); err != nil {
		t.Fatal(err)
	}
	if n := int(count.n.Load()); n != turns {
		t.Errorf("hybrid asked the simulator %d times, want %d (every turn of the changed task)", n, turns)
	}
	if n := len(exchanges(t, filepath.Join(dir, "refund.jsonl"))); n != 2*turns {
		t.Errorf("the cassette holds %d exchanges, want %d", n, 2*turns)
	}
	play = serve(t, vcr.ServerOptions{Dir: dir, Mode: vcr.Replay, Transport: offline{t}})
	if _, err := chatLoop(ctx, &changed, play+"/c/refund", http.DefaultClient, true); err != nil {
		t.Errorf("the hybrid recording does not replay: %v", err)
	}
}

// Declared patterns are removed before writing, and matching runs on the
// redacted form, so the redacted cassette replays.
func TestRedactedCassetteReplays(t *testing.T) {
	t.Setenv(vcr.EnvMode, "")
	ctx := context.Background()
	sim := startSim(t)
	path := filepath.Join(t.TempDir(), "redacted")
	a := refundApp(t)
	a.system += " The customer is jane.doe@example.com."
	var want []string
	t.Run("record", func(t *testing.T) {
		rec := vcr.New(t, path, vcr.WithMode(vcr.Record), vcr.WithRedact(`[a-z.]+@example\.com`))
		var err error
		if want, err = chatLoop(ctx, a, sim, rec.Client(), false); err != nil {
			t.Fatal(err)
		}
	})
	b, err := os.ReadFile(path + ".jsonl")
	if err != nil || bytes.Contains(b, []byte("jane.doe")) || bytes.Contains(b, []byte(sdkKey)) {
		t.Fatalf("the cassette holds the address or the key (%v)", err)
	}
	t.Run("replay", func(t *testing.T) {
		rec := vcr.New(t, path, vcr.WithRedact(`[a-z.]+@example\.com`), vcr.WithUpstream(offline{t}))
		if got, err := chatLoop(ctx, a, "http://127.0.0.1:9", rec.Client(), false); err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("replayed: %v", err)
		}
	})
}

// MODELWIRE_VCR wins over the test's own mode, so the command a miss
// prints re-records whatever the test says.
func TestEnvModeWins(t *testing.T) {
	t.Setenv(vcr.EnvMode, "record")
	path := filepath.Join(t.TempDir(), "env")
	sim := startSim(t)
	t.Run("run", func(t *testing.T) {
		rec := vcr.New(t, path, vcr.WithMode(vcr.Replay))
		if rec.Mode() != vcr.Record {
			t.Fatalf("mode %s, want record", rec.Mode())
		}
		if _, err := chatLoop(context.Background(), refundApp(t), sim, rec.Client(), false); err != nil {
			t.Fatal(err)
		}
	})
	if _, err := os.Stat(path + ".jsonl"); err != nil {
		t.Errorf("nothing recorded: %v", err)
	}
	t.Setenv(vcr.EnvMode, "rewind")
	f := &fakeTB{name: "TestX"}
	vcr.New(f, path)
	if len(f.errs) != 1 || !strings.Contains(f.errs[0], `MODELWIRE_VCR: mode "rewind"`) {
		t.Errorf("a bad mode: %q", f.errs)
	}
	t.Setenv(vcr.EnvMode, "")
	f = &fakeTB{name: "TestX"}
	vcr.New(f, filepath.Join(t.TempDir(), "absent"))
	if len(f.errs) != 1 || !strings.Contains(f.errs[0], "does not exist") || !strings.Contains(f.errs[0], "MODELWIRE_VCR=record go test -run '^TestX$'") {
		t.Errorf("a missing cassette in replay: %q", f.errs)
	}
}
