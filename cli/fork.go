package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/modelwire/modelwire/adapters"
	application "github.com/modelwire/modelwire/app"
)

func init() { register(newForkCmd) }

// forkPlan is the fork the command planned (app.PlanFork: the CLI and
// the workbench share the planner) with the edits as given, for printing.
type forkPlan struct {
	*application.ForkPlan
	sets     []string
	bodyFile string
}

func newForkCmd(app *App) *cobra.Command {
	f := runFlags{}
	var turn int
	var sets, toolResults []string
	var bodyFile, to string
	var tui bool
	cmd := &cobra.Command{
		Use:   "fork ID --turn N",
		Short: "Re-send a stored session from one turn, with one thing changed, as a new session",
		Long: `Fork a stored session: the new session's history up to turn N is the parent's
(copied in, so it replays and exports whole), then it continues live from turn N
with the edits applied, runs to its end like run, and prints what run prints.
It records its parent (sessions lists it under it) and its edits.

Edits:
  --set body.PATH=JSON       set a value in every request body the fork sends, PATH
                             a slash path into the body: tools/0/description,
                             input/4/output (a string holding JSON is edited inside)
  --body FILE                turn N's whole request body, edited (what changed is
                             applied to the later turns' bodies too)
  --tool-result [TURN:]CALL_ID=FILE  an earlier turn's tool result (the turn
                             only where a call_id repeats, as Gemini's do)
  --provider, --model, --protocol   another provider, model, or the same sources
                             re-assembled for another wire format

Many targets at once: --to a,b,c makes one child per target (each as if
--provider/--protocol/--model were given, or sim:SCENARIO for the simulator
playing a scenario or variant), runs each unattended, then prints each child's
diff from the parent and the turn's answer, verdicts, latency, tokens and cost
side by side (--json: one fork.comparison object). Exit 1 when a child fails.
--tui then opens the workbench on the parent's diff against the first child,
the other children named (s, then D on each ↳ row compares them).
Targets: openai-chat, anthropic-messages/MODEL, anthropic/MODEL,
openai:openai-chat/MODEL, sim:refund/wrong-cap.

A fork always sends the full history: a provider's stored chain
(previous_response_id) holds the parent's results, not the edited ones.

A proxied (or imported) session is an application's: the fork re-sends turn
N's request as the application sent it (its body, URL and headers; the key
from the environment), with the edits made where they sit in the body, and
goes on only while the answer proposes calls the parent also ran (same name,
equal arguments): their recorded results are fed back. At a call the parent
never ran it stops, the proposal recorded, and says how to go on with the
application (modelwire serve --session FORK). --protocol is refused there:
there are no sources to re-assemble, only the wire.`,
		Example: `  echo '{"status":"ok","evidence_id":"E-order","paid_cents":20000}' > order.json
  modelwire fork 1m8p --turn 3 --tool-result call_order=order.json --approve auto
  modelwire fork 1m8p --turn 1 --set 'body.tools/0/description="Look up one order line"' --approve auto
  modelwire fork 1m8p --turn 1 --protocol anthropic-messages --approve auto --json
  modelwire fork 1m8p --turn 3 --to openai-chat,anthropic-messages,sim:refund/wrong-cap --approve auto`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("turn") {
				return usageErr("fork needs --turn N: the first turn the fork sends again")
			}
			if to != "" {
				return forkTo(cmd.Context(), app, cmd, args[0], to, turn, sets, toolResults, bodyFile, f, tui)
			}
			if tui {
				return usageErr("--tui opens the comparison of --to's children: give --to")
			}
			plan, err := planFork(app, cmd, args[0], turn, sets, toolResults, bodyFile, &f)
			if err != nil {
				return err
			}
			f.fork = plan
			return runRepeated(cmd.Context(), app, f, cmd.Flags().Changed("stream"))
		},
	}
	addRunFlags(cmd, &f)
	fl := cmd.Flags()
	fl.IntVar(&turn, "turn", 0, "the turn to send again (1 is the first request)")
	fl.StringArrayVar(&sets, "set", nil, "body.PATH=JSON: set a value in each request body (repeatable)")
	fl.StringVar(&bodyFile, "body", "", "a file with turn N's whole request body, edited")
	fl.StringArrayVar(&toolResults, "tool-result", nil, "[TURN:]CALL_ID=FILE: replace an earlier turn's tool result (repeatable)")
	fl.BoolVar(&tui, "tui", false, "with --to: then open the workbench on the parent against the first child (the others listed)")
	fl.StringVar(&to, "to", "", "a,b,c: one child per target ("+application.TargetSyntax+"), then the comparison")
	return cmd
}

// planFork reads the edit files and plans the fork (app.PlanFork), and
// fills f with the parent's settings wherever the command line left them
// unset.
func planFork(app *App, cmd *cobra.Command, prefix string, turn int, sets, toolResults []string, bodyFile string, f *runFlags) (*forkPlan, error) {
	return planForkAs(app, cmd.Flags().Changed, prefix, turn, sets, toolResults, bodyFile, f)
}

