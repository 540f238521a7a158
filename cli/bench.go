package cli

import (
	"fmt"
	"os"
	"runtime/pprof"
	"strings"

	"github.com/spf13/cobra"

	"github.com/modelwire/modelwire/bench"
)

func init() { register(newBenchCmd) }

func newBenchCmd(app *App) *cobra.Command {
	var csvPath, only, cpuProfile string
	var markdown bool
	o := bench.Options{}
	cmd := &cobra.Command{
		Use:   "bench [--only GROUPS] [--csv FILE]",
		Short: "Measure each performance path against its reference in one run",
		Long: `Measure each performance path against its reference, in this process, on this
machine, and print a table: ours, the reference, the ratio and the target (issue 20).

  decode   each protocol's generated capture (--size MB): ours (SSE reader, decoder,
           reducer) against the floor (bufio lines + json.Valid) and the official SDK's
           stream accumulator, on the same bytes; allocations per event
  startup  'modelwire version' and 'modelwire decode' of a small file, repeated runs
  store    appending with the WAL; opening a stored session and jumping into it
  proxy    one hop, side by side: direct, a bare httputil.ReverseProxy, modelwire's
           recording proxy and mitmdump (where installed), each proxy a child process:
           added per-event latency (50 streams × 300 events at 100/s), sequential
           requests/s, unpaced throughput, CPU and peak RSS per proxy
  sim      points at the simulator's own benchmark (go test ./sim -bench RefundLoop)

Progress goes to stderr. --csv writes the rows as plot-ready CSV as well.`,
		Example: `  modelwire bench
  modelwire bench --only decode --size 20 --csv decode.csv`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if only != "" {
				for g := range strings.SplitSeq(only, ",") {
					o.Only = append(o.Only, strings.TrimSpace(g))
				}
			}
			if o.SizeMB < 0 || o.Rounds < 0 || o.StoreEvents < 0 {
				return usageErr("--size, --rounds and --store-events must be positive")
			}
			// Opened before the run, so a bad path costs no minutes.
			csvFile, err := createNew("--csv", csvPath)
			if err != nil {
				return err
			}
			if csvFile != nil {
				defer csvFile.Close()
			}
			if o.Exe == "" {
				if exe, err := os.Executable(); err == nil {
					o.Exe = exe
				}
			} else if _, err := os.Stat(o.Exe); err != nil {
				return usageErr("--startup-exe %s: %v", o.Exe, unwrapPathErr(err))
			}
			// What the run spends its CPU on (go tool pprof), to find a
			// path's hot spots in the same conditions it is measured in.
			pf, err := createNew("--cpuprofile", cpuProfile)
			if err != nil {
				return err
			}
			if pf != nil {
				defer pf.Close()
				if err := pprof.StartCPUProfile(pf); err != nil {
					return err
				}
				defer pprof.StopCPUProfile()
			}
			o.Progress = app.Err
			ctx, stop := notifyStop(cmd.Context())
			defer stop()
			rows, err := bench.Run(ctx, o)
			if len(rows) > 0 {
				if markdown {
					_ = bench.WriteMarkdown(app.Out, rows)
				} else {
					_ = bench.WriteTable(app.Out, rows)
				}
				if csvFile != nil {
					if werr := bench.WriteCSV(csvFile, rows); werr != nil {
						return fmt.Errorf("writing %s: %w", csvPath, werr)
					}
				}
			}
			switch {
			case err == nil:
				return nil
			case strings.Contains(err.Error(), "unknown bench group"):
				return usageErr("%v", err)
			default: // a path failed or the run was interrupted: the rows so far are printed
				return &exitError{code: ExitFailed, err: err}
			}
		},
	}
	f := cmd.Flags()
	f.StringVar(&only, "only", "", "comma-separated groups to run: "+strings.Join(bench.Groups, ", "))
	f.StringVar(&csvPath, "csv", "", "also write the rows as CSV to FILE (a new file)")
	f.BoolVar(&markdown, "markdown", false, "print the table as Markdown")
	f.IntVar(&o.SizeMB, "size", 100, "decode capture size per protocol, MB")
	f.IntVar(&o.Rounds, "rounds", 3, "decode rounds; the best is kept")
	f.StringVar(&o.Exe, "startup-exe", "", "the modelwire binary the startup group times (default: this one; a -tags sdkbench build is larger)")
	f.StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile of the run to FILE (a new file)")
	f.IntVar(&o.StoreEvents, "store-events", 1_000_000, "events in the stored session the store group opens")
	return cmd
}

// createNew creates the file a flag names, refusing one that exists (a
// run's output never overwrites anything); nil for no name.
func createNew(flag, path string) (*os.File, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, usageErr("cannot write %s %s: %v", flag, path, unwrapPathErr(err))
	}
	return f, nil
}
