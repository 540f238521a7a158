package cli

import (
	"encoding/csv"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mattn/go-runewidth"

	"github.com/modelwire/modelwire/adapters"
)

// TestStatsCommand: sessions that `run` recorded (two that pass, one that
// fails its domain checks, one through another protocol) aggregate per
// protocol in the table, --json and --csv alike.
func TestStatsCommand(t *testing.T) {
	db := filepath.Join(t.TempDir(), "mw.db")
	for _, args := range [][]string{
		{"--scenario", "refund"},
		{"--scenario", "refund"},
		{"--scenario", "refund/wrong-cap", "--regenerate=false"},
		{"--scenario", "refund", "--protocol", adapters.AnthropicMessages},
	} {
		mw(t, append([]string{"--db", db, "run", "--approve", "auto"}, args...)...)
	}

	code, out, errOut := mw(t, "--db", db, "stats", "--by", "protocol", "--json")
	if code != 0 {
		t.Fatalf("stats --json: exit %d: %s", code, errOut)
	}
	groups := map[string]map[string]any{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var o map[string]any
		if err := json.Unmarshal([]byte(line), &o); err != nil {
			t.Fatalf("not a JSON line: %q", line)
		}
		groups[o["group"].(map[string]any)["protocol"].(string)] = o
	}
	resp := groups[adapters.OpenAIResponses]
	if resp == nil || len(groups) != 2 {
		t.Fatalf("groups %v, want %s and %s", groups, adapters.OpenAIResponses, adapters.AnthropicMessages)
	}
	if resp["sessions"] != 3.0 || resp["failed"] != 1.0 || resp["failed_layers"].(map[string]any)["domain"] != 1.0 {
		t.Errorf("openai-responses: sessions %v failed %v layers %v, want 3, 1, domain 1", resp["sessions"], resp["failed"], resp["failed_layers"])
	}
	if rate := resp["failure_rate"].(float64); rate < 0.333 || rate > 0.334 {
		t.Errorf("failure rate %v, want 1/3", rate)
	}
	ft := resp["time_ms"].(map[string]any)["first_text"].(map[string]any)
	if ft["n"].(float64) < 3 || ft["p50"] == nil || ft["p95"].(float64) < ft["p50"].(float64) || ft["max"].(float64) < ft["p95"].(float64) {
		t.Errorf("first_text %v: want a p50 ≤ p95 ≤ max over at least one attempt a session", ft)
	}
	cost, per := resp["cost"].(float64), resp["cost_per_success"].(float64)
	if cost <= 0 || per < cost/2*0.999 || per > cost/2*1.001 {
		t.Errorf("cost %v, cost per success %v: want the cost of all three over the two that passed", cost, per)
	}

	code, out, _ = mw(t, "--db", db, "stats", "--by", "protocol,model", "--csv")
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if code != 0 || err != nil || len(rows) != 3 || rows[0][0] != "protocol" || rows[0][1] != "model" || rows[0][2] != "sessions" {
		t.Fatalf("stats --csv: exit %d, %v, rows %q", code, err, rows)
	}

	code, out, _ = mw(t, "--db", db, "stats", "--by", "protocol", "--status", "failed")
	if code != 0 || !strings.Contains(out, "domain 1") || strings.Contains(out, adapters.AnthropicMessages) {
		t.Errorf("stats --status failed: exit %d\n%s", code, out)
	}
	// The table's lines line up in terminal cells.
	lines := strings.Split(out, "\n")
	if runewidth.StringWidth(lines[0]) < runewidth.StringWidth(lines[1]) {
		t.Errorf("the header is narrower than its row:\n%s", out)
	}

	code, out, _ = mw(t, "--db", db, "stats", "--since", "2099-01-01")
	if code != 0 || !strings.Contains(out, "No sessions") {
		t.Errorf("stats --since the future: exit %d: %s", code, out)
	}
}

func TestStatsBadInput(t *testing.T) {
	db := filepath.Join(t.TempDir(), "mw.db")
	for _, args := range [][]string{
		{"--by", "colour"},
		{"--since", "last tuesday"},
		{"--since", "-3h"},
		{"--status", "fine"},
		{"--json", "--csv"},
	} {
		code, out, errOut := mw(t, append([]string{"--db", db, "stats"}, args...)...)
		if code != 2 || out != "" || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
			t.Errorf("stats %v: exit %d, stdout %q, stderr %q; want 2 and one line", args, code, out, errOut)
		}
	}
}

func TestParseSince(t *testing.T) {
	now := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Time{
		"90m":                  now.Add(-90 * time.Minute),
		"7d":                   now.Add(-7 * 24 * time.Hour),
		"1.5d":                 now.Add(-36 * time.Hour),
		"2026-12-01T08:00:00Z": time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC),
	} {
		got, err := parseSince(in, now)
		if err != nil || !got.Equal(want) {
			t.Errorf("parseSince(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if got, err := parseSince("2026-12-01", now); err != nil || got.Day() != 1 || got.Hour() != 0 {
		t.Errorf("parseSince(a date) = %v, %v", got, err)
	}
}

// stats --by reasoning-setting groups sessions by what their requests set
// of reasoning, as each protocol's descriptor reads it: check --suite's
// reasoning probe asks for medium effort, the other probes for none.
func TestStatsByReasoningSetting(t *testing.T) {
	db := filepath.Join(t.TempDir(), "mw.db")
	for _, protocol := range []string{adapters.OpenAIResponses, adapters.AnthropicMessages} {
		mw(t, "--db", db, "check", "--suite", "--to", protocol, "--provider", adapters.ProviderSim)
	}
	code, out, errOut := mw(t, "--db", db, "stats", "--by", "protocol,reasoning-setting", "--json")
	if code != 0 {
		t.Fatalf("stats: exit %d: %s", code, errOut)
	}
	got := map[string]float64{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var o struct {
			Group    map[string]string `json:"group"`
			Sessions float64           `json:"sessions"`
		}
		if err := json.Unmarshal([]byte(line), &o); err != nil {
			t.Fatalf("not a JSON line: %q", line)
		}
		if o.Group != nil {
			got[o.Group["protocol"]+" "+o.Group["reasoning-setting"]] = o.Sessions
		}
	}
	// Anthropic's budget is the level's, within the request's max_tokens.
	for _, want := range []string{adapters.OpenAIResponses + " effort=medium", adapters.AnthropicMessages + " type=enabled budget_tokens="} {
		n := 0.0
		for g, sessions := range got {
			if strings.HasPrefix(g, want) {
				n += sessions
			}
		}
		if n != 1 {
			t.Errorf("groups %q…: %v sessions, want the reasoning probe alone; groups %v", want, n, got)
		}
	}
	if got[adapters.OpenAIResponses+" default"] < 5 || got[adapters.AnthropicMessages+" default"] < 5 {
		t.Errorf("the probes asking no reasoning: %v", got)
	}
}
