// Package themes turns a palette of semantic colours into the one Styles
// struct the workbench renders with. It is the only place where colours
// become lipgloss styles: the ui package never builds a style of its own
// from a literal colour.
//
// Each theme also carries its own colours for highlighted JSON (the wire
// JSON, tool arguments) and for rendered markdown, so code and notes match
// the rest of the screen. They are plain palette entries, not chroma
// styles: chroma's style and lexer registries cost tens of milliseconds of
// package initialisation on every command (issue 20).
package themes

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/lipgloss"
)

// Names lists the themes in the order `t` cycles through them.
var Names = []string{"dark", "light", "contrast"}

// Palette is a theme's semantic colours. Components ask for a meaning
// (accent, warning, a trust level), never for a colour.
type Palette struct {
	Name string
	// Dark says whether the palette is meant for a dark background.
	Dark bool

	Fg, Muted, Subtle, Bg, Border, BorderFocus lipgloss.Color
	Accent, Accent2                            lipgloss.Color
	Good, Warn, Bad, Info                      lipgloss.Color
	// Lane kinds.
	Message, Reasoning, Tool, Refusal lipgloss.Color
	// Trust labels.
	Trusted, Verified, Unverified, Untrusted lipgloss.Color
	// Selection is the background of a selected row.
	Selection, SelectionFg lipgloss.Color
	// Code colours the tokens of highlighted JSON.
	Code CodeColours
}

// Ink is a token's colour and weight.
type Ink struct {
	Colour lipgloss.Color
	Bold   bool
}

// CodeColours are a theme's colours for the tokens of JSON. The dark and
// light themes keep the colours they had as chroma's monokai and github
// styles; contrast keeps its pure colours.
type CodeColours struct {
	Text, Key, String, Number, Literal, Punct Ink
}

// Token is a kind of JSON token.
type Token int

const (
	TokenText    Token = iota // whitespace and anything that is not JSON (the inspector's …3)
	TokenKey                  // an object's key
	TokenString               // a string value
	TokenNumber               // a number
	TokenLiteral              // true, false, null
	TokenPunct                // { } [ ] : ,
	numTokens
)

// Dark is the default theme.
var Dark = Palette{
	Name: "dark", Dark: true,
	Fg: "#d8dee9", Muted: "#8a93a6", Subtle: "#848d9c", Bg: "#1e2127", Border: "#6b7385", BorderFocus: "#61afef",
	Accent: "#61afef", Accent2: "#c678dd",
	Good: "#98c379", Warn: "#e5c07b", Bad: "#e06c75", Info: "#56b6c2",
	Message: "#98c379", Reasoning: "#c678dd", Tool: "#e5c07b", Refusal: "#e06c75",
	Trusted: "#98c379", Verified: "#61afef", Unverified: "#e5c07b", Untrusted: "#e06c75",
	Selection: "#3e4451", SelectionFg: "#ffffff",
	// monokai's, its key pink a shade lighter for 4.5:1 on Bg.
	Code: CodeColours{
		Text: Ink{Colour: "#f8f8f2"}, Key: Ink{Colour: "#fa3a7f"}, String: Ink{Colour: "#e6db74"},
		Number: Ink{Colour: "#ae81ff"}, Literal: Ink{Colour: "#66d9ef"}, Punct: Ink{Colour: "#f8f8f2"},
	},
}

// Light is for light terminals.
var Light = Palette{
	Name: "light", Dark: false,
	Fg: "#24292f", Muted: "#57606a", Subtle: "#6e7781", Bg: "#ffffff", Border: "#8c959f", BorderFocus: "#0969da",
	Accent: "#0969da", Accent2: "#8250df",
	Good: "#1a7f37", Warn: "#9a6700", Bad: "#cf222e", Info: "#0550ae",
	Message: "#1a7f37", Reasoning: "#8250df", Tool: "#9a6700", Refusal: "#cf222e",
	Trusted: "#1a7f37", Verified: "#0969da", Unverified: "#9a6700", Untrusted: "#cf222e",
	Selection: "#ddf4ff", SelectionFg: "#000000",
	// github's.
	Code: CodeColours{
		Text: Ink{Colour: "#24292f"}, Key: Ink{Colour: "#0550ae"}, String: Ink{Colour: "#0a3069"},
		Number: Ink{Colour: "#0550ae"}, Literal: Ink{Colour: "#cf222e"}, Punct: Ink{Colour: "#1f2328"},
	},
}

// Contrast is for projectors: pure colours, bold borders, no greys that
// wash out on a wall.
var Contrast = Palette{
	Name: "contrast", Dark: true,
	Fg: "#ffffff", Muted: "#e0e0e0", Subtle: "#c0c0c0", Bg: "#000000", Border: "#ffffff", BorderFocus: "#ffff00",
	Accent: "#00ffff", Accent2: "#ff00ff",
	Good: "#00ff00", Warn: "#ffff00", Bad: "#ff5555", Info: "#00ffff",
	Message: "#00ff00", Reasoning: "#ff00ff", Tool: "#ffff00", Refusal: "#ff5555",
	Trusted: "#00ff00", Verified: "#00ffff", Unverified: "#ffff00", Untrusted: "#ff5555",
	Selection: "#ffff00", SelectionFg: "#000000",
	Code: CodeColours{
		Text: Ink{Colour: "#ffffff"}, Key: Ink{Colour: "#00ffff", Bold: true}, String: Ink{Colour: "#00ff00"},
		Number: Ink{Colour: "#ffff00", Bold: true}, Literal: Ink{Colour: "#ff00ff", Bold: true}, Punct: Ink{Colour: "#ffffff"},
	},
}

