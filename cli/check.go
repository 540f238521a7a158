package cli

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/registry"
	application "github.com/modelwire/modelwire/app"
	"github.com/modelwire/modelwire/check"
	"github.com/modelwire/modelwire/har"
	"github.com/modelwire/modelwire/jsonl"
	"github.com/modelwire/modelwire/store"
	"github.com/modelwire/modelwire/transport"
	"github.com/modelwire/modelwire/ui"
)

func init() { register(newCheckCmd) }

func newCheckCmd(app *App) *cobra.Command {
	var (
		f        store.Filter
		to       []string
		files    []string
		provider string
		suite    bool
		asJSON   bool
		tui      bool
	)
	cmd := &cobra.Command{
		Use:   "check [SESSION…] --to TARGET",
		Short: "Re-send recorded sessions to other targets and say, capability by capability, what regressed",
		Long: `Prove a migration: re-send each recorded session to each target — its
sources re-assembled in the target's protocol (an application's session re-sent
as it sent it), tool calls answered as in the recording, every call approved
whose arguments pass their schema — and judge every answer with the same five
layers. Each re-sent session is stored as a fork of its recording (fork's
machinery, from turn 1), so diff and the workbench open it.

Sessions: ids (any unique prefix), or the filters of sessions (a filter leaves
forks out, check's own children among them), or --file: a modelwire export or
HAR file, imported into the database first (a session it already has is used
as it is).

Targets (--to, repeatable or comma-separated; the grammar fork --to reads):
  PROTOCOL[/MODEL]           another wire format (and model), on --provider (default:
                             each recording's provider when it speaks the protocol,
                             else the protocol's own)
  PROVIDER:PROTOCOL[/MODEL]  another provider too, e.g. openai:openai-chat/gpt-4.1-mini
  PROVIDER[/MODEL]           another provider (and model), the recording's protocol when
  PROVIDER:[/MODEL]          it speaks it, else its own; a real provider other than the
                             recording's needs a model. PROVIDER: names a provider that
                             is also a protocol's name (gemini:/MODEL)
  sim:SCENARIO[/VARIANT]     the simulator playing a scenario or variant, the stand-in
  SCENARIO/VARIANT           for a weaker model: sim:refund/wrong-cap
Protocols: ` + strings.Join(registry.Protocols, ", ") + `.

It prints a matrix sessions × targets — each cell the verdict and the first
failing layer, ↓ where the target regressed — then each cell's latency (first
event, first text, end), tokens and estimated cost beside the recording's, and
a summary per capability (docs/check.md defines each).

--suite runs the built-in capability probes instead of recordings: empty
content, refusal, truncation, missing usage, parallel calls, call ids,
structured output, a cut stream, duplicate and unknown events, each with the
simulator's fault that raises it (default target: the simulator; a real
provider, when its key is set, is judged on what it does).

--json: one object a line per cell, then a summary object (docs/check.md).

Exit status: 0 when no target regresses a layer or a capability its recording
passed (with --suite: every probe handled), 1 otherwise, 2 on bad usage.`,
		Example: `  modelwire check 1m8t467h --to openai-chat,anthropic-messages --to sim:refund/wrong-cap
  modelwire check --scenario refund --protocol openai-responses --to gemini-interactions --json
  modelwire check --file refund.jsonl --to anthropic:anthropic-messages/claude-sonnet-4-5
  modelwire check --suite
  modelwire check --suite --to openai:openai-chat/gpt-4.1-mini`,
		RunE: func(cmd *cobra.Command, args []string) error {
			fl := cmd.Flags()
			filtered := slices.ContainsFunc([]string{"scenario", "protocol", "recorded-provider", "status", "search", "content"}, fl.Changed)
			switch {
			case suite && (len(args) > 0 || filtered || len(files) > 0):
				return usageErr("--suite runs the built-in probes: it takes no sessions, filters or --file")
			case !suite && len(args) == 0 && !filtered && len(files) == 0:
				return usageErr("check needs sessions: ids, a filter (--scenario, --protocol, --status, --search, --content), --file, or --suite for the built-in probes")
			case suite && tui:
				return usageErr("--tui opens the matrix of recordings re-sent; the suite's probes have no recordings")
			case !suite && len(to) == 0:
				return usageErr("check needs a target: --to %s", application.TargetSyntax)
			}
			if provider != "" && adapters.NativeProtocol(provider) == "" {
				return usageErr("--provider %q: want sim, openai, anthropic, deepseek, gemini or compatible", provider)
			}
			targets, err := parseTargets(to, provider, suite)
			if err != nil {
				return err
			}
			db, err := openForWrite(app)
			if err != nil {
				return err
			}
			defer db.Close()
			var ids []string
			if !suite {
				if ids, err = checkSessions(db, args, f, filtered, files); err != nil {
					return err
				}
			}
			// Each target re-sends every session (or runs every probe): warn, in one line, where
			// that would exceed the capacity bound the latest stored
			// sessions of its protocol give (13.7.2).
			planned := len(ids)
			if suite {
				planned = len(check.Probes)
			}
			for _, t := range targets {
				if t.Protocol != "" {
					warnCapacity(app.Err, db, t.Protocol, t.Provider, planned)
				}
			}
			ctx, stop := notifyStop(cmd.Context())
			defer stop()
			eng := &application.Engine{DB: db, Version: Version, Source: store.SourceRun}
			out := bufio.NewWriter(app.Out)
			defer out.Flush()
			var done func(check.Cell)
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetEscapeHTML(false)
				done = func(c check.Cell) { _ = enc.Encode(c); _ = out.Flush() }
			} else {
				done = func(c check.Cell) {
					fmt.Fprintf(app.Err, "%s → %s: %s\n", c.Session, c.Target, c.Status)
				}
			}
			var cells []check.Cell
			if suite {
				cells, err = eng.RunSuite(ctx, check.Probes, targets, done)
			} else {
				cells, err = eng.CheckAll(ctx, ids, targets, done)
			}
			if err != nil {
				return storeErr(err)
			}
			sum := check.Summarize(cells)
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetEscapeHTML(false)
				_ = enc.Encode(sum)
			} else {
				check.WriteText(out, cells)
			}
			if tui {
				_ = out.Flush()
				db.Close()
				if err := openWorkbench(app, cmd, ui.Options{Matrix: true}); err != nil {
					return err
				}
			}
			if sum.Exit != 0 {
				return &exitError{code: ExitFailed, err: fmt.Errorf("%d of %d cells regressed", sum.Regressed, sum.Cells), shown: !asJSON}
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&to, "to", nil, "a target: "+application.TargetSyntax+" (repeatable, comma-separated)")
	fl.StringVar(&provider, "provider", "", "the provider of targets that name none (default: each recording's)")
	fl.BoolVar(&suite, "suite", false, "run the built-in capability probes instead of recorded sessions")
	fl.StringArrayVar(&files, "file", nil, "a modelwire JSONL export or HAR file whose sessions to check (imported first; repeatable)")
	fl.BoolVar(&asJSON, "json", false, "one JSON object a line per cell, then a summary object")
	fl.BoolVar(&tui, "tui", false, "after the run, open the workbench on the check matrix (enter on a cell: the recording and its child side by side)")
	filterFlags(fl, &f, "recordings", "recorded-provider", "done, failed or interrupted")
	return cmd
}

