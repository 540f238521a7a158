package cli

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/modelwire/modelwire/samples"
	"github.com/modelwire/modelwire/sim"
)

func init() { register(newServeCmd) }

func newServeCmd(app *App) *cobra.Command {
	var addr, scenario, fault string
	var delayMS int
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the simulator as a standalone server for any client (SDKs, curl)",
		Long: `Serve the built-in simulator: every protocol's endpoints as the real providers
have them, answering from the scenario's script (the turn is chosen from each
request's own history, so any correct client drives it), checking requests the way
the providers do, and injecting faults on demand. Any API key is accepted.

Endpoints: POST /v1/responses, /v1/chat/completions, /chat/completions (DeepSeek),
/v1/messages, /v1beta/models/{model}:generateContent and
/v1beta/models/{model}:streamGenerateContent?alt=sse. A request header
X-Modelwire-Scenario picks another scenario for that request.`,
		Example: `  modelwire serve --addr 127.0.0.1:8787
  modelwire serve --scenario refund/fenced --delay-ms 40
  modelwire serve --fault rate-limit,disconnect-mid-args:always`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			sc, err := samples.Lookup(scenario)
			if err != nil {
				return usageErr("%v", err)
			}
			faults, err := sim.ParseFaults(fault)
			if err != nil {
				return usageErr("%v", err)
			}
			if delayMS < 0 {
				return usageErr("--delay-ms must not be negative")
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			srv := sim.New(sim.Options{Scenario: sc, Lookup: samples.Lookup, Faults: faults, Delay: time.Duration(delayMS) * time.Millisecond})
			url, err := srv.Start(ctx, addr)
			if err != nil {
				return usageErr("cannot listen on %s: %v", addr, err)
			}
			fmt.Fprintf(app.Out, "modelwire simulator on %s (scenario %s", url, sc.FullName())
			if fault != "" {
				fmt.Fprintf(app.Out, ", faults %s", faults)
			}
			fmt.Fprintf(app.Out, ")\n  OpenAI base URL:    %s/v1\n  Anthropic base URL: %s\n  Gemini base URL:    %s\n  DeepSeek base URL:  %s\nCtrl-C stops it.\n", url, url, url, url)
			<-ctx.Done()
			return nil
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:8787", "address to listen on")
	cmd.Flags().StringVar(&scenario, "scenario", "refund", "scenario whose script answers")
	cmd.Flags().StringVar(&fault, "fault", "", "faults, comma-separated (NAME or NAME:always): "+fmt.Sprint(sim.FaultNames()))
	cmd.Flags().IntVar(&delayMS, "delay-ms", 0, "pause between stream events, in ms")
	completeWith(cmd, "fault", sim.FaultNames())
	completeWith(cmd, "scenario", samples.Names())
	return cmd
}
