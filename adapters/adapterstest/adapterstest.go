package adapterstest

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelwire/modelwire/adapters"
)

// Update rewrites golden files instead of comparing: go test ./adapters/... -update
var Update = flag.Bool("update", false, "rewrite golden files")

// Decode runs a capture (an SSE/NDJSON stream, or a JSON body when it
// starts with '{' or '[') through p and returns every canonical event and
// the summary. It fails the test if the invariants break.
func Decode(t testing.TB, p adapters.Protocol, body []byte) ([]adapters.Event, adapters.Summary) {
	t.Helper()
	events, s := DecodeBytes(p, body)
	CheckInvariants(t, events)
	return events, s
}

// DecodeBytes is Decode without a test: for fuzzing and benchmarks.
func DecodeBytes(p adapters.Protocol, body []byte) ([]adapters.Event, adapters.Summary) {
	st := adapters.NewStream(p)
	var events []adapters.Event
	if p.Framing() == adapters.FramingSSE && !adapters.LooksLikeStream(body) {
		events = st.FeedBody(body)
		return events, st.Summary()
	}
	_ = adapters.ReadStream(p, st, bytes.NewReader(body), func(s adapters.Step) error {
		events = append(events, s.Events...)
		return nil
	})
	return events, st.Summary()
}

// ReadCapture reads testdata/<name>.
func ReadCapture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Golden compares got (marshalled as indented JSON) with
// testdata/<name>.golden.json, or rewrites it with -update.
func Golden(t testing.TB, name string, got any) {
	t.Helper()
	b, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, '\n')
	path := filepath.Join("testdata", name+".golden.json")
	if *Update {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(want, b) {
		t.Errorf("%s differs from the golden file.\n got: %s\nwant: %s", name, b, want)
	}
}

// CheckInvariants asserts the rules that hold for any input: seq runs
// 1..n, at most one terminal and it is the last event but diagnostics, and
// tool.proposed only follows the item.done of a tool call whose arguments
// form a JSON object.
func CheckInvariants(t testing.TB, events []adapters.Event) {
	t.Helper()
	if err := Invariants(events); err != "" {
		t.Fatal(err)
	}
}

// Invariants returns "" when events keep the rules of CheckInvariants, or
// what broke.
func Invariants(events []adapters.Event) string {
	terminals := 0
	closed := map[string]bool{}
	for i, ev := range events {
		if ev.Seq != i+1 {
			return "seq is not 1..n at event " + string(ev.Type)
		}
		switch ev.Type {
		case adapters.EvTerminal:
			terminals++
			if terminals > 1 {
				return "more than one terminal"
			}
		case adapters.EvItemDone:
			closed[ev.ItemID] = true
		case adapters.EvToolProposed:
			if !json.Valid(ev.Arguments) || !strings.HasPrefix(string(ev.Arguments), "{") {
				return "tool.proposed with arguments that are not a JSON object: " + string(ev.Arguments)
			}
			if i == 0 || events[i-1].Type != adapters.EvItemDone || !closed[events[i-1].ItemID] {
				return "tool.proposed not right after its item.done"
			}
		case adapters.EvDiagnostic:
		default:
			if terminals > 0 {
				return "a non-diagnostic event after the terminal: " + string(ev.Type)
			}
		}
	}
	if len(events) > 0 && terminals != 1 {
		return "no terminal at the end of the input"
	}
	return ""
}

// Fuzz feeds arbitrary bytes through p as a stream and as a body and
// checks the invariants; seeds are the package's captures.
func Fuzz(f *testing.F, p adapters.Protocol, seeds ...[]byte) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		events, _ := DecodeBytes(p, body)
		if err := Invariants(events); err != "" {
			t.Fatal(err)
		}
	})
}

// SeedsFromTestdata reads every file in testdata with one of the suffixes.
func SeedsFromTestdata(t testing.TB, suffixes ...string) [][]byte {
	entries, _ := os.ReadDir("testdata")
	var out [][]byte
	for _, e := range entries {
		for _, s := range suffixes {
			if strings.HasSuffix(e.Name(), s) {
				b, err := os.ReadFile(filepath.Join("testdata", e.Name()))
				if err == nil {
					out = append(out, b)
				}
			}
		}
	}
	return out
}
