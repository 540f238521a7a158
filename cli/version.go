package cli

import (
	"encoding/json"
	"fmt"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/modelwire/modelwire/store"
)

func init() { register(newVersionCmd) }

func newVersionCmd(app *App) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version, the Go version and the database schema version",
		Long: `Print modelwire's version, the Go version it was built with, and the database
schema version it writes (a database with a newer schema is refused, untouched).`,
		Example: `  modelwire version
  modelwire version --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if asJSON {
				return json.NewEncoder(app.Out).Encode(map[string]any{
					"version": Version, "go": runtime.Version(), "os": runtime.GOOS, "arch": runtime.GOARCH,
					"schema": store.SchemaVersion,
				})
			}
			fmt.Fprintf(app.Out, "modelwire %s\ngo        %s %s/%s\nschema    %d\n", Version, runtime.Version(), runtime.GOOS, runtime.GOARCH, store.SchemaVersion)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "one JSON object")
	return cmd
}
