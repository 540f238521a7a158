package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/registry"
)

func init() { register(newDecodeCmd) }

func newDecodeCmd(app *App) *cobra.Command {
	var protocol string
	var summary, stream bool
	cmd := &cobra.Command{
		Use:   "decode --protocol P [--summary] [FILE|-]",
		Short: "Decode a raw capture of one response into canonical events",
		Long: `Decode the exact bytes of one HTTP response body — an SSE stream (detected by
content, or --stream) or a single JSON response — into canonical events, one JSON
object a line, or with --summary into one summary object. Malformed input becomes
diagnostic events; only an unreadable file is an error.

Protocols: ` + decodeProtocols() + ` (the Claude Code CLI's --output-format stream-json NDJSON).`,
		Example: `  modelwire decode --protocol anthropic-messages capture.sse
  curl -sN … | modelwire decode --protocol openai-chat --summary -`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if protocol == "" {
				return usageErr("decode needs --protocol: %s", decodeProtocols())
			}
			p, err := registry.Lookup(protocol)
			if err != nil {
				return usageErr("%v", err)
			}
			in, name, err := openInput(app, args)
			if err != nil {
				return err
			}
			defer in.Close()
			return decode(app, p, in, name, summary, stream)
		},
	}
	cmd.Flags().StringVar(&protocol, "protocol", "", "wire format of the capture")
	cmd.Flags().BoolVar(&summary, "summary", false, "print one summary object instead of the events")
	cmd.Flags().BoolVar(&stream, "stream", false, "treat the input as a stream even if it starts like JSON")
	_ = cmd.RegisterFlagCompletionFunc("protocol", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return append(append([]string{}, registry.Protocols...), adapters.ClaudeCode), cobra.ShellCompDirectiveNoFileComp
	})
	return cmd
}

// decodeProtocols names what decode reads, from the registry's list (so
// a protocol added there is named here too): every protocol, and
// claude-code, which can only decode.
func decodeProtocols() string {
	return strings.Join(registry.Protocols, ", ") + " or " + adapters.ClaudeCode
}

// openInput opens FILE, or stdin for "-" or no argument.
func openInput(app *App, args []string) (io.ReadCloser, string, error) {
	if len(args) == 0 || args[0] == "-" {
		return io.NopCloser(app.In), "stdin", nil
	}
	f, err := os.Open(args[0])
	if err != nil {
		return nil, "", usageErr("cannot read %s: %v", args[0], unwrapPathErr(err))
	}
	if st, err := f.Stat(); err == nil && st.IsDir() {
		f.Close()
		return nil, "", usageErr("cannot read %s: it is a directory", args[0])
	}
	return f, args[0], nil
}

// maxDecodeBody bounds a whole (non-streamed) body that decode reads.
const maxDecodeBody = 64 << 20

func decode(app *App, p adapters.Protocol, in io.Reader, name string, summary, forceStream bool) error {
	br := bufio.NewReaderSize(in, 64<<10)
	head, err := br.Peek(512)
	if err != nil && err != io.EOF && err != bufio.ErrBufferFull {
		return usageErr("cannot read %s: %v", name, err)
	}
	out := bufio.NewWriter(app.Out)
	defer out.Flush()
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	st := adapters.NewStream(p)
	st.ReuseEvents() // each step's events are written out below, never kept

	isStream := forceStream || p.Framing() == adapters.FramingNDJSON || adapters.LooksLikeStream(head)
	if !isStream {
		// A whole body is decoded in memory: bound it, as the stream reader
		// bounds each event, so a huge input costs a diagnostic, not the
		// machine's memory.
		body, err := io.ReadAll(io.LimitReader(br, maxDecodeBody+1))
		if err != nil {
			return usageErr("cannot read %s: %v", name, err)
		}
		var events []adapters.Event
		if len(body) > maxDecodeBody {
			events = st.End(adapters.Diag(adapters.DiagEventTooLarge,
				fmt.Sprintf("the body is longer than %d bytes; it was not decoded", maxDecodeBody)))
		} else {
			events = st.FeedBody(body)
		}
		if summary {
			return enc.Encode(st.Summary())
		}
		for _, ev := range events {
			if err := enc.Encode(ev); err != nil {
				return err
			}
		}
		return nil
	}
	err = adapters.ReadStream(p, st, br, func(step adapters.Step) error {
		if summary {
			return nil
		}
		for _, ev := range step.Events {
			if err := enc.Encode(ev); err != nil {
				return err
			}
		}
		// Flush per raw event so that `curl -N … | modelwire decode` shows
		// events as they arrive.
		return out.Flush()
	})
	if err != nil {
		return err
	}
	if summary {
		return enc.Encode(st.Summary())
	}
	return nil
}

func unwrapPathErr(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}
