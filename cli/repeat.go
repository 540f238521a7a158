package cli

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/diff"
)

// runRepeated runs a session f.repeat times (run --repeat, fork --repeat)
// and ends with what the set came to: for each field of the final object,
// each verdict and the number of turns, how often each value came out —
// one sample proves little. It fails (exit 1) when any run failed.
func runRepeated(ctx context.Context, app *App, f runFlags, streamSet bool) error {
	if f.repeat < 1 {
		return usageErr("--repeat %d: want 1 or more", f.repeat)
	}
	if f.repeat == 1 {
		return runSession(ctx, app, f, streamSet)
	}
	if f.approve == "manual" {
		return usageErr("--repeat runs unattended: pass --approve auto (or reject)")
	}
	// The chapter's capacity bound (13.7.2) from the latest stored runs:
	// a plan that would exceed it is warned of, in one line, and run.
	if db, err := openForRead(app); err == nil && db != nil {
		warnCapacity(app.Err, db, cmp.Or(f.protocol, adapters.NativeProtocol(f.provider)), f.provider, f.repeat)
		db.Close()
	}
	var ids []string
	f.ran = func(id string) { ids = append(ids, id) }
	failed := 0
	for i := range f.repeat {
		if !f.json {
			fmt.Fprintf(app.Out, "\n── run %d of %d ──\n", i+1, f.repeat)
		}
		err := runSession(ctx, app, f, streamSet)
		var ee *exitError
		switch {
		case err == nil:
		case errors.As(err, &ee) && ee.code == ExitFailed && len(ids) == i+1:
			failed++ // it ran and failed: that is data for the tally
			if f.json {
				fmt.Fprintf(app.Err, "modelwire: %v\n", err)
			}
		default:
			return err
		}
		if ctx != nil && ctx.Err() != nil {
			break
		}
	}
	db, err := openForRead(app)
	if err != nil {
		return err
	}
	defer db.Close()
	recs := make([]*diff.Recording, 0, len(ids))
	for _, id := range ids {
		r, err := diff.Load(db, id)
		if err != nil {
			return storeErr(err)
		}
		recs = append(recs, r)
	}
	tallies := diff.Set(recs)
	if f.json {
		enc := json.NewEncoder(app.Out)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(map[string]any{"type": "repeat.summary", "sessions": ids, "failed": failed, "fields": tallies})
	} else {
		printTallies(app.Out, len(ids), failed, tallies)
	}
	if failed > 0 {
		return &exitError{code: ExitFailed, err: fmt.Errorf("%d of %d runs failed", failed, len(ids)), shown: !f.json}
	}
	return nil
}

// printTallies says which fields were stable over the runs and how the
// others varied.
func printTallies(w io.Writer, runs, failed int, tallies []diff.Tally) {
	fmt.Fprintf(w, "\n%d runs, %d passed, %d failed\n", runs, runs-failed, failed)
	var stable []string
	for _, t := range tallies {
		if t.Stable() {
			stable = append(stable, strings.TrimPrefix(t.Path, "output/"))
		}
	}
	if len(stable) > 0 {
		fmt.Fprintf(w, "  the same every time: %s\n", strings.Join(stable, ", "))
	}
	for _, t := range tallies {
		if t.Stable() {
			continue
		}
		fmt.Fprintf(w, "  %s changed:\n", strings.TrimPrefix(t.Path, "output/"))
		for _, c := range t.Values {
			fmt.Fprintf(w, "    %d of %d  %s\n", c.N, runs, oneLine(diff.Text(c.Value)))
		}
	}
}
