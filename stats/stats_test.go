package stats_test

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelwire/modelwire/stats"
	"github.com/modelwire/modelwire/store"
)

var epoch = time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)

// known is a store of 1,500 sessions whose figures are worked out by hand
// below (knownSessions says what each is).
func knownStore(t *testing.T) *store.DB {
	t.Helper()
	db, err := store.Open(filepath.Join(t.TempDir(), "stats.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	for _, s := range knownSessions() {
		writeSession(t, db, s)
	}
	return db
}

// knownSessions:
//
// Group A, refund-model over openai-responses, sessions i = 1…1000: the
// answering attempt reaches first text at i ms and its terminal at 3i ms,
// 1,000 input tokens (200 of them cached when i is even) and 500 output.
// Before it, when i%4 == 0 a 429 (a retry, no usage, not billed); when
// i%20 == 3 a stream cut before its usage (to reconcile); when i%20 == 7
// a stream cut after reporting 1,000 input and 100 output tokens (billed).
// Sessions with i%10 == 0 fail schema, with i%25 == 7 fail domain.
//
// Group B, claude-haiku-4-5 over anthropic-messages, i = 1…500: i ≤ 400
// answer with first text at 2i ms, terminal at 2i+10 ms, 2,000 input and
// 100 output tokens (40 of them reasoning when i is even); i > 400 get a
// 500 and fail transport.
func knownSessions() []sessionSpec {
	var out []sessionSpec
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	for i := 1; i <= 1000; i++ {
		s := sessionSpec{protocol: "openai-responses", provider: "sim", model: "refund-model", created: epoch.Add(time.Duration(i) * time.Second)}
		switch {
		case i%4 == 0:
			s.attempts = append(s.attempts, attemptSpec{status: 429, firstByte: ms(1)})
		case i%20 == 3:
			s.attempts = append(s.attempts, attemptSpec{status: 200, firstByte: ms(1), firstEvent: ms(2), model: "refund-model", failed: true})
		case i%20 == 7:
			s.attempts = append(s.attempts, attemptSpec{status: 200, firstByte: ms(1), firstEvent: ms(2), model: "refund-model",
				usage: usage(1000, 100, 0, 0), failed: true})
		}
		cached := int64(0)
		if i%2 == 0 {
			cached = 200
		}
		s.attempts = append(s.attempts, attemptSpec{status: 200, firstByte: ms(1) / 2, firstEvent: ms(i), firstText: ms(i),
			terminal: ms(3 * i), usage: usage(1000, 500, cached, 0), model: "refund-model"})
		switch {
		case i%10 == 0:
			s.failedLayer = "schema"
		case i%25 == 7:
			s.failedLayer = "domain"
		}
		out = append(out, s)
	}
	for i := 1; i <= 500; i++ {
		s := sessionSpec{protocol: "anthropic-messages", provider: "anthropic", model: "claude-haiku-4-5", created: epoch.Add(time.Hour + time.Duration(i)*time.Second)}
		if i > 400 {
			s.attempts = []attemptSpec{{status: 500, firstByte: ms(3)}}
			s.failedLayer = "transport"
		} else {
			reasoning := int64(0)
			if i%2 == 0 {
				reasoning = 40
			}
			s.attempts = []attemptSpec{{status: 200, firstByte: ms(1), firstEvent: ms(1), firstText: ms(2 * i), terminal: ms(2*i + 10),
				usage: usage(2000, 100, 0, reasoning), model: "claude-haiku-4-5-20251001"}}
		}
		out = append(out, s)
	}
	return out
}

func near(t *testing.T, what string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

func point(t *testing.T, r *stats.Report, g *stats.Group, name string) stats.Dist {
	t.Helper()
	for i, p := range r.Points {
		if p == name {
			return g.Points[i]
		}
	}
	t.Fatalf("no time point %q in %v", name, r.Points)
	return stats.Dist{}
}

func TestKnownStore(t *testing.T) {
	db := knownStore(t)
	r, err := stats.Compute(db, store.Filter{}, []string{"model"})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Groups) != 2 {
		t.Fatalf("%d groups, want 2 (the two models): %+v", len(r.Groups), r.Groups)
	}
	// Sorted by key: claude-haiku-4-5 (group B, by the model asked for,
	// though its answers name a dated snapshot) before refund-model (A).
	b, a := &r.Groups[0], &r.Groups[1]
	if a.Key[0] != "refund-model" || b.Key[0] != "claude-haiku-4-5" {
		t.Fatalf("groups %q and %q", a.Key, b.Key)
	}

	t.Run("A", func(t *testing.T) {
		// 100 fail schema (i%10 == 0), 40 domain (i ≡ 7 mod 25 never ≡ 0 mod 10).
		if a.Sessions != 1000 || a.Done != 860 || a.Failed != 140 {
			t.Errorf("sessions %d done %d failed %d, want 1000, 860, 140", a.Sessions, a.Done, a.Failed)
		}
		near(t, "failure rate", a.FailureRate(), 0.14)
		if a.FailedLayers["schema"] != 100 || a.FailedLayers["domain"] != 40 || len(a.FailedLayers) != 2 {
			t.Errorf("failed layers %v, want schema 100, domain 40", a.FailedLayers)
		}
		// 250 429s, 50 cuts before usage, 50 after.
		if a.Attempts != 1350 || a.Retries != 350 {
			t.Errorf("attempts %d retries %d, want 1350, 350", a.Attempts, a.Retries)
		}
		// First text at 1…1000 ms: nearest rank 500 and 950.
		ft := point(t, r, a, "first_text")
		if ft.N != 1000 {
			t.Errorf("first_text n = %d, want 1000", ft.N)
		}
		near(t, "first_text p50", ft.P50, 500)
		near(t, "first_text p95", ft.P95, 950)
		near(t, "first_text max", ft.Max, 1000)
		term := point(t, r, a, "terminal")
		if term.N != 1000 {
			t.Errorf("terminal n = %d, want 1000 (no retried attempt ended)", term.N)
		}
		near(t, "terminal p50", term.P50, 1500)
		near(t, "terminal p95", term.P95, 2850)
		near(t, "terminal max", term.Max, 3000)
		if fb := point(t, r, a, "headers"); fb.N != 1350 {
			t.Errorf("headers n = %d, want every attempt's 1350", fb.N)
		}
		// 500 tokens over 2i ms: 250,000/i a second; ascending, rank k is
		// i = 1001-k.
		if a.Speed.N != 1000 {
			t.Errorf("speed n = %d, want 1000", a.Speed.N)
		}
		near(t, "tokens/s p50", a.Speed.P50, 250000.0/501)
		near(t, "tokens/s p95", a.Speed.P95, 250000.0/51)
		near(t, "tokens/s max", a.Speed.Max, 250000)
		// Tokens: 1,000 answers of 1,000 in and 500 out, 50 cut after 1,000
		// in and 100 out; 500 answers had 200 cached.
		if a.InputTokens != 1050000 || a.OutputTokens != 505000 || a.CachedTokens != 100000 {
			t.Errorf("tokens in %d out %d cached %d, want 1050000, 505000, 100000", a.InputTokens, a.OutputTokens, a.CachedTokens)
		}
		near(t, "cache hit ratio", a.CacheHitRatio(), 100000.0/1050000)
		// refund-model: $1/M input, $0.10/M cached, $4/M output. Even i:
		// 800×1 + 200×0.1 + 500×4 = 2,820 µ$; odd: 3,000 µ$; the 50 cut
		// after usage: 1,000×1 + 100×4 = 1,400 µ$. 500×2820 + 500×3000 +
		// 50×1400 = 2,980,000 µ$.
		near(t, "cost", a.Cost, 2.98)
		near(t, "cost per success", a.CostPerSuccess(), 2.98/860)
		if a.ToReconcile != 50 || a.Unpriced != 0 || a.CostComplete() {
			t.Errorf("to reconcile %d unpriced %d complete %v, want 50, 0, false", a.ToReconcile, a.Unpriced, a.CostComplete())
		}
	})

	t.Run("B", func(t *testing.T) {
		if b.Sessions != 500 || b.Done != 400 || b.Failed != 100 || b.FailedLayers["transport"] != 100 {
			t.Errorf("sessions %d done %d failed %d layers %v, want 500, 400, 100 transport", b.Sessions, b.Done, b.Failed, b.FailedLayers)
		}
		near(t, "failure rate", b.FailureRate(), 0.2)
		// First text at 2, 4, … 800 ms: rank 200 is 400 ms, rank 380 760.
		ft := point(t, r, b, "first_text")
		if ft.N != 400 {
			t.Errorf("first_text n = %d, want 400", ft.N)
		}
		near(t, "first_text p50", ft.P50, 400)
		near(t, "first_text p95", ft.P95, 760)
		near(t, "first_text max", ft.Max, 800)
		// claude-haiku-4-5 (the table's entry for the dated name): $1/M
		// input, $5/M output, reasoning priced as output: 2,000 + 500 =
		// 2,500 µ$ × 400; the 500s are not billed.
		near(t, "cost", b.Cost, 1.0)
		near(t, "cost per success", b.CostPerSuccess(), 0.0025)
		if !b.CostComplete() || b.ReasoningTokens != 200*40 {
			t.Errorf("complete %v reasoning %d, want true, 8000", b.CostComplete(), b.ReasoningTokens)
		}
		if !math.IsNaN(b.CacheHitRatio()) && b.CacheHitRatio() != 0 {
			t.Errorf("cache hit ratio %v, want 0", b.CacheHitRatio())
		}
	})
}

// TestGroupByCacheAndReasoning: cache and reasoning are read from the
// tokens reported; a session with no usage at all is "unknown", not a
// miss.
func TestGroupByCacheAndReasoning(t *testing.T) {
	db := knownStore(t)
	r, err := stats.Compute(db, store.Filter{}, []string{"protocol", "cache", "reasoning"})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for i := range r.Groups {
		got[r.Name(&r.Groups[i])] = r.Groups[i].Sessions
	}
	want := map[string]int{
		"protocol=anthropic-messages cache=miss reasoning=no":         200,
		"protocol=anthropic-messages cache=miss reasoning=yes":        200,
		"protocol=anthropic-messages cache=unknown reasoning=unknown": 100,
		"protocol=openai-responses cache=hit reasoning=no":            500,
		"protocol=openai-responses cache=miss reasoning=no":           500,
	}
	if len(got) != len(want) {
		t.Errorf("groups %v, want %v", got, want)
	}
	for k, n := range want {
		if got[k] != n {
			t.Errorf("%s: %d sessions, want %d", k, got[k], n)
		}
	}
}

// TestGroupBySize: a session's input and output size are the largest
// request and answer its provider reported, in ranges of powers of four,
// listed smallest first; a session with no usage is "unknown", last.
func TestGroupBySize(t *testing.T) {
	db := knownStore(t)
	r, err := stats.Compute(db, store.Filter{}, []string{"input-size", "output-size"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i := range r.Groups {
		got = append(got, fmt.Sprintf("%s: %d", r.Name(&r.Groups[i]), r.Groups[i].Sessions))
	}
	// Group A: 1,000 in and 500 out (a failed first attempt's 1,000/100
	// is not larger); group B: 2,000 in, 100 out, its 500s without usage.
	want := []string{
		"input-size=256–1023 output-size=256–1023: 1000",
		"input-size=1024–4095 output-size=0–255: 400",
		"input-size=unknown output-size=unknown: 100",
	}
	if !slices.Equal(got, want) {
		t.Errorf("groups\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestFilters: the filters of `sessions` and --since select what is
// aggregated.
func TestFilters(t *testing.T) {
	db := knownStore(t)
	for _, c := range []struct {
		name string
		f    store.Filter
		want int
	}{
		{"protocol", store.Filter{Protocol: "anthropic-messages"}, 500},
		{"status", store.Filter{Status: store.StatusFailed}, 240},
		{"since", store.Filter{Since: epoch.Add(time.Hour)}, 500},
		{"since and status", store.Filter{Since: epoch.Add(time.Hour), Status: store.StatusDone}, 400},
		{"provider", store.Filter{Provider: "nobody"}, 0},
	} {
		r, err := stats.Compute(db, c.f, nil)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, g := range r.Groups {
			n += g.Sessions
		}
		if n != c.want {
			t.Errorf("%s: %d sessions, want %d", c.name, n, c.want)
		}
	}
}

func TestPercentileNearestRank(t *testing.T) {
	twenty := make([]float64, 20)
	for i := range twenty {
		twenty[i] = float64(i + 1)
	}
	for _, c := range []struct {
		v    []float64
		p    float64
		want float64
	}{
		{[]float64{7}, 50, 7}, {[]float64{7}, 95, 7},
		{[]float64{1, 2}, 50, 1}, {[]float64{1, 2}, 95, 2},
		{twenty, 50, 10}, {twenty, 95, 19}, {twenty, 100, 20},
	} {
		if got := stats.Percentile(c.v, c.p); got != c.want {
			t.Errorf("p%v of %v = %v, want %v", c.p, c.v, got, c.want)
		}
	}
	if !math.IsNaN(stats.Percentile(nil, 50)) {
		t.Error("p50 of nothing is a number")
	}
}

func TestParseBy(t *testing.T) {
	if by, err := stats.ParseBy(" model, cache ,"); err != nil || len(by) != 2 || by[0] != "model" || by[1] != "cache" {
		t.Errorf("ParseBy = %v, %v", by, err)
	}
	for _, bad := range []string{"modle", "model,model"} {
		if _, err := stats.ParseBy(bad); err == nil {
			t.Errorf("ParseBy(%q) took it", bad)
		}
	}
}

// TestRunningAndEmpty: a session still being written counts as running,
// outside the failure rate; a group that never finished or succeeded has
// no rate and no cost per success (NaN, null in JSON), not 0.
func TestRunningAndEmpty(t *testing.T) {
	db, err := store.Open(filepath.Join(t.TempDir(), "stats.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.CreateSession(store.SessionMeta{Protocol: "openai-chat", Model: "gpt-4.1-mini"}); err != nil {
		t.Fatal(err)
	}
	writeSession(t, db, sessionSpec{protocol: "openai-chat", model: "gpt-4.1-mini", created: epoch, failedLayer: "parse",
		attempts: []attemptSpec{{status: 200, firstByte: time.Millisecond, firstEvent: time.Millisecond, model: "gpt-4.1-mini", failed: true}}})
	r, err := stats.Compute(db, store.Filter{}, []string{"model"})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Groups) != 1 {
		t.Fatalf("%d groups, want 1", len(r.Groups))
	}
	g := &r.Groups[0]
	if g.Sessions != 2 || g.Running != 1 || g.Failed != 1 || g.FailureRate() != 1 || g.ToReconcile != 1 {
		t.Errorf("sessions %d running %d failed %d rate %v reconcile %d; want 2, 1, 1, 1, 1", g.Sessions, g.Running, g.Failed, g.FailureRate(), g.ToReconcile)
	}
	o := r.Object(g)
	if o.CostPerSuccess != nil || o.CacheHitRatio != nil || o.TimeMS["first_text"].N != 0 || o.TimeMS["first_text"].P50 != nil {
		t.Errorf("figures over nothing: cost per success %v, cache hit %v, first text %+v; want null", o.CostPerSuccess, o.CacheHitRatio, o.TimeMS["first_text"])
	}
	if o.CostComplete {
		t.Error("a cut stream's cost is complete")
	}
}

// TestReasoningFirstToken: a reasoning model's first output token is its
// first reasoning delta, before any visible text, and output tokens per
// second count from it (13.7.1: reasoning is output the caller waits on).
func TestReasoningFirstToken(t *testing.T) {
	db, err := store.Open(filepath.Join(t.TempDir(), "stats.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	writeSession(t, db, sessionSpec{protocol: "openai-chat", model: "gpt-4.1-mini", created: epoch,
		attempts: []attemptSpec{{status: 200, firstByte: 10 * time.Millisecond, firstEvent: 20 * time.Millisecond,
			firstReasoning: 100 * time.Millisecond, firstText: 400 * time.Millisecond, terminal: 1000 * time.Millisecond,
			usage: usage(50, 900, 0, 600), model: "gpt-4.1-mini"}}})
	r, err := stats.Compute(db, store.Filter{}, []string{"model"})
	if err != nil {
		t.Fatal(err)
	}
	o := r.Object(&r.Groups[0])
	tok, text := o.TimeMS["first_token"], o.TimeMS["first_text"]
	if tok.P50 == nil || text.P50 == nil || *tok.P50 != 100 || *text.P50 != 400 {
		t.Fatalf("first_token %+v, first_text %+v; want p50 100 and 400 ms", tok, text)
	}
	// 900 tokens from the first token (100 ms) to the terminal (1000 ms).
	if p := o.OutputTokensPerS.P50; p == nil || *p != 1000 {
		t.Errorf("output tokens/s p50 = %v, want 1000", p)
	}
}