// planForkAs is planFork with changed saying which flags the command line
// set (a --to target sets provider, protocol, model or scenario itself).
func planForkAs(app *App, changed func(flag string) bool, prefix string, turn int, sets, toolResults []string, bodyFile string, f *runFlags) (*forkPlan, error) {
	fl := flagSet{changed}
	e := application.ForkEdits{Sets: sets, BodyName: bodyFile}
	for _, c := range []struct {
		flag string
		v    string
		dst  *string
	}{{"provider", f.provider, &e.Provider}, {"protocol", f.protocol, &e.Protocol}, {"model", f.model, &e.Model}} {
		if fl.Changed(c.flag) {
			*c.dst = c.v
		}
	}
	for _, tr := range toolResults {
		ref, file, ok := strings.Cut(tr, "=")
		if !ok || ref == "" || file == "" {
			return nil, usageErr("--tool-result %q: want [TURN:]CALL_ID=FILE", tr)
		}
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, usageErr("--tool-result %s: %v", ref, unwrapPathErr(err))
		}
		e.Results = append(e.Results, application.ForkResult{Ref: ref, Content: string(b)})
	}
	if bodyFile != "" {
		b, err := os.ReadFile(bodyFile)
		if err != nil {
			return nil, usageErr("--body: %v", unwrapPathErr(err))
		}
		e.Body = b
	}
	db, id, err := resolveSession(app, prefix)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	p, err := application.PlanFork(db, id, turn, e)
	var bad *application.SetupError
	switch {
	case errors.As(err, &bad):
		return nil, usageErr("%v", err)
	case err != nil:
		return nil, storeErr(err)
	}
	s := p.Parent
	for _, c := range []struct {
		flag string
		dst  *string
		old  string
	}{{"provider", &f.provider, s.Provider}, {"protocol", &f.protocol, s.Protocol}, {"model", &f.model, s.Model}} {
		if !fl.Changed(c.flag) {
			*c.dst = c.old
		}
	}
	if p.Application() {
		// The application's request says these itself.
		for _, c := range []struct{ flag, instead string }{{"scenario", ""}, {"history", ""},
			{"stream", "; its body says whether it streams (--set body.stream=false)"}, {"no-stream", "; its body says whether it streams (--set body.stream=false)"}} {
			if fl.Changed(c.flag) {
				return nil, usageErr("--%s: session %s is an application's, and the fork re-sends its own requests%s", c.flag, s.ID, c.instead)
			}
		}
	}
	if !fl.Changed("scenario") {
		f.scenario = s.ScenarioName()
	}
	if !fl.Changed("base-url") && f.provider == s.Provider && f.provider != adapters.ProviderSim {
		f.baseURL = s.BaseURL
	}
	if st := p.Stream(); st != nil && !fl.Changed("stream") && !fl.Changed("no-stream") {
		f.noStream = !*st
	}
	f.history = string(adapters.HistoryFull)
	return &forkPlan{ForkPlan: p, sets: sets, bodyFile: bodyFile}, nil
}

// announce says what the fork inherits (the journal copies the parent's
// turns in: app.Engine.Run).
func (p *forkPlan) announce(out io.Writer, asJSON bool) {
	if asJSON {
		return
	}
	fmt.Fprintf(out, "fork of %s from turn %d", p.Parent.ID, p.Turn)
	switch {
	case p.Turn == 2:
		fmt.Fprint(out, " (turn 1 is the parent's")
	case p.Turn > 2:
		fmt.Fprintf(out, " (turns 1–%d are the parent's", p.Turn-1)
	}
	if p.Turn > 1 {
		if len(p.Results) > 0 {
			ids := make([]string, 0, len(p.Results))
			for r := range p.Results {
				ids = append(ids, r.CallID)
			}
			slices.Sort(ids)
			fmt.Fprintf(out, ", results of %s edited", strings.Join(ids, ", "))
		}
		fmt.Fprint(out, ")")
	}
	fmt.Fprintln(out)
	if p.Application() {
		fmt.Fprintf(out, "  turn %d's request as the application sent it; calls the parent ran get its results\n", p.Turn)
	}
	for _, s := range p.sets {
		fmt.Fprintf(out, "  set %s\n", s)
	}
	if p.bodyFile != "" {
		fmt.Fprintf(out, "  body edited (%s): %d changed values\n", p.bodyFile, p.BodyChanges())
	}
	for _, k := range []string{"provider", "protocol", "model"} {
		if v, ok := p.Changed[k]; ok {
			fmt.Fprintf(out, "  %s → %s\n", k, v)
		}
	}
}

// flagSet answers Changed as a command's flags (or a --to target) do.
type flagSet struct{ changed func(string) bool }

func (f flagSet) Changed(name string) bool { return f.changed(name) }
