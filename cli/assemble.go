package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/spf13/cobra"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/registry"
	application "github.com/modelwire/modelwire/app"
	"github.com/modelwire/modelwire/redact"
	"github.com/modelwire/modelwire/samples"
	"github.com/modelwire/modelwire/session"
	"github.com/modelwire/modelwire/sim"
	"github.com/modelwire/modelwire/transport"
)

func init() { register(newAssembleCmd) }

func newAssembleCmd(app *App) *cobra.Command {
	var scenario, protocol, history, provider string
	var turn int
	var asJSON, noStream bool
	cmd := &cobra.Command{
		Use:   "assemble",
		Short: "Print the exact request a scenario sends for a protocol at a turn, and where each source went",
		Long: `Print the HTTP request a scenario sends at turn N (1 is the first request; later
turns carry the scenario's model turns and their tool results as history, exactly as
run would send them: the turns are produced by running the scenario against the
built-in simulator with every valid call approved), with the map of which source
landed in which field.`,
		Example: `  modelwire assemble --protocol anthropic-messages
  modelwire assemble --protocol gemini --turn 3 --json | jq .map
  modelwire assemble --protocol openai-responses --turn 2 --history previous-response-id
  modelwire assemble --protocol gemini-interactions --turn 3 --history previous-response-id`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			sc, err := samples.Lookup(scenario)
			if err != nil {
				return usageErr("%v", err)
			}
			if _, err := registry.Lookup(protocol); err != nil || protocol == adapters.ClaudeCode {
				return usageErr("unknown protocol %q (want %s)", protocol, strings.Join(registry.Protocols, ", "))
			}
			if turn < 1 {
				return usageErr("--turn counts from 1")
			}
			h := adapters.HistoryFull
			switch history {
			case "full":
			case "previous-response-id":
				h = adapters.HistoryPreviousResponse
			default:
				return usageErr("unknown --history %q (want full or previous-response-id)", history)
			}
			wire, err := assembleTurn(cmd.Context(), sc, protocol, provider, h, !noStream, turn)
			if err != nil {
				return usageErr("%v", err)
			}
			if asJSON {
				return printAssembledJSON(app, wire)
			}
			printAssembled(app, wire)
			printVariantEdits(app, sc)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&scenario, "scenario", "refund", "scenario name or file")
	fl.StringVar(&protocol, "protocol", registry.Default, "wire format")
	fl.StringVar(&provider, "provider", adapters.ProviderSim, "provider whose capabilities apply (e.g. deepseek on openai-responses)")
	fl.IntVar(&turn, "turn", 1, "which request (1 is the first)")
	fl.StringVar(&history, "history", "full", "history: full, or previous-response-id (openai-responses previous_response_id, gemini-interactions previous_interaction_id)")
	fl.BoolVar(&noStream, "no-stream", false, "the non-streaming form of the request")
	fl.BoolVar(&asJSON, "json", false, `one JSON object: {"method","path","headers","body","map"}`)
	completeWith(cmd, "protocol", registry.Protocols)
	completeScenarios(cmd)
	return cmd
}

// assembleTurn produces the request of turn n by running the scenario on
// an in-process simulator, so the history carries the ids a real run gets.
func assembleTurn(ctx context.Context, sc *session.Scenario, protocol, provider string, h adapters.HistoryMode, stream bool, n int) (*adapters.HTTPRequest, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	base, err := application.StartSimulator(ctx, "127.0.0.1:0", sim.Options{Scenario: sc})
	if err != nil {
		return nil, err
	}
	cfg := session.Config{Scenario: sc, Protocol: protocol, Provider: transport.Provider{Name: provider, BaseURL: base, Key: "sim-key"},
		Stream: stream, History: h, Policy: session.PolicyAuto}
	// A limit of n turns: the run stops after sending request n.
	limited := *sc
	limited.TurnLimit = n
	cfg.Scenario = &limited
	s, err := session.New(cfg, nil, nil, nil)
	if err != nil {
		return nil, err
	}
	res, err := s.Run(ctx)
	if err != nil {
		return nil, err
	}
	if len(res.Requests) < n {
		return nil, fmt.Errorf("scenario %s ended after %d requests (the last response did not ask for tools)", sc.FullName(), len(res.Requests))
	}
	return res.Requests[n-1], nil
}

