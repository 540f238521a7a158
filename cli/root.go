// Package cli wires modelwire's subcommands: flags in, exit codes out. The
// work itself lives in adapters, store, session and ui.
package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/modelwire/modelwire/sim"
	"github.com/modelwire/modelwire/themes"
)

// Version is modelwire's version; the release build overrides it with -ldflags.
var Version = "0.1.0-dev"

// Exit codes of the contract.
const (
	ExitOK     = 0
	ExitFailed = 1 // the work ran and failed
	ExitUsage  = 2 // bad usage or bad input
)

// App carries what every command shares: the global flags and the streams.
type App struct {
	DB    string
	Theme string
	// ASCII draws the workbench with ASCII only (--ascii or MODELWIRE_ASCII).
	ASCII bool
	// Pace is the workbench simulator's words a second (--pace).
	Pace float64
	// OtelContent is the workbench's --otel-content.
	OtelContent bool
	Out         io.Writer
	Err         io.Writer
	In          io.Reader
}

// exitError carries an exit code through cobra.
type exitError struct {
	code int
	err  error
	// shown: the message is already on the screen (a run's verdict), so
	// Main does not print it a second time.
	shown bool
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// usageErr marks bad usage or bad input: exit 2.
func usageErr(format string, args ...any) error {
	return &exitError{code: ExitUsage, err: fmt.Errorf(format, args...)}
}

// failedErr marks work that ran and failed: exit 1.
func failedErr(format string, args ...any) error {
	return &exitError{code: ExitFailed, err: fmt.Errorf(format, args...)}
}

// commands are added by each command's file in init, so that adding a
// command touches only its own file.
var commands []func(*App) *cobra.Command

func register(c func(*App) *cobra.Command) { commands = append(commands, c) }

// runTUI starts the workbench; the ui wiring sets it. Without it, the bare
// command prints help.
var runTUI func(app *App, cmd *cobra.Command) error

// NewRoot builds the command tree.
func NewRoot(app *App) *cobra.Command {
	root := &cobra.Command{
		Use:   "modelwire",
		Short: "A terminal workbench for seeing exactly what passes between an application and an LLM API",
		Long: `modelwire shows an LLM call as the protocol it is: the request assembled from
instructions, context, tools and schemas; the stream of typed events per output
item and tool call; tool proposals waiting for a person; the terminal state; and
five layers of validation. With no arguments it opens the refund walkthrough on
the built-in simulator.`,
		Example: `  modelwire
  modelwire --theme contrast
  NO_COLOR=1 modelwire --db /tmp/workshop.db
  modelwire --pace 10 --ascii`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
		// The global flags are checked before any command runs, so that a
		// typo is never silently accepted, whatever the command.
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			if _, err := themes.ByName(app.Theme); err != nil {
				return usageErr("--theme: %v", err)
			}
			return checkDBPath(app.DB, cmd.Flags().Changed("db") || os.Getenv("MODELWIRE_DB") != "")
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if runTUI == nil {
				return cmd.Help()
			}
			return runTUI(app, cmd)
		},
	}
	root.PersistentFlags().StringVar(&app.DB, "db", defaultDB(), "SQLite database of sessions (env MODELWIRE_DB)")
	root.PersistentFlags().StringVar(&app.Theme, "theme", "dark", "colour theme: dark, light or contrast")
	root.Flags().Float64Var(&app.Pace, "pace", sim.DefaultPace, "the workbench simulator's pace, words a second (0: as fast as it goes)")
	root.Flags().BoolVar(&app.OtelContent, "otel-content", false, "with OTEL_EXPORTER_OTLP_ENDPOINT: include prompts, answers and tool data in the traces")
	root.PersistentFlags().BoolVar(&app.ASCII, "ascii", os.Getenv("MODELWIRE_ASCII") != "",
		"draw the workbench with ASCII only, for terminals without box drawing (env MODELWIRE_ASCII)")
	root.SetOut(app.Out)
	root.SetErr(app.Err)
	root.SetIn(app.In)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &exitError{code: ExitUsage, err: err}
	})
	for _, c := range commands {
		root.AddCommand(c(app))
	}
	return root
}

// checkPace rejects a --pace that is not a finite, non-negative number.
func checkPace(pace float64) error {
	if !(pace >= 0) || math.IsInf(pace, 0) {
		return usageErr("--pace must be a number of words a second, 0 or more (0: no pacing)")
	}
	return nil
}

// defaultDB is $MODELWIRE_DB, else $XDG_DATA_HOME/modelwire/modelwire.db,
// else ~/.local/share/modelwire/modelwire.db.
func defaultDB() string {
	if p := os.Getenv("MODELWIRE_DB"); p != "" {
		return p
	}
	if x := os.Getenv("XDG_DATA_HOME"); x != "" {
		return filepath.Join(x, "modelwire", "modelwire.db")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "modelwire.db"
	}
	return filepath.Join(home, ".local", "share", "modelwire", "modelwire.db")
}

// checkDBPath refuses a database path that names a directory, or whose
// directory does not exist when the path was given explicitly (--db or
// MODELWIRE_DB): only the default location's directories are created, so a
// mistyped path fails instead of scattering databases.
func checkDBPath(path string, explicit bool) error {
	if path == "" {
		return usageErr("--db is empty: name a database file")
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return usageErr("--db %s is a directory, not a database file", path)
	}
	if !explicit {
		return nil
	}
	return checkParentDir("--db", path)
}

// checkParentDir refuses a file the user named (flag is how: --db, -o)
// whose directory does not exist or is not a directory, with one line
// naming it. Every file modelwire writes at a path it was given goes
// through here, so none creates directories behind the user's back
// (issue 27): a mistyped path fails instead of scattering files.
func checkParentDir(flag, path string) error {
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return usageErr("%s %s: directory %s does not exist", flag, path, dir)
	case err != nil:
		return usageErr("%s %s: cannot write there: %v", flag, path, unwrapPathErr(err))
	case !st.IsDir():
		return usageErr("%s %s: cannot write there: %s is not a directory", flag, path, dir)
	}
	return nil
}

// Main runs modelwire with args and returns the process exit code. Errors
// become one line on stderr.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	app := &App{Out: stdout, Err: stderr, In: stdin}
	root := NewRoot(app)
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return ExitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if !ee.shown {
			fmt.Fprintln(stderr, "modelwire: "+err.Error())
		}
		return ee.code
	}
	fmt.Fprintln(stderr, "modelwire: "+err.Error())
	// cobra's own errors (unknown command, bad args) are usage errors.
	return ExitUsage
}
