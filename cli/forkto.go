package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/spf13/cobra"

	application "github.com/modelwire/modelwire/app"
	"github.com/modelwire/modelwire/diff"
	"github.com/modelwire/modelwire/store"
	"github.com/modelwire/modelwire/ui"
)

// forkTo runs `fork ID --turn N --to a,b,c`: one child per target, each
// planned as `fork --provider/--protocol/--model` (or --scenario for
// sim:SCENARIO) would plan it, the target resolved against the parent
// (app.Target.For), and run unattended, then the parent and
// its children compared: each child's diff from the parent, and the
// turn's answer, verdicts, latency, tokens and cost side by side.
func forkTo(ctx context.Context, app *App, cmd *cobra.Command, prefix, to string, turn int, sets, toolResults []string, bodyFile string, f runFlags, tui bool) error {
	targets, err := application.ParseTargets(to, "")
	if err != nil {
		return usageErr("--to: %v", err)
	}
	fl := cmd.Flags()
	for _, name := range []string{"provider", "protocol", "model", "scenario", "repeat"} {
		if fl.Changed(name) {
			return usageErr("--%s: --to names each child's target itself (%s)", name, application.TargetSyntax)
		}
	}
	if f.approve == "manual" {
		return usageErr("--to runs each child unattended: pass --approve auto (or reject)")
	}
	base := f
	plan, err := planForkAs(app, fl.Changed, prefix, turn, sets, toolResults, bodyFile, &base)
	if err != nil {
		return err
	}
	parent := plan.Parent
	quiet := *app
	quiet.Out = io.Discard // each child's run: the comparison says what came of it
	var ids, specs []string
	if !f.json {
		fmt.Fprintf(app.Out, "fork of %s from turn %d to %d targets\n", parent.ID, turn, len(targets))
	}
	for _, t := range targets {
		t = t.For(parent.Provider, parent.Protocol)
		child := f
		set := map[string]bool{}
		for _, c := range []struct {
			flag, v string
			dst     *string
		}{{"provider", t.Provider, &child.provider}, {"protocol", t.Protocol, &child.protocol},
			{"model", t.Model, &child.model}, {"scenario", t.Scenario, &child.scenario}} {
			if c.v != "" {
				*c.dst, set[c.flag] = c.v, true
			}
		}
		changed := func(name string) bool { return set[name] || fl.Changed(name) }
		p, err := planForkAs(app, changed, prefix, turn, sets, toolResults, bodyFile, &child)
		if err != nil {
			return fmt.Errorf("target %s: %w", t.Spec, err)
		}
		child.fork, child.repeat = p, 1
		id := ""
		child.ran = func(s string) { id = s }
		err = runSession(ctx, &quiet, child, fl.Changed("stream"))
		var ee *exitError
		if err != nil && !(errors.As(err, &ee) && ee.code == ExitFailed && id != "") {
			return fmt.Errorf("target %s: %w", t.Spec, err)
		}
		ids, specs = append(ids, id), append(specs, t.Spec)
		if !f.json {
			fmt.Fprintf(app.Out, "  %-28s → session %s\n", t.Spec, id)
		}
	}
	db, err := openForRead(app)
	if err != nil {
		return err
	}
	defer db.Close()
	cmp, err := application.CompareForks(db, parent.ID, turn, ids, specs)
	if err != nil {
		return storeErr(err)
	}
	if f.json {
		enc := json.NewEncoder(app.Out)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(struct {
			Type string `json:"type"`
			*application.Comparison
		}{"fork.comparison", cmp}); err != nil {
			return failedErr("%v", err)
		}
	} else {
		printComparison(app.Out, db, cmp)
	}
	if tui {
		db.Close()
		if err := openWorkbench(app, cmd, ui.Options{Replay: parent.ID, Compare: append([]string{parent.ID}, ids...)}); err != nil {
			return err
		}
	}
	failed := 0
	for _, s := range cmp.Sides[1:] {
		if s.Verdict != "pass" {
			failed++
		}
	}
	if failed > 0 {
		return &exitError{code: ExitFailed, err: fmt.Errorf("%d of %d children did not pass", failed, len(ids)), shown: !f.json}
	}
	return nil
}

// printComparison writes each child's differences from the parent, then
// the sides in columns: target, session, protocol, model, verdict, the
// answer, latency, tokens, cost and the count of differences.
func printComparison(w io.Writer, db *store.DB, c *application.Comparison) {
	parent, err := db.GetSession(c.Parent)
	if err != nil {
		return
	}
	for _, s := range c.Sides[1:] {
		child, err := db.GetSession(s.Session)
		if err != nil {
			continue
		}
		fmt.Fprintf(w, "\n── %s ──\n", s.Target)
		printDiff(w, parent, child, s.Changes)
	}
	fmt.Fprintf(w, "\ncomparison from turn %d\n", c.Turn)
	rows := [][]string{{""}, {"session"}, {"protocol"}, {"model"}, {"verdict"}, {"latency"}, {"tokens"}, {"cost"}, {"differences"}}
	for _, s := range c.Sides {
		name := s.Target
		if name == "" {
			name = "parent"
		}
		verdict := s.Verdict
		if s.Failed != "" {
			verdict += " (" + s.Failed + ")"
		}
		cost := "–"
		if s.Priced {
			cost = fmt.Sprintf("%s %.5f", s.Currency, s.Cost)
		}
		differ := fmt.Sprint(s.Differ)
		if s.Target == "" {
			differ = "–"
		}
		col := []string{name, s.Session, s.Protocol, s.Model, verdict,
			fmt.Sprintf("%.1f ms", s.LatencyMS), fmt.Sprintf("%d in / %d out", s.InputTokens, s.OutputTokens), cost, differ}
		for i := range rows {
			rows[i] = append(rows[i], clip(col[i], 30))
		}
	}
	writeTable(w, append(rows, answerRows(c.Sides)...), nil)
}

// answerRows are the rows of the answers' fields that differ between
// the sides ("answer" alone, "the same", when none does; an answer that
// is not an object is one row).
func answerRows(sides []application.Side) [][]string {
	objs := make([]map[string]any, len(sides))
	var keys []string
	seen := map[string]bool{}
	for i, s := range sides {
		m, ok := s.Answer.(map[string]any)
		if !ok {
			row := []string{"answer"}
			for _, s := range sides {
				row = append(row, clip(diff.Text(s.Answer), 30))
			}
			return [][]string{row}
		}
		objs[i] = m
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	var rows [][]string
	for _, k := range keys {
		row, differs := []string{"answer." + k}, false
		for i, m := range objs {
			v := "–"
			if x, ok := m[k]; ok {
				v = diff.Text(x)
			}
			row = append(row, clip(v, 30))
			differs = differs || i > 0 && v != row[1]
		}
		if differs {
			rows = append(rows, row)
		}
	}
	if len(rows) == 0 {
		row := []string{"answer"}
		for range sides {
			row = append(row, "the same")
		}
		rows = append(rows, row)
	}
	return rows
}