// displayHeaders are the request headers with the key header the session
// adds, redacted.
func displayHeaders(w *adapters.HTTPRequest, protocol string) map[string]string {
	h := http.Header{}
	for k, v := range w.Headers {
		h.Set(k, v)
	}
	transport.Provider{Key: "[redacted]"}.Authorize(h, protocol)
	out := map[string]string{}
	for k := range h {
		v := redact.HeaderValue(k, h.Get(k))
		if k == "Authorization" && !strings.Contains(v, " ") {
			v = "Bearer " + redact.Redacted
		}
		out[strings.ToLower(k)] = v
	}
	return out
}

// protocolOf is the protocol an assembled request's path is routed to
// (its query aside), the default protocol's for a path none claims.
func protocolOf(w *adapters.HTTPRequest) string {
	path, _, _ := strings.Cut(w.Path, "?")
	if d, ok := registry.Route(http.MethodPost, path, ""); ok {
		return d.Name
	}
	return registry.Default
}

func printAssembledJSON(app *App, w *adapters.HTTPRequest) error {
	out := struct {
		Method       string                  `json:"method"`
		Path         string                  `json:"path"`
		Headers      map[string]string       `json:"headers"`
		Body         json.RawMessage         `json:"body"`
		Map          []adapters.FieldMapping `json:"map"`
		Degradations []string                `json:"degradations"`
		Warnings     []string                `json:"warnings,omitempty"`
	}{w.Method, w.Path, displayHeaders(w, protocolOf(w)), w.Body, w.Map, w.Degradations, w.Warnings}
	if out.Degradations == nil {
		out.Degradations = []string{}
	}
	enc := json.NewEncoder(app.Out)
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}

func printAssembled(app *App, w *adapters.HTTPRequest) {
	o := app.Out
	fmt.Fprintf(o, "%s %s\n", w.Method, w.Path)
	hs := displayHeaders(w, protocolOf(w))
	keys := make([]string, 0, len(hs))
	for k := range hs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(o, "%s: %s\n", k, hs[k])
	}
	// Indent the body as sent: keys keep the order the client sends them.
	var pretty bytes.Buffer
	if json.Indent(&pretty, w.Body, "", "  ") != nil {
		pretty.Reset()
		pretty.Write(w.Body)
	}
	fmt.Fprintf(o, "\n%s\n\n", pretty.String())
	fmt.Fprintln(o, "where each source went:")
	rows := [][3]string{{"SOURCE", "TRUST", "FIELD"}}
	for _, m := range w.Map {
		field := m.Field
		if m.Note != "" {
			field += "  (" + m.Note + ")"
		}
		rows = append(rows, [3]string{m.Source, m.Trust, field})
	}
	printTable(app, rows)
	for _, d := range w.Degradations {
		fmt.Fprintf(o, "degraded: %s\n", d)
	}
	for _, n := range w.Warnings {
		fmt.Fprintf(o, "note: %s\n", n)
	}
}

// printVariantEdits says which words of the case a variant changed: the
// whole difference between its request and the passing one.
func printVariantEdits(app *App, sc *session.Scenario) {
	v, ok := sc.Variants[sc.Variant]
	if !ok || len(v.Edits) == 0 {
		return
	}
	fmt.Fprintf(app.Out, "\nvariant %s edits the case's prompt (the rest is the passing case's, byte for byte):\n", sc.FullName())
	for _, e := range v.Edits {
		fmt.Fprintf(app.Out, "  %s\n", e)
	}
}

// printTable aligns columns by display width (CJK is double width).
func printTable(app *App, rows [][3]string) {
	var width [2]int
	for _, r := range rows {
		for i := 0; i < 2; i++ {
			width[i] = max(width[i], lipgloss.Width(r[i]))
		}
	}
	for _, r := range rows {
		fmt.Fprintf(app.Out, "  %s%s  %s%s  %s\n", r[0], strings.Repeat(" ", width[0]-lipgloss.Width(r[0])),
			r[1], strings.Repeat(" ", width[1]-lipgloss.Width(r[1])), r[2])
	}
}
