package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/modelwire/modelwire/diff"
	"github.com/modelwire/modelwire/store"
)

func init() { register(newDiffCmd) }

func newDiffCmd(app *App) *cobra.Command {
	var asJSON, timing bool
	cmd := &cobra.Command{
		Use:   "diff A B",
		Short: "What differs between two sessions, aligned by turn and call_id",
		Long: `Compare two stored sessions — a fork and its parent, two runs of one scenario,
two protocols — turn by turn and, within a turn, call by call_id: request fields
(as JSON paths, old and new), tool calls and their arguments, tool results, how
each response ended, usage, the final object field by field, and the validation
layers.

The comparison is semantic: key order and whitespace do not count, a string
holding JSON (a tool result, Chat's arguments) is compared as that JSON, and
array items are matched by their id (id, call_id, tool_call_id, tool_use_id,
name) where every item has one. A change in a tool result is named once, where
it was produced, not again in each request that carries it back.

Latency always differs between two runs, so it is compared only with --timing.

Exit status: 0 when nothing differs, 1 when something does, 2 on bad input.`,
		Example: `  modelwire diff 1m8p 1m9a
  modelwire diff 1m8p 1m9a --json | jq -c 'select(.kind == "output")'`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			db, ida, err := resolveSession(app, args[0])
			if err != nil {
				return err
			}
			defer db.Close()
			idb, err := db.Resolve(args[1])
			if err != nil {
				return storeErr(err)
			}
			res, err := diff.Compare(db, ida, idb, diff.Options{Timing: timing})
			if err != nil {
				return storeErr(err)
			}
			changes := res.Changes
			out := bufio.NewWriter(app.Out)
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetEscapeHTML(false)
				for _, c := range changes {
					_ = enc.Encode(c)
				}
			} else {
				printDiff(out, res.A, res.B, changes)
			}
			if err := out.Flush(); err != nil {
				return failedErr("%v", err)
			}
			if len(changes) > 0 {
				return &exitError{code: ExitFailed, err: fmt.Errorf("%d differences", len(changes)), shown: true}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "one difference a line: kind, turn, call_id, path, op, a, b")
	cmd.Flags().BoolVar(&timing, "timing", false, "also compare each turn's latency")
	return cmd
}

// printDiff writes the differences for a person, grouped by turn.
func printDiff(w io.Writer, a, b *store.Session, changes []diff.Change) {
	fmt.Fprintf(w, "a %s  %s · %s · %s\n", a.ID, a.Origin(), a.Protocol, a.ModelShown())
	fmt.Fprintf(w, "b %s  %s · %s · %s%s\n", b.ID, b.Origin(), b.Protocol, b.ModelShown(), relation(a, b))
	if len(changes) == 0 {
		fmt.Fprintln(w, "\nno differences")
		return
	}
	group := ""
	for _, c := range changes {
		if g := c.Group(); g != group {
			fmt.Fprintf(w, "\n%s\n", g)
			group = g
		}
		path := c.LocalPath()
		if c.Kind == diff.KindManifest {
			c.A, c.B = shortHash(c.A), shortHash(c.B) // the JSON keeps them whole
		}
		switch c.Op {
		case diff.OpAdded:
			fmt.Fprintf(w, "  %-11s + %s: %s\n", c.Kind, path, oneLine(diff.Text(c.B)))
		case diff.OpRemoved:
			fmt.Fprintf(w, "  %-11s - %s: %s\n", c.Kind, path, oneLine(diff.Text(c.A)))
		default:
			fmt.Fprintf(w, "  %-11s %s: %s → %s\n", c.Kind, path, oneLine(diff.Text(c.A)), oneLine(diff.Text(c.B)))
		}
	}
	fmt.Fprintf(w, "\n%d differences\n", len(changes))
}

// relation says how b came from a, when it did.
func relation(a, b *store.Session) string {
	var fork struct {
		Fork *struct {
			Turn int `json:"turn"`
		} `json:"fork"`
	}
	switch {
	case b.ParentID == a.ID && json.Unmarshal(b.Manifest.Parameters, &fork) == nil && fork.Fork != nil:
		return fmt.Sprintf("  (a fork of a at turn %d)", fork.Fork.Turn)
	case b.ParentID == a.ID:
		return "  (made from a)"
	case a.ParentID == b.ID:
		return "  (a was made from b)"
	}
	return ""
}

// shortHash is a "sha256:…" hash cut to 12 hex digits, for a person.
func shortHash(v any) any {
	if s, ok := v.(string); ok && strings.HasPrefix(s, "sha256:") && len(s) > 19 {
		return s[:19] + "…"
	}
	return v
}
