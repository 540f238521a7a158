package cli

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/modelwire/modelwire/adapters/registry"
	"github.com/modelwire/modelwire/samples"
	"github.com/modelwire/modelwire/sim"
	"github.com/modelwire/modelwire/workshop"
)

func init() { register(newWorkshopCmd) }

// scenarioExists says whether an exercise's scenario loads.
func scenarioExists(name string) error {
	_, err := samples.Lookup(name)
	return err
}

// loopback says whether addr listens on loopback only.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// workshopRoom opens the room serve --workshop grades with: the exercise,
// its scenario, the teacher's token, recording into the database.
func workshopRoom(app *App, name, addr string, requireKey bool, maxParticipants int) (*workshop.Room, string, func(), error) {
	if !loopback(addr) && !requireKey {
		return nil, "", nil, usageErr("--workshop on %s opens the room beyond this machine: add --require-key, so each participant is known by their own key", addr)
	}
	if maxParticipants < 1 {
		return nil, "", nil, usageErr("--max-participants must be positive")
	}
	ex, err := workshop.Lookup(name, scenarioExists)
	if err != nil {
		return nil, "", nil, usageErr("%v", err)
	}
	db, err := openForWrite(app)
	if err != nil {
		return nil, "", nil, err
	}
	var b [12]byte
	_, _ = rand.Read(b[:])
	token := hex.EncodeToString(b[:])
	room := workshop.NewRoom(ex, workshop.Options{MaxParticipants: maxParticipants, Token: token, Record: db})
	return room, token, func() { room.Close(); db.Close() }, nil
}

// workshopBanner tells the teacher what to run and what to hand out.
func workshopBanner(w io.Writer, url, token string, ex *workshop.Exercise) {
	fmt.Fprintf(w, "workshop %s — %s / %s\n", ex.Name, ex.Title.ZH, ex.Title.EN)
	fmt.Fprintf(w, "  participants: OpenAI base URL %s/v1 (any SDK; each their own key, or header %s: NAME)\n", url, sim.ParticipantHeader)
	fmt.Fprintf(w, "  their grades: modelwire workshop me %s --key KEY [--participant NAME]\n", url)
	fmt.Fprintf(w, "  room view:    modelwire room %s --token %s\n", url, token)
}

