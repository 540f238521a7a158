package cli

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/mattn/go-runewidth"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/modelwire/modelwire/store"
	"github.com/modelwire/modelwire/ui"
)

func init() { register(newSessionsCmd) }

func newSessionsCmd(app *App) *cobra.Command {
	var f store.Filter
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "sessions",
		Short: "List stored sessions, newest first",
		Long: `List the sessions stored in the database (--db), newest first, as a table or,
with --json, one object a line: id, created_at, scenario, protocol, provider,
model, status (running, done, failed, interrupted), turns, events, and the
manifest (models asked for and reported, client, versions, and the hashes of
the prompt template, each tool and the output schema).

A session whose recording process died shows as interrupted. Any unique prefix of
an id names a session in replay and export.`,
		Example: `  modelwire sessions
  modelwire sessions --status failed --protocol anthropic-messages
  modelwire sessions --search 退款 --json
  modelwire sessions --content 'paid_cents":20000'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkStatus(f.Status); err != nil {
				return err
			}
			db, err := openForRead(app)
			if err != nil {
				return err
			}
			var list []store.SessionInfo
			if db != nil {
				defer db.Close()
				if list, err = db.ListSessions(f); err != nil {
					return storeErr(err)
				}
			}
			out := bufio.NewWriter(app.Out)
			defer out.Flush()
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetEscapeHTML(false)
				for _, s := range list {
					if err := enc.Encode(sessionJSON(s)); err != nil {
						return err
					}
				}
				return nil
			}
			if len(list) == 0 {
				fmt.Fprintf(out, "No sessions stored in %s.\n", app.DB)
				return nil
			}
			writeSessionTable(out, list)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&asJSON, "json", false, "one JSON object a line")
	filterFlags(fl, &f, "sessions", "provider", "running, done, failed or interrupted")
	return cmd
}

// sessionObject is one line of `sessions --json`. Its first fields (id,
// created_at, scenario, protocol, provider, model, status, turns, events)
// are the ones scripts may rely on and keep their names and meaning; the
// others were added since.
type sessionObject struct {
	ID            string   `json:"id"`
	CreatedAt     string   `json:"created_at"`
	Scenario      string   `json:"scenario"`
	Protocol      string   `json:"protocol"`
	Provider      string   `json:"provider"`
	Model         string   `json:"model"`
	Status        string   `json:"status"`
	Turns         int      `json:"turns"`
	Events        int      `json:"events"`
	Title         string   `json:"title"`
	ModelReported string   `json:"model_reported,omitempty"`
	FinishedAt    string   `json:"finished_at,omitempty"`
	Source        string   `json:"source,omitempty"`
	Origin        string   `json:"origin,omitempty"` // the scenario, or where a recording came from
	ParentID      string   `json:"parent_id,omitempty"`
	Faults        []string `json:"faults,omitempty"`
	FailedLayer   string   `json:"failed_layer,omitempty"` // the first layer that failed
	InputTokens   int64    `json:"input_tokens"`
	OutputTokens  int64    `json:"output_tokens"`
	DurationMS    int64    `json:"duration_ms,omitempty"`
	BaseURL       string   `json:"base_url,omitempty"`
	Version       string   `json:"modelwire_version,omitempty"`
	// Manifest is what the session ran with: models, protocol, provider,
	// client, versions, and the hashes of its prompt template, tools (one
	// by one) and output schema (the tools and schema themselves are in
	// an export).
	Manifest *store.Manifest `json:"manifest,omitempty"`
}

const jsonTime = "2006-01-02T15:04:05.000Z07:00"

func sessionJSON(s store.SessionInfo) sessionObject {
	o := sessionObject{ID: s.ID, CreatedAt: s.CreatedAt.UTC().Format(jsonTime), Scenario: s.ScenarioName(),
		Protocol: s.Protocol, Provider: s.Provider, Model: s.Model, Status: string(s.Status), Turns: s.Turns, Events: s.Events,
		Title: s.Title, ModelReported: s.ModelReported, Source: s.Source, Origin: s.Origin(), ParentID: s.ParentID,
		Faults: s.Faults, FailedLayer: s.FailedLayer, InputTokens: s.InputTokens, OutputTokens: s.OutputTokens,
		DurationMS: s.Duration().Milliseconds(), BaseURL: s.BaseURL, Version: s.Version}
	m := s.Manifest
	m.Parameters, m.Tools, m.OutputSchema = nil, nil, nil
	o.Manifest = &m
	if o.Model == "" {
		o.Model = s.ModelReported
	}
	if !s.FinishedAt.IsZero() {
		o.FinishedAt = s.FinishedAt.UTC().Format(jsonTime)
	}
	return o
}

// writeSessionTable prints sessions as aligned columns. Widths are
// measured in terminal cells, never bytes: titles may be Chinese.
func writeSessionTable(w io.Writer, list []store.SessionInfo) {
	rows := [][]string{{"ID", "CREATED", "STATUS", "FAILED", "SCENARIO/APP", "PROTOCOL", "PROVIDER", "MODEL", "TURNS", "TOKENS", "EVENTS", "TITLE"}}
	list, depth := ui.SessionTree(list) // forks under the session they came from
	for i, s := range list {
		rows = append(rows, []string{treeID(s.ID, depth[i]), s.CreatedAt.Local().Format("2006-01-02 15:04"), string(s.Status), s.FailedLayer,
			clip(s.Origin(), 32), s.Protocol, s.Provider, clip(s.ModelShown(), 24), fmt.Sprint(s.Turns),
			fmt.Sprint(s.InputTokens + s.OutputTokens), fmt.Sprint(s.Events), clip(s.Title, 48)})
	}
	writeTable(w, rows, map[int]bool{8: true, 9: true, 10: true})
}

// writeTable writes rows as columns two cells apart; right lists the
// columns aligned right. The last column is not padded.
func writeTable(w io.Writer, rows [][]string, right map[int]bool) {
	if len(rows) == 0 {
		return
	}
	widths := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], runewidth.StringWidth(c))
		}
	}
	for _, r := range rows {
		var b strings.Builder
		for i, c := range r {
			pad := strings.Repeat(" ", widths[i]-runewidth.StringWidth(c))
			switch {
			case i == len(r)-1:
				b.WriteString(c)
			case right[i]:
				b.WriteString(pad + c + "  ")
			default:
				b.WriteString(c + pad + "  ")
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}

// clip cuts s to at most n cells, on one line.
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	return runewidth.Truncate(s, n, "…")
}

// openForRead opens the database for a command that only reads it. A
// database that does not exist yet is not created: db is nil. A location
// that cannot be written is opened read-only.
func openForRead(app *App) (*store.DB, error) {
	if _, err := os.Stat(app.DB); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	db, err := store.Open(app.DB)
	if errors.Is(err, store.ErrReadOnly) {
		db, err = store.OpenWith(app.DB, store.Options{ReadOnly: true})
	}
	if err != nil {
		return nil, storeErr(err)
	}
	return db, nil
}

// openForWrite opens (creating if needed) the database for a command that
// writes it.
func openForWrite(app *App) (*store.DB, error) { return openForWriteWith(app, store.Options{}) }

// openForWriteWith is openForWrite with the store's options.
func openForWriteWith(app *App, o store.Options) (*store.DB, error) {
	db, err := store.OpenWith(app.DB, o)
	if err != nil {
		return nil, storeErr(err)
	}
	return db, nil
}

// resolveSession opens the database and resolves an id or unique prefix.
func resolveSession(app *App, prefix string) (*store.DB, string, error) {
	db, err := openForRead(app)
	if err != nil {
		return nil, "", err
	}
	if db == nil {
		return nil, "", usageErr("no session %q: there is no database at %s yet", prefix, app.DB)
	}
	id, err := db.Resolve(prefix)
	if err != nil {
		db.Close()
		return nil, "", storeErr(err)
	}
	return db, id, nil
}

// storeErr maps the store's errors to exit codes: a database that is not
// usable, an unknown or ambiguous session, a malformed file are bad input
// (2); anything else is a failure (1).
func storeErr(err error) error {
	if err == nil {
		return nil
	}
	var (
		oe *store.OpenError
		nf *store.NotFoundError
		am *store.AmbiguousError
		ie *store.InputError
		re *store.RangeError
		ee *exitError
	)
	switch {
	case errors.As(err, &ee):
		return err
	case errors.As(err, &oe), errors.As(err, &nf), errors.As(err, &am), errors.As(err, &ie), errors.As(err, &re):
		return usageErr("%v", err)
	}
	return failedErr("%v", err)
}

// ms formats a duration in milliseconds for tables.
func fmtMS(d time.Duration) string {
	return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000)
}

// checkStatus refuses a --status that is not a session status.
func checkStatus(s store.Status) error {
	switch s {
	case "", store.StatusRunning, store.StatusDone, store.StatusFailed, store.StatusInterrupted:
		return nil
	}
	return usageErr("--status %q: want running, done, failed or interrupted", s)
}

// filterFlags declares the flags that fill a store.Filter, for `sessions`
// and `check` (which calls its sessions recordings and gives --provider
// to its targets).
func filterFlags(fl *pflag.FlagSet, f *store.Filter, noun, providerFlag, statuses string) {
	fl.StringVar(&f.Scenario, "scenario", "", "only "+noun+" of this scenario (refund matches its variants too)")
	fl.StringVar(&f.Protocol, "protocol", "", "only "+noun+" of this protocol")
	fl.StringVar(&f.Provider, providerFlag, "", "only "+noun+" of this provider")
	fl.StringVar((*string)(&f.Status), "status", "", "only "+noun+" of this status: "+statuses)
	fl.StringVar(&f.Search, "search", "", "only "+noun+" whose title contains this text")
	fl.StringVar(&f.Content, "content", "", "only "+noun+" whose requests, tool calls or events contain this text")
}
