package ui

import (
	"slices"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/registry"
	"github.com/modelwire/modelwire/session"
	"github.com/modelwire/modelwire/transport"
)

// Catalog is what the workbench can run: the scenarios with their
// variants ("refund", "refund/wrong-cap") and the simulator's faults
// (app.Catalog).
type Catalog interface {
	Scenarios() []string
	Lookup(name string) (*session.Scenario, error)
	Faults() []string
	FaultHelp(name string) string
}

// defaultCatalog is the catalog of a model built without one: none in
// the program (cli always passes app.Catalog); the package's tests set
// it.
var defaultCatalog Catalog

// optionsDialog chooses the next session: scenario, variant, protocol,
// provider (real providers only when their key is in the environment),
// streaming, history mode, step or free-running mode, and the simulator's
// faults. Enter starts a new session with them.
type optionsDialog struct {
	c   *Common
	cat Catalog
	rc  RunConfig
	row int
	// providers are the ones that can run now.
	providers []string
	scenarios []string
	variants  map[string][]string
	faults    []string
	// about describes each variant of each scenario.
	about map[string]string
}

// optRow names a row of the options dialog.
type optRow int

const (
	optScenario optRow = iota
	optVariant
	optProtocol
	optProvider
	optStream
	optHistory
	optMode
	optFaults // first fault row; one row per fault follows
)

func newOptionsDialog(c *Common, cat Catalog, rc RunConfig, getenv func(string) string) *optionsDialog {
	d := &optionsDialog{c: c, cat: cat, rc: rc, variants: map[string][]string{}}
	d.providers = availableProviders(getenv)
	var names []string
	if cat != nil {
		names, d.faults = cat.Scenarios(), cat.Faults()
	}
	for _, n := range names {
		base, v, ok := strings.Cut(n, "/")
		if !ok {
			d.scenarios = append(d.scenarios, base)
			continue
		}
		d.variants[base] = append(d.variants[base], v)
	}
	d.about = map[string]string{}
	for _, base := range d.scenarios {
		if sc, err := cat.Lookup(base); err == nil {
			for name, v := range sc.Variants {
				about := v.Description
				if v.FailsAt != "" {
					about += " (fails at " + v.FailsAt + ")"
				}
				d.about[base+"/"+name] = about
			}
		}
	}
	if !slices.Contains(d.scenarios, rc.Scenario) {
		d.scenarios = append(d.scenarios, rc.Scenario) // a scenario file
	}
	return d
}

// availableProviders is sim plus every provider whose key is set.
func availableProviders(getenv func(string) string) []string {
	out := []string{adapters.ProviderSim}
	for _, p := range []string{adapters.ProviderOpenAI, adapters.ProviderAnthropic, adapters.ProviderDeepSeek, adapters.ProviderGemini, adapters.ProviderCompatible} {
		env := transport.KeyEnv(p)
		if env != "" && getenv != nil && getenv(env) != "" {
			out = append(out, p)
		}
	}
	return out
}

func (d *optionsDialog) Kind() dialogKind       { return dlgOptions }
func (d *optionsDialog) Update(tea.Msg) tea.Cmd { return nil }

func (d *optionsDialog) Bindings(km *KeyMap) []key.Binding {
	return []key.Binding{km.Nav.Up, km.Nav.Down, km.Dialog.Left, km.Dialog.Right, km.Dialog.Toggle, km.Dialog.Accept, km.Dialog.Close}
}

func (d *optionsDialog) rows() int { return int(optFaults) + len(d.faults) }

func (d *optionsDialog) HandleKey(msg tea.KeyMsg, km *KeyMap) (action, tea.Cmd) {
	switch {
	case key.Matches(msg, km.Dialog.Close):
		return actClose{}, nil
	case key.Matches(msg, km.Dialog.Accept):
		if err := d.check(); err != "" {
			return actStatus{level: levelWarn, text: err}, nil
		}
		return actRun{rc: d.rc}, nil
	case key.Matches(msg, km.Nav.Up):
		d.row = (d.row + d.rows() - 1) % d.rows()
	case key.Matches(msg, km.Nav.Down):
		d.row = (d.row + 1) % d.rows()
	case key.Matches(msg, km.Dialog.Left):
		d.change(-1)
	case key.Matches(msg, km.Dialog.Right), key.Matches(msg, km.Dialog.Toggle):
		d.change(+1)
	}
	return nil, nil
}

// check says why the options cannot run ("" when they can).
func (d *optionsDialog) check() string {
	if d.rc.Provider != adapters.ProviderSim && len(d.rc.Faults) > 0 {
		return "faults apply to the simulator only: clear them or choose sim"
	}
	if _, err := adapters.CapabilitiesFor(d.rc.Provider, d.rc.Protocol); err != nil {
		return err.Error()
	}
	return ""
}

