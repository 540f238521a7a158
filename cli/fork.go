package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/diff"
	"github.com/modelwire/modelwire/session"
	"github.com/modelwire/modelwire/store"
)

func init() { register(newForkCmd) }

// forkPlan is what a fork inherits from its parent and what it changes.
type forkPlan struct {
	parent string
	turn   int
	// history and observed are the parent's turns before turn, with the
	// tool-result edits made.
	history  []adapters.Turn
	observed []session.ObservedResult
	// ops edit every request body the fork sends (--set, --body).
	ops []diff.Op
	// results are the edited tool results (--tool-result).
	results map[store.CallRef]string
	// sets and bodyFile are the edits as given, for the record.
	sets     []string
	bodyFile string
	changed  map[string]string // provider, model, protocol the fork changed
}

func newForkCmd(app *App) *cobra.Command {
	f := runFlags{}
	var turn int
	var sets, toolResults []string
	var bodyFile string
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

A fork always sends the full history: a provider's stored chain
(previous_response_id) holds the parent's results, not the edited ones.`,
		Example: `  echo '{"status":"ok","evidence_id":"E-order","paid_cents":20000}' > order.json
  modelwire fork 1m8p --turn 3 --tool-result call_order=order.json --approve auto
  modelwire fork 1m8p --turn 1 --set 'body.tools/0/description="Look up one order line"' --approve auto
  modelwire fork 1m8p --turn 1 --protocol anthropic-messages --approve auto --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("turn") {
				return usageErr("fork needs --turn N: the first turn the fork sends again")
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
	return cmd
}

// planFork reads the parent and the edits, and fills f with the parent's
// settings wherever the command line left them unset.
func planFork(app *App, cmd *cobra.Command, prefix string, turn int, sets, toolResults []string, bodyFile string, f *runFlags) (*forkPlan, error) {
	db, id, err := resolveSession(app, prefix)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	s, turns, err := db.Turns(id)
	if err != nil {
		return nil, storeErr(err)
	}
	if s.Scenario == "" || s.Source == "proxy" {
		return nil, usageErr("session %s is an application's (%s), not a scenario's: its tools are the application's, so modelwire cannot run on from a turn; play it back with `modelwire serve --session %s` and re-run the application instead", id, s.Origin(), id)
	}
	last := 0
	if len(turns) > 0 {
		last = turns[len(turns)-1].Turn
	}
	if turn < 1 || turn > last {
		return nil, usageErr("--turn %d: session %s has turns 1 to %d", turn, id, last)
	}
	fl := cmd.Flags()
	plan := &forkPlan{parent: id, turn: turn, results: map[store.CallRef]string{}, sets: sets, bodyFile: bodyFile, changed: map[string]string{}}
	for _, c := range []struct {
		flag string
		dst  *string
		old  string
	}{{"provider", &f.provider, s.Provider}, {"protocol", &f.protocol, s.Protocol}, {"model", &f.model, s.Model}} {
		if fl.Changed(c.flag) {
			if *c.dst != c.old {
				plan.changed[c.flag] = *c.dst
			}
			continue
		}
		*c.dst = c.old
	}
	if !fl.Changed("scenario") {
		f.scenario = s.ScenarioName()
	}
	if !fl.Changed("base-url") && f.provider == s.Provider && f.provider != adapters.ProviderSim {
		f.baseURL = s.BaseURL
	}
	var params struct {
		Stream *bool `json:"stream"`
	}
	if json.Unmarshal(s.Manifest.Parameters, &params) == nil && params.Stream != nil && !fl.Changed("stream") && !fl.Changed("no-stream") {
		f.noStream = !*params.Stream
	}
	f.history = string(adapters.HistoryFull)

	// The inherited turns, with the tool results edited.
	if err := plan.resolveResults(id, turns, toolResults); err != nil {
		return nil, err
	}
	for _, t := range turns {
		if t.Turn >= turn {
			break
		}
		h := t.History()
		h.FollowUp = regenerationAsked(s, t.Turn)
		for i, r := range h.Results {
			if c, ok := plan.results[store.CallRef{Turn: t.Turn, CallID: r.CallID}]; ok {
				h.Results[i].Content = c
			}
		}
		plan.history = append(plan.history, h)
		for _, c := range t.Calls {
			if !c.HasResult {
				continue
			}
			args := c.Arguments
			if len(c.Edited) > 0 {
				args = c.Edited
			}
			content := c.Result
			if e, ok := plan.results[store.CallRef{Turn: t.Turn, CallID: c.CallID}]; ok {
				content = e
			}
			plan.observed = append(plan.observed, session.ObservedResult{CallID: c.CallID, Name: c.Name, Arguments: args, Content: content, IsError: c.IsError})
		}
	}

	// The body edits, checked against the parent's own request of that
	// turn when the fork speaks the same protocol.
	var original []byte
	for _, t := range turns {
		if t.Turn == turn {
			original = t.Attempt.RequestBody
		}
	}
	for _, set := range sets {
		op, err := parseSet(set)
		if err != nil {
			return nil, err
		}
		plan.ops = append(plan.ops, op)
	}
	if bodyFile != "" {
		if _, ok := plan.changed["protocol"]; ok {
			return nil, usageErr("--body and --protocol: the edited body is in %s's words; change one or the other", s.Protocol)
		}
		b, err := os.ReadFile(bodyFile)
		if err != nil {
			return nil, usageErr("--body: %v", unwrapPathErr(err))
		}
		edited, err := diff.Parse(b)
		if _, isObj := edited.(map[string]any); err != nil || !isObj {
			return nil, usageErr("--body %s: not a JSON object", bodyFile)
		}
		orig, err := diff.Parse(original)
		if err != nil {
			return nil, usageErr("--body: turn %d's recorded request body is not JSON", turn)
		}
		plan.ops = append(plan.ops, diff.Patch(orig, edited)...)
	}
	if _, ok := plan.changed["protocol"]; !ok && len(plan.ops) > 0 {
		if _, err := diff.Apply(original, plan.ops); err != nil {
			return nil, usageErr("--set: %v (in turn %d's request)", err, turn)
		}
	}
	return plan, nil
}

// regenerationAsked is the message that followed turn's answer when the
// engine asked again (a regeneration, recorded as the verdict on that
// turn's answer), so the fork sends the history the parent sent.
func regenerationAsked(s *store.Session, turn int) string {
	for _, v := range s.Validations {
		if v.Turn == turn && v.Status == session.Fail {
			return session.RegenerationMessage(session.LayerResult{Layer: v.Layer, Status: v.Status, Detail: v.Detail})
		}
	}
	return ""
}

// resolveResults reads each --tool-result [TURN:]CALL_ID=FILE and finds
// the call among the turns before the fork's: a call_id alone must name
// one call (Gemini numbers its ids afresh each turn: then the turn says
// which).
func (p *forkPlan) resolveResults(id string, turns []store.TurnRecord, toolResults []string) error {
	var known []string
	where := map[string][]int{}
	for _, t := range turns {
		if t.Turn >= p.turn {
			break
		}
		for _, c := range t.Calls {
			if c.HasResult {
				if len(where[c.CallID]) == 0 {
					known = append(known, c.CallID)
				}
				where[c.CallID] = append(where[c.CallID], t.Turn)
			}
		}
	}
	for _, tr := range toolResults {
		ref, file, ok := strings.Cut(tr, "=")
		if !ok || ref == "" || file == "" {
			return usageErr("--tool-result %q: want [TURN:]CALL_ID=FILE", tr)
		}
		callID, turn := ref, 0
		if t, c, ok := strings.Cut(ref, ":"); ok {
			if n, err := strconv.Atoi(t); err == nil {
				callID, turn = c, n
			}
		}
		turnsOf := where[callID]
		switch {
		case len(known) == 0:
			return usageErr("--tool-result %s: session %s has no tool results before turn %d", ref, id, p.turn)
		case len(turnsOf) == 0:
			return usageErr("--tool-result %s: no such call before turn %d (there are %s)", callID, p.turn, strings.Join(known, ", "))
		case turn == 0 && len(turnsOf) > 1:
			return usageErr("--tool-result %s: that call_id answers calls in turns %v; name one as TURN:%s", callID, turnsOf, callID)
		case turn == 0:
			turn = turnsOf[0]
		case !slices.Contains(turnsOf, turn):
			return usageErr("--tool-result %s: turn %d has no call %s (it is in turn %v)", ref, turn, callID, turnsOf)
		}
		b, err := os.ReadFile(file)
		if err != nil {
			return usageErr("--tool-result %s: %v", ref, unwrapPathErr(err))
		}
		p.results[store.CallRef{Turn: turn, CallID: callID}] = strings.TrimRight(string(b), "\r\n")
	}
	return nil
}

// parseSet reads --set body.PATH=JSON.
func parseSet(set string) (diff.Op, error) {
	path, value, ok := strings.Cut(set, "=")
	rest, isBody := strings.CutPrefix(path, "body.")
	if !isBody {
		rest, isBody = strings.CutPrefix(path, "body/")
	}
	if !ok || !isBody || rest == "" {
		return diff.Op{}, usageErr("--set %q: want body.PATH=JSON, e.g. body.tools/0/description='\"…\"'", set)
	}
	v, err := diff.Parse([]byte(value))
	if err != nil {
		return diff.Op{}, usageErr("--set %s: %q is not JSON (a string needs its quotes: '\"text\"')", path, value)
	}
	return diff.Op{Path: diff.SplitPath(rest), Value: v}, nil
}

// config is the engine's side of the fork.
func (p *forkPlan) config() *session.Fork {
	fk := &session.Fork{FromTurn: p.turn, History: p.history, Observed: p.observed}
	for _, h := range p.history {
		fk.Regenerated = fk.Regenerated || h.FollowUp != ""
	}
	if len(p.ops) > 0 {
		fk.Edit = func(turn int, req *adapters.HTTPRequest) error {
			body, err := diff.Apply(req.Body, p.ops)
			if err != nil {
				return err
			}
			req.Body = body
			return nil
		}
	}
	return fk
}

// record is the fork as the session's parameters keep it.
func (p *forkPlan) record() map[string]any {
	m := map[string]any{"parent": p.parent, "turn": p.turn}
	if len(p.sets) > 0 {
		m["set"] = p.sets
	}
	if p.bodyFile != "" {
		m["body"] = p.ops
	}
	if len(p.results) > 0 {
		rs := map[string]string{}
		for r, c := range p.results {
			rs[fmt.Sprintf("%d:%s", r.Turn, r.CallID)] = c
		}
		m["tool_results"] = rs
	}
	for k, v := range p.changed {
		m[k] = v
	}
	return m
}

// announce says what the fork inherits (the journal copies the parent's
// turns in: app.Engine.Run).
func (p *forkPlan) announce(out io.Writer, asJSON bool) {
	if asJSON {
		return
	}
	fmt.Fprintf(out, "fork of %s from turn %d", p.parent, p.turn)
	switch {
	case p.turn == 2:
		fmt.Fprint(out, " (turn 1 is the parent's")
	case p.turn > 2:
		fmt.Fprintf(out, " (turns 1–%d are the parent's", p.turn-1)
	}
	if p.turn > 1 {
		if len(p.results) > 0 {
			ids := make([]string, 0, len(p.results))
			for r := range p.results {
				ids = append(ids, r.CallID)
			}
			slices.Sort(ids)
			fmt.Fprintf(out, ", results of %s edited", strings.Join(ids, ", "))
		}
		fmt.Fprint(out, ")")
	}
	fmt.Fprintln(out)
	for _, s := range p.sets {
		fmt.Fprintf(out, "  set %s\n", s)
	}
	if p.bodyFile != "" {
		fmt.Fprintf(out, "  body edited (%s): %d changed values\n", p.bodyFile, len(p.ops)-len(p.sets))
	}
	for _, k := range []string{"provider", "protocol", "model"} {
		if v, ok := p.changed[k]; ok {
			fmt.Fprintf(out, "  %s → %s\n", k, v)
		}
	}
}
