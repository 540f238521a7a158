package cli

import (
	"bytes"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/check"
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
	// 100,000 sessions of 3 requests, one at a time: beyond the bound
	// when the rate limits bind — unless this machine answered so slowly
	// (a race build, a busy CI) that one request in flight cannot reach
	// them, when the plan is within the bound and rightly not warned of.
	warnCapacity(&w, db, adapters.OpenAIResponses, adapters.ProviderSim, 100_000)
	got := w.String()
	if b.Binding == "concurrency" {
		if got != "" {
			t.Errorf("a plan paced by one request in flight warned of: %q (bound %s)", got, b)
		}
	} else if strings.Count(got, "\n") != 1 || !strings.Contains(got, "warning: 300000 planned requests") || !strings.Contains(got, "binds") {
		t.Errorf("the warning: %q (bound %s)", got, b)
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

// A provider whose limits reset at a time (Anthropic's RFC 3339 resets),
// read from a stored attempt's headers as of when they arrived: a plan
// needing more requests than remain before that reset is warned of.
func TestCapacityWarningFromAnthropicResets(t *testing.T) {
	db, err := store.Open(filepath.Join(t.TempDir(), "mw.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	storeNearlyLimited(t, db, adapters.ProviderAnthropic)
	b, _, err := storedCapacity(db, adapters.AnthropicMessages, adapters.ProviderAnthropic, 1)
	if err != nil {
		t.Fatal(err)
	}
	// 50/60 = 0.83/s; 40000/(60×2000) = 0.33/s; 1/0.8 s = 1.25/s: TPM binds.
	if b.Binding != "TPM" || b.Inputs.RequestsRemaining != 3 || b.Inputs.RequestsReset < 50*time.Second || b.Inputs.RequestsReset > time.Minute {
		t.Fatalf("bound %s, inputs %+v", b, b.Inputs)
	}
	var w bytes.Buffer
	warnCapacity(&w, db, adapters.AnthropicMessages, adapters.ProviderAnthropic, 5)
	if got := w.String(); !strings.Contains(got, "5 requests, 3 remaining until the reset in") || !strings.Contains(got, "TPM binds") {
		t.Errorf("the warning: %q", got)
	}
}

// storeNearlyLimited stores two Anthropic Messages sessions on provider
// whose responses say 3 requests remain until a reset a minute away
// (limits 50 requests and 40,000 tokens, 2,000 tokens and 0.8 s a request).
func storeNearlyLimited(t *testing.T, db *store.DB, provider string) {
	t.Helper()
	for range 2 {
		w, err := db.CreateSession(store.SessionMeta{Title: "limits", Protocol: adapters.AnthropicMessages, Provider: provider})
		if err != nil {
			t.Fatal(err)
		}
		rec, err := w.StartAttempt(1, store.AttemptMeta{Method: "POST", URL: "https://api.anthropic.com/v1/messages"})
		if err != nil {
			t.Fatal(err)
		}
		h := http.Header{}
		h.Set("anthropic-ratelimit-requests-limit", "50")
		h.Set("anthropic-ratelimit-requests-remaining", "3")
		h.Set("anthropic-ratelimit-requests-reset", time.Now().Add(time.Minute).UTC().Format(time.RFC3339))
		h.Set("anthropic-ratelimit-tokens-limit", "40000")
		_ = rec.MarkAt(store.MarkSent, 0)
		if err := rec.Response(200, h); err != nil {
			t.Fatal(err)
		}
		in, out := int64(1500), int64(500)
		term := adapters.Terminal(adapters.StatusCompleted, adapters.StopFinal, "end_turn")
		if err := rec.AppendAt(800*time.Millisecond, adapters.Step{Index: 0, Events: []adapters.Event{
			{Type: adapters.EvUsage, Usage: &adapters.Usage{InputTokens: &in, OutputTokens: &out}}, term}}); err != nil {
			t.Fatal(err)
		}
		if err := rec.Finish(nil); err != nil {
			t.Fatal(err)
		}
		if err := w.Finish(store.StatusDone); err != nil {
			t.Fatal(err)
		}
	}
}

// check --suite warns as check does: its probes against a target whose
// latest stored sessions say fewer requests remain than the probes need.
func TestCheckSuiteCapacityWarning(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "mw.db")
	db, err := store.Open(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	storeNearlyLimited(t, db, adapters.ProviderSim)
	db.Close()
	var out, errb bytes.Buffer
	Main([]string{"check", "--db", dbPath, "--suite", "--to", adapters.AnthropicMessages, "--provider", adapters.ProviderSim},
		strings.NewReader(""), &out, &errb)
	want := fmt.Sprintf("%d sessions of %s on %s", len(check.Probes), adapters.AnthropicMessages, adapters.ProviderSim)
	if got := errb.String(); !strings.Contains(got, "remaining until the reset in") || !strings.Contains(got, want) {
		t.Errorf("check --suite's warning: %q, want one naming %q", got, want)
	}
}
