package check

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/modelwire/modelwire/validate"
)

// Cell is one recording re-sent to one target: one line of `check --json`.
type Cell struct {
	Type string `json:"type"` // "cell"
	// Session is the recording's id (a probe's name for the suite), Target
	// the target as given, Child the session the check stored ("" when it
	// could not run).
	Session string `json:"session"`
	Target  string `json:"target"`
	Child   string `json:"child"`
	// Protocol, Provider and Model are the child's (as asked for).
	Protocol string `json:"protocol,omitempty"`
	Provider string `json:"provider,omitempty"`
	Model    string `json:"model,omitempty"`
	// Proves is a probe's capability (the suite's cells only).
	Proves Capability `json:"proves,omitempty"`
	// Status is the target's verdict: pass, fail, or error when it could
	// not run (Error says why).
	Status string `json:"status"`
	// SessionVerdict is a probe's session's own verdict (pass or fail):
	// a handled refusal or truncation fails a layer, as it should.
	SessionVerdict string            `json:"session_verdict,omitempty"`
	FailedLayer    string            `json:"failed_layer"`
	Layers         map[string]string `json:"layers"`
	Timings        Timings           `json:"timings"`
	Tokens         Tokens            `json:"tokens"`
	Cost           *float64          `json:"cost"`
	// Capabilities are the target's marks.
	Capabilities map[Capability]Mark `json:"capabilities"`
	// Recording is the recording's own profile, for the figures beside.
	Recording *Profile `json:"recording,omitempty"`
	// Regressions name each layer and capability the recording passed
	// and the target failed ("layer:domain", "capability:usage_present");
	// for a probe, the capability it failed to prove.
	Regressions []string `json:"regressions"`
	Regressed   bool     `json:"regressed"`
	Error       string   `json:"error,omitempty"`
}

// Compare makes the cell of a recording and what its target stored.
func Compare(rec, got *Profile, target string) Cell {
	c := Cell{Type: "cell", Session: rec.ID, Target: target, Recording: rec, Regressions: []string{}}
	if got == nil {
		return c
	}
	c.fill(got)
	for _, l := range validate.Layers {
		if rec.Layers[string(l)] == "pass" && got.Layers[string(l)] != "pass" {
			c.Regressions = append(c.Regressions, "layer:"+string(l))
		}
	}
	for _, k := range Capabilities {
		if rec.Capabilities[k] == Pass && got.Capabilities[k] == Fail {
			c.Regressions = append(c.Regressions, "capability:"+string(k))
		}
	}
	c.Regressed = len(c.Regressions) > 0
	return c
}

// Failed is the cell of a target that could not run.
func Failed(rec *Profile, session, target string, err error) Cell {
	return Cell{Type: "cell", Session: session, Target: target, Status: "error", Recording: rec, Regressions: []string{"error"},
		Regressed: true, Error: validate.OneLine(err.Error(), 200)}
}

func (c *Cell) fill(got *Profile) {
	c.Child, c.Status, c.FailedLayer, c.Layers = got.ID, got.Verdict, got.FailedLayer, got.Layers
	c.Protocol, c.Provider, c.Model = got.Protocol, got.Provider, got.Model
	c.Timings, c.Tokens, c.Cost, c.Capabilities = got.Timings, got.Tokens, got.Cost, got.Capabilities
}

// Summary is the last line of `check --json`.
type Summary struct {
	Type      string `json:"type"` // "summary"
	Sessions  int    `json:"sessions"`
	Targets   int    `json:"targets"`
	Cells     int    `json:"cells"`
	Regressed int    `json:"regressed"`
	Errors    int    `json:"errors"`
	// Capabilities per target: how many sessions passed, failed, did not
	// exercise it, and regressed it (failed where the recording passed).
	Capabilities map[Capability]map[string]Tally `json:"capabilities"`
	// Exit is the command's exit status: 1 when a cell regressed.
	Exit int `json:"exit"`
}

// Tally counts one capability's marks over a target's cells.
type Tally struct {
	Pass      int `json:"pass"`
	Fail      int `json:"fail"`
	NA        int `json:"n/a"`
	Regressed int `json:"regressed"`
	// Recorded is how many of the recordings passed it.
	Recorded int `json:"recorded"`
}

// Summarize tallies the cells.
func Summarize(cells []Cell) Summary {
	s := Summary{Type: "summary", Cells: len(cells), Capabilities: map[Capability]map[string]Tally{}}
	var sessions, targets []string
	for _, c := range cells {
		if !slices.Contains(sessions, c.Session) {
			sessions = append(sessions, c.Session)
		}
		if !slices.Contains(targets, c.Target) {
			targets = append(targets, c.Target)
		}
		if c.Regressed {
			s.Regressed++
		}
		if c.Status == "error" {
			s.Errors++
		}
		for _, k := range Capabilities {
			if s.Capabilities[k] == nil {
				s.Capabilities[k] = map[string]Tally{}
			}
			t := s.Capabilities[k][c.Target]
			switch c.Capabilities[k] {
			case Pass:
				t.Pass++
			case Fail:
				t.Fail++
			default:
				t.NA++
			}
			if c.Recording != nil && c.Recording.Capabilities[k] == Pass {
				t.Recorded++
			}
			if slices.Contains(c.Regressions, "capability:"+string(k)) || slices.Contains(c.Regressions, "probe:"+string(k)) {
				t.Regressed++
			}
			s.Capabilities[k][c.Target] = t
		}
	}
	s.Sessions, s.Targets = len(sessions), len(targets)
	if s.Regressed > 0 {
		s.Exit = 1
	}
	return s
}

