// Package bench measures modelwire's performance paths against their
// references in one process run (issue 20): decoding against a bare
// scanner floor and the official SDKs, start-up, the store, the proxy.
// `modelwire bench` prints its rows as a table and a CSV; the package's
// own benchmarks (go test -bench) run the same functions.
//
// Every number is measured here, in this run, on this machine: the
// references run interleaved with ours on the same bytes, and the best of
// several rounds is kept, so a neighbour's burst on a shared machine
// costs both sides alike rather than one.
package bench

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// Row is one measured path: ours beside its reference, the ratio the
// target is stated in, and whether it is met.
type Row struct {
	Group string // decode, startup, store, proxy, sim
	Path  string // what was measured, e.g. "openai-chat vs floor"
	Unit  string // of Ours and Ref
	Ours  float64
	// RefName says what Ref is ("bufio+json.Valid", "openai-go", "/bin/true");
	// "" when the target is absolute and there is no reference.
	RefName string
	Ref     float64
	// Ratio is in the target's terms (ours/floor time, SDK time/ours…);
	// NaN when there is none.
	Ratio  float64
	Target string // as the issue states it, e.g. "≤ 2×"
	// Met is whether Ours (or Ratio) is inside the target; Checked is
	// false for rows with nothing to check (a skipped reference).
	Met, Checked bool
	Note         string
}

// Options choose what runs and how big.
type Options struct {
	// Only lists the groups to run; empty runs all.
	Only []string
	// SizeMB is each protocol's decode capture size (default 100).
	SizeMB int
	// Rounds of each decode measurement; the best is kept (default 3).
	Rounds int
	// StoreEvents is the stored session's size (default 1,000,000).
	StoreEvents int
	// Exe is the modelwire binary timed for start-up ("" skips start-up).
	Exe string
	// ProxyLoad is the proxy group's load; nil is FullProxyLoad.
	ProxyLoad *ProxyLoad
	// Progress receives one line per step, so a long run shows it is alive.
	Progress io.Writer
}

func (o *Options) defaults() {
	if o.SizeMB <= 0 {
		o.SizeMB = 100
	}
	if o.Rounds <= 0 {
		o.Rounds = 3
	}
	if o.StoreEvents <= 0 {
		o.StoreEvents = 1_000_000
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
}

// Groups are the group names in the order they run.
var Groups = []string{"decode", "startup", "store", "proxy", "sim"}

// Run measures every selected group and returns its rows.
func Run(ctx context.Context, o Options) ([]Row, error) {
	o.defaults()
	for _, g := range o.Only {
		if !slices.Contains(Groups, g) {
			return nil, fmt.Errorf("unknown bench group %q (have %s)", g, strings.Join(Groups, ", "))
		}
	}
	var rows []Row
	for _, g := range Groups {
		if len(o.Only) > 0 && !slices.Contains(o.Only, g) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return rows, err
		}
		var rs []Row
		var err error
		switch g {
		case "decode":
			rs, err = decodeRows(ctx, o)
		case "startup":
			rs, err = startupRows(ctx, o)
		case "store":
			rs, err = storeRows(ctx, o)
		case "proxy":
			rs, err = proxyRows(ctx, o)
		case "sim":
			rs = simRows()
		}
		rows = append(rows, rs...)
		if err != nil {
			return rows, fmt.Errorf("%s: %w", g, err)
		}
	}
	return rows, nil
}

// progress prints one step line.
func (o *Options) progress(format string, args ...any) {
	fmt.Fprintf(o.Progress, "bench: "+format+"\n", args...)
}

func num(v float64) string {
	switch {
	case v != v: // NaN
		return "—"
	case v == 0:
		return "0"
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	default:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
}

func (r Row) verdict() string {
	switch {
	case !r.Checked:
		return "—"
	case r.Met:
		return "met"
	default:
		return "MISSED"
	}
}

// refCells are the reference and ratio columns as the tables print them
// ("—" where a row has none).
func (r Row) refCells() (ref, ratio string) {
	ref, ratio = "—", "—"
	if r.RefName != "" {
		ref = num(r.Ref) + " " + r.Unit + " (" + r.RefName + ")"
	}
	if r.Ratio == r.Ratio { // not NaN
		ratio = num(r.Ratio) + "×"
	}
	return ref, ratio
}

// WriteTable prints rows as an aligned table.
func WriteTable(w io.Writer, rows []Row) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "group\tpath\tours\treference\tratio\ttarget\tstatus\tnote")
	for _, r := range rows {
		ref, ratio := r.refCells()
		fmt.Fprintf(tw, "%s\t%s\t%s %s\t%s\t%s\t%s\t%s\t%s\n", r.Group, r.Path, num(r.Ours), r.Unit, ref, ratio, r.Target, r.verdict(), r.Note)
	}
	return tw.Flush()
}

// WriteMarkdown prints rows as a Markdown table (docs/measurements.md's).
func WriteMarkdown(w io.Writer, rows []Row) error {
	fmt.Fprintln(w, "| group | path | ours | reference | ratio | target | status |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
	for _, r := range rows {
		ref, ratio := r.refCells()
		v := r.verdict()
		if r.Note != "" {
			v += " " + r.Note
		}
		if _, err := fmt.Fprintf(w, "| %s | %s | %s %s | %s | %s | %s | %s |\n", r.Group, r.Path, num(r.Ours), r.Unit, ref, ratio, r.Target, v); err != nil {
			return err
		}
	}
	return nil
}

// WriteCSV writes rows as plot-ready CSV: numbers unformatted, one header.
func WriteCSV(w io.Writer, rows []Row) error {
	cw := csv.NewWriter(w)
	f := func(v float64) string {
		if v != v {
			return ""
		}
		return strconv.FormatFloat(v, 'g', 6, 64)
	}
	_ = cw.Write([]string{"group", "path", "unit", "ours", "reference_name", "reference", "ratio", "target", "met", "note"})
	for _, r := range rows {
		met := ""
		if r.Checked {
			met = strconv.FormatBool(r.Met)
		}
		ref := ""
		if r.RefName != "" {
			ref = f(r.Ref)
		}
		_ = cw.Write([]string{r.Group, r.Path, r.Unit, f(r.Ours), r.RefName, ref, f(r.Ratio), r.Target, met, r.Note})
	}
	cw.Flush()
	return cw.Error()
}

// percentile returns the p-th percentile (0–100) of sorted durations.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted)-1) * p / 100)
	return sorted[i]
}
