package cli

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	application "github.com/modelwire/modelwire/app"
	"github.com/modelwire/modelwire/samples"
	"github.com/modelwire/modelwire/sim"
	"github.com/modelwire/modelwire/workshop"
)

func init() { register(newServeCmd) }

func newServeCmd(app *App) *cobra.Command {
	var addr, scenario, fault, session, speed, scenarios string
	var cf cassetteFlags
	var delayMS, maxConns, keepN int
	var keepMiB int64
	var batchOpts sim.BatchOptions
	var fileMiB, filesMiB int64
	var bodyTimeout time.Duration
	var pace float64
	var requireKey, roomTUI bool
	var exercise string
	var maxParticipants int
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the simulator as a standalone server for any client (SDKs, curl)",
		Long: `Serve the built-in simulator: every protocol's endpoints as the real providers
have them, answering from the scenario's script (the turn is chosen from each
request's own history, so any correct client drives it), checking requests the way
the providers do, and injecting faults on demand. Any API key is accepted, unless
--require-key: then a request needs one, in the provider's own header, and gets the
provider's own authentication error without; where OPENAI_API_KEY, DEEPSEEK_API_KEY,
ANTHROPIC_API_KEY or GEMINI_API_KEY is set, the key must also be that one.

Endpoints: POST /v1/responses, /v1/chat/completions, /chat/completions (DeepSeek),
/v1/messages, /v1beta/models/{model}:generateContent and
/v1beta/models/{model}:streamGenerateContent (?alt=sse for SSE, else one JSON
array); GET /v1/models (Anthropic's with an anthropic-version header), /models
(DeepSeek) and /v1beta/models list the scenario's model; POST
/v1beta/interactions, /v1/messages/count_tokens and
/v1beta/models/{model}:countTokens. --require-key holds on every one of them.
OpenAI's Files and Batch API too: POST /v1/files (purpose batch), GET
/v1/files/{id} and /content, POST /v1/batches, GET /v1/batches and
/v1/batches/{id}, POST /v1/batches/{id}/cancel; a batch moves one status per
--batch-polls retrievals, each line answered as that request alone would be,
and expires when retrieved past --batch-window (its lines not yet run answered
batch_expired).
A request header X-Modelwire-Scenario picks another scenario for that request:
a built-in one (refund/fenced), or a file inside the directory --scenarios
names (mine.json) — never any other path (no absolute path, no "..", no
symlink out, regular files of at most 1 MiB).

A server open to a room is bounded: each request's body must arrive within
--body-timeout (default 30s; headers within 10s, an idle connection closes
after 2m), and at most --max-conns connections (default 256) are open at once;
more wait to be accepted (with --session too). SIGTERM and SIGHUP stop it as
Ctrl-C does.

With --workshop EXERCISE it is a workshop's room: the exercise's scenario answers,
every participant (known by the key they send and an X-Modelwire-Participant
header; a hash, never the key, is kept) is a session of their own in the
database, and each request is graded as it arrives — the answer is still the
provider's, with X-Modelwire-Grade (step=2 pass=5/6 fail=call-id-matches) and
X-Modelwire-Hint. GET /workshop/me shows a participant their own grades (modelwire
workshop me), GET /workshop/room the whole room to the teacher's token (modelwire
room). Loopback unless --listen names another address, which needs --require-key;
--max-participants caps the room. See docs/workshop.md.

With --session ID it simulates nothing: it plays that stored session back (a VCR).
Each request is matched to a recorded turn by its path and body (key order and
whitespace do not count) and answered with that turn's recorded status, headers
and bytes — streams with their recorded timing, or --speed full; a turn that was
retried answers as it did (429 first). A request the recording never saw gets 409,
in the provider's error format, naming the nearest turn and the first field that
differs. Proxied sessions play back the same way.

With --cassettes DIR it serves test cassettes (docs/vcr.md): each request names
its test's cassette, DIR/NAME.jsonl, by the header X-Modelwire-Cassette: NAME or
a path prefix /c/NAME/ before the SDK's base path. --mode replay answers from
it (a miss is a 409 naming the first differing JSON pointer), record records it
anew from --upstream, update re-records what changed, hybrid records misses.`,
		Example: `  modelwire serve --addr 127.0.0.1:8787
  modelwire serve --scenario refund/fenced --pace 20
  OPENAI_API_KEY=sk-test modelwire serve --require-key
  modelwire serve --fault rate-limit,disconnect-mid-args:always
  modelwire serve --session 1m8p --speed full
  modelwire serve --workshop refund-3
  modelwire serve --workshop refund-1 --listen 0.0.0.0:8787 --require-key --max-participants 40
  modelwire serve --cassettes testdata/cassettes --mode record --upstream http://127.0.0.1:8787`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if bodyTimeout <= 0 || maxConns <= 0 {
				return usageErr("--body-timeout and --max-conns must be positive")
			}
			if cf.dir != "" {
				return serveCassettes(app, cmd, addr, cf, speed, bodyTimeout, maxConns)
			}
			for _, f := range []string{"redact-body", "ignore"} {
				if cmd.Flags().Changed(f) {
					return usageErr("--%s goes with --cassettes", f)
				}
			}
			if session != "" {
				return serveSession(app, cmd, addr, session, speed, bodyTimeout, maxConns)
			}
			var room *workshop.Room
			var token string
			if exercise != "" {
				var closeDB func()
				var err error
				room, token, closeDB, err = workshopRoom(app, exercise, addr, requireKey, maxParticipants)
				if err != nil {
					return err
				}
				defer closeDB()
				scenario = room.Exercise().Scenario
			} else if roomTUI {
				return usageErr("--tui shows a workshop's room: it needs --workshop")
			}
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
			if err := checkPace(pace); err != nil {
				return err
			}
			if keepN < 1 || keepMiB < 1 || keepMiB > 1<<20 {
				return usageErr("--keep-responses and --keep-mib must be positive")
			}
			if fileMiB < 1 || filesMiB < 1 || fileMiB > 1<<20 || filesMiB > 1<<20 || batchOpts.KeepFiles < 1 || batchOpts.KeepBatches < 1 || batchOpts.Polls < 1 || batchOpts.Window < time.Second {
				return usageErr("--max-file-mib, --keep-files-mib, --keep-files, --keep-batches and --batch-polls must be positive, --batch-window at least 1s")
			}
			batchOpts.MaxFileBytes, batchOpts.KeepFileBytes = fileMiB<<20, filesMiB<<20
			keys := map[string]string{}
			for protocol, env := range sim.KeyEnv() {
				keys[protocol] = os.Getenv(env)
			}
			ctx, stop := notifyStop(cmd.Context())
			defer stop()
			if scenarios != "" {
				if st, err := os.Stat(scenarios); err != nil || !st.IsDir() {
					return usageErr("--scenarios %s: not a directory", scenarios)
				}
			}
			opts := sim.Options{Scenario: sc, Faults: faults,
				Delay: time.Duration(delayMS) * time.Millisecond, Pace: pace, RequireKey: requireKey, Keys: keys,
				Lookup: samples.LookupIn(scenarios), BodyTimeout: bodyTimeout, MaxConns: maxConns,
				KeepResponses: keepN, KeepBytes: keepMiB << 20, Batch: batchOpts}
			if room != nil {
				opts.Workshop = room
			}
			url, err := application.StartSimulator(ctx, addr, opts)
			if err != nil {
				return usageErr("cannot listen on %s: %v", addr, err)
			}
			fmt.Fprintf(app.Out, "modelwire simulator on %s (scenario %s", url, sc.FullName())
			if fault != "" {
				fmt.Fprintf(app.Out, ", faults %s", faults)
			}
			if requireKey {
				fmt.Fprint(app.Out, ", keys required")
			}
			if room != nil {
				fmt.Fprintln(app.Out, ")")
				workshopBanner(app.Out, url, token, room.Exercise())
				if roomTUI {
					return runRoomTUI(ctx, app, room, url)
				}
				fmt.Fprintln(app.Out, "Ctrl-C stops it.")
				<-ctx.Done()
				return nil
			}
			fmt.Fprintf(app.Out, ")\n  OpenAI base URL:    %s/v1\n  Anthropic base URL: %s\n  Gemini base URL:    %s\n  DeepSeek base URL:  %s\nCtrl-C stops it.\n", url, url, url, url)
			<-ctx.Done()
			return nil
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:8787", "address to listen on")
	cmd.Flags().StringVar(&addr, "listen", "127.0.0.1:8787", "the same as --addr (a workshop on a LAN: 0.0.0.0:8787 with --require-key)")
	cmd.Flags().StringVar(&exercise, "workshop", "", "run a workshop: grade each participant's requests against this exercise ("+strings.Join(workshop.Names(), ", ")+", or a .json file)")
	cmd.Flags().IntVar(&maxParticipants, "max-participants", workshop.DefaultMaxParticipants, "with --workshop: most participants in the room")
	cmd.Flags().BoolVar(&roomTUI, "tui", false, "with --workshop: show the room view while serving")
	cmd.Flags().StringVar(&scenario, "scenario", "refund", "scenario whose script answers")
	cmd.Flags().StringVar(&fault, "fault", "", "faults, comma-separated (NAME or NAME:always): "+fmt.Sprint(sim.FaultNames()))
	cmd.Flags().IntVar(&delayMS, "delay-ms", 0, "pause between stream events, in ms")
	cmd.Flags().Float64Var(&pace, "pace", 0, "stream content at this many words a second (0: as fast as it goes)")
	cmd.Flags().BoolVar(&requireKey, "require-key", false, "answer requests without a key (or with another than $OPENAI_API_KEY etc., where set) with the provider's auth error")
	cmd.Flags().StringVar(&scenarios, "scenarios", "", "directory whose scenario files a request may name in X-Modelwire-Scenario (default: built-in scenarios only)")
	cmd.Flags().DurationVar(&bodyTimeout, "body-timeout", sim.DefaultBodyTimeout, "longest wait for one request's body")
	cmd.Flags().IntVar(&maxConns, "max-conns", sim.DefaultMaxConns, "most connections open at once")
	cmd.Flags().IntVar(&keepN, "keep-responses", sim.DefaultKeepResponses, "keep this many of the latest responses for previous_response_id (older ones are unknown, as expired)")
	cmd.Flags().Int64Var(&keepMiB, "keep-mib", sim.DefaultKeepBytes>>20, "MiB: keep at most this much of the latest responses' chains (prompts, tool results) for previous_response_id")
	cmd.Flags().Int64Var(&fileMiB, "max-file-mib", sim.DefaultMaxFileBytes>>20, "MiB: the largest file an upload to /v1/files may be")
	cmd.Flags().Int64Var(&filesMiB, "keep-files-mib", sim.DefaultKeepFileBytes>>20, "MiB: keep at most this much of the latest files (uploads, batch outputs); older ones are gone")
	cmd.Flags().IntVar(&batchOpts.KeepFiles, "keep-files", sim.DefaultKeepFiles, "keep this many of the latest files")
	cmd.Flags().IntVar(&batchOpts.KeepBatches, "keep-batches", sim.DefaultKeepBatches, "keep this many of the latest batches")
	cmd.Flags().IntVar(&batchOpts.Polls, "batch-polls", 1, "retrievals a batch spends in each status (validating, in_progress, finalizing) before the next; in_progress runs a share of its lines at each")
	cmd.Flags().DurationVar(&batchOpts.Window, "batch-window", 24*time.Hour, "the time a batch has to end: retrieved after it, the batch is expired and its lines not yet run are answered batch_expired")
	cmd.Flags().StringVar(&session, "session", "", "play this recorded session back as the provider (a VCR) instead of simulating")
	cmd.Flags().StringVar(&speed, "speed", "recorded", "with --session: recorded (each event at its recorded time) or full")
	cmd.Flags().StringVar(&cf.dir, "cassettes", "", "serve the test cassettes in this directory (one per test: header X-Modelwire-Cassette or path /c/NAME/); see docs/vcr.md")
	cmd.Flags().StringVar(&cf.mode, "mode", "replay", "with --cassettes: replay, record, update or hybrid")
	cmd.Flags().StringVar(&cf.upstream, "upstream", "", "with --cassettes: base URL misses are recorded from (default: each protocol's provider)")
	cmd.Flags().StringVar(&cf.redactBody, "redact-body", "", "with --cassettes: "+redactBodyUsage)
	cmd.Flags().StringArrayVar(&cf.ignore, "ignore", nil, `with --cassettes: a JSON pointer into request bodies left out of matching ("*" for any one member or element; repeatable)`)
	completeWith(cmd, "fault", sim.FaultNames())
	completeScenarios(cmd)
	completeWith(cmd, "speed", []string{"recorded", "full"})
	return cmd
}
