package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/store"
	"github.com/modelwire/modelwire/timeline"
)

func init() { register(newReplayCmd) }

func newReplayCmd(app *App) *cobra.Command {
	var asJSON, text bool
	var to int
	cmd := &cobra.Command{
		Use:   "replay ID",
		Short: "Step through a stored session (TUI), or dump its timeline (--json)",
		Long: `Replay a stored session exactly as it happened. ID is a session id or any unique
prefix of one (see modelwire sessions).

In a terminal it opens the workbench on the session, to step through it event by
event. With --json it prints the timeline, one object a line:
  {"turn","attempt","seq","offset_ms","raw","event"}
seq numbers the session's timeline from 1; offset_ms is monotonic time from the
attempt's start (from the session's start for decisions, tool results and
validations, whose attempt is 0); raw is the raw event as received (null for
entries that have none); event is the canonical event, or the decision, tool
result or validation (null for a raw event that produced no canonical event).
With --text, or when the output is not a terminal, it prints the same timeline as
a table; with --to N the table ends with the state right after entry N.`,
		Example: `  modelwire replay 01jd3k --json
  modelwire replay 01jd3k --json --to 40 | jq .event.type
  modelwire replay 01jd3k --text --to 40`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("to") && to < 0 {
				return usageErr("--to %d: entries are numbered from 1", to)
			}
			if !asJSON && !text && isTTY(app.Out) && isTTY(app.In) {
				return openReplayTUI(app, cmd, args[0])
			}
			db, id, err := resolveSession(app, args[0])
			if err != nil {
				return err
			}
			defer db.Close()
			out := bufio.NewWriterSize(app.Out, 64<<10)
			defer out.Flush()
			r, err := timeline.NewReplayer(db, id, nil)
			if err != nil {
				return storeErr(err)
			}
			if asJSON {
				return storeErr(replayJSON(out, r, to))
			}
			return storeErr(replayText(out, r, to))
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the timeline, one JSON object a line")
	cmd.Flags().BoolVar(&text, "text", false, "print the timeline as a table instead of opening the workbench")
	cmd.Flags().IntVar(&to, "to", 0, "stop after entry N of the timeline")
	return cmd
}

// isTTY reports whether v (a stream) is a terminal.
func isTTY(v any) bool {
	f, ok := v.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}

// replayLine is one entry of replay --json.
type replayLine struct {
	Turn     int                `json:"turn"`
	Attempt  int                `json:"attempt"`
	Seq      int                `json:"seq"`
	OffsetMS float64            `json:"offset_ms"`
	Raw      *adapters.RawEvent `json:"raw"`
	RawIndex *int               `json:"raw_index,omitempty"`
	Event    json.RawMessage    `json:"event"`
}

// replayJSON prints the timeline. A raw event that produced several
// canonical events (a response.completed: usage, then the terminal) is
// printed with the first of them; the others carry raw null and the same
// raw_index, so a reader that counts raw events counts each once.
func replayJSON(w io.Writer, r *timeline.Replayer, to int) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	var last [3]int // turn, attempt, raw index of the raw event printed last
	return r.Each(1, to, func(e store.Entry) error {
		l := replayLine{Turn: e.Turn, Attempt: e.Attempt, Seq: e.Seq, OffsetMS: float64(e.Offset.Microseconds()) / 1000,
			Raw: e.Raw, Event: e.Event}
		if e.Raw != nil {
			idx := e.RawIndex
			l.RawIndex = &idx
			if key := [3]int{e.Turn, e.Attempt, e.RawIndex}; key == last {
				l.Raw = nil
			} else {
				last = key
			}
		}
		return enc.Encode(l)
	})
}

func replayText(w io.Writer, r *timeline.Replayer, to int) error {
	s := r.Info()
	fmt.Fprintf(w, "%s  %s  %s · %s · %s  %s, %d turn(s), %d entries\n", s.ID, clip(s.Title, 60), s.Protocol, s.Provider,
		firstNonEmpty(s.Model, s.ModelReported), s.Status, r.Turns(), r.Len())
	rows := [][]string{{"SEQ", "TURN", "OFFSET", "RAW", "TYPE", "DETAIL"}}
	err := r.Each(1, to, func(e store.Entry) error {
		turn := fmt.Sprintf("%d.%d", e.Turn, e.Attempt)
		if e.Attempt == 0 {
			turn = fmt.Sprintf("%d", e.Turn)
		}
		raw := "-"
		if e.Raw != nil {
			raw = firstNonEmpty(e.Raw.Event, "data")
		}
		typ, detail := describeEntry(e)
		rows = append(rows, []string{strconv.Itoa(e.Seq), turn, fmtMS(e.Offset), clip(raw, 28), typ, clip(detail, 72)})
		return nil
	})
	if err != nil {
		return err
	}
	writeTable(w, rows, map[int]bool{0: true, 2: true})
	if to > 0 {
		st, err := r.StoreState(to)
		if err != nil {
			return err
		}
		writeState(w, st)
	}
	return nil
}

