package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"

	"github.com/spf13/cobra"

	"github.com/modelwire/modelwire/ui"
	"github.com/modelwire/modelwire/workshop"
)

func init() { register(newRoomCmd) }

func newRoomCmd(app *App) *cobra.Command {
	var token string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "room URL",
		Short: "The teacher's view of a workshop room: one row per participant, polled",
		Long: `Show the room that 'modelwire serve --workshop' runs at URL: one row per
participant — current step, checks passed, the last failing check and its hint,
time on the step — sortable (s), with the theme switch (t, contrast for a
projector); enter opens a participant's failing check, hints and the shape the
step expects. The foot says which check the room fails most and at which step
it is. The room needs the teacher's token that serve printed (--token). With
--json it prints the room once, one line.`,
		Example: `  modelwire room http://127.0.0.1:8787 --token 3f9c…
  modelwire room http://127.0.0.1:8787 --token 3f9c… --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			url := args[0]
			h := http.Header{}
			h.Set(workshop.TokenHeader, token)
			fetch := func(ctx context.Context) (workshop.View, error) {
				var v workshop.View
				err := getRoomJSON(url, workshop.RoomPath, h, &v)
				return v, err
			}
			if asJSON {
				v, err := fetch(cmd.Context())
				if err != nil {
					return err
				}
				b, _ := json.Marshal(v)
				fmt.Fprintln(app.Out, string(b))
				return nil
			}
			ctx, stop := notifyStop(cmd.Context())
			defer stop()
			return ui.RunRoom(ctx, fetch, app.Theme, "room "+url, replayCmd(app))
		},
	}
	cmd.Flags().StringVar(&token, "token", "", "the teacher's token serve --workshop printed")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the room once as JSON")
	return cmd
}

// runRoomTUI shows the room of the serving process (serve --workshop --tui).
func runRoomTUI(ctx context.Context, app *App, room *workshop.Room, url string) error {
	fetch := func(context.Context) (workshop.View, error) { return room.View(), nil }
	if err := ui.RunRoom(ctx, fetch, app.Theme, "participants: OpenAI base URL "+url+"/v1 · Ctrl-C stops the room", replayCmd(app)); err != nil {
		return failedErr("the room view stopped: %v", err)
	}
	return nil
}

// replayCmd opens a participant's stored session in the workbench's
// replay (this binary, this database): the room records into the same
// one when it runs here; elsewhere replay says the session is unknown.
func replayCmd(app *App) func(id string) *exec.Cmd {
	self, err := os.Executable()
	if err != nil {
		return nil
	}
	return func(id string) *exec.Cmd {
		args := []string{"replay", id, "--db", app.DB}
		if app.Theme != "" {
			args = append(args, "--theme", app.Theme)
		}
		return exec.Command(self, args...)
	}
}