func cycle(list []string, cur string, dir int) string {
	if len(list) == 0 {
		return cur
	}
	i := slices.Index(list, cur)
	if i < 0 {
		return list[0]
	}
	return list[(i+dir+len(list))%len(list)]
}

func (d *optionsDialog) change(dir int) {
	switch optRow(d.row) {
	case optScenario:
		d.rc.Scenario = cycle(d.scenarios, d.rc.Scenario, dir)
		d.rc.Variant = ""
		d.rc.Edits = nil
	case optVariant:
		d.rc.Variant = cycle(append([]string{""}, d.variants[d.rc.Scenario]...), d.rc.Variant, dir)
	case optProtocol:
		d.rc.Protocol = cycle(registry.Protocols, d.rc.Protocol, dir)
	case optProvider:
		d.rc.Provider = cycle(d.providers, d.rc.Provider, dir)
	case optStream:
		d.rc.Stream = !d.rc.Stream
	case optHistory:
		if d.rc.History == adapters.HistoryFull {
			d.rc.History = adapters.HistoryPreviousResponse
		} else {
			d.rc.History = adapters.HistoryFull
		}
	case optMode:
		d.rc.StepMode = !d.rc.StepMode
	default:
		f := d.faults[d.row-int(optFaults)]
		if i := slices.Index(d.rc.Faults, f); i >= 0 {
			d.rc.Faults = slices.Delete(slices.Clone(d.rc.Faults), i, i+1)
		} else {
			d.rc.Faults = append(slices.Clone(d.rc.Faults), f)
		}
	}
}

func (d *optionsDialog) View(w, h int) string {
	s := d.c.Styles
	bw := min(w, 80)
	inner := bw - s.Dialog.GetHorizontalFrameSize()
	variant := d.rc.Variant
	if variant == "" {
		variant = "(base script)"
	}
	history := string(d.rc.History)
	if p, ok := registry.Describe(d.rc.Protocol); !ok || p.ChainField == "" {
		history += s.Muted.Render(" (" + chainNote() + " only)")
	}
	mode := "step (walkthrough)"
	if !d.rc.StepMode {
		mode = "free-running"
	}
	vals := []struct{ name, val string }{
		{"scenario", d.rc.Scenario}, {"variant", variant}, {"protocol", d.rc.Protocol},
		{"provider", d.rc.Provider}, {"streaming", onOff(d.rc.Stream)}, {"history", history}, {"mode", mode},
	}
	var lines []string
	row := func(i int, label, val string) string {
		marker := "  "
		l := padRight(label, 10) + " "
		if i == d.row {
			marker = s.Accent.Render("▸ ")
			return marker + s.Selected.Render(l+"‹ "+val+" ›")
		}
		return marker + s.Muted.Render(l) + val
	}
	for i, v := range vals {
		lines = append(lines, row(i, v.name, v.val))
	}
	if v, ok := d.variantInfo(); ok {
		lines = append(lines, wrapLines(s.Muted.Render("  "+v), inner)...)
	}
	if len(d.providers) == 1 {
		lines = append(lines, s.Subtle.Render(cut("  real providers appear when their key is set (OPENAI_API_KEY, …)", inner)))
	}
	lines = append(lines, "", s.Muted.Render("faults (simulator)"))
	rows := h - 10 - len(lines)
	first := max(0, min(d.row-int(optFaults)-rows/2, len(d.faults)-rows))
	for i, f := range d.faults {
		if rows > 0 && (i < first || i >= first+rows) {
			continue
		}
		box := "[ ]"
		if slices.Contains(d.rc.Faults, f) {
			box = s.Warn.Render("[x]")
		}
		line := box + " " + padRight(f, 20) + s.Subtle.Render(d.cat.FaultHelp(f))
		if int(optFaults)+i == d.row {
			line = s.Accent.Render("▸ ") + line
		} else {
			line = "  " + line
		}
		lines = append(lines, cut(line, inner))
	}
	return d.c.box("Options — the next session", lines, "↑↓ choose · ←→ change · space toggle · enter start · esc cancel", bw, min(h, len(lines)+4))
}

// chainNote names the protocols whose server keeps a response a request
// can chain to (a descriptor's ChainField), the only ones the history
// option's previous-response-id applies to: "Responses and Interactions",
// each its name less its provider's.
func chainNote() string {
	var names []string
	for _, d := range registry.All() {
		if d.ChainField == "" {
			continue
		}
		n := strings.TrimPrefix(d.Name, d.Provider+"-")
		names = append(names, strings.ToUpper(n[:1])+n[1:])
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// variantInfo describes the selected variant.
func (d *optionsDialog) variantInfo() (string, bool) {
	v, ok := d.about[d.rc.Scenario+"/"+d.rc.Variant]
	return v, ok && d.rc.Variant != ""
}