// WriteJSON writes one line per cell, then the summary.
func WriteJSON(w io.Writer, cells []Cell) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, c := range cells {
		if err := enc.Encode(c); err != nil {
			return err
		}
	}
	return enc.Encode(Summarize(cells))
}

// WriteText writes the matrix (a row per session, a column per target:
// the verdict and the first failing layer, ↓ where it regressed), then
// each cell's figures beside the recording's, then the capabilities.
func WriteText(w io.Writer, cells []Cell) {
	var sessions, targets []string
	at := map[[2]string]Cell{}
	for _, c := range cells {
		if !slices.Contains(sessions, c.Session) {
			sessions = append(sessions, c.Session)
		}
		if !slices.Contains(targets, c.Target) {
			targets = append(targets, c.Target)
		}
		at[[2]string{c.Session, c.Target}] = c
	}
	suite := len(cells) > 0 && cells[0].Proves != ""
	head := []string{"session", "recording"}
	if suite {
		head = []string{"probe", "proves"}
	}
	rows := [][]string{append(head, targets...)}
	for _, s := range sessions {
		row := []string{s, ""}
		for _, t := range targets {
			c, ok := at[[2]string{s, t}]
			if !ok {
				row = append(row, "")
				continue
			}
			if row[1] == "" && c.Proves != "" {
				row[1] = string(c.Proves)
			}
			if row[1] == "" && c.Recording != nil {
				row[1] = verdict(c.Recording.Verdict, c.Recording.FailedLayer, false) + " " + c.Recording.Protocol
			}
			v := verdict(c.Status, c.FailedLayer, c.Regressed)
			if c.Proves != "" && c.FailedLayer != "" {
				v = verdict(c.Status, "", c.Regressed) + " (stopped at " + c.FailedLayer + ")"
			}
			row = append(row, v)
		}
		rows = append(rows, row)
	}
	table(w, rows)

	fmt.Fprintln(w)
	rows = [][]string{{head[0], "target", "child", "first event", "first text", "end", "tokens in/out", "cost", "regressions"}}
	for _, c := range cells {
		r := c.Recording
		if r == nil {
			r = &Profile{}
		}
		reg := strings.Join(c.Regressions, ", ")
		if c.Error != "" {
			reg = c.Error
		}
		rows = append(rows, []string{c.Session, c.Target, c.Child,
			beside(ms(c.Timings.FirstEvent), ms(r.Timings.FirstEvent), c.Recording), beside(ms(c.Timings.FirstText), ms(r.Timings.FirstText), c.Recording),
			beside(ms(c.Timings.End), ms(r.Timings.End), c.Recording),
			beside(tokens(c.Tokens), tokens(r.Tokens), c.Recording), beside(cost(c.Cost), cost(r.Cost), c.Recording), reg})
	}
	table(w, rows)

	fmt.Fprintln(w)
	sum := Summarize(cells)
	rows = [][]string{append([]string{"capability"}, targets...)}
	for _, k := range Capabilities {
		row := []string{string(k)}
		for _, t := range targets {
			x := sum.Capabilities[k][t]
			v := "n/a"
			if x.Pass+x.Fail > 0 {
				v = fmt.Sprintf("%d/%d", x.Pass, x.Pass+x.Fail)
			}
			if x.Regressed > 0 {
				v += fmt.Sprintf(" ↓%d", x.Regressed)
			}
			row = append(row, v)
		}
		rows = append(rows, row)
	}
	table(w, rows)
	fmt.Fprintf(w, "\n%d cells, %d regressed, %d could not run\n", sum.Cells, sum.Regressed, sum.Errors)
}

func verdict(status, layer string, regressed bool) string {
	v := status
	if layer != "" && status == "fail" {
		v += " " + layer
	}
	if regressed {
		v += " ↓"
	}
	return v
}

func beside(got, rec string, r *Profile) string {
	if r == nil {
		return got
	}
	return got + " (" + rec + ")"
}

func ms(v *float64) string {
	if v == nil {
		return "—"
	}
	return fmt.Sprintf("%.0fms", *v)
}

func tokens(t Tokens) string {
	n := func(v *int64) string {
		if v == nil {
			return "—"
		}
		return fmt.Sprint(*v)
	}
	return n(t.Input) + "/" + n(t.Output)
}

func cost(c *float64) string {
	if c == nil {
		return "—"
	}
	return fmt.Sprintf("%.4f", *c)
}

func table(w io.Writer, rows [][]string) {
	width := map[int]int{}
	for _, r := range rows {
		for i, c := range r {
			width[i] = max(width[i], len([]rune(c)))
		}
	}
	for _, r := range rows {
		var b strings.Builder
		for i, c := range r {
			if i < len(r)-1 {
				c += strings.Repeat(" ", width[i]-len([]rune(c))+2)
			}
			b.WriteString(c)
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}
