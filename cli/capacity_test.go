package cli

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/store"
)

// The bound comes from a stored run's own rate-limit headers (the
// simulator sends OpenAI's: 5000 requests and 4,000,000 tokens a minute)
// and its measured tokens and seconds; a planned repeat beyond it is
// warned of in one line with the numbers, one within it is not.
func TestCapacityWarningFromStoredRuns(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "mw.db")
	var out, errb bytes.Buffer
	if code := Main([]string{"run", "--db", dbPath, "--approve", "auto", "--protocol", adapters.OpenAIResponses}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("run: exit %d: %s", code, errb.String())
	}
	db, err := store.Open(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	b, perSession, err := storedCapacity(db, adapters.OpenAIResponses, adapters.ProviderSim, 1)
	if err != nil {
		t.Fatal(err)
	}
	in := b.Inputs
	if in.RequestsLimit != 5000 || in.TokensLimit != 4_000_000 || in.TokensPerRequest <= 0 || in.SecondsPerRequest <= 0 || perSession != 3 {
		t.Fatalf("inputs %+v, %v attempts a session", in, perSession)
	}
	if b.Binding == "" || len(b.Terms) != 3 {
		t.Fatalf("bound %s", b)
	}
	var w bytes.Buffer
	warnCapacity(&w, db, adapters.OpenAIResponses, adapters.ProviderSim, 2)
	if w.Len() != 0 {
		t.Errorf("two sessions warned of: %s", w.String())
	}
	// 100,000 sessions of 3 requests: far beyond a minute's 5000 requests.
	warnCapacity(&w, db, adapters.OpenAIResponses, adapters.ProviderSim, 100_000)
	got := w.String()
	if strings.Count(got, "\n") != 1 || !strings.Contains(got, "warning: 300000 planned requests") || !strings.Contains(got, "binds") {
		t.Errorf("the warning: %q", got)
	}
	// A protocol with nothing stored: nothing to judge by.
	w.Reset()
	warnCapacity(&w, db, adapters.AnthropicMessages, adapters.ProviderSim, 100_000)
	if w.Len() != 0 {
		t.Errorf("warned with nothing stored: %s", w.String())
	}
	db.Close()

	// run --repeat 2 on the same store: within the bound, no warning.
	out.Reset()
	errb.Reset()
	if code := Main([]string{"run", "--db", dbPath, "--approve", "auto", "--protocol", adapters.OpenAIResponses, "--repeat", "2"}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("run --repeat: exit %d: %s", code, errb.String())
	}
	if strings.Contains(errb.String(), "warning:") {
		t.Errorf("a repeat of 2 warned: %s", errb.String())
	}
}
