package vcr_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/modelwire/modelwire/jsonl"
	"github.com/modelwire/modelwire/store"
	"github.com/modelwire/modelwire/vcr"
)

// Each official Go SDK runs the refund loop through a recorder in every
// mode, streaming and not, with the simulator standing in for the
// provider: recorded once, it replays offline to the same answers; a
// changed prompt fails the test naming the pointer and both values; update
// re-records only the exchange that changed; hybrid records a miss; live
// records nothing; and the cassette never holds the key.
func TestSDKsInEveryMode(t *testing.T) {
	t.Setenv(vcr.EnvMode, "")
	simBase := startSim(t)
	cases := []struct {
		name    string
		run     loop
		pointer string // where a changed system prompt shows first
	}{
		{"openai-go", chatLoop, "/messages/0/content"},
		{"anthropic-sdk-go", anthropicLoop, "/system/0/text"},
		{"genai", geminiLoop, "/systemInstruction/parts/0/text"},
	}
	for _, c := range cases {
		for _, stream := range []bool{false, true} {
			name := c.name
			if stream {
				name += "/stream"
			}
			t.Run(name, func(t *testing.T) { everyMode(t, c.run, simBase, stream, c.pointer) })
		}
	}
}

func everyMode(t *testing.T, run loop, simBase string, stream bool, pointer string) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "refund")
	file := path + ".jsonl"
	a := refundApp(t)
	calls := 0
	orig := a.result
	a.result = func(n int, name string, args []byte) string { calls = max(calls, n); return orig(n, name, args) }

	// record
	up := &counting{}
	var want []string
	t.Run("record", func(t *testing.T) {
		rec := vcr.New(t, path, vcr.WithMode(vcr.Record), vcr.WithUpstream(up))
		var err error
		if want, err = run(ctx, a, simBase, rec.Client(), stream); err != nil {
			t.Fatal(err)
		}
	})
	turns := int(up.n.Load())
	if turns < 2 || len(want) != turns || calls == 0 {
		t.Fatalf("recorded %d exchanges, %d turns, %d tool calls: the refund loop takes a tool turn and an answer", turns, len(want), calls)
	}
	recorded, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(recorded, []byte(sdkKey)) || bytes.Contains(recorded, []byte(sdkKey[3:15])) {
		t.Fatal("the cassette holds the key")
	}
	if n := len(exchanges(t, file)); n != turns {
		t.Fatalf("the cassette holds %d exchanges, want %d", n, turns)
	}

	// replay, offline: nothing listens at the base URL, the upstream fails
	replay := func(t *testing.T, a *app, want []string, opts ...vcr.Option) {
		rec := vcr.New(t, path, append(opts, vcr.WithUpstream(offline{t}))...)
		got, err := run(ctx, a, "http://127.0.0.1:9", rec.Client(), stream)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("replayed:\n%q\nrecorded:\n%q", got, want)
		}
	}
	t.Run("replay", func(t *testing.T) { replay(t, a, want) })
	t.Run("replay-timed", func(t *testing.T) { replay(t, a, want, vcr.WithRecordedTiming()) })

	// a changed prompt: the test fails with the pointer and both values
	t.Run("changed", func(t *testing.T) {
		f := &fakeTB{name: "TestRefund/changed"}
		rec := vcr.New(f, path, vcr.WithUpstream(offline{t}))
		changed := *a
		changed.system += " Answer in French."
		if _, err := run(ctx, &changed, "http://127.0.0.1:9", rec.Client(), stream); err == nil {
			t.Error("the SDK got an answer to a request the cassette never saw")
		}
		f.finish()
		if len(f.errs) != 1 {
			t.Fatalf("the test got %d failures, want 1: %q", len(f.errs), f.errs)
		}
		msg := f.errs[0]
		for _, want := range []string{"differs first at " + pointer + "\n", "recorded: ", "sent: ", "Answer in French.",
			"MODELWIRE_VCR=update go test -run '^TestRefund$/^changed$' ./vcr"} {
			if !strings.Contains(msg, want) {
				t.Errorf("the failure does not say %q:\n%s", want, msg)
			}
		}
		if strings.Contains(between(msg, "recorded: ", "\n"), "French") {
			t.Errorf("the recorded value is the sent one:\n%s", msg)
		}
	})

	// the last tool result changes: only the last exchange's request does
	changed := *a
	changed.result = func(n int, name string, args []byte) string {
		out := orig(n, name, args)
		if n == calls {
			var m map[string]any
			if json.Unmarshal([]byte(out), &m) == nil {
				m["checked_by"] = "update-test"
				b, _ := json.Marshal(m)
				out = string(b)
			}
		}
		return out
	}
	saved := append([]byte(nil), recorded...)

	t.Run("update", func(t *testing.T) {
		up := &counting{}
		var got []string
		t.Run("run", func(t *testing.T) {
			rec := vcr.New(t, path, vcr.WithMode(vcr.Update), vcr.WithUpstream(up))
			var err error
			if got, err = run(ctx, &changed, simBase, rec.Client(), stream); err != nil {
				t.Fatal(err)
			}
		})
		if n := up.n.Load(); n != 1 {
			t.Errorf("update asked the provider %d times, want once (the changed exchange)", n)
		}
		before, after := exchangesOf(t, saved), exchanges(t, file)
		if len(after) != len(before) {
			t.Fatalf("update left %d exchanges, want %d", len(after), len(before))
		}
		for i := range before[:len(before)-1] {
			if before[i] != after[i] {
				t.Errorf("exchange %d was rewritten:\n%s\n%s", i+1, before[i], after[i])
			}
		}
		if last := after[len(after)-1]; last == before[len(before)-1] || !strings.Contains(last, "update-test") {
			t.Errorf("the changed exchange was not re-recorded")
		}
		t.Run("replay", func(t *testing.T) { replay(t, &changed, got) })
	})

	t.Run("hybrid", func(t *testing.T) {
		if err := os.WriteFile(file, saved, 0o644); err != nil {
			t.Fatal(err)
		}
		up := &counting{}
		var got []string
		t.Run("run", func(t *testing.T) {
			rec := vcr.New(t, path, vcr.WithMode(vcr.Hybrid), vcr.WithUpstream(up))
			var err error
			if got, err = run(ctx, &changed, simBase, rec.Client(), stream); err != nil {
				t.Fatal(err)
			}
		})
		if n := up.n.Load(); n != 1 {
			t.Errorf("hybrid asked the provider %d times, want once (the miss)", n)
		}
		if n := len(exchanges(t, file)); n != turns+1 {
			t.Errorf("hybrid left %d exchanges, want %d (the miss added)", n, turns+1)
		}
		t.Run("replay-new", func(t *testing.T) { replay(t, &changed, got) })
		t.Run("replay-old", func(t *testing.T) { replay(t, a, want) })
	})

	t.Run("live", func(t *testing.T) {
		up := &counting{}
		livePath := filepath.Join(dir, "live")
		t.Run("run", func(t *testing.T) {
			rec := vcr.New(t, livePath, vcr.WithMode(vcr.Live), vcr.WithUpstream(up))
			if got, err := run(ctx, a, simBase, rec.Client(), stream); err != nil || len(got) != len(want) {
				t.Errorf("live: %v, %d turns, want %d", err, len(got), len(want))
			}
		})
		if n := int(up.n.Load()); n != turns {
			t.Errorf("live asked the provider %d times, want %d", n, turns)
		}
		if _, err := os.Stat(livePath + ".jsonl"); !os.IsNotExist(err) {
			t.Errorf("live wrote a cassette")
		}
	})

	// The cassette is a session: modelwire import restores it.
	t.Run("import", func(t *testing.T) {
		db, err := store.Open(filepath.Join(t.TempDir(), "mw.db"))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		res, err := jsonl.Import(db, f, file)
		if err != nil {
			t.Fatal(err)
		}
		_, recs, err := db.Turns(res.Sessions[0])
		if err != nil || len(recs) != turns+1 {
			t.Errorf("imported %d turns (%v), want %d", len(recs), err, turns+1)
		}
	})
}

func between(s, from, to string) string {
	_, s, _ = strings.Cut(s, from)
	s, _, _ = strings.Cut(s, to)
	return s
}

// exchanges are a cassette's exchanges, each its attempt line and its
// steps with their sequence numbers left out, as text.
func exchanges(t *testing.T, file string) []string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return exchangesOf(t, b)
}

func exchangesOf(t *testing.T, b []byte) []string {
	t.Helper()
	var out []string
	steps := map[int][]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var line map[string]any
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("a cassette line is not JSON: %v", err)
		}
		turn, _ := line["turn"].(float64)
		switch line["type"] {
		case "attempt":
			delete(line, "started_at")
			delete(line, "start_us")
			j, _ := json.Marshal(line)
			out = append(out, string(j))
		case "step":
			delete(line, "seq")
			delete(line, "offset_us")
			j, _ := json.Marshal(line)
			steps[int(turn)] = append(steps[int(turn)], string(j))
		}
	}
	for i := range out {
		out[i] += "\n" + strings.Join(steps[i+1], "\n")
	}
	return out
}