// ByName returns a theme's palette.
func ByName(name string) (Palette, error) {
	switch strings.ToLower(name) {
	case "", "dark":
		return Dark, nil
	case "light":
		return Light, nil
	case "contrast", "high-contrast":
		return Contrast, nil
	}
	return Palette{}, fmt.Errorf("unknown theme %q (want %s)", name, strings.Join(Names, ", "))
}

// Next is the theme after name, for cycling.
func Next(name string) string {
	for i, n := range Names {
		if n == name {
			return Names[(i+1)%len(Names)]
		}
	}
	return Names[0]
}

// Styles is everything the workbench renders with, built from a palette.
type Styles struct {
	Palette Palette

	App, Header, HeaderKey, HeaderValue lipgloss.Style
	Panel, PanelFocused                 lipgloss.Style
	PanelTitle, PanelTitleFocused       lipgloss.Style
	Tab, TabActive                      lipgloss.Style
	Text, Muted, Subtle, Bold, Accent   lipgloss.Style
	Good, Warn, Bad, Info               lipgloss.Style
	Selected                            lipgloss.Style
	Highlight                           lipgloss.Style // a row tied to the selection (the lane of a log entry)
	Key, KeyDesc                        lipgloss.Style
	StatusInfo, StatusWarn, StatusError lipgloss.Style
	Dialog, DialogTitle                 lipgloss.Style
	Marker                              lipgloss.Style // "differs" marks in compare
	Timeline, TimelineDone, TimelineCur lipgloss.Style
	Input                               lipgloss.Style

	// Markdown styles rendered markdown (ui/markdown.go).
	Markdown Markdown

	kinds  map[string]lipgloss.Style
	trust  map[string]lipgloss.Style
	state  map[string]lipgloss.Style
	tokens [numTokens]lipgloss.Style
}

// Markdown is how rendered markdown looks: the theme's colours for each
// element. Emphasis, strong and strike are attributes the renderer adds.
type Markdown struct {
	Text        lipgloss.Style // body text
	H1, Heading lipgloss.Style // a top heading; the others
	Code        lipgloss.Style // inline code
	CodeBlock   lipgloss.Style // a fenced block that is not JSON
	Link        lipgloss.Style // a link's text
	Dim         lipgloss.Style // a link's URL, a quote's bar, a rule, table lines
	Bullet      lipgloss.Style // list markers
}