func newWorkshopCmd(app *App) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "workshop",
		Short: "Workshop exercises: list them, check an exercise file, see your own grades in a room",
		Long: `A workshop runs with 'modelwire serve --workshop EXERCISE': every participant's
program talks to it as to the provider, and each request is graded on the wire.
These subcommands list the built-in exercises, check an exercise file, and show
a participant their own grades and hints (docs/workshop.md).`,
		Example: `  modelwire workshop list
  modelwire workshop check my-exercise.json
  modelwire workshop me http://127.0.0.1:8787 --key sk-mine --participant alice`,
	}
	list := &cobra.Command{
		Use:     "list",
		Short:   "List the built-in exercises",
		Example: "  modelwire workshop list",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, n := range workshop.Names() {
				ex, err := workshop.Lookup(n, nil)
				if err != nil {
					return failedErr("%v", err)
				}
				fmt.Fprintf(app.Out, "%-10s %d steps  %s / %s\n", n, len(ex.Steps), ex.Title.ZH, ex.Title.EN)
			}
			return nil
		},
	}
	check := &cobra.Command{
		Use:     "check FILE",
		Short:   "Check an exercise file; the first problem is named by its JSON pointer and line",
		Example: "  modelwire workshop check my-exercise.json",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ex, err := workshop.LoadFile(args[0], scenarioExists)
			if err != nil {
				return usageErr("%v", err)
			}
			n := 0
			for _, s := range ex.Steps {
				n += len(s.Checks)
			}
			fmt.Fprintf(app.Out, "%s: exercise %s, %d steps, %d checks: valid\n", args[0], ex.Name, len(ex.Steps), n)
			return nil
		},
	}
	var key, name string
	var asJSON bool
	me := &cobra.Command{
		Use:   "me URL",
		Short: "Show your own grades and hints in a workshop room",
		Long: `Ask the room at URL (as serve --workshop printed it) for your own grades and hints.
You are known by the key your program sends (--key, else $OPENAI_API_KEY) and the
` + sim.ParticipantHeader + ` header if it sends one (--participant): pass the same.`,
		Example: `  modelwire workshop me http://127.0.0.1:8787 --key sk-mine --participant alice
  OPENAI_API_KEY=sk-mine modelwire workshop me http://192.168.1.10:8787 --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if key == "" {
				d, _ := registry.Describe(registry.Default)
				key = os.Getenv(d.Auth.Env)
			}
			h := http.Header{}
			if key != "" {
				h.Set("Authorization", "Bearer "+key)
			}
			if name != "" {
				h.Set(sim.ParticipantHeader, name)
			}
			var m workshop.Me
			if err := getRoomJSON(args[0], workshop.MePath, h, &m); err != nil {
				return err
			}
			if asJSON {
				b, _ := json.Marshal(m)
				fmt.Fprintln(app.Out, string(b))
				return nil
			}
			printMe(app.Out, m)
			return nil
		},
	}
	me.Flags().StringVar(&key, "key", "", "the API key your program sends (default $OPENAI_API_KEY)")
	me.Flags().StringVar(&name, "participant", "", "the "+sim.ParticipantHeader+" your program sends")
	me.Flags().BoolVar(&asJSON, "json", false, "print the room's JSON, one line")
	cmd.AddCommand(list, check, me)
	return cmd
}

// roomClient is bounded: a room answers in milliseconds.
var roomClient = &http.Client{Timeout: 10 * time.Second}

// maxRoomJSON bounds what a room's answer may be.
const maxRoomJSON = 8 << 20

// getRoomJSON GETs a room endpoint and decodes its JSON into v.
func getRoomJSON(base, path string, h http.Header, v any) error {
	req, err := http.NewRequest(http.MethodGet, strings.TrimSuffix(base, "/")+path, nil)
	if err != nil {
		return usageErr("room URL %s: %v", base, err)
	}
	req.Header = h
	resp, err := roomClient.Do(req)
	if err != nil {
		return failedErr("the room at %s: %v", base, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxRoomJSON))
	if err != nil {
		return failedErr("the room at %s: %v", base, err)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct{ Error string }
		_ = json.Unmarshal(body, &e)
		if e.Error == "" {
			e.Error = resp.Status
		}
		return failedErr("the room at %s: %s", base, e.Error)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return failedErr("the room at %s answered something that is not a room's JSON: %v", base, err)
	}
	return nil
}

// printMe prints a participant's view for a terminal.
func printMe(w io.Writer, m workshop.Me) {
	fmt.Fprintf(w, "%s — exercise %s: %s / %s\n", m.Participant, m.Exercise, m.Title.ZH, m.Title.EN)
	if m.Step == 0 {
		fmt.Fprintf(w, "no step graded yet (%d requests)\n", m.Requests)
		return
	}
	fmt.Fprintf(w, "step %d (%s): %d/%d checks pass, %d requests", m.Step, m.StepID, m.Passed, m.Total, m.Requests)
	if m.SessionID != "" {
		fmt.Fprintf(w, ", session %s", m.SessionID)
	}
	fmt.Fprintln(w)
	for _, f := range m.Failed {
		fmt.Fprintf(w, "  ✗ %s  §%s\n    %s\n    %s\n", f.Check, f.Section, f.Hint.ZH, f.Hint.EN)
		if f.Detail != "" {
			fmt.Fprintf(w, "    (%s)\n", f.Detail)
		}
	}
	if m.Request != "" {
		fmt.Fprintf(w, "your latest request:\n  %s\n", m.Request)
	}
	if len(m.Failed) > 0 && m.Expect != "" {
		fmt.Fprintf(w, "expected shape:\n  %s\n", m.Expect)
	}
}
