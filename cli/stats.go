package cli

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/modelwire/modelwire/stats"
	"github.com/modelwire/modelwire/store"
)

func init() { register(newStatsCmd) }

func newStatsCmd(app *App) *cobra.Command {
	var f store.Filter
	var by, since string
	var asJSON, asCSV bool
	cmd := &cobra.Command{
		Use:   "stats",
		Short: "Latency, failures, tokens and cost across stored sessions, by group",
		Long: `Aggregate the stored sessions (the filters of "sessions", and --since) into
groups (--by model,protocol,provider,scenario,cache,reasoning): per group the
sessions, the failure rate (failed over done+failed) and the layers that
failed, p50/p95/max of each time point of the attempts (ms from the request's
start; nearest-rank percentiles) and of output tokens per second, the tokens,
the cost with failed and retried attempts included and the cost per successful
session, the cache hit ratio (cached over input tokens, as reported), and the
sessions whose cut stream left usage "to reconcile" (their cost is unknown,
not zero). --json writes one object per group, --csv a table. See
docs/stats.md for every field.`,
		Example: `  modelwire stats --by model,protocol
  modelwire stats --by cache --since 24h --json
  modelwire stats --scenario refund --by reasoning --since 2026-12-01 --csv`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkStatus(f.Status); err != nil {
				return err
			}
			if asJSON && asCSV {
				return usageErr("--json and --csv: choose one")
			}
			dims, err := stats.ParseBy(by)
			if err != nil {
				return usageErr("%v", err)
			}
			if since != "" {
				if f.Since, err = parseSince(since, time.Now()); err != nil {
					return usageErr("%v", err)
				}
			}
			db, err := openForRead(app)
			if err != nil {
				return err
			}
			r := &stats.Report{By: dims}
			if db != nil {
				defer db.Close()
				if r, err = stats.Compute(db, f, dims); err != nil {
					return storeErr(err)
				}
			}
			out := bufio.NewWriter(app.Out)
			defer out.Flush()
			switch {
			case asJSON:
				enc := json.NewEncoder(out)
				enc.SetEscapeHTML(false)
				for i := range r.Groups {
					if err := enc.Encode(r.Object(&r.Groups[i])); err != nil {
						return err
					}
				}
			case asCSV:
				w := csv.NewWriter(out)
				if err := w.WriteAll(r.CSV()); err != nil {
					return err
				}
			case len(r.Groups) == 0:
				fmt.Fprintf(out, "No sessions stored in %s match.\n", app.DB)
			default:
				writeStats(out, r)
			}
			return nil
		},
	}
	fl := cmd.Flags()
	filterFlags(fl, &f, "sessions", "provider", "running, done, failed or interrupted")
	fl.StringVar(&by, "by", "model", "group by these, comma-separated: "+strings.Join(stats.Dimensions, ","))
	fl.StringVar(&since, "since", "", "only sessions created since: a duration back from now (90m, 24h, 7d) or a date (2026-12-01, RFC 3339)")
	fl.BoolVar(&asJSON, "json", false, "one JSON object per group, a line each")
	fl.BoolVar(&asCSV, "csv", false, "CSV: a header, then a row per group")
	return cmd
}

// parseSince reads --since: a duration back from now (Go's units, and d
// for days) or a date, a date and time, or an RFC 3339 instant (local
// time when it names no zone).
func parseSince(v string, now time.Time) (time.Time, error) {
	if days, ok := strings.CutSuffix(v, "d"); ok {
		if n, err := strconv.ParseFloat(days, 64); err == nil && n >= 0 && !math.IsInf(n, 0) {
			return now.Add(-time.Duration(n * float64(24*time.Hour))), nil
		}
	}
	if d, err := time.ParseDuration(v); err == nil {
		if d < 0 {
			return time.Time{}, fmt.Errorf("--since %q: a duration back from now is not negative", v)
		}
		return now.Add(-d), nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, v, time.Local); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("--since %q: want a duration (90m, 24h, 7d) or a date (2026-12-01, 2026-12-01T08:00:00Z)", v)
}

// writeStats prints the report as two tables: the groups' counts and
// money, then each group's time points (widths in cells: values may be
// Chinese).
func writeStats(w io.Writer, r *stats.Report) {
	head := append(upper(r.By), "SESSIONS", "FAILED", "FAIL%", "FAILING LAYERS", "RETRIES", "TOKENS IN/OUT", "CACHE HIT",
		"COST "+r.Currency, "PER SUCCESS", "TO RECONCILE")
	if len(r.By) == 0 {
		head = append([]string{"GROUP"}, head...)
	}
	rows := [][]string{head}
	right := map[int]bool{}
	for i := len(head) - 10; i < len(head); i++ {
		right[i] = i != len(head)-7 // the layers read left to right
	}
	for i := range r.Groups {
		g := &r.Groups[i]
		row := append([]string{}, g.Key...)
		if len(r.By) == 0 {
			row = []string{"all"}
		}
		cost := fmt.Sprintf("%.4f", g.Cost)
		if !g.CostComplete() {
			cost = "≥" + cost
		}
		row = append(row, fmt.Sprint(g.Sessions), fmt.Sprint(g.Failed), pct(g.FailureRate()), clip(stats.Layers(g), 36),
			fmt.Sprint(g.Retries), fmt.Sprintf("%d/%d", g.InputTokens, g.OutputTokens), pct(g.CacheHitRatio()), cost,
			money(g.CostPerSuccess()), reconcile(g))
		rows = append(rows, row)
	}
	writeTable(w, rows, right)
	fmt.Fprintf(w, "\nCost: %s (table of %s); failed and retried attempts included.\n", r.Label, r.TableDate)

	fmt.Fprintln(w, "\nTime from the request's start, ms (p50/p95/max, nearest rank), and output tokens/s:")
	head = []string{"GROUP", "POINT", "N", "P50", "P95", "MAX"}
	rows = [][]string{head}
	for i := range r.Groups {
		g := &r.Groups[i]
		label := clip(r.Name(g), 40)
		for j, d := range append(append([]stats.Dist{}, g.Points...), g.Speed) {
			name := "tokens/s"
			if j < len(r.Points) {
				name = r.Points[j]
			}
			rows = append(rows, []string{label, name, fmt.Sprint(d.N), figure(d.P50), figure(d.P95), figure(d.Max)})
			label = ""
		}
	}
	writeTable(w, rows, map[int]bool{2: true, 3: true, 4: true, 5: true})
}

func upper(v []string) []string {
	out := make([]string, len(v))
	for i, s := range v {
		out[i] = strings.ToUpper(s)
	}
	return out
}

func pct(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*v)
}

func money(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return fmt.Sprintf("%.6f", v)
}

func figure(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

func reconcile(g *stats.Group) string {
	s := fmt.Sprint(g.ToReconcile)
	if g.Unpriced > 0 {
		s += fmt.Sprintf(" (+%d unpriced)", g.Unpriced)
	}
	return s
}