// parseTargets reads every --to (comma-separated lists too; a target
// given twice is one) with app.ParseTargets, --provider the default
// provider; a real provider's key must be set. The suite's default target
// is the simulator.
func parseTargets(to []string, provider string, suite bool) ([]application.Target, error) {
	if suite && len(to) == 0 {
		to = []string{adapters.ProviderSim}
	}
	var out []application.Target
	for _, list := range to {
		ts, err := application.ParseTargets(list, provider)
		if err != nil {
			return nil, usageErr("--to: %v", err)
		}
		for _, t := range ts {
			if slices.ContainsFunc(out, func(o application.Target) bool { return o.Spec == t.Spec }) {
				continue
			}
			if t.Provider != "" && t.Provider != adapters.ProviderSim {
				if _, err := transport.ResolveProvider(t.Provider, "", os.Getenv); err != nil {
					return nil, usageErr("--to: target %q: %v", t.Spec, err)
				}
			}
			out = append(out, t)
		}
	}
	return out, nil
}

// checkSessions resolves the recordings: the ids given, those the filter
// selects (oldest first, forks left out), those the files hold.
func checkSessions(db *store.DB, args []string, f store.Filter, filtered bool, files []string) ([]string, error) {
	var ids []string
	add := func(id string) {
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	for _, a := range args {
		id, err := db.Resolve(a)
		if err != nil {
			return nil, storeErr(err)
		}
		add(id)
	}
	if filtered {
		switch f.Status {
		case "", store.StatusDone, store.StatusFailed, store.StatusInterrupted:
		default:
			return nil, usageErr("--status %q: want done, failed or interrupted", f.Status)
		}
		list, err := db.ListSessions(f)
		if err != nil {
			return nil, storeErr(err)
		}
		for i := len(list) - 1; i >= 0; i-- {
			if list[i].ParentID == "" && list[i].Status != store.StatusRunning {
				add(list[i].ID)
			}
		}
	}
	for _, path := range files {
		res, err := importFile(db, path)
		if err != nil {
			return nil, err
		}
		for _, id := range append(res.Sessions, res.Present...) {
			add(id)
		}
	}
	if len(ids) == 0 {
		return nil, usageErr("no recorded session matches")
	}
	return ids, nil
}

// importFile imports a modelwire export or a HAR file (as import does).
func importFile(db *store.DB, path string) (store.ImportResult, error) {
	file, err := os.Open(path)
	if err != nil {
		return store.ImportResult{}, usageErr("--file: cannot read %s: %v", path, unwrapPathErr(err))
	}
	defer file.Close()
	kind, err := sniffImport(file)
	if err != nil {
		return store.ImportResult{}, usageErr("--file: cannot read %s: %v", path, err)
	}
	var res store.ImportResult
	switch kind {
	case "jsonl":
		res, err = jsonl.Import(db, file, path)
	case "har":
		res, err = har.Import(db, file, path, registry.Lookup)
	default:
		return res, usageErr("--file %s: not a modelwire JSONL export or a HAR file", path)
	}
	var ie *store.InputError
	if errors.As(err, &ie) {
		return res, usageErr("--file %s: %v", path, err)
	}
	return res, storeErr(err)
}