// describeEntry gives an entry's type and a one-line detail.
func describeEntry(e store.Entry) (string, string) {
	if e.Event == nil {
		return "(none)", "raw event with no canonical event: " + clip(e.Raw.Data, 60)
	}
	var ev map[string]any
	if err := json.Unmarshal(e.Event, &ev); err != nil {
		return e.Type, string(e.Event)
	}
	str := func(k string) string {
		if v, ok := ev[k]; ok && v != nil {
			if s, ok := v.(string); ok {
				return s
			}
			b, _ := json.Marshal(v)
			return string(b)
		}
		return ""
	}
	join := func(parts ...string) string {
		var out []string
		for _, p := range parts {
			if p != "" {
				out = append(out, p)
			}
		}
		return strings.Join(out, " ")
	}
	switch adapters.EventType(e.Type) {
	case adapters.EvResponseStarted:
		return e.Type, join(str("response_id"), str("model"))
	case adapters.EvItemStarted:
		return e.Type, join(str("item_id"), str("kind"), str("call_id"), str("name"))
	case adapters.EvTextDelta, adapters.EvReasoningDelta, adapters.EvRefusalDelta, adapters.EvToolArgsDelta:
		return e.Type, join(str("item_id"), strconv.Quote(str("delta")))
	case adapters.EvItemDone:
		return e.Type, str("item_id")
	case adapters.EvToolProposed:
		return e.Type, join(str("call_id"), str("name"), str("arguments"))
	case adapters.EvUsage:
		return e.Type, fmt.Sprintf("in %s out %s cache read %s write %s reasoning %s", str("input_tokens"), str("output_tokens"),
			str("cache_read_tokens"), str("cache_write_tokens"), str("reasoning_tokens"))
	case adapters.EvTerminal:
		return e.Type, join(str("status")+"/"+str("stop_reason"), str("provider_stop_reason"), str("error"))
	case adapters.EvUnknown:
		return e.Type, str("raw_type")
	case adapters.EvDiagnostic:
		return e.Type, str("kind") + ": " + str("detail")
	}
	switch e.Type {
	case store.EntryDecision:
		return e.Type, join(str("decision"), str("call_id"), str("name"), str("arguments"), str("reason"))
	case store.EntryToolResult:
		label := "result"
		if b, _ := ev["is_error"].(bool); b {
			label = "error"
		}
		return e.Type, join(str("call_id"), label, strconv.Quote(str("content")))
	case store.EntryValidation:
		var v struct {
			Results []store.Validation `json:"results"`
		}
		_ = json.Unmarshal(e.Event, &v)
		var parts []string
		for _, r := range v.Results {
			parts = append(parts, r.Layer+" "+string(r.Status))
		}
		return e.Type, strings.Join(parts, ", ")
	}
	return e.Type, string(e.Event)
}

// writeState prints the state after an entry: the response's lanes, the
// calls and the validation.
func writeState(w io.Writer, st *store.State) {
	fmt.Fprintf(w, "\nState after entry %d", st.Seq)
	if st.Attempt > 0 {
		fmt.Fprintf(w, " (turn %d, attempt %d, %s)", st.Turn, st.Attempt, st.Protocol)
	}
	fmt.Fprintln(w, ":")
	if st.Attempt > 0 {
		term := "streaming"
		if st.Done {
			term = fmt.Sprintf("%s/%s", st.Summary.Terminal, st.Summary.StopReason)
		}
		fmt.Fprintf(w, "  response  %s %s\n", firstNonEmpty(st.Summary.ResponseID, "-"), term)
		for _, it := range st.Items {
			label := string(it.Kind)
			if it.Name != "" {
				label += " " + it.Name
			}
			fmt.Fprintf(w, "  lane %-10s %-10s %s\n", it.ID, it.State, clip(label+": "+it.Text, 90))
		}
	}
	for _, c := range st.Calls {
		line := fmt.Sprintf("call %s %s %s", c.CallID, c.Name, string(c.Arguments))
		if c.Decision != "" {
			line += " → " + string(c.Decision)
			if len(c.Edited) > 0 {
				line += " " + string(c.Edited)
			}
		} else {
			line += " → waiting for a decision"
		}
		if c.HasResult {
			line += fmt.Sprintf("; result %q", clip(c.Result, 40))
		}
		fmt.Fprintln(w, "  "+clip(line, 118))
	}
	for _, v := range st.Validations {
		fmt.Fprintf(w, "  validation %-10s %s %s\n", v.Layer, v.Status, v.Detail)
	}
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
