package cli

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
	"github.com/spf13/cobra"

	application "github.com/modelwire/modelwire/app"
	"github.com/modelwire/modelwire/stats"
	"github.com/modelwire/modelwire/store"
	"github.com/modelwire/modelwire/ui"
)

// The bare command opens the workbench.
func init() { runTUI = startTUI }

func startTUI(app *App, cmd *cobra.Command) error {
	return openWorkbench(app, cmd, ui.Options{})
}

// openReplayTUI opens the workbench on a stored session (for `modelwire
// replay ID` without --json).
func openReplayTUI(app *App, cmd *cobra.Command, id string) error {
	return openWorkbench(app, cmd, ui.Options{Replay: id})
}

// openWorkbench wires the workbench: theme and colour, the log file, the
// store, the engine backend, then the program. Nothing is written to the
// terminal while it runs; logs go to a file.
func openWorkbench(app *App, cmd *cobra.Command, opts ui.Options) error {
	if err := checkPace(app.Pace); err != nil {
		return err
	}
	noColor := colourOff()
	log, closeLog := openTUILog()
	defer closeLog()
	db, err := openForWrite(app)
	if err != nil {
		return err
	}
	defer db.Close()
	if opts.Replay != "" {
		id, err := db.Resolve(opts.Replay)
		if err != nil {
			return usageErr("%v", err)
		}
		opts.Replay = id
	}
	opts.Theme, opts.NoColor, opts.ASCII, opts.Pace, opts.Log = app.Theme, noColor, app.ASCII, app.Pace, log
	opts.Backend = workbenchEngine(db, app.OtelContent, log)
	opts.Library, opts.Catalog, opts.Stats = application.Library{DB: db}, application.Catalog{}, stats.Source{DB: db}
	// A closed terminal's SIGHUP and a SIGTERM end the workbench as q
	// does: the running session is stored as interrupted, with its events.
	ctx, stop := notifyStop(cmd.Context())
	defer stop()
	if err := ui.Run(ctx, opts); err != nil {
		return failedErr("the workbench stopped: %v", err)
	}
	return nil
}

// colourOff reports whether NO_COLOR asks for no colour, and if so sets
// the workbench's colour profile to none.
func colourOff() bool {
	if os.Getenv("NO_COLOR") == "" {
		return false
	}
	lipgloss.SetColorProfile(termenv.Ascii)
	return true
}

// workbenchEngine runs the workbench's sessions, recorded in db.
func workbenchEngine(db *store.DB, otelContent bool, log *slog.Logger) *ui.EngineBackend {
	return &ui.EngineBackend{Engine: &application.Engine{DB: db, Version: Version, Source: store.SourceTUI,
		Ended: tuiExport(db, otelContent, log)}}
}

// openTUILog opens the workbench's log file:
// $XDG_STATE_HOME/modelwire/tui.log, else ~/.local/state/modelwire/tui.log.
// Without one, logs are dropped: never the terminal while the UI runs.
func openTUILog() (*slog.Logger, func()) {
	dir := os.Getenv("XDG_STATE_HOME")
	if dir == "" {
		if home, err := os.UserHomeDir(); err == nil {
			dir = filepath.Join(home, ".local", "state")
		}
	}
	if dir != "" {
		dir = filepath.Join(dir, "modelwire")
		if os.MkdirAll(dir, 0o755) == nil {
			if f, err := os.OpenFile(filepath.Join(dir, "tui.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644); err == nil {
				log := slog.New(slog.NewTextHandler(f, &slog.HandlerOptions{Level: slog.LevelInfo}))
				slog.SetDefault(log)
				return log, func() { f.Close() }
			}
		}
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil)), func() {}
}