// Build makes the styles of a palette.
func Build(p Palette) *Styles {
	// Every colour keeps its contrast on 256 and 16 colours (degrade.go).
	text := func(c lipgloss.Color) lipgloss.TerminalColor { return Degrade(c, p.Bg, TextContrast) }
	mark := func(c lipgloss.Color) lipgloss.TerminalColor { return Degrade(c, p.Bg, BorderContrast) }
	fg := lipgloss.NewStyle().Foreground(text(p.Fg))
	s := &Styles{Palette: p}
	s.App = lipgloss.NewStyle()
	s.Header = lipgloss.NewStyle().Foreground(text(p.Fg)).Bold(true)
	s.HeaderKey = lipgloss.NewStyle().Foreground(text(p.Muted))
	s.HeaderValue = lipgloss.NewStyle().Foreground(text(p.Accent)).Bold(true)
	border := lipgloss.RoundedBorder()
	if p.Name == "contrast" {
		border = lipgloss.ThickBorder()
	}
	s.Panel = lipgloss.NewStyle().Border(border).BorderForeground(mark(p.Border)).Padding(0, 1)
	s.PanelFocused = s.Panel.BorderForeground(mark(p.BorderFocus))
	s.PanelTitle = lipgloss.NewStyle().Foreground(text(p.Muted)).Bold(true)
	s.PanelTitleFocused = lipgloss.NewStyle().Foreground(text(p.BorderFocus)).Bold(true)
	s.Tab = lipgloss.NewStyle().Foreground(text(p.Muted)).Padding(0, 1)
	s.TabActive = lipgloss.NewStyle().Foreground(Degrade(p.Bg, p.BorderFocus, TextContrast)).
		Background(Degrade(p.BorderFocus, p.Bg, 0)).Bold(true).Padding(0, 1)
	s.Text = fg
	s.Muted = lipgloss.NewStyle().Foreground(text(p.Muted))
	s.Subtle = lipgloss.NewStyle().Foreground(text(p.Subtle))
	s.Bold = fg.Bold(true)
	s.Accent = lipgloss.NewStyle().Foreground(text(p.Accent)).Bold(true)
	s.Good = lipgloss.NewStyle().Foreground(text(p.Good)).Bold(true)
	s.Warn = lipgloss.NewStyle().Foreground(text(p.Warn)).Bold(true)
	s.Bad = lipgloss.NewStyle().Foreground(text(p.Bad)).Bold(true)
	s.Info = lipgloss.NewStyle().Foreground(text(p.Info))
	s.Selected = lipgloss.NewStyle().Foreground(Degrade(p.SelectionFg, p.Selection, TextContrast)).
		Background(Degrade(p.Selection, p.Bg, 0)).Bold(true)
	s.Highlight = lipgloss.NewStyle().Foreground(text(p.Accent2)).Bold(true)
	s.Key = lipgloss.NewStyle().Foreground(text(p.Accent)).Bold(true)
	s.KeyDesc = lipgloss.NewStyle().Foreground(text(p.Muted))
	s.StatusInfo = lipgloss.NewStyle().Foreground(text(p.Info))
	s.StatusWarn = lipgloss.NewStyle().Foreground(text(p.Warn)).Bold(true)
	s.StatusError = lipgloss.NewStyle().Foreground(text(p.Bad)).Bold(true)
	s.Dialog = lipgloss.NewStyle().Border(border).BorderForeground(mark(p.Accent2)).Padding(0, 1)
	s.DialogTitle = lipgloss.NewStyle().Foreground(text(p.Accent2)).Bold(true)
	s.Marker = lipgloss.NewStyle().Foreground(text(p.Warn)).Bold(true)
	s.Timeline = lipgloss.NewStyle().Foreground(text(p.Subtle))
	s.TimelineDone = lipgloss.NewStyle().Foreground(text(p.Accent))
	s.TimelineCur = lipgloss.NewStyle().Foreground(text(p.Accent2)).Bold(true)
	s.Input = lipgloss.NewStyle().Foreground(text(p.Fg))

	s.kinds = map[string]lipgloss.Style{
		"message":   lipgloss.NewStyle().Foreground(text(p.Message)).Bold(true),
		"reasoning": lipgloss.NewStyle().Foreground(text(p.Reasoning)).Bold(true),
		"tool_call": lipgloss.NewStyle().Foreground(text(p.Tool)).Bold(true),
		"refusal":   lipgloss.NewStyle().Foreground(text(p.Refusal)).Bold(true),
	}
	s.trust = map[string]lipgloss.Style{
		"trusted":    lipgloss.NewStyle().Foreground(text(p.Trusted)),
		"verified":   lipgloss.NewStyle().Foreground(text(p.Verified)),
		"unverified": lipgloss.NewStyle().Foreground(text(p.Unverified)).Bold(true),
		"untrusted":  lipgloss.NewStyle().Foreground(text(p.Untrusted)).Bold(true),
	}
	s.state = map[string]lipgloss.Style{
		"streaming":  lipgloss.NewStyle().Foreground(text(p.Info)).Bold(true),
		"closed":     lipgloss.NewStyle().Foreground(text(p.Muted)),
		"parsed":     lipgloss.NewStyle().Foreground(text(p.Good)).Bold(true),
		"invalid":    lipgloss.NewStyle().Foreground(text(p.Bad)).Bold(true),
		"incomplete": lipgloss.NewStyle().Foreground(text(p.Warn)).Bold(true),
		"pass":       s.Good,
		"fail":       s.Bad,
		"skip":       s.Muted,
	}
	s.Markdown = Markdown{
		Text:      fg,
		H1:        s.TabActive.Padding(0),
		Heading:   s.Accent,
		Code:      lipgloss.NewStyle().Foreground(text(p.Bad)), // glamour's red, without its grey box
		CodeBlock: s.Muted,
		Link:      lipgloss.NewStyle().Foreground(text(p.Info)).Bold(true),
		Dim:       s.Subtle,
		Bullet:    s.Muted,
	}
	for t, ink := range []Ink{p.Code.Text, p.Code.Key, p.Code.String, p.Code.Number, p.Code.Literal, p.Code.Punct} {
		s.tokens[t] = lipgloss.NewStyle().Foreground(text(ink.Colour)).Bold(ink.Bold)
	}
	return s
}

// Kind styles a lane kind (message, reasoning, tool_call, refusal).
func (s *Styles) Kind(kind string) lipgloss.Style {
	if st, ok := s.kinds[kind]; ok {
		return st
	}
	return s.Text
}

// Trust styles a trust label.
func (s *Styles) Trust(label string) lipgloss.Style {
	if st, ok := s.trust[label]; ok {
		return st
	}
	return s.Text
}

// State styles a lane state or a layer status.
func (s *Styles) State(state string) lipgloss.Style {
	if st, ok := s.state[state]; ok {
		return st
	}
	return s.Text
}

// Tool styles a tool name.
func (s *Styles) Tool() lipgloss.Style { return s.Kind("tool_call") }

// Token styles a kind of JSON token with the theme's code colours. The
// colours go through lipgloss, so the terminal's colour profile (and
// NO_COLOR) applies to highlighted code like to everything else.
func (s *Styles) Token(t Token) lipgloss.Style {
	if t < 0 || t >= numTokens {
		t = TokenText
	}
	return s.tokens[t]
}
